/**
 * The loopback server's `--data file.json` (`dataFile`): the JSON export is read at start and
 * written on close, never in place; every write in between is kept in the store beside it
 * (kept-store.ts: `file.store` and `file.store-journal`), before it is answered.
 *
 * Which one a start reads: the store, unless the JSON file is one the store did not write or
 * start from (a first start with an existing export, or a file changed or copied in since):
 * then the store starts again from the JSON, as the server always did.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import type { Storage, StoredData } from '../storage/storage.js';
import { openStorage } from '../storage/idb/storage.js';
import { openKeptStore, replaceFile, type KeptStore, type KeptStoreOptions } from './kept-store.js';

export interface DataFile {
  /** The JSON file's data (the server's `data`: what `reset()` goes back to), if there is one. */
  readonly data: unknown;
  /** The store's path (its journal is `${store}-journal`). */
  readonly store: string;
  /** Opens the storage over the kept store (`initialData` only when the store is new). */
  open(initialData: () => StoredData): Promise<Storage>;
  /** Writes `data` (an export) to the JSON file: to a temporary file, fsync'ed, renamed over it. */
  save(data: unknown): Promise<void>;
  close(): void;
}

const hashOf = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** The store beside a JSON file: `data.json` → `data.store`, any other name gets `.store` appended. */
export const storePathFor = (path: string) => `${path.endsWith('.json') ? path.slice(0, -'.json'.length) : path}.store`;

export async function openDataFile(path: string, options: Partial<KeptStoreOptions> = {}): Promise<DataFile> {
  const warn = options.warn ?? ((message: string) => console.warn(`pieces-os-worker: ${message}`));
  let data: unknown;
  let hash: string | undefined;
  if (existsSync(path)) {
    const bytes = readFileSync(path);
    try {
      data = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      throw new Error(`${path} is not JSON: ${(error as Error).message}`);
    }
    hash = hashOf(bytes);
  }
  const storePath = storePathFor(path);
  let kept: KeptStore;
  try {
    kept = await openKeptStore(storePath, { ...options, warn });
    if (hash && !kept.fresh && !kept.jsonHashes().includes(hash)) {
      // The export was changed (or replaced) since this store wrote it: start again from it, keeping the old store aside.
      kept.close();
      const moved = [storePath, `${storePath}-journal`].filter(existsSync).map((file) => {
        renameSync(file, `${file}.replaced`);
        return `${file}.replaced`;
      });
      warn(`${path} is not the export this server last wrote: starting from it (the previous store is kept as ${moved.join(' and ')}).`);
      kept = await openKeptStore(storePath, { ...options, warn });
    }
    if (hash && !kept.jsonHashes().includes(hash)) kept.noteJson(hash);
  } catch (error) {
    throw new Error(`cannot keep the data in ${storePath}: ${(error as Error).message}`, { cause: error });
  }
  return {
    data,
    store: storePath,
    async open(initialData) {
      const storage = await openStorage({ factory: kept.factory, initialData });
      await kept.opened();
      return storage;
    },
    async save(exported) {
      const text = `${JSON.stringify(exported, null, 2)}\n`;
      // Noted first: whether the rename happens or not, the file there is one the store knows.
      kept.noteJson(hashOf(text));
      await replaceFile(path, [text]);
    },
    close: () => kept.close(),
  };
}
