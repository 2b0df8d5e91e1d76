/**
 * The fast path's messages and limits: a page's requests to its worker over a MessagePort.
 * How none is lost or run twice when the worker stops: docs/performance.md, "The fast path".
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
  /**
   * `whole`: the page takes an answer in one message (`answer`); a page without it gets head, chunks and end.
   * `frames`: the page takes an event stream made of frames as the frames (`head` with `frames`, then
   * `frames` messages and `end`); a page without it gets the stream's bytes.
   */
  | {
      type: 'request';
      id: string;
      sent: number;
      method: string;
      url: string;
      headers: Headers;
      body: ArrayBuffer | null;
      whole?: true;
      frames?: true;
    }
  /** The page stopped reading a streamed answer (a socket closed): the worker stops producing it. */
  | { type: 'cancel'; id: string }
  | { type: 'ping'; n: number };

export type ToPage =
  | { type: 'ready'; instance: string; lock?: string; fetches?: number }
  | { type: 'accepted'; id: string }
  | { type: 'expired'; id: string }
  /** `frames`: the body follows as `frames` messages (an event stream made of frames), not chunks. */
  | { type: 'head'; id: string; status: number; statusText: string; headers: Headers; frames?: true }
  /**
   * A whole answer in one message (head, body, end): what the service made from text, or a
   * read whose body is a Blob (a snapshot kept ready to send), sent as it is.
   */
  | { type: 'answer'; id: string; status: number; statusText: string; headers: Headers; body: string | Blob | null }
  | { type: 'chunk'; id: string; chunk: Uint8Array }
  /** Frames of an event stream, each its own event (`data: <frame>`), in order. */
  | { type: 'frames'; id: string; frames: string[] }
  | { type: 'end'; id: string }
  | { type: 'error'; id: string; message: string }
  | { type: 'pong'; n: number };

/** Statuses whose responses have no body. */
export const NULL_BODY = new Set([101, 103, 204, 205, 304]);
