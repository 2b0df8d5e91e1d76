/**
 * The Node hosts' in-memory IndexedDB kept on disk (the loopback server's `--data`): every write
 * transaction that commits is appended to a journal and fsync'ed before its completion reaches
 * the code that waits on it, so before any answer that depends on it. The journal is compacted
 * into a snapshot written aside, fsync'ed and renamed over the previous one; a start loads the
 * snapshot and replays the journal after it. See docs/testing.md ("Keeping the data").
 *
 * What is recorded is what each committed transaction did to each store (puts, deletes, clears),
 * through the standard IndexedDB API of the connection the storage opens: nothing of the storage
 * modules changes. The `snapshots` store is not kept: it holds conversations snapshots already
 * encoded (as Blobs), a cache checked against the change log and rebuilt from the records.
 *
 * Here the store is opened, appended to and compacted; the files' format is in kept-format.ts,
 * the recording of writes in kept-record.ts, the snapshot in kept-snapshot.ts, the lock in
 * kept-lock.ts.
 */
import { closeSync, fdatasyncSync, ftruncateSync, openSync } from 'node:fs';
import { IDBFactory } from 'fake-indexeddb';
import { DB_VERSION } from '../storage/schema.js';
import { replaceFileSync, writeAll } from './kept-files.js';
import { frame, PUT, readJournal, readSnapshot, type Entry, type JournalHeader, type Op } from './kept-format.js';
import { lock } from './kept-lock.js';
import { watchDatabase, watchingFactory } from './kept-record.js';
import { restore, writeSnapshot } from './kept-snapshot.js';

export { replaceFile } from './kept-files.js';

export interface KeptStoreOptions {
  /** Reports what a start found and repaired (an unfinished write skipped). */
  warn(message: string): void;
  /**
   * A write that could not be kept (the disk full, the file gone): it committed in memory and
   * must not be answered. Default: reported on stderr, and the process exits with code 1.
   */
  onWriteError?(error: Error): void;
  /** A journal past this size (and past the snapshot's) is compacted; default 16 MB. */
  compactFromBytes?: number;
}

export interface KeptStore {
  /** The snapshot's path; the journal is `${path}-journal`, the lock `${path}.lock`. */
  readonly path: string;
  /** Whether the files held nothing yet (a first start). */
  readonly fresh: boolean;
  /** The IndexedDB holding the records read back, whose connections' writes are kept. */
  readonly factory: IDBFactory;
  /** Call once the storage has opened its connection: a database upgraded by it is kept whole now. */
  opened(): Promise<void>;
  /** The hashes of the JSON exports this store wrote or started from (see data-file.ts). */
  jsonHashes(): string[];
  /** Records the hash of a JSON export about to be written (fsync'ed before it returns). */
  noteJson(hash: string): void;
  /** Writes the whole store as a new snapshot and starts the journal afresh. */
  compact(): Promise<void>;
  close(): void;
}

function fatal(path: string) {
  return (error: Error) => {
    console.error(`pieces-os-worker: a write could not be kept in ${path} (${error.message}); stopping without answering it.`);
    process.exit(1);
  };
}

/**
 * Opens (or creates) the store at `path` and `${path}-journal`, reading it back into a new
 * in-memory IndexedDB. Throws, with the file named, when the files cannot be read or written.
 */
export async function openKeptStore(path: string, options: KeptStoreOptions): Promise<KeptStore> {
  const unlock = lock(path);
  try {
    return await openLocked(path, options, unlock);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function openLocked(path: string, options: KeptStoreOptions, unlock: () => void): Promise<KeptStore> {
  const journalPath = `${path}-journal`;
  const onWriteError = options.onWriteError ?? fatal(path);

  // The snapshot: always whole (written aside and renamed); anything else is refused, not repaired.
  let { header, rows, bytes: snapshotBytes } = readSnapshot(path);
  // The journal: its entries after the snapshot, up to the first one not written whole.
  let { header: journalHeader, entries, end: journalBytes } = readJournal(journalPath, header.seq, options.warn);
  const version = journalHeader && entries.length ? journalHeader.version : header.version;
  const fresh = !rows.length && !entries.length && header.seq === 0;
  let seq = entries.length ? entries[entries.length - 1]!.seq : header.seq;
  const generators = new Map(header.generators);
  const json = new Set(header.json);
  for (const entry of entries) {
    if ('json' in entry) json.add(entry.json);
    else
      for (const op of entry.ops)
        if (op[0] === PUT && typeof op[2] === 'number') generators.set(op[1], Math.max(generators.get(op[1]) ?? 0, op[2]));
  }

  const factory = new IDBFactory();
  if (!fresh) await restore(factory, version, rows, entries, generators);
  rows = [];
  entries = [];

  // From here on the journal is appended to: opened now, so that a path that cannot be written fails the start.
  let fd: number;
  if (!journalHeader) {
    // No journal yet (nothing to lose in starting one).
    fd = startJournal(header.seq, []);
  } else {
    // Appended to after its last whole entry. One for an older layout is replaced once the records are written whole (opened()).
    fd = openSync(journalPath, 'a');
    ftruncateSync(fd, journalBytes);
    fdatasyncSync(fd);
  }
  function startJournal(base: number, tail: Buffer[]): number {
    const bytes = Buffer.concat([
      frame({ format: 'pieces-os-worker journal', version: DB_VERSION, base } satisfies JournalHeader),
      ...tail,
    ]);
    replaceFileSync(journalPath, bytes);
    journalBytes = bytes.length;
    return openSync(journalPath, 'a');
  }

  let closed = false;
  let failed = false;
  /** While a compaction runs: the entries appended since it read the store, for the journal after it. */
  let compacting: Buffer[] | null = null;
  const compactFromBytes = options.compactFromBytes ?? 16 * 1024 * 1024;
  let compactFrom = Math.max(compactFromBytes, snapshotBytes);
  const databases: IDBDatabase[] = [];

  function append(entry: Omit<Entry, 'seq'>) {
    if (failed) throw new Error(`${path}: an earlier write could not be kept.`);
    const bytes = frame({ ...entry, seq: seq + 1 });
    try {
      writeAll(fd, bytes);
      fdatasyncSync(fd);
    } catch (error) {
      failed = true;
      throw error;
    }
    seq++;
    journalBytes += bytes.length;
    compacting?.push(bytes);
  }

  function commit(ops: Op[]) {
    if (closed) return;
    try {
      append({ ops });
    } catch (error) {
      onWriteError(error as Error);
      return;
    }
    for (const op of ops)
      if (op[0] === PUT && typeof op[2] === 'number' && autoIncremented.has(op[1]))
        generators.set(op[1], Math.max(generators.get(op[1]) ?? 0, op[2]));
    if (journalBytes > compactFrom && !compacting) {
      void compact().catch((error: Error) => {
        // The journal still holds every write: only the compaction is put off.
        compactFrom = journalBytes * 2;
        options.warn(`${path}: could not compact the journal (${error.message}); it goes on growing.`);
      });
    }
  }
  const autoIncremented = new Set<string>();

  async function compact() {
    const database = databases[databases.length - 1];
    if (!database || compacting || closed) return;
    compacting = [];
    try {
      const at = seq;
      const written = await writeSnapshot(path, database, at, generators, json);
      if (closed) return;
      // Synchronously from here: no entry is appended until the new journal is in place.
      const next = startJournal(at, compacting);
      closeSync(fd);
      fd = next;
      compactFrom = Math.max(compactFromBytes, written);
    } finally {
      compacting = null;
    }
  }

  const watched = (database: IDBDatabase) => {
    databases.push(database);
    watchDatabase(database, commit, autoIncremented);
  };
  const store: KeptStore = {
    path,
    fresh,
    factory: watchingFactory(factory, watched),
    async opened() {
      // A layout upgraded on open (a store written by an older version) is written whole before any write is kept.
      if (version !== DB_VERSION || (journalHeader && journalHeader.version !== DB_VERSION)) await compact();
    },
    jsonHashes: () => [...json],
    noteJson(hash) {
      append({ json: hash });
      json.add(hash);
      // The file on disk is one of the last written: older hashes need not be known.
      for (const old of json) if (json.size > 8) json.delete(old);
    },
    compact,
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
      unlock();
    },
  };
  return store;
}
