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
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { wrap } from 'idb';
import { DB_NAME, DB_VERSION, UPGRADES } from '../storage/schema.js';

/** Stores not written to disk: derived from the others, rebuilt when needed. */
const NOT_KEPT = new Set(['snapshots']);

const PUT = 0;
const DELETE = 1;
const DELETE_RANGE = 2;
const CLEAR = 3;
/** One change to one store: the key as the store reported it, the value as given (structured-clone bytes). */
type Op =
  | [typeof PUT, string, IDBValidKey, Buffer]
  | [typeof DELETE, string, IDBValidKey]
  | [typeof DELETE_RANGE, string, unknown, unknown, boolean, boolean]
  | [typeof CLEAR, string];

/** A journal entry: one committed transaction's changes, or a JSON export's hash (see data-file.ts). */
type Entry = { seq: number; ops: Op[] } | { seq: number; json: string };

interface SnapshotHeader {
  format: 'pieces-os-worker store';
  /** The database version (schema.ts) the records are laid out for. */
  version: number;
  /** The last journal entry the snapshot holds. */
  seq: number;
  /** Per auto-incremented store, the highest key it ever generated (its rows may be gone). */
  generators: Array<[string, number]>;
  /** The hashes of the last JSON exports written or started from (data-file.ts). */
  json: string[];
}
interface JournalHeader {
  format: 'pieces-os-worker journal';
  version: number;
  /** The snapshot's `seq` when the journal was started. */
  base: number;
}
type Rows = { store: string; values: unknown[]; keys?: IDBValidKey[] } | { end: number };

// Frames: length (u32 LE), CRC-32 of the payload (u32 LE), payload (v8 serialization).
const HEAD = 8;

function frame(value: unknown): Buffer {
  const payload = serialize(value);
  const out = Buffer.allocUnsafe(HEAD + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  payload.copy(out, HEAD);
  return out;
}

/** The whole, intact frames at the start of `bytes`, and where the last of them ends. */
function readFrames(bytes: Buffer): { values: unknown[]; end: number } {
  const values: unknown[] = [];
  let at = 0;
  while (at + HEAD <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    if (at + HEAD + length > bytes.length) break;
    const payload = bytes.subarray(at + HEAD, at + HEAD + length);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) break;
    try {
      values.push(deserialize(payload));
    } catch {
      break;
    }
    at += HEAD + length;
  }
  return { values, end: at };
}

function writeAll(fd: number, bytes: Buffer) {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Makes a rename in `dir` durable (where directories can be opened: not on Windows). */
function syncDirectory(dir: string) {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported here; the rename itself is atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes `bytes` to `path` without ever leaving it torn: to `path.tmp`, fsync'ed, renamed over it. */
export async function replaceFile(path: string, chunks: Iterable<Buffer | string>): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await openFile(temporary, 'w');
  try {
    for (const chunk of chunks) await (typeof chunk === 'string' ? file.write(chunk) : file.write(chunk));
    await file.sync();
  } finally {
    await file.close();
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

function replaceFileSync(path: string, bytes: Buffer) {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeAll(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

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

/**
 * Takes `${path}.lock` for this process: two processes appending to one journal would each
 * lose what the other wrote. A lock left by a process that is gone is taken over.
 */
function lock(path: string): () => void {
  const file = `${path}.lock`;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeAll(fd, Buffer.from(String(process.pid)));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      throw new Error(`it is in use by another process (${owner}); stop it first (or remove ${file} if no such process is a server)`);
    }
    rmSync(file, { force: true });
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function openLocked(path: string, options: KeptStoreOptions, unlock: () => void): Promise<KeptStore> {
  const journalPath = `${path}-journal`;
  const onWriteError = options.onWriteError ?? fatal(path);

  // The snapshot: always whole (written aside and renamed); anything else is refused, not repaired.
  let header: SnapshotHeader = { format: 'pieces-os-worker store', version: DB_VERSION, seq: 0, generators: [], json: [] };
  let rows: Array<Extract<Rows, { store: string }>> = [];
  let snapshotBytes = 0;
  if (existsSync(path)) {
    const bytes = readFileSync(path);
    snapshotBytes = bytes.length;
    const { values } = readFrames(bytes);
    const [first, ...rest] = values as [SnapshotHeader, ...Rows[]];
    const last = rest.pop();
    if (first?.format !== 'pieces-os-worker store' || !last || !('end' in last) || last.end !== rest.length) {
      throw new Error(`${path} is not a whole pieces-os-worker store (it was left untouched).`);
    }
    header = first;
    rows = rest as typeof rows;
  }
  if (header.version > DB_VERSION) {
    throw new Error(
      `${path} was written by a newer version of pieces-os-worker (database version ${header.version}; this one reads ${DB_VERSION}); it was left untouched.`,
    );
  }

  // The journal: its entries after the snapshot, up to the first one not written whole.
  let entries: Entry[] = [];
  let journalHeader: JournalHeader | undefined;
  let journalBytes = 0;
  if (existsSync(journalPath)) {
    const bytes = readFileSync(journalPath);
    const { values, end } = readFrames(bytes);
    journalHeader = values[0] as JournalHeader | undefined;
    if (values.length && journalHeader?.format !== 'pieces-os-worker journal') {
      throw new Error(`${journalPath} is not a pieces-os-worker journal (it was left untouched).`);
    }
    entries = (values.slice(1) as Entry[]).filter((entry) => entry.seq > header.seq);
    journalBytes = end;
    if (end < bytes.length) {
      options.warn(
        `${journalPath}: skipped ${bytes.length - end} bytes at its end, a write that never finished (it was never answered); the ${values.length ? values.length - 1 : 0} entries before it are kept.`,
      );
    }
  }
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
          seq: at,
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

/** Loads the snapshot's records and replays the journal's entries, in one transaction, into a database at `version`. */
async function restore(
  factory: IDBFactory,
  version: number,
  rows: Array<Extract<Rows, { store: string }>>,
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

/** `factory`, with every database it opens watched by `watch` before anyone else sees it. */
function watchingFactory(factory: IDBFactory, watch: (database: IDBDatabase) => void): IDBFactory {
  return {
    open(name: string, version?: number) {
      const request = factory.open(name, version);
      // Registered before the caller's listeners: the connection is watched before its first use.
      request.addEventListener('success', () => watch(request.result));
      return request;
    },
    deleteDatabase: (name: string) => factory.deleteDatabase(name),
    cmp: (a: unknown, b: unknown) => factory.cmp(a, b),
    databases: () => factory.databases(),
  };
}

type Method = (...args: unknown[]) => unknown;

/**
 * Records, per write transaction of `database`, what it does to each kept store, and hands the
 * list to `commit` when it completes: from the first listener of its `complete` event, before
 * anything that waits on the transaction learns that it committed.
 */
function watchDatabase(database: IDBDatabase, commit: (ops: Op[]) => void, autoIncremented: Set<string>) {
  const transaction = database.transaction as unknown as Method;
  database.transaction = function (this: IDBDatabase, ...args: unknown[]) {
    const tx = transaction.apply(this, args) as IDBTransaction;
    if (args[1] !== 'readwrite') return tx;
    const ops: Op[] = [];
    const objectStore = tx.objectStore as unknown as Method;
    const watched = new WeakSet<IDBObjectStore>();
    tx.objectStore = function (this: IDBTransaction, name: string) {
      const store = objectStore.call(this, name) as IDBObjectStore;
      if (!NOT_KEPT.has(name) && !watched.has(store)) {
        watched.add(store);
        if (store.autoIncrement) autoIncremented.add(name);
        watchStore(store, ops);
      }
      return store;
    } as IDBTransaction['objectStore'];
    tx.addEventListener('complete', () => {
      if (ops.length) commit(ops);
    });
    return tx;
  } as IDBDatabase['transaction'];
}

/** Once `request` succeeds, `op` (called then) joins `ops`. */
function onSuccess(request: IDBRequest, ops: Op[], op: () => Op) {
  request.addEventListener('success', () => ops.push(op()));
  return request;
}

const isRange = (query: unknown): query is IDBKeyRange => typeof query === 'object' && query !== null && 'lowerOpen' in query;

function watchStore(store: IDBObjectStore, ops: Op[]) {
  const name = store.name;
  const { put, add, delete: remove, clear, openCursor, openKeyCursor, index } = store as unknown as Record<string, Method>;
  // The value as given, at the call (the store clones it then too); the key once the store has it.
  const write =
    (method: Method) =>
    (...args: unknown[]) => {
      const bytes = serialize(args[0]);
      const request = method.apply(store, args) as IDBRequest<IDBValidKey>;
      return onSuccess(request, ops, () => [PUT, name, request.result, bytes]);
    };
  const cursors = new WeakSet<IDBCursor>();
  const watchCursors =
    (method: Method, source: object) =>
    (...args: unknown[]) => {
      const request = method.apply(source, args) as IDBRequest<IDBCursor | null>;
      request.addEventListener('success', () => {
        const cursor = request.result;
        if (!cursor || cursors.has(cursor)) return;
        cursors.add(cursor);
        const { update, delete: removeAt } = cursor as unknown as Record<string, Method>;
        Object.assign(cursor, {
          update(value: unknown) {
            const bytes = serialize(value);
            const written = update!.call(cursor, value) as IDBRequest<IDBValidKey>;
            return onSuccess(written, ops, () => [PUT, name, written.result, bytes]);
          },
          delete() {
            const key = structuredClone(cursor.primaryKey);
            return onSuccess(removeAt!.call(cursor) as IDBRequest, ops, () => [DELETE, name, key]);
          },
        });
      });
      return request;
    };
  const indexes = new WeakSet<IDBIndex>();
  Object.assign(store, {
    put: write(put!),
    add: write(add!),
    delete(query: unknown) {
      const op: Op = isRange(query)
        ? [DELETE_RANGE, name, structuredClone(query.lower), structuredClone(query.upper), query.lowerOpen, query.upperOpen]
        : [DELETE, name, structuredClone(query as IDBValidKey)];
      return onSuccess(remove!.call(store, query) as IDBRequest, ops, () => op);
    },
    clear: () => onSuccess(clear!.call(store) as IDBRequest, ops, () => [CLEAR, name]),
    openCursor: watchCursors(openCursor!, store),
    openKeyCursor: watchCursors(openKeyCursor!, store),
    index(indexName: string) {
      const found = index!.call(store, indexName) as IDBIndex;
      if (!indexes.has(found)) {
        indexes.add(found);
        const { openCursor: open, openKeyCursor: openKeys } = found as unknown as Record<string, Method>;
        Object.assign(found, { openCursor: watchCursors(open!, found), openKeyCursor: watchCursors(openKeys!, found) });
      }
      return found;
    },
  });
}
