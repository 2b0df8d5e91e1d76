/**
 * Storage in memory: the same IndexedDB storage, opened on a private in-memory
 * IndexedDB (fake-indexeddb). Each call gets its own database, isolated from every
 * other; nothing global is read or patched.
 */
import { IDBFactory } from 'fake-indexeddb';
import { openStorage, type OpenStorageOptions } from './idb/storage.js';
import type { Storage } from './storage.js';

export type MemoryStorageOptions = Pick<OpenStorageOptions, 'initialData' | 'groupCommit'>;

export function memoryStorage(options: MemoryStorageOptions = {}): Promise<Storage> {
  return openStorage({ ...options, factory: new IDBFactory() });
}
