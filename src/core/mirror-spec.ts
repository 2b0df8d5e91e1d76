/**
 * A mirrored Pieces OS as the page and the page API see it: its state, and what waits in its
 * outbox. (How each write is queued and replayed: src/host/mirror/writes.ts.)
 */

/**
 * A mirrored Pieces OS as the service sees it: `up` (it answers and nothing is queued:
 * requests go to it), `down` (it does not answer: the service answers and queues writes),
 * `draining` (it answers and the queue is being replayed; the service still answers),
 * `blocked` (the browser refused this page access to it, see docs/mirror.md).
 */
export type MirrorState = 'up' | 'down' | 'draining' | 'blocked';

/** One queued operation, as the mirror's status lists it. */
export interface QueuedOperation {
  seq: number;
  operation: string;
  /** The record it is about, when it names one. */
  id?: string;
  /** Sent at least once without a known outcome (a create is looked for before it is sent again). */
  sent?: true;
}

/** An operation the upstream refused (a 4xx), or one that followed such an operation on the same record: kept, not sent. */
export interface SetAsideOperation {
  operation: string;
  id: string;
  status: number;
  message: string;
}

export interface MirrorStatus {
  state: MirrorState;
  /** The upstream's base URL (for `'auto'`, the one found; null until one is). */
  upstream: string | null;
  /** The operations queued, in the order they will be sent. */
  outbox: QueuedOperation[];
  setAside: SetAsideOperation[];
  /** The last error met reaching the upstream (null once it answers again). */
  lastError: string | null;
}
