/**
 * Conversations snapshots kept ready to send (the `snapshots` store): read from their stored segments,
 * stale ranges encoded afresh and kept again (docs/performance.md).
 */
import { unwrap, type IDBPDatabase, type IDBPTransaction } from 'idb';
import type { ConversationRecord, MessageRecord, PiecesDB, SnapshotSegment } from '../schema.js';
import {
  composeBody,
  cutSegments,
  planSnapshot,
  SEGMENT_END,
  WHOLE,
  type BodyItem,
  type NewSegment,
  type SnapshotPart,
  type WholePiece,
} from '../snapshot-plan.js';
import type { Storage } from '../storage.js';
import { commit, onCommitted, readChanges } from './transactions.js';

/** Above this many conversations to encode, a snapshot reads every message at once rather than per conversation. */
const READ_ALL_MESSAGES_FROM = 1_000;

function blobsClone(): boolean {
  try {
    const copy = structuredClone(new Blob(['x']));
    return copy instanceof Blob && copy.size === 1;
  } catch {
    return false;
  }
}

/**
 * Whether a kept body can be read: its last byte (a lost or cut file fails there: Chromium
 * throws, WebKit reads nothing).
 */
async function canRead(body: Blob | string): Promise<boolean> {
  if (typeof body === 'string' || body.size === 0) return true;
  try {
    return (await body.slice(body.size - 1).arrayBuffer()).byteLength === 1;
  } catch {
    return false;
  }
}

/** The kept segments themselves could not be read (Firefox fails the read of a record whose Blob file is gone). */
class SegmentsUnreadable extends Error {}

const segmentKey = (segment: SnapshotSegment) => `${segment.start}:${segment.built}`;

/** Meta key set once a stored segment Blob was found unreadable: this database keeps bodies as text from then on. */
const BLOBS_LOST = 'snapshotBlobsLost';

/**
 * Whether a Blob read from the database stays readable, with its own bytes, once its record is
 * replaced or deleted: a kept body handed to a page is read there while later writes replace the
 * segment it came from. WebKit's do not once the Blob they were written from is collected (the
 * file goes with the record, or later holds another body: the page's read fails with "Blob loading
 * failed", or reads another body). That depends on when the engine collects the Blob written, so
 * no probe shows it: WebKit is told by its user agent (Blink's AppleWebKit version is frozen at
 * 537.36; Gecko's user agent names none).
 */
export function blobsOutliveRecords(userAgent: string): boolean {
  return !/AppleWebKit\/(?!537\.36)/.test(userAgent);
}

type PlanTx = IDBPTransaction<PiecesDB, Array<'snapshots' | 'changes' | 'conversations'>, 'readonly'>;

/**
 * Inside `tx`: the kept segments of a variant checked against the change log (see
 * planSnapshot), what each part not kept as it is must read (a stale range whole, an
 * extended segment past its `built`), and the last change (what the result is true as of).
 */
async function planSegments(tx: PlanTx, variant: 0 | 1) {
  const changeStore = tx.objectStore('changes');
  const [segments, last] = await Promise.all([
    tx
      .objectStore('snapshots')
      .getAll(IDBKeyRange.bound([variant, 0], [variant, SEGMENT_END]))
      .catch((error: unknown) => {
        throw Object.assign(new SegmentsUnreadable(String(error)), { cause: error });
      }),
    changeStore.openCursor(null, 'prev'),
  ]);
  const log = segments.length
    ? await readChanges(changeStore as never, Math.min(...segments.map((s) => s.built)))
    : { changes: [], complete: true };
  const parts = planSnapshot(
    segments,
    log.changes.filter((c) => c.collection === 'conversation'),
    log.complete,
  );
  const reads = parts.flatMap((part) =>
    'stale' in part
      ? [part.stale]
      : 'extend' in part
        ? [{ start: Math.max(part.extend.start, part.extend.built + 1), end: part.extend.end }]
        : [],
  );
  return { parts, reads, built: last?.key ?? 0, kept: segments.length };
}

/** A variant's whole body (the record at [variant, WHOLE]), with where each segment it holds sits in it. */
type WholeRecord = SnapshotSegment & { pieces?: WholePiece[] };

/**
 * Inside `tx`: the variant's whole body, and whether it is still true (no conversation changed
 * since it was built, and the log reaches back that far).
 */
async function readWhole(tx: PlanTx, variant: 0 | 1): Promise<{ whole?: WholeRecord; current: boolean }> {
  const whole = (await tx
    .objectStore('snapshots')
    .get([variant, WHOLE])
    .catch((error: unknown) => {
      throw Object.assign(new SegmentsUnreadable(String(error)), { cause: error });
    })) as WholeRecord | undefined;
  if (!whole) return { current: false };
  const { changes, complete } = await readChanges(tx.objectStore('changes') as never, whole.built);
  return { whole, current: complete && !changes.some((change) => change.collection === 'conversation') };
}

/**
 * How many kept segments a read may take from their own records (files) beside the whole body
 * before the whole is written again: a cold read opens at most this many files more than one.
 */
export const MAX_OUTSIDE_WHOLE = 12;

export interface SnapshotStore extends Pick<Storage, 'conversationsSnapshot'> {
  /**
   * The conversation ids in snapshot order, from the ids the kept segments of the snapshot
   * without messages list (a cold read of the index costs far more), the ranges changed since
   * read from the index.
   */
  conversationIds(): Promise<{ ids: string[]; seq: number }>;
}

type Encode = Parameters<Storage['conversationsSnapshot']>[1];

/**
 * The kept snapshots of one connection. Each transaction of the connection that logs a conversation
 * change starts, once committed (where bodies are Blobs), a pass that brings the kept variants up to date (both variants
 * read since the start, or every variant with `encode`): the segments its changes made stale are
 * encoded afresh and kept, in one transaction, and the whole body is written again once more than
 * MAX_OUTSIDE_WHOLE segments lie outside it. Passes run one after another; the writes committed
 * while one runs are taken by one more (never a timer). A worker stopped at any point leaves at
 * most the segments of the writes of the pass under way stale, and a read sends the whole body's
 * bytes as slices of its one file beside the few segments outside it.
 */
export function snapshotStore(db: IDBPDatabase<PiecesDB>, { encode }: { encode?: Encode } = {}): SnapshotStore {
  /**
   * Whether segment bodies are stored as Blobs (kept out of the JavaScript heap): where the
   * environment's Blob survives a structured clone (not a DOM emulation's Blob in Node), where a
   * Blob read from the database outlives its record (not in WebKit: what a database kept there as
   * Blobs is dropped, and rebuilt as text), and until the database refuses one (WebKit's private
   * sessions do). Else they are stored as text. Found out at the first write.
   */
  const nativeBlobs = blobsClone();
  let storesBlobs: boolean | Promise<boolean> | undefined;
  const blobsStored = () =>
    (storesBlobs ??=
      nativeBlobs &&
      db
        .get('meta', BLOBS_LOST)
        .then(
          async (lost) => {
            if (lost) return false;
            if (blobsOutliveRecords(typeof navigator === 'undefined' ? '' : navigator.userAgent)) return true;
            // What was kept as Blobs may already read as another body: every variant is encoded again.
            await drop({ variant: 0 });
            await drop({ variant: 1 });
            return false;
          },
          () => true,
        )
        .catch(() => false));
  /** Per variant, the kept segments whose body this connection found readable (by start and build). */
  const readable: [Set<string>, Set<string>] = [new Set(), new Set()];
  /** Per variant, the `built` of the whole body this connection found readable. */
  const wholeReadable: [number, number] = [-1, -1];
  /** Per variant, whether it has kept segments, as last found (unknown at the start). */
  const hasKept: [boolean | undefined, boolean | undefined] = [undefined, undefined];
  /** Per variant, the last change the last read of it saw (a read that sees the same one finds the variant stable). */
  const lastRead: [number, number] = [-1, -1];
  /** Per variant, how conversations are encoded: as given, else as the last read of the variant was told. */
  const encoders: [Encode | undefined, Encode | undefined] = [encode, encode];
  /** Writes of kept segments and whole bodies, one after another; a failure only means the next pass or read keeps them. */
  let keeping = Promise.resolve();
  const keepInTurn = (write: () => Promise<void>) => (keeping = keeping.then(() => write().catch(() => {})));

  /** Whether another pass is wanted (a write committed since the pass under way read), and whether one runs. */
  let passWanted = false;
  let passing = false;
  async function keepUp() {
    passWanted = true;
    if (passing) return;
    // Where bodies are kept as text a read opens no file, and a pass would read every kept body into memory: none.
    if (!(await blobsStored())) return;
    if (passing) return;
    passing = true;
    try {
      while (passWanted) {
        passWanted = false;
        for (const variant of [1, 0] as const) {
          const encodeOne = encoders[variant];
          // A closed connection (or another failure) only means the next read encodes what is stale.
          // A variant found with no kept segment has nothing to keep up until a read keeps it.
          if (encodeOne && hasKept[variant] !== false) await orRebuilt(variant, () => snapshot(variant, encodeOne, true)).catch(() => {});
        }
      }
    } finally {
      passing = false;
    }
  }
  onCommitted(unwrap(db), (changes) => {
    if (changes.some((change) => change.collection === 'conversation')) void keepUp();
  });

  /**
   * The kept segments of `parts` whose stored body cannot be read (a Blob whose file the browser
   * lost: evicted, or gone after a restart, as WebKit's are). A kept segment is a cache: one that
   * cannot be read is rebuilt from the records. Each body is checked once per connection.
   */
  async function unreadable(variant: 0 | 1, parts: SnapshotPart[]): Promise<SnapshotSegment[]> {
    const kept = parts.flatMap((part) => ('kept' in part ? [part.kept] : 'extend' in part ? [part.extend] : []));
    const known = readable[variant];
    const checks = await Promise.all(
      kept.map(async (segment) => [segment, known.has(segmentKey(segment)) || (await canRead(segment.body))] as const),
    );
    // Only the segments kept now are remembered: the set never outgrows the store.
    readable[variant] = new Set(checks.filter(([, ok]) => ok).map(([segment]) => segmentKey(segment)));
    return checks.filter(([, ok]) => !ok).map(([segment]) => segment);
  }

  /**
   * Removes unreadable segments (every segment of `variant` when they could not be read at all):
   * the next plan rebuilds their ranges. Bodies are kept as text from now on.
   */
  async function drop(segments: SnapshotSegment[] | { variant: 0 | 1 }) {
    storesBlobs = false;
    const tx = db.transaction(['snapshots', 'meta'], 'readwrite');
    await commit(tx, function* () {
      const store = tx.objectStore('snapshots');
      if (Array.isArray(segments)) for (const segment of segments) yield store.delete([segment.variant, segment.start]);
      else yield store.delete(IDBKeyRange.bound([segments.variant, WHOLE], [segments.variant, SEGMENT_END]));
      yield tx.objectStore('meta').put(true, BLOBS_LOST);
    });
  }

  /** Runs a read of the kept segments again without them, once, when they could not be read at all. */
  async function orRebuilt<T>(variant: 0 | 1, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof SegmentsUnreadable)) throw error;
      await drop({ variant });
      return read();
    }
  }

  /** Stores the segments a snapshot wrote in place of those of the parts it did not keep. */
  async function keepSegments(variant: 0 | 1, parts: SnapshotPart[], segments: NewSegment[]) {
    const ranges = parts.flatMap((part) => ('stale' in part ? [part.stale] : 'extend' in part ? [part.extend] : []));
    const write = async (asBlobs: boolean) => {
      const records = await Promise.all(
        segments.map(async ({ parts, size: _size, ...segment }) => ({
          ...segment,
          body: asBlobs
            ? new Blob(parts)
            : (await Promise.all(parts.map((part) => (typeof part === 'string' ? part : part.text())))).join(''),
        })),
      );
      const tx = db.transaction('snapshots', 'readwrite');
      await commit(tx, function* () {
        for (const range of ranges) yield tx.store.delete(IDBKeyRange.bound([variant, range.start], [variant, range.end], false, true));
        for (const record of records) yield tx.store.put(record);
      });
    };
    if (!(await blobsStored())) return write(false);
    try {
      await write(true);
    } catch {
      // Some engines refuse Blobs in some sessions (WebKit's private ones: UnknownError at commit). As text
      // it works or fails for a reason of its own; once text works, Blobs are not tried again.
      await write(false);
      storesBlobs = false;
    }
  }

  /**
   * Stores a variant's answer as its whole body, true as of `built`: one Blob file, read at
   * once by a cold worker, where the segments are as many files (each opened, and checked once
   * per connection), with where each segment sits in it (`pieces`), so that a read after later
   * writes sends the segments still true as slices of it. Where bodies are Blobs.
   */
  async function keepWhole(variant: 0 | 1, body: Blob, built: number, pieces: WholePiece[]) {
    if (!(await blobsStored())) return;
    const tx = db.transaction('snapshots', 'readwrite');
    await commit(tx, function* () {
      yield tx.store.put({ variant, start: WHOLE, end: WHOLE, built, ids: [], body, pieces } as WholeRecord);
    });
    wholeReadable[variant] = built;
  }

  /** Whether the whole body's file can be read (checked once per connection and build). */
  async function wholeReadableNow(variant: 0 | 1, whole: WholeRecord): Promise<boolean> {
    if (wholeReadable[variant] === whole.built) return true;
    if (!(await canRead(whole.body))) return false;
    wholeReadable[variant] = whole.built;
    return true;
  }

  /**
   * The variant's body (a read), or, with `pass`, only what keeps it up to date (stale segments
   * encoded and kept before it returns, nothing composed when nothing is stale; nothing done for
   * a variant with no kept segments).
   */
  async function snapshot(variant: 0 | 1, encode: Encode, pass: boolean, rebuilt = false): Promise<Blob | string | undefined> {
    const withMessages = variant === 1;
    // One transaction: the kept segments are checked against the log, and the stale ranges read, at one point in time.
    const tx = db.transaction(
      withMessages ? ['snapshots', 'changes', 'conversations', 'messages'] : ['snapshots', 'changes', 'conversations'],
    );
    const { whole, current } = await readWhole(tx as never, variant);
    // The whole body, while still true: nothing else is read.
    if (whole && current) {
      await tx.done;
      if (pass) return undefined;
      if (await wholeReadableNow(variant, whole)) return whole.body;
      // Lost (see unreadable): served from the segments, kept as text from now on.
      await drop([whole]);
      return snapshot(variant, encode, pass, rebuilt);
    }
    const { parts, reads, built, kept } = await planSegments(tx as never, variant);
    hasKept[variant] = kept > 0;
    if (pass && !kept) {
      await tx.done;
      return undefined;
    }
    const bySeq = tx.objectStore('conversations').index('by-seq');
    const records = await Promise.all(reads.map((range) => bySeq.getAll(IDBKeyRange.bound(range.start, range.end, false, true))));
    let messages: Map<string, MessageRecord> | undefined;
    if (withMessages && reads.length) {
      const store = tx.objectStore('messages');
      const count = records.reduce((n, list) => n + list.length, 0);
      const found =
        count >= READ_ALL_MESSAGES_FROM
          ? await store.getAll()
          : (await Promise.all(records.flat().map((record) => store.index('by-conversation').getAll(record.id)))).flat();
      messages = new Map(found.map((m) => [m.id, m]));
    }
    await tx.done;
    // The segments the whole body holds as they are kept are sent as slices of it.
    let base: WholeRecord | undefined;
    if (whole?.pieces && typeof whole.body !== 'string') {
      if (await wholeReadableNow(variant, whole)) base = whole;
      else await drop([whole]);
    }
    const inWhole = new Map((base?.pieces ?? []).map((piece) => [`${piece.start}:${piece.end}:${piece.built}`, piece]));
    const offsetInWhole = (segment: SnapshotSegment) => {
      const piece = inWhole.get(`${segment.start}:${segment.end}:${segment.built}`);
      return piece && typeof segment.body !== 'string' && piece.size === segment.body.size ? piece.offset : undefined;
    };
    const outside = parts.filter((part) => ('kept' in part ? offsetInWhole(part.kept) === undefined : 'extend' in part));
    const lost = rebuilt ? [] : await unreadable(variant, outside);
    if (lost.length) {
      // Read again without them: their ranges are encoded from the records.
      await drop(lost);
      return snapshot(variant, encode, pass, true);
    }
    const encodeOne = (record: ConversationRecord) => encode(record, messages);
    const items: BodyItem[] = [];
    const written: NewSegment[] = [];
    let next = 0;
    for (const part of parts) {
      if ('kept' in part) {
        items.push({ body: part.kept.body, segment: part.kept, inWhole: offsetInWhole(part.kept) });
        continue;
      }
      const range = 'stale' in part ? part.stale : part.extend;
      const segments = cutSegments(range, records[next++]!, encodeOne, built, variant, 'extend' in part ? part.extend : undefined);
      for (const segment of segments) items.push({ body: nativeBlobs ? new Blob(segment.parts) : segment.parts.join(''), segment });
      written.push(...segments);
    }
    // The whole body is written again once more segments than MAX_OUTSIDE_WHOLE lie outside it (or there is none),
    // or by a read that finds nothing changed since the read before (a stable variant: served alone from then on).
    const stable = !pass && lastRead[variant] === built;
    if (!pass) lastRead[variant] = built;
    const outsideWhole = items.filter(
      (item) => item.inWhole === undefined && (typeof item.body === 'string' ? item.body : item.body.size),
    ).length;
    const rewrite = items.length > 1 && outsideWhole > (base && !stable ? MAX_OUTSIDE_WHOLE : 0) && nativeBlobs && (await blobsStored());
    if (pass && !written.length && !rewrite) return undefined;
    const { body, pieces } = composeBody(items, nativeBlobs, base?.body as Blob | undefined);
    const keep = async () => {
      if (written.length) await keepSegments(variant, parts, written);
      hasKept[variant] = true;
      if (rewrite && typeof body !== 'string') await keepWhole(variant, body, built, pieces);
    };
    // A read answers first; a pass returns once they are kept.
    const keeping = written.length || rewrite ? keepInTurn(keep) : undefined;
    if (pass) await keeping;
    return body;
  }

  return {
    // Where kept Blobs cannot be served (see blobsOutliveRecords), those a database holds are dropped before the first read.
    conversationsSnapshot: async (withMessages, encode) => {
      await blobsStored();
      const variant = withMessages ? 1 : 0;
      encoders[variant] = encode;
      return (await orRebuilt(variant, () => snapshot(variant, encode, false)))!;
    },

    conversationIds: () =>
      orRebuilt(0, async () => {
        const tx = db.transaction(['snapshots', 'changes', 'conversations']);
        const { parts, reads, built } = await planSegments(tx, 0);
        const bySeq = tx.objectStore('conversations').index('by-seq');
        const keys = await Promise.all(reads.map((range) => bySeq.getAllKeys(IDBKeyRange.bound(range.start, range.end, false, true))));
        await tx.done;
        let next = 0;
        const ids = parts.flatMap((part) =>
          'kept' in part ? part.kept.ids : 'extend' in part ? [...part.extend.ids, ...keys[next++]!] : keys[next++]!,
        );
        return { ids, seq: built };
      }),
  };
}
