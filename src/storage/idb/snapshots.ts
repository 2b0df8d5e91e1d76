/**
 * Conversations snapshots kept ready to send (the `snapshots` store): read from their stored segments,
 * stale ranges encoded afresh and kept again (docs/performance.md).
 */
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { ConversationRecord, MessageRecord, PiecesDB } from '../schema.js';
import { cutSegments, planSnapshot, SEGMENT_END, snapshotBody, type NewSegment, type SnapshotPart } from '../snapshot-plan.js';
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

type PlanTx = IDBPTransaction<PiecesDB, Array<'snapshots' | 'changes' | 'conversations'>, 'readonly'>;

/**
 * Inside `tx`: the kept segments of a variant checked against the change log (see
 * planSnapshot), what each part not kept as it is must read (a stale range whole, an
 * extended segment past its `built`), and the last change (what the result is true as of).
 */
async function planSegments(tx: PlanTx, variant: 0 | 1) {
  const changeStore = tx.objectStore('changes');
  const [segments, last] = await Promise.all([
    tx.objectStore('snapshots').getAll(IDBKeyRange.bound([variant, 0], [variant, SEGMENT_END])),
    changeStore.openCursor(null, 'prev'),
  ]);
  const log = segments.length
    ? await readChanges(changeStore as never, Math.min(...segments.map((s) => s.built)))
    : { changes: [], complete: true };
  const parts = planSnapshot(segments, log.changes.filter((c) => c.collection === 'conversation'), log.complete);
  const reads = parts.flatMap((part) =>
    'stale' in part ? [part.stale] : 'extend' in part ? [{ start: Math.max(part.extend.start, part.extend.built + 1), end: part.extend.end }] : [],
  );
  return { parts, reads, built: last?.key ?? 0 };
}

export interface SnapshotStore extends Pick<Storage, 'conversationsSnapshot'> {
  /**
   * The conversation ids in snapshot order, from the ids the kept segments of the snapshot
   * without messages list (a cold read of the index costs far more), the ranges changed since
   * read from the index.
   */
  conversationIds(): Promise<{ ids: string[]; seq: number }>;
}

export function snapshotStore(db: IDBPDatabase<PiecesDB>): SnapshotStore {
  /**
   * Whether segment bodies are stored as Blobs (kept out of the JavaScript heap): where the
   * environment's Blob survives a structured clone (not a DOM emulation's Blob in Node), and
   * until the database refuses one (WebKit's private sessions do). Else they are stored as text.
   */
  const nativeBlobs = blobsClone();
  let storesBlobs = nativeBlobs;

  /** Stores the segments a snapshot wrote in place of those of the parts it did not keep. */
  async function keepSegments(variant: 0 | 1, parts: SnapshotPart[], segments: NewSegment[]) {
    const ranges = parts.flatMap((part) => ('stale' in part ? [part.stale] : 'extend' in part ? [part.extend] : []));
    const write = async (asBlobs: boolean) => {
      const records = await Promise.all(
        segments.map(async ({ parts, size: _size, ...segment }) => ({
          ...segment,
          body: asBlobs ? new Blob(parts) : (await Promise.all(parts.map((part) => (typeof part === 'string' ? part : part.text())))).join(''),
        })),
      );
      const tx = db.transaction('snapshots', 'readwrite');
      await commit(tx, function* () {
        for (const range of ranges) yield tx.store.delete(IDBKeyRange.bound([variant, range.start], [variant, range.end], false, true));
        for (const record of records) yield tx.store.put(record);
      });
    };
    if (!storesBlobs) return write(false);
    try {
      await write(true);
    } catch {
      // Some engines refuse Blobs in some sessions (WebKit's private ones: UnknownError at commit). As text
      // it works or fails for a reason of its own; once text works, Blobs are not tried again.
      await write(false);
      storesBlobs = false;
    }
  }

  return {
    async conversationsSnapshot(withMessages, encode) {
      const variant = withMessages ? 1 : 0;
      // One transaction: the kept segments are checked against the log, and the stale ranges read, at one point in time.
      const tx = db.transaction(withMessages ? ['snapshots', 'changes', 'conversations', 'messages'] : ['snapshots', 'changes', 'conversations']);
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
      if (written.length) void keepSegments(variant, parts, written).catch(() => {});
      return snapshotBody(bodies, nativeBlobs);
    },

    async conversationIds() {
      const tx = db.transaction(['snapshots', 'changes', 'conversations']);
      const { parts, reads, built } = await planSegments(tx, 0);
      const bySeq = tx.objectStore('conversations').index('by-seq');
      const keys = await Promise.all(reads.map((range) => bySeq.getAllKeys(IDBKeyRange.bound(range.start, range.end, false, true))));
      await tx.done;
      let next = 0;
      const ids = parts.flatMap((part) => ('kept' in part ? part.kept.ids : 'extend' in part ? [...part.extend.ids, ...keys[next++]!] : keys[next++]!));
      return { ids, seq: built };
    },
  };
}
