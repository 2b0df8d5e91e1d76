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
 * Where a kept segment's bytes sit in a variant's whole body: `size` bytes at `offset`, for the
 * segment [start, end) built as of `built` (a stored segment with the same four is those bytes).
 */
export interface WholePiece {
  start: number;
  end: number;
  built: number;
  offset: number;
  size: number;
}

/** A segment's body in a snapshot: its bytes, its identity, and where they sit in the kept whole body (if they do). */
export interface BodyItem {
  body: Blob | string;
  segment: Pick<SnapshotSegment, 'start' | 'end' | 'built'>;
  /** Offset of the same bytes in `whole` (the segment is one of its pieces): sent as a slice of it. */
  inWhole?: number;
}

const OPEN = '{"iterable":[';
const CLOSE = ']}';

/**
 * The body of a Conversations snapshot: `{"iterable":[…]}` from segment bodies in order, and
 * where each segment sits in it (the pieces of the body, were it kept whole). Segments held by
 * `whole` are sent as slices of it, adjacent ones as one slice (one file read, not one per
 * segment). A Blob (its bytes stay out of the heap), or text where the environment's Blob is not
 * the platform's (a DOM emulation in Node, whose Blob its Response cannot read).
 */
export function composeBody(items: BodyItem[], asBlob: boolean, whole?: Blob): { body: Blob | string; pieces: WholePiece[] } {
  const parts: Array<Blob | string> = [OPEN];
  const pieces: WholePiece[] = [];
  let offset = OPEN.length;
  let run: { from: number; to: number } | undefined;
  const flush = () => {
    if (run) parts.push(whole!.slice(run.from, run.to));
    run = undefined;
  };
  let first = true;
  for (const { body, segment, inWhole } of items) {
    const size = partSize(body);
    const from = whole ? inWhole : undefined;
    if (size && !first) {
      // The comma before it: the one in the whole body when both sit there side by side.
      if (run && from === run.to + 1) run.to++;
      else {
        flush();
        parts.push(',');
      }
      offset++;
    }
    pieces.push({ start: segment.start, end: segment.end, built: segment.built, offset, size });
    if (!size) continue;
    first = false;
    if (from === undefined) {
      flush();
      parts.push(body);
    } else if (run && run.to === from) run.to += size;
    else {
      flush();
      run = { from, to: from + size };
    }
    offset += size;
  }
  flush();
  parts.push(CLOSE);
  return { body: asBlob ? new Blob(parts) : parts.join(''), pieces };
}
