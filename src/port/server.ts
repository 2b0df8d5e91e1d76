/**
 * The worker's side of the fast path (see protocol.ts): serves ports with
 * `respond`, and answers the retries by fetch of requests that went over a
 * port first without running anything twice.
 */
import { eventText, framesOf } from '../core/event-frames.js';
import { isRerunnable, wholeBody } from '../core/http.js';
import { randomUUID } from '../shared/uuid.js';
import {
  EXPIRY_MS,
  KEPT_LIMIT,
  ID_HEADER,
  LOCK_PREFIX,
  LOST,
  NULL_BODY,
  REMEMBER_MS,
  REPLAY_HEADER,
  REPLAY_LIMIT,
  type ToPage,
  type ToWorker,
} from './protocol.js';

/** What a port server needs of a port (a MessagePort). */
export interface PortLike {
  onmessage: ((event: { data: unknown }) => void) | null;
  postMessage(message: ToPage, transfer?: Transferable[]): void;
}

interface Answer {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  /** null: too large to keep, or a read (run again instead). */
  body: Array<Uint8Array | string> | null;
  /** A read, or an operation that changed nothing: asked for again, it runs again. */
  rerun?: boolean;
}

interface Remembered {
  /** Settles when the request has been answered (undefined: not kept). */
  answer: Promise<Answer | undefined>;
  method: string;
}

export interface PortServerOptions {
  now?: () => number;
  expiryMs?: number;
  rememberMs?: number;
  /** Most bytes of write answers kept for replays, all together (the oldest are let go first). */
  keptLimit?: number;
  /** Figures sent with `ready` (e.g. how many fetches the worker answered). */
  stats?: () => Record<string, number>;
  /**
   * Holds the Web Lock `name` for as long as this instance runs; resolves true once it is
   * held (false where there are no locks). Pages wait for it to know when the instance stopped.
   */
  lock?: (name: string) => Promise<boolean>;
}

export interface PortServer {
  /** This worker instance (a restarted worker has another). */
  readonly instance: string;
  /** How many request ids it remembers now (writes only, for REMEMBER_MS each). */
  readonly remembered: number;
  /** Serves requests arriving on `port`. */
  serve(port: PortLike): void;
  /**
   * The answer to a fetch, for a request that carries a fast-path id (a retry of a request sent over a port):
   * undefined for any other request (answer it as usual).
   */
  answerRetry(request: Request): Promise<Response> | undefined;
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

export function createPortServer(
  respond: (request: Request) => Promise<Response> | undefined,
  options: PortServerOptions = {},
): PortServer {
  const now = options.now ?? Date.now;
  const expiryMs = options.expiryMs ?? EXPIRY_MS;
  const rememberMs = options.rememberMs ?? REMEMBER_MS;
  const instance = randomUUID();
  const memory = new Map<string, Remembered>();
  const lock = LOCK_PREFIX + instance;
  // Ports are answered once the lock is held (or known not to be), so that `ready` can name it.
  const held = options.lock ? options.lock(lock).catch(() => false) : Promise.resolve(false);

  /** The streamed answers being sent, by request id (a page may cancel one). */
  const streaming = new Map<string, { cancel(): unknown }>();
  const keptLimit = options.keptLimit ?? KEPT_LIMIT;
  /** Write answers kept for a replay, oldest first, with their size. */
  const kept = new Map<Answer, number>();
  let keptSize = 0;
  function forget(answer: Answer) {
    keptSize -= kept.get(answer) ?? 0;
    kept.delete(answer);
    // Its id is still remembered: asked for again, the write is reported lost, never run again.
    answer.body = null;
  }

  function remember(id: string, entry: Remembered) {
    memory.set(id, entry);
    void entry.answer.then((answer) => {
      if (!answer?.body) return;
      const size = answer.body.reduce((n, part) => n + (typeof part === 'string' ? part.length * 2 : part.byteLength), 0);
      kept.set(answer, size);
      keptSize += size;
      for (const oldest of kept.keys()) {
        if (keptSize <= keptLimit) break;
        forget(oldest);
      }
    });
    void entry.answer.finally(() =>
      setTimeout(() => {
        memory.delete(id);
        void entry.answer.then((answer) => answer && forget(answer));
      }, rememberMs),
    );
  }

  async function run(port: PortLike, message: Extract<ToWorker, { type: 'request' }>): Promise<Answer | undefined> {
    const { id } = message;
    let response: Response | undefined;
    try {
      const request = new Request(message.url, {
        method: message.method,
        headers: message.headers,
        ...(message.body ? { body: message.body } : {}),
      });
      response = await respond(request);
    } catch (error) {
      port.postMessage({ type: 'error', id, message: (error as Error)?.message ?? String(error) });
      return undefined;
    }
    if (!response) {
      port.postMessage({ type: 'error', id, message: `${message.url} is not under the service's bases.` });
      return undefined;
    }
    if (response.type === 'error') {
      // A network error (e.g. an override's): the page's request fails as fetch's would.
      port.postMessage({ type: 'error', id, message: 'network error' });
      return undefined;
    }
    const headers = [...response.headers];
    const bodyless = NULL_BODY.has(response.status) || message.method === 'HEAD';
    // Text goes whole, in one message, without reading the body stream; so does a read whose
    // body is a Blob (a snapshot kept ready to send: nothing of it passes through this heap).
    // A write's Blob goes in chunks below, its bytes kept for a replay, and so does every answer
    // to a page that does not take whole answers (an older page library).
    const body = message.whole ? wholeBody(response) : undefined;
    // What is run again when asked for again is not kept (reads, and operations that changed nothing).
    const rerun = isRead(message.method) || isRerunnable(response);
    if (typeof body === 'string' || (body && rerun)) {
      port.postMessage({
        type: 'answer',
        id,
        status: response.status,
        statusText: response.statusText,
        headers,
        body: bodyless ? null : body,
      });
      const keep =
        typeof body === 'string' &&
        !rerun &&
        (body.length * 3 <= REPLAY_LIMIT || new TextEncoder().encode(body).byteLength <= REPLAY_LIMIT);
      return { status: response.status, statusText: response.statusText, headers, body: keep ? [body as string] : null, rerun };
    }
    // An event stream made of frames goes as its frames to a page that takes them: nothing encoded here, nothing parsed there.
    const frames = message.frames && !bodyless ? framesOf(response) : undefined;
    port.postMessage({
      type: 'head',
      id,
      status: response.status,
      statusText: response.statusText,
      headers,
      ...(frames ? { frames: true as const } : {}),
    });
    // A write's answer is kept for a replay (up to REPLAY_LIMIT); a read is run again instead.
    let kept: Array<Uint8Array | string> | null = rerun ? null : [];
    let size = 0;
    if (frames) {
      streaming.set(id, frames);
      try {
        for (let batch = await frames.next(); batch; batch = await frames.next()) {
          if (kept) {
            const text = eventText(batch);
            size += text.length * 3;
            if (size > REPLAY_LIMIT) kept = null;
            else kept.push(text);
          }
          port.postMessage({ type: 'frames', id, frames: batch });
        }
      } catch (error) {
        port.postMessage({ type: 'error', id, message: (error as Error)?.message ?? String(error) });
        return undefined;
      } finally {
        streaming.delete(id);
      }
    } else if (response.body && !bodyless) {
      const reader = response.body.getReader();
      streaming.set(id, reader);
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (kept) {
            size += value.byteLength;
            if (size > REPLAY_LIMIT) kept = null;
            else kept.push(value.slice());
          }
          port.postMessage({ type: 'chunk', id, chunk: value }, [value.buffer]);
        }
      } catch (error) {
        port.postMessage({ type: 'error', id, message: (error as Error)?.message ?? String(error) });
        return undefined;
      } finally {
        streaming.delete(id);
      }
    }
    port.postMessage({ type: 'end', id });
    return { status: response.status, statusText: response.statusText, headers, body: kept, rerun };
  }

  function onMessage(port: PortLike, message: ToWorker) {
    if (message?.type === 'ping') {
      port.postMessage({ type: 'pong', n: message.n });
      return;
    }
    if (message?.type === 'cancel') {
      // Cancelling the body reaches the service's stream (its cancel: a socket's subscription ends).
      void Promise.resolve(streaming.get(message.id)?.cancel()).catch(() => {});
      return;
    }
    if (message?.type !== 'request' || typeof message.id !== 'string') return;
    const { id } = message;
    // Received too late (the page may have sent it by fetch since), or received already: not run.
    if (memory.has(id) || !(now() - message.sent <= expiryMs)) {
      port.postMessage({ type: 'expired', id });
      return;
    }
    port.postMessage({ type: 'accepted', id });
    // A read is run again whenever it is asked for again: it needs no memory (a worker that answers
    // many reads keeps nothing of them).
    if (isRead(message.method)) void run(port, message);
    else remember(id, { method: message.method, answer: run(port, message) });
  }

  function fromMemory(answer: Answer): Response {
    const body = answer.body && !NULL_BODY.has(answer.status) ? new Blob(answer.body as BlobPart[]) : null;
    return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  }

  const lost = () =>
    new Response('The service worker stopped while answering this request; it may or may not have been carried out.', {
      status: 503,
      headers: { 'Content-Type': 'text/plain; charset=utf-8', [REPLAY_HEADER]: LOST },
    });

  async function replay(request: Request, entry: Remembered): Promise<Response> {
    const answer = await entry.answer;
    if (answer?.body) return fromMemory(answer);
    // A read (or an operation that changed nothing) runs again; a write whose answer was not kept is reported lost.
    if (isRead(request.method) || answer?.rerun) return (await respond(withoutFastPathHeaders(request))) ?? lost();
    return lost();
  }

  return {
    instance,
    get remembered() {
      return memory.size;
    },
    serve(port) {
      port.onmessage = (event) => onMessage(port, event.data as ToWorker);
      void held.then((locked) => port.postMessage({ type: 'ready', instance, ...(locked ? { lock } : {}), ...options.stats?.() }));
    },
    answerRetry(request) {
      const id = request.headers.get(ID_HEADER);
      if (!id) return undefined;
      const entry = memory.get(id);
      if (entry) return replay(request, entry);
      if (request.headers.get(REPLAY_HEADER) === 'only' && !isRead(request.method)) return Promise.resolve(lost());
      const answer = respond(withoutFastPathHeaders(request));
      if (!answer) return undefined;
      // A write is remembered, so that the same request arriving late on a port is not run again.
      if (!isRead(request.method))
        remember(id, {
          method: request.method,
          answer: answer.then(
            () => undefined,
            () => undefined,
          ),
        });
      return answer;
    },
  };
}

function withoutFastPathHeaders(request: Request): Request {
  const headers = new Headers(request.headers);
  headers.delete(ID_HEADER);
  headers.delete(REPLAY_HEADER);
  return new Request(request, { headers });
}
