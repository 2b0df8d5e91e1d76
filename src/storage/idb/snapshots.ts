/**
 * Conversations snapshots kept ready to send (the `snapshots` store): read from their stored segments,
 * stale ranges encoded afresh and kept again (docs/performance.md).
 */
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { ConversationRecord, MessageRecord, PiecesDB, SnapshotSegment } from '../schema.js';
import { cutSegments, planSnapshot, SEGMENT_END, snapshotBody, WHOLE, type NewSegment, type SnapshotPart } from '../snapshot-plan.js';
import type { Storage } from '../storage.js';
import { commit, readChanges } from './transactions.js';

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
  return { parts, reads, built: last?.key ?? 0 };
}

/**
 * Inside `tx`: the variant's whole body if it is still true (no conversation changed since it
 * was built, and the log reaches back that far), else undefined.
 */
async function currentWhole(tx: PlanTx, variant: 0 | 1): Promise<SnapshotSegment | undefined> {
  const whole = await tx
    .objectStore('snapshots')
    .get([variant, WHOLE])
    .catch((error: unknown) => {
      throw Object.assign(new SegmentsUnreadable(String(error)), { cause: error });
    });
  if (!whole) return undefined;
  const { changes, complete } = await readChanges(tx.objectStore('changes') as never, whole.built);
  return complete && !changes.some((change) => change.collection === 'conversation') ? whole : undefined;
}

export interface SnapshotStore extends Pick<Storage, 'conversationsSnapshot'> {
  /**
   * The conversation ids in snapshot order, from the ids the kept segments of the snapshot
   * without messages list (a cold read of the index costs far more), the ranges changed since
   * read from the index.
   */
  conversationIds(): Promise<{ ids: string[]; seq: number }>;
}

/**
 * How long after a read that re-encoded segments the variant is read again in the background
 * (nothing answered), so that a variant left stable is kept whole before the worker stops.
 */
export const SETTLE_MS = 2_000;

export function snapshotStore(db: IDBPDatabase<PiecesDB>, { settleMs = SETTLE_MS }: { settleMs?: number } = {}): SnapshotStore {
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
  /** Per variant, whether a whole body is being written. */
  const writingWhole = [false, false];
  /** Per variant, the background read that keeps the whole body once writes have stopped. */
  const settling: Array<ReturnType<typeof setTimeout> | undefined> = [undefined, undefined];

  /** Reads the variant again `settleMs` after the last read that re-encoded segments: it keeps the whole body if nothing changed since. */
  function settleLater(withMessages: boolean, encode: Parameters<Storage['conversationsSnapshot']>[1]) {
    const variant = withMessages ? 1 : 0;
    clearTimeout(settling[variant]);
    settling[variant] = setTimeout(() => {
      settling[variant] = undefined;
      // A closed connection (or another failure) only means the next read keeps it.
      void orRebuilt(variant, () => snapshot(withMessages, encode)).catch(() => {});
    }, settleMs);
  }

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
   * per connection). Written when a read found every segment kept (nothing changed since the
   * last read: the variant is stable), over more than one segment, where bodies are Blobs.
   */
  async function keepWhole(variant: 0 | 1, body: Blob, built: number) {
    if (writingWhole[variant] || !(await blobsStored())) return;
    writingWhole[variant] = true;
    try {
      const tx = db.transaction('snapshots', 'readwrite');
      await commit(tx, function* () {
        yield tx.store.put({ variant, start: WHOLE, end: WHOLE, built, ids: [], body });
      });
      wholeReadable[variant] = built;
    } finally {
      writingWhole[variant] = false;
    }
  }

  async function snapshot(
    withMessages: boolean,
    encode: Parameters<Storage['conversationsSnapshot']>[1],
    rebuilt = false,
  ): Promise<Blob | string> {
    const variant = withMessages ? 1 : 0;
    // One transaction: the kept segments are checked against the log, and the stale ranges read, at one point in time.
    const tx = db.transaction(
      withMessages ? ['snapshots', 'changes', 'conversations', 'messages'] : ['snapshots', 'changes', 'conversations'],
    );
    // The whole body, while still true: nothing else is read.
    const whole = await currentWhole(tx as never, variant);
    if (whole) {
      await tx.done;
      if (wholeReadable[variant] === whole.built || (await canRead(whole.body))) {
        wholeReadable[variant] = whole.built;
        return whole.body;
      }
      // Lost (see unreadable): served from the segments, kept as text from now on.
      await drop([whole]);
      return snapshot(withMessages, encode, rebuilt);
    }
    const { parts, reads, built } = await planSegments(tx as never, variant);
    const bySeq = tx.objectStore('conversations').index('by-seq');
    const records = await Promise.all(reads.map((range) => bySeq.getAll(IDBKeyRange.bound(range.start, range.end, false, true))));
    let messages: Map<string, MessageRecord> | undefined;
    if (withMessages) {
      const store = tx.objectStore('messages');
      const count = records.reduce((n, list) => n + list.length, 0);
      const found =
        count >= READ_ALL_MESSAGES_FROM
          ? await store.getAll()
          : (await Promise.all(records.flat().map((record) => store.index('by-conversation').getAll(record.id)))).flat();
      messages = new Map(found.map((m) => [m.id, m]));
    }
    await tx.done;
    const lost = rebuilt ? [] : await unreadable(variant, parts);
    if (lost.length) {
      // Read again without them: their ranges are encoded from the records.
      await drop(lost);
      return snapshot(withMessages, encode, true);
    }
    const encodeOne = (record: ConversationRecord) => encode(record, messages);
    const bodies: Array<Blob | string> = [];
    const written: NewSegment[] = [];
    let next = 0;
    for (const part of parts) {
      if ('kept' in part) {
        bodies.push(part.kept.body);
        continue;
      }
      const range = 'stale' in part ? part.stale : part.extend;
      const segments = cutSegments(range, records[next++]!, encodeOne, built, variant, 'extend' in part ? part.extend : undefined);
      for (const segment of segments) bodies.push(nativeBlobs ? new Blob(segment.parts) : segment.parts.join(''));
      written.push(...segments);
    }
    // Kept for the next read once answered; a failure only means the next read encodes them again.
    if (written.length) {
      const several = parts.length > 1 || written.length > 1;
      void keepSegments(variant, parts, written).then(
        () => several && nativeBlobs && settleLater(withMessages, encode),
        () => {},
      );
    }
    const body = snapshotBody(bodies, nativeBlobs);
    if (!written.length && parts.length > 1 && typeof body !== 'string') void keepWhole(variant, body, built).catch(() => {});
    return body;
  }

  return {
    // Where kept Blobs cannot be served (see blobsOutliveRecords), those a database holds are dropped before the first read.
    conversationsSnapshot: async (withMessages, encode) => {
      await blobsStored();
      return orRebuilt(withMessages ? 1 : 0, () => snapshot(withMessages, encode));
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
