/**
 * The kept store's snapshot: written whole from a database (the compaction), and read back with
 * the journal after it into a new database (a start).
 */
import { deserialize } from 'node:v8';
import { type IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { wrap } from 'idb';
import { DB_NAME, UPGRADES } from '../storage/schema.js';
import { replaceFile } from './kept-files.js';
import { CLEAR, DELETE, DELETE_RANGE, frame, PUT, type Entry, type Op, type SnapshotHeader, type SnapshotRows } from './kept-format.js';
import { NOT_KEPT } from './kept-record.js';

/**
 * Writes every kept store of `database` to `path` as a snapshot holding the journal up to `seq`
 * (aside, fsync'ed, renamed over the previous one); resolves with its size.
 */
export async function writeSnapshot(
  path: string,
  database: IDBDatabase,
  seq: number,
  generators: Map<string, number>,
  json: Set<string>,
): Promise<number> {
  const db = wrap(database);
  const names = [...database.objectStoreNames].filter((name) => !NOT_KEPT.has(name));
  const tx = db.transaction(names as never[], 'readonly');
  const read = await Promise.all(
    names.map(async (name) => {
      const store = tx.objectStore(name as never);
      const [values, keys] = await Promise.all([store.getAll(), store.keyPath === null ? store.getAllKeys() : undefined]);
      return { store: name, values, keys };
    }),
  );
  const frames = function* () {
    yield frame({
      format: 'pieces-os-worker store',
      version: database.version,
      seq,
      generators: [...generators],
      json: [...json],
    } satisfies SnapshotHeader);
    let count = 0;
    for (const { store, values, keys } of read) {
      // Frames of about a thousand records: none too large to read back.
      for (let from = 0; from < values.length || from === 0; from += 1_000) {
        yield frame({ store, values: values.slice(from, from + 1_000), ...(keys ? { keys: keys.slice(from, from + 1_000) } : {}) });
        count++;
      }
    }
    yield frame({ end: count });
  };
  let written = 0;
  await replaceFile(
    path,
    (function* () {
      for (const bytes of frames()) {
        written += bytes.length;
        yield bytes;
      }
    })(),
  );
  return written;
}

/** Loads the snapshot's records and replays the journal's entries, in one transaction, into a database at `version`. */
export async function restore(
  factory: IDBFactory,
  version: number,
  rows: SnapshotRows[],
  entries: Entry[],
  generators: Map<string, number>,
) {
  const request = factory.open(DB_NAME, version);
  request.addEventListener('upgradeneeded', () => {
    const db = wrap(request.result) as never;
    const tx = wrap(request.transaction!) as never;
    for (let step = 0; step < version; step++) UPGRADES[step]!(db, tx);
  });
  const database = await new Promise<IDBDatabase>((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  try {
    const tx = database.transaction([...database.objectStoreNames], 'readwrite');
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(tx.error ?? new Error('the transaction was aborted'));
    });
    for (const { store, values, keys } of rows) {
      const target = tx.objectStore(store);
      for (const [i, value] of values.entries()) {
        if (keys) target.put(value, keys[i]);
        else target.put(value);
      }
    }
    for (const entry of entries) if ('ops' in entry) for (const op of entry.ops) replay(tx.objectStore(op[1]), op);
    // An auto-incremented store goes on from the highest key it generated, even where that row is gone.
    for (const [name, highest] of generators) {
      const target = tx.objectStore(name);
      if (typeof target.keyPath !== 'string' || !target.autoIncrement) continue;
      const present = target.count(highest);
      present.onsuccess = () => {
        if (present.result) return;
        target.put(withKey({}, target.keyPath as string, highest));
        target.delete(highest);
      };
    }
    await done;
  } finally {
    database.close();
  }
}

function withKey(value: unknown, keyPath: string, key: IDBValidKey) {
  const parts = keyPath.split('.');
  let at = value as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts[parts.length - 1]!] = key;
  return value;
}

function replay(store: IDBObjectStore, op: Op) {
  switch (op[0]) {
    case PUT: {
      const value = deserialize(op[3]);
      if (store.keyPath === null) store.put(value, op[2]);
      // A key the store generated is not in the value as given: it goes back where the store put it.
      else store.put(store.autoIncrement && typeof store.keyPath === 'string' ? withKey(value, store.keyPath, op[2]) : value);
      return;
    }
    case DELETE:
      store.delete(op[2]);
      return;
    case DELETE_RANGE: {
      const [, , lower, upper, lowerOpen, upperOpen] = op;
      store.delete(
        lower === undefined
          ? IDBKeyRange.upperBound(upper, upperOpen)
          : upper === undefined
            ? IDBKeyRange.lowerBound(lower, lowerOpen)
            : IDBKeyRange.bound(lower, upper, lowerOpen, upperOpen),
      );
      return;
    }
    case CLEAR:
      store.clear();
  }
}
