/**
 * The kept store's files, as bytes: frames (length, CRC-32, a v8-serialized value), the snapshot
 * (a header, its records, an end frame counting them: whole or refused) and the journal (a
 * header, then one entry per committed transaction, read up to the first frame not written
 * whole: a torn tail is a write that never finished, and was never answered).
 */
import { existsSync, readFileSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { DB_VERSION } from '../storage/schema.js';

export const PUT = 0;
export const DELETE = 1;
export const DELETE_RANGE = 2;
export const CLEAR = 3;
/** One change to one store: the key as the store reported it, the value as given (structured-clone bytes). */
export type Op =
  | [typeof PUT, string, IDBValidKey, Buffer]
  | [typeof DELETE, string, IDBValidKey]
  | [typeof DELETE_RANGE, string, unknown, unknown, boolean, boolean]
  | [typeof CLEAR, string];

/** A journal entry: one committed transaction's changes, or a JSON export's hash (see data-file.ts). */
export type Entry = { seq: number; ops: Op[] } | { seq: number; json: string };

export interface SnapshotHeader {
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
export interface JournalHeader {
  format: 'pieces-os-worker journal';
  version: number;
  /** The snapshot's `seq` when the journal was started. */
  base: number;
}
type Rows = { store: string; values: unknown[]; keys?: IDBValidKey[] } | { end: number };

// Frames: length (u32 LE), CRC-32 of the payload (u32 LE), payload (v8 serialization).
const HEAD = 8;

export function frame(value: unknown): Buffer {
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

/** A snapshot's records of one store, in a frame of their own. */
export type SnapshotRows = Extract<Rows, { store: string }>;

/**
 * The snapshot at `path` (none yet: an empty one), and its size. It is always whole (written
 * aside and renamed): anything else, or one of a newer layout, is refused, not repaired.
 */
export function readSnapshot(path: string): { header: SnapshotHeader; rows: SnapshotRows[]; bytes: number } {
  let header: SnapshotHeader = { format: 'pieces-os-worker store', version: DB_VERSION, seq: 0, generators: [], json: [] };
  let rows: SnapshotRows[] = [];
  let size = 0;
  if (existsSync(path)) {
    const bytes = readFileSync(path);
    size = bytes.length;
    const { values } = readFrames(bytes);
    const [first, ...rest] = values as [SnapshotHeader, ...Rows[]];
    const last = rest.pop();
    if (first?.format !== 'pieces-os-worker store' || !last || !('end' in last) || last.end !== rest.length) {
      throw new Error(`${path} is not a whole pieces-os-worker store (it was left untouched).`);
    }
    header = first;
    rows = rest as SnapshotRows[];
  }
  if (header.version > DB_VERSION) {
    throw new Error(
      `${path} was written by a newer version of pieces-os-worker (database version ${header.version}; this one reads ${DB_VERSION}); it was left untouched.`,
    );
  }
  return { header, rows, bytes: size };
}

/**
 * The journal at `path`: its header (none when there is no journal yet), its entries after
 * `after` (the snapshot's seq) up to the first one not written whole (`warn` is told what was
 * skipped), and where that last whole entry ends.
 */
export function readJournal(
  path: string,
  after: number,
  warn: (message: string) => void,
): { header: JournalHeader | undefined; entries: Entry[]; end: number } {
  if (!existsSync(path)) return { header: undefined, entries: [], end: 0 };
  const bytes = readFileSync(path);
  const { values, end } = readFrames(bytes);
  const header = values[0] as JournalHeader | undefined;
  if (values.length && header?.format !== 'pieces-os-worker journal') {
    throw new Error(`${path} is not a pieces-os-worker journal (it was left untouched).`);
  }
  const entries = (values.slice(1) as Entry[]).filter((entry) => entry.seq > after);
  if (end < bytes.length) {
    warn(
      `${path}: skipped ${bytes.length - end} bytes at its end, a write that never finished (it was never answered); the ${values.length ? values.length - 1 : 0} entries before it are kept.`,
    );
  }
  return { header, entries, end };
}
