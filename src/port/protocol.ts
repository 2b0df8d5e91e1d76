/**
 * The fast path: requests from a page to its worker over a MessagePort,
 * answered by the same service as the worker's fetch handler, and the rules
 * that keep a request from being lost or run twice when the worker stops.
 *
 * A port message neither wakes a stopped worker nor keeps it alive, so:
 * - the worker acknowledges each request as it receives it (`accepted`), and
 *   refuses one that reaches it later than `EXPIRY_MS` after it was sent
 *   (`expired`): after that time a request it has not acknowledged can never
 *   run there;
 * - a request not acknowledged within `CHECK_MS` makes the page connect again
 *   (a `postMessage` to the worker, which wakes it): another instance of the
 *   same worker proves the one behind the port stopped (a worker never runs two
 *   instances at once), and the port is judged dead at once; otherwise the
 *   request gets `EXPIRY_MS + GRACE_MS` to be acknowledged. A dead port's
 *   requests go by `fetch` (which wakes the worker), carrying their id (`ID_HEADER`);
 * - the worker remembers each id it received (port or fetch) for
 *   `REMEMBER_MS`, with the answer of a write: a write that arrives again
 *   is answered from memory, never run again; a request that was acknowledged
 *   by a worker that then stopped is asked for with `REPLAY_HEADER` and, if the
 *   worker that answers never received it, fails like a dropped connection;
 * - where the browser has Web Locks, the worker holds one named in its `ready`
 *   for as long as it runs, and the page waits for it: the browser releases it
 *   when the instance stops, so the page knows its port is dead as soon as the
 *   worker stopped, instead of when a request goes unacknowledged. The
 *   requests under way then go as above (unacknowledged ones by fetch, those
 *   acknowledged asked for by id), and the next request goes by fetch (which
 *   wakes the worker) while a port is opened afresh. The page only waits: the
 *   worker is not woken until the page has a request.
 */

/** Sent with the retry by fetch of a request that went over the port first. */
export const ID_HEADER = 'x-pieces-request-id';
/** `only`: answer from memory, never run (the request was acknowledged by a worker that stopped since). */
export const REPLAY_HEADER = 'x-pieces-replay';
/** The worker's answer to a replay it has no memory of: `lost`. */
export const LOST = 'lost';

/** The Web Lock a worker instance holds while it runs: this prefix and the instance. */
export const LOCK_PREFIX = 'pieces-os-worker:instance:';

/** A request older than this when the worker receives it is refused, not run. */
export const EXPIRY_MS = 1000;
/** How long the page waits for an acknowledgement before checking the worker behind the port. */
export const CHECK_MS = 15;
/**
 * After this long without a word from the worker on its port, the page's next request goes
 * by fetch (the worker may have been stopped as idle; a fetch wakes it) and the port is
 * opened afresh.
 */
export const IDLE_MS = 5000;
/** Extra time the page waits for an acknowledgement before judging the port dead. */
export const GRACE_MS = 1000;
/** How long the worker remembers a request id (and a write's answer). */
export const REMEMBER_MS = 60_000;
/** Largest answer of a write kept for a replay (larger ones are replayed as lost). */
export const REPLAY_LIMIT = 16 * 1024 * 1024;
/**
 * Most bytes of write answers a worker keeps for replays, all together: past it the oldest are
 * let go (a replay of one is answered as lost). Bounds the worker's memory under a burst of writes.
 */
export const KEPT_LIMIT = 16 * 1024 * 1024;
/** How often a port with requests under way is pinged (it must answer within EXPIRY_MS + GRACE_MS). */
export const PING_MS = 3000;

/** The page's connect message, sent to the worker with `postMessage` (which wakes it), one port attached. */
export interface ConnectMessage {
  type: 'pieces:fast-path';
}

export type Headers = Array<[string, string]>;

export type ToWorker =
  /** `whole`: the page takes an answer in one message (`answer`); a page without it gets head, chunks and end. */
  | { type: 'request'; id: string; sent: number; method: string; url: string; headers: Headers; body: ArrayBuffer | null; whole?: true }
  /** The page stopped reading a streamed answer (a socket closed): the worker stops producing it. */
  | { type: 'cancel'; id: string }
  | { type: 'ping'; n: number };

export type ToPage =
  | { type: 'ready'; instance: string; lock?: string; fetches?: number }
  | { type: 'accepted'; id: string }
  | { type: 'expired'; id: string }
  | { type: 'head'; id: string; status: number; statusText: string; headers: Headers }
  /**
   * A whole answer in one message (head, body, end): what the service made from text, or a
   * read whose body is a Blob (a snapshot kept ready to send), sent as it is.
   */
  | { type: 'answer'; id: string; status: number; statusText: string; headers: Headers; body: string | Blob | null }
  | { type: 'chunk'; id: string; chunk: Uint8Array }
  | { type: 'end'; id: string }
  | { type: 'error'; id: string; message: string }
  | { type: 'pong'; n: number };

/** Statuses whose responses have no body. */
export const NULL_BODY = new Set([101, 103, 204, 205, 304]);
