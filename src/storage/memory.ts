/**
 * Storage in memory: the same IndexedDB storage, opened on a private in-memory
 * IndexedDB (fake-indexeddb). Each call gets its own database, isolated from every
 * other; nothing global is read or patched.
 */
import { IDBFactory } from 'fake-indexeddb';
import { openStorage } from './idb-storage.js';
import type { AssetRecord } from './schema.js';
import type { Storage } from './storage.js';

export interface MemoryStorageOptions {
  /** Assets stored when the database is created. */
  seedAssets?: AssetRecord[];
}

export function memoryStorage(options: MemoryStorageOptions = {}): Promise<Storage> {
  return openStorage({ factory: new IDBFactory(), seedAssets: options.seedAssets });
}
