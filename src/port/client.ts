/**
 * The page's side of the fast path (see protocol.ts): sends requests over a
 * port to the worker and builds network-like responses (status, headers, a
 * streamed body) from its replies; falls back to `fetch` where the port cannot
 * be used, without losing a request or having it run twice.
 */
import { EventFrames, eventStream } from '../core/event-frames.js';
import { networkError } from '../shared/network-error.js';
import { randomUUID } from '../shared/uuid.js';
import {
  CHECK_MS,
  EXPIRY_MS,
  GRACE_MS,
  IDLE_MS,
  ID_HEADER,
  LOST,
  NULL_BODY,
  PING_MS,
  REPLAY_HEADER,
  type ToPage,
  type ToWorker,
} from './protocol.js';

/** What the client needs of a port (a MessagePort). */
export interface ClientPort {
  onmessage: ((event: { data: unknown }) => void) | null;
  postMessage(message: ToWorker, transfer?: Transferable[]): void;
  close(): void;
}

/** A port to a worker, with what identifies the worker behind it. */
export interface Connected {
  port: ClientPort;
  /** The worker instance serving the port (a restarted worker has another). */
  instance: string;
  /** The worker (version) it belongs to: one version never runs two instances at once. */
  worker: unknown;
  /**
   * Where the host can tell (a Web Lock the instance holds while it runs): calls `stopped`
   * once the worker instance behind the port has stopped. Returns what ends the watch.
   */
  watch?(stopped: () => void): () => void;
}

export interface PortClientOptions {
  /** Opens a port to the worker that controls the page (waking it), or null where there is none. */
  connect(): Promise<Connected | null>;
  /** The network fetch (the worker's fetch handler answers it). */
  fetch(request: Request): Promise<Response>;
  now?: () => number;
  expiryMs?: number;
  graceMs?: number;
  pingMs?: number;
  /** How long a request waits for its acknowledgement before the worker behind the port is checked. */
  checkMs?: number;
  /** After this long without a word from the worker, the next request goes by fetch and the port is opened afresh. */
  idleMs?: number;
}

interface Pending {
  id: string;
  /** When it was sent (the page's clock). */
  sent: number;
  /** The request to send by fetch if the port fails (made when needed). */
  copy(): Request;
  method: string;
  acked: boolean;
  /** Set once the head arrived: the body's stream. */
  body?: ReadableStreamDefaultController<Uint8Array>;
  /** Set once the head of an event stream sent as frames arrived: its frames. */
  frames?: EventFrames;
  settle(outcome: Promise<Response>): void;
  timer: ReturnType<typeof setTimeout>;
}

interface Connection extends Connected {
  pending: Map<string, Pending>;
  dead: boolean;
  ping?: ReturnType<typeof setInterval>;
  pingWaiting?: { n: number; timer: ReturnType<typeof setTimeout> };
  pings: number;
  checking?: boolean;
  /** When the worker was last heard from on this port. */
  heard: number;
  /** Ends the watch for the instance stopping. */
  unwatchStop?: () => void;
}

const encoder = new TextEncoder();

/** An answer cut off while its body was coming: its reader gets `error`. False when no body had begun. */
function cutOff(pending: Pending, error: TypeError): boolean {
  if (pending.body) pending.body.error(error);
  else if (pending.frames) pending.frames.fail(error);
  else return false;
  return true;
}

export class PortClient {
  private connection: Promise<Connection | null> | null = null;
  /** The connection made last (once made). */
  private current: Connection | null = null;
  private readonly now: () => number;
  private readonly expiryMs: number;
  private readonly graceMs: number;
  private readonly pingMs: number;
  private readonly checkMs: number;
  private readonly idleMs: number;
  /** How many requests went over a port, and how many by fetch (a retry after the port failed). */
  readonly counts = { port: 0, fetch: 0 };

  constructor(private readonly options: PortClientOptions) {
    this.now = options.now ?? Date.now;
    this.expiryMs = options.expiryMs ?? EXPIRY_MS;
    this.graceMs = options.graceMs ?? GRACE_MS;
    this.pingMs = options.pingMs ?? PING_MS;
    this.checkMs = options.checkMs ?? CHECK_MS;
    this.idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Forgets the current port (e.g. another worker took over): the next request connects again. */
  reconnect(): void {
    const current = this.connection;
    this.connection = null;
    this.current = null;
    // Requests under way on the old port stay there: the old worker may still answer them.
    void current?.then((c) => c && c.pending.size === 0 && this.close(c));
  }

  /**
   * Sends `request` over the port (or by fetch where the port cannot be used). `text`: its body as
   * the caller gave it, a string, encoded here rather than read back from the Request (in Chromium
   * reading a Request's body costs 40–50 µs more than encoding the string).
   */
  async request(request: Request, text?: string): Promise<Response> {
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? null
        : text !== undefined
          ? encoder.encode(text).buffer
          : await request.arrayBuffer();
    // What a retry by fetch sends, made only when one is needed, from the bytes read: not by
    // `clone()`, which tees the body stream (in Chromium ten times the cost of reading the body).
    // The port gets its own copy of the bytes (structured clone), so `body` stays whole.
    const copy = () => (body ? new Request(request, { body }) : request.clone());
    const last = this.current;
    if (last && last.pending.size === 0 && (last.dead || this.now() - last.heard > this.idleMs)) {
      // The worker behind the port stopped, or may have (quiet for a while), and a port message
      // would not wake it. This request goes by fetch (which does), and the next ones over a
      // port opened afresh.
      this.reconnect();
      void this.connect();
      return this.viaFetch(copy());
    }
    const connection = await this.connect();
    if (!connection) return this.viaFetch(copy());
    const id = randomUUID();
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const sent = this.now();
      const pending: Pending = {
        id,
        sent,
        copy,
        method: request.method,
        acked: false,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          outcome.then(resolve, reject);
        },
        timer: setTimeout(() => void this.check(connection), this.checkMs),
      };
      connection.pending.set(id, pending);
      this.counts.port++;
      const message: ToWorker = {
        type: 'request',
        id,
        sent,
        method: request.method,
        url: request.url,
        headers: [...request.headers],
        body,
        whole: true,
        frames: true,
      };
      connection.port.postMessage(message);
      this.watch(connection);
    });
  }

  private connect(): Promise<Connection | null> {
    this.connection ??= this.options.connect().then(
      (connected) => connected && this.open(connected),
      () => null,
    );
    const connection = this.connection;
    // A failed connect is tried again by the next request.
    void connection.then((c) => {
      if (!c && this.connection === connection) this.connection = null;
    });
    return connection;
  }

  /** Starts using a port: the next requests go over it. */
  private open(connected: Connected): Connection {
    const connection: Connection = { ...connected, pending: new Map(), dead: false, pings: 0, heard: this.now() };
    this.current = connection;
    connection.port.onmessage = (event) => this.onMessage(connection, event.data as ToPage);
    // The instance stopped: its port is dead now (what it never acknowledged cannot run there any more).
    connection.unwatchStop = connected.watch?.(() => this.judgeDead(connection));
    return connection;
  }

  private onMessage(connection: Connection, message: ToPage) {
    connection.heard = this.now();
    if (message?.type === 'pong') {
      if (connection.pingWaiting?.n === message.n) {
        clearTimeout(connection.pingWaiting.timer);
        connection.pingWaiting = undefined;
      }
      return;
    }
    const pending = connection.pending.get((message as { id?: string })?.id ?? '');
    if (!pending || connection.dead) return;
    switch (message.type) {
      case 'accepted':
        pending.acked = true;
        clearTimeout(pending.timer);
        return;
      case 'expired':
        // Not run by the worker: the request goes by fetch.
        this.finish(connection, pending);
        pending.settle(this.viaFetch(pending.copy(), pending.id));
        return;
      case 'head': {
        const bodyless = NULL_BODY.has(message.status) || pending.method === 'HEAD';
        const init = { status: message.status, statusText: message.statusText, headers: message.headers };
        // A streamed answer the page stops reading (a socket closed) is stopped in the worker too.
        const stopped = () => {
          this.finish(connection, pending);
          if (!connection.dead) connection.port.postMessage({ type: 'cancel', id: pending.id });
        };
        if (message.frames && !bodyless) {
          // The answer's frames as they come; read as bytes only by a reader that wants bytes.
          pending.frames = new EventFrames(stopped);
          pending.settle(Promise.resolve(eventStream(pending.frames, init)));
          return;
        }
        const stream = bodyless
          ? null
          : new ReadableStream<Uint8Array>({
              start: (controller) => {
                pending.body = controller;
              },
              cancel: stopped,
            });
        pending.settle(Promise.resolve(new Response(stream, init)));
        return;
      }
      case 'answer': {
        const bodyless = NULL_BODY.has(message.status) || pending.method === 'HEAD';
        const init = { status: message.status, statusText: message.statusText, headers: message.headers };
        pending.settle(Promise.resolve(new Response(bodyless ? null : message.body, init)));
        this.finish(connection, pending);
        return;
      }
      case 'chunk':
        pending.body?.enqueue(message.chunk);
        return;
      case 'frames':
        pending.frames?.push(message.frames);
        return;
      case 'end':
        pending.body?.close();
        pending.frames?.close();
        this.finish(connection, pending);
        return;
      case 'error':
        if (!cutOff(pending, networkError(message.message))) pending.settle(Promise.reject(networkError(message.message)));
        this.finish(connection, pending);
        return;
    }
  }

  private finish(connection: Connection, pending: Pending) {
    clearTimeout(pending.timer);
    connection.pending.delete(pending.id);
    if (connection.pending.size === 0) this.unwatch(connection);
    if (connection.pending.size === 0 && this.connection && connection.dead) this.close(connection);
  }

  /**
   * A request not acknowledged in time: connect again (which wakes the worker)
   * and compare. Another instance of the same worker means the one behind the
   * port has stopped (a worker never runs two instances at once): the port is
   * dead, at once. The same instance is only slow: wait on. Another worker
   * (an update took over) may still be running the old one: its requests
   * wait out the expiry, past which it refuses them.
   */
  private async check(connection: Connection) {
    if (connection.dead || connection.checking) return;
    connection.checking = true;
    const fresh = await this.options.connect().catch(() => null);
    connection.checking = false;
    if (connection.dead) {
      fresh?.port.close();
      return;
    }
    if (fresh && fresh.instance === connection.instance) {
      fresh.port.close();
      // Alive: unacknowledged requests get the full expiry before the port is judged dead.
      for (const pending of connection.pending.values()) {
        if (pending.acked) continue;
        clearTimeout(pending.timer);
        pending.timer = setTimeout(() => this.judgeDead(connection), Math.max(0, pending.sent + this.expiryMs + this.graceMs - this.now()));
      }
      return;
    }
    if (fresh && fresh.worker === connection.worker) {
      // The next requests use the new port.
      const next = this.open(fresh);
      this.connection = Promise.resolve(next);
      this.judgeDead(connection, next);
      return;
    }
    fresh?.port.close();
    for (const pending of connection.pending.values()) {
      if (pending.acked) continue;
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.judgeDead(connection), Math.max(0, pending.sent + this.expiryMs + this.graceMs - this.now()));
    }
  }

  /** While requests are under way, a port that stops answering pings is judged dead. */
  private watch(connection: Connection) {
    connection.ping ??= setInterval(() => {
      if (connection.pingWaiting) return;
      const n = ++connection.pings;
      connection.pingWaiting = { n, timer: setTimeout(() => this.judgeDead(connection), this.expiryMs + this.graceMs) };
      connection.port.postMessage({ type: 'ping', n });
    }, this.pingMs);
  }

  private unwatch(connection: Connection) {
    clearInterval(connection.ping);
    connection.ping = undefined;
    if (connection.pingWaiting) clearTimeout(connection.pingWaiting.timer);
    connection.pingWaiting = undefined;
  }

  /**
   * No acknowledgement (or pong) in time: the worker behind the port is gone.
   * What it never acknowledged cannot run there any more (it refuses late
   * requests) and goes by fetch; what it acknowledged is asked for by id,
   * answered only from the memory of a worker that received it.
   */
  private judgeDead(connection: Connection, replaced?: Connection) {
    if (connection.dead) return;
    connection.dead = true;
    this.unwatch(connection);
    if (!replaced) {
      void this.connection?.then((current) => {
        if (current === connection) this.connection = null;
      });
    }
    for (const pending of [...connection.pending.values()]) {
      clearTimeout(pending.timer);
      connection.pending.delete(pending.id);
      if (!cutOff(pending, networkError('the service worker stopped while answering')))
        pending.settle(this.viaFetch(pending.copy(), pending.id, pending.acked));
    }
    this.close(connection);
  }

  private close(connection: Connection) {
    this.unwatch(connection);
    connection.unwatchStop?.();
    connection.port.onmessage = null;
    connection.port.close();
  }

  private async viaFetch(copy: Request, id?: string, acked = false): Promise<Response> {
    this.counts.fetch++;
    if (!id) return this.options.fetch(copy);
    const headers = new Headers(copy.headers);
    headers.set(ID_HEADER, id);
    if (acked) headers.set(REPLAY_HEADER, 'only');
    const response = await this.options.fetch(new Request(copy, { headers }));
    if (response.headers.get(REPLAY_HEADER) === LOST) throw networkError('the service worker stopped while answering');
    return response;
  }
}
