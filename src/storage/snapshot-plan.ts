/**
 * Conversations snapshots kept ready to send: which stored segments are still true, which ranges to
 * encode afresh, how a range is cut into segments (docs/performance.md).
 */
import type { ConversationRecord, SnapshotSegment } from './schema.js';
import type { Change } from './storage.js';

/** End of the last segment: past every sequence number. */
export const SEGMENT_END = Number.MAX_SAFE_INTEGER;

/**
 * The `start` of a variant's whole body (the record at [variant, WHOLE]): the answer as one
 * Blob, true as of its `built`, written once a read found every segment kept (see snapshots.ts).
 */
export const WHOLE = -1;

/** Wire JSON a segment holds before the next one starts (UTF-16 code units, about bytes). */
export const SEGMENT_SIZE = 128 * 1024;

/** A range of snapshot order [start, end) to encode afresh from the records. */
export interface StaleRange {
  start: number;
  end: number;
}

/**
 * A part of a snapshot: a kept segment still true; a kept segment to extend with the
 * conversations created in its range since it was built (nothing it holds changed); or a
 * range to encode afresh.
 */
export type SnapshotPart = { kept: SnapshotSegment } | { extend: SnapshotSegment } | { stale: StaleRange };

/** Whether `segments` (sorted by start) cover every sequence number exactly once. */
export function isPartition(segments: SnapshotSegment[]): boolean {
  if (!segments.length || segments[0]!.start !== 0 || segments.at(-1)!.end !== SEGMENT_END) return false;
  return segments.every((segment, i) => segment.start < segment.end && (i === 0 || segments[i - 1]!.end === segment.start));
}

/**
 * The parts of a snapshot, in order: stored segments that are still true, and
 * ranges to rebuild. `changes` are the conversation changes after the oldest
 * segment's `built` (`complete` false if the log no longer reaches back that
 * far). A segment is stale when a later change names one of its conversations,
 * or creates a conversation in its range (an id no segment lists, at a
 * sequence number in the range: a created conversation's snapshot order is the
 * sequence number of its creation). Adjacent stale ranges are merged.
 */
export function planSnapshot(segments: SnapshotSegment[], changes: Change[], complete: boolean): SnapshotPart[] {
  if (!complete || !isPartition(segments)) return [{ stale: { start: 0, end: SEGMENT_END } }];
  const stale = new Set<SnapshotSegment>();
  const grown = new Set<SnapshotSegment>();
  if (changes.length) {
    const owner = new Map<string, SnapshotSegment>();
    for (const segment of segments) for (const id of segment.ids) owner.set(id, segment);
    for (const change of changes) {
      const known = owner.get(change.id);
      if (known) {
        if (change.seq > known.built) stale.add(known);
      } else if (!change.deleted) {
        const covering = segments.find((s) => s.start <= change.seq && change.seq < s.end)!;
        if (change.seq > covering.built) grown.add(covering);
      }
    }
  }
  const parts: SnapshotPart[] = [];
  for (const segment of segments) {
    const previous = parts.at(-1);
    if (!stale.has(segment)) parts.push(grown.has(segment) ? { extend: segment } : { kept: segment });
    else if (previous && 'stale' in previous) previous.stale.end = segment.end;
    else parts.push({ stale: { start: segment.start, end: segment.end } });
  }
  return parts;
}

/** A segment being written: its body as parts (kept bodies and new text), and their length. */
export type NewSegment = Omit<SnapshotSegment, 'body'> & { parts: Array<Blob | string>; size: number };

const partSize = (part: Blob | string) => (typeof part === 'string' ? part.length : part.size);

/**
 * Cuts conversations (in snapshot order) into segments of about SEGMENT_SIZE that cover
 * `range` exactly (an empty range is one empty segment). With `from`, the conversations
 * extend that kept segment (they were created in its range after it was built): its body
 * is kept as it is, the new ones appended or, once it is full, cut into segments after it.
 * `encode` gives a conversation's wire JSON.
 */
export function cutSegments(
  range: StaleRange,
  conversations: ConversationRecord[],
  encode: (record: ConversationRecord) => string,
  built: number,
  variant: 0 | 1,
  from?: SnapshotSegment,
): NewSegment[] {
  const segments: NewSegment[] = [];
  const fresh = (start: number): NewSegment => ({ variant, start, end: range.end, built, ids: [], parts: [], size: 0 });
  let open: NewSegment = from
    ? { variant, start: from.start, end: from.end, built, ids: [...from.ids], parts: [from.body], size: partSize(from.body) }
    : fresh(range.start);
  let text = '';
  for (const record of conversations) {
    if (open.size + text.length >= SEGMENT_SIZE) {
      if (text) open.parts.push(text);
      open.size += text.length;
      text = '';
      open.end = record.seq;
      segments.push(open);
      open = fresh(record.seq);
    }
    text += (open.ids.length ? ',' : '') + encode(record);
    open.ids.push(record.id);
  }
  if (text) open.parts.push(text);
  open.size += text.length;
  segments.push(open);
  return segments;
}

/**
 * The body of a Conversations snapshot: `{"iterable":[…]}` from segment bodies in order; a
 * Blob (its bytes stay out of the heap), or text where the environment's Blob is not the
 * platform's (a DOM emulation in Node, whose Blob its Response cannot read).
 */
export function snapshotBody(bodies: Array<Blob | string>, asBlob: boolean): Blob | string {
  const parts: Array<Blob | string> = ['{"iterable":['];
  let first = true;
  for (const body of bodies) {
    if (typeof body === 'string' ? !body.length : !body.size) continue;
    if (!first) parts.push(',');
    parts.push(body);
    first = false;
  }
  parts.push(']}');
  return asBlob ? new Blob(parts) : parts.join('');
}
