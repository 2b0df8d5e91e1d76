/**
 * The page-side WebSocket shim for every socket path of the service
 * (`SOCKETS`: the identifier streams of conversations, messages, assets and
 * applications, the health heartbeat and the user profile).
 *
 * Service Workers never see WebSocket connections, so the page's global
 * `WebSocket` is patched: socket URLs under the bases (any query string, a
 * trailing slash or not) get a socket built on mock-socket, fed by the
 * worker; every other URL gets the native WebSocket.
 *
 * A socket opens with a handshake `fetch` (it wakes a stopped worker) that
 * returns its first message and the change sequence number it reflects. The
 * worker announces each committed change on a BroadcastChannel; an
 * announcement only tells the sockets of that collection to ask the worker
 * for the collection's changes after the last one they delivered
 * (`?after=N`), so changes arrive in commit order, none twice, none lost, and
 * a forged announcement can at most cause one extra fetch. The health socket
 * repeats its handshake periodically and sends `ok` while the service
 * answers; when it does not, the socket closes.
 *
 * An identifier socket never looks live while stale: besides announcements
 * (which a stopped worker or a busy page can miss), it checks the change
 * sequence every `sequenceCheckMs`; a failed catch-up is retried with a
 * backoff. It closes, so that the client reconnects for a fresh snapshot,
 * when catching up is impossible: CLOSE_DATABASE_REPLACED (the database was
 * wiped and created again: another identity, another sequence),
 * CLOSE_FELL_BEHIND (the change log no longer reaches back to it),
 * CLOSE_UNAVAILABLE (the service did not answer for `giveUpMs`).
 */
import { Server, WebSocket as MockWebSocket } from 'mock-socket';
import { checkClose } from './close.js';
import { baseMatcher, DEFAULT_BASES, webSocketBase } from '../core/bases.js';
import type { Collection } from '../storage/schema.js';
import type { Change } from '../storage/storage.js';
import { CHANGES_CHANNEL, SOCKETS } from './protocol.js';
import { CopilotSocket, copilotSocket } from './qgpt.js';

export const STREAM_PATH = '/conversations/stream/identifiers';

/** How often the health socket checks the service and sends `ok`, by default. */
export const HEALTH_INTERVAL_MS = 5_000;

/** How often an identifier socket checks the change sequence, by default. */
export const SEQUENCE_CHECK_MS = 3_000;

/** How long an identifier socket keeps retrying a catch-up the service does not answer, by default. */
export const GIVE_UP_MS = 30_000;

/** Close code when the service stopped answering (the health socket, or a catch-up for GIVE_UP_MS). */
export const CLOSE_UNAVAILABLE = 4503;

/** Close code when a socket fell further behind than the change log reaches: reconnect for a fresh snapshot. */
export const CLOSE_FELL_BEHIND = 4013;

/** Close code when the database was replaced (wiped and created again): reconnect for its snapshot. */
export const CLOSE_DATABASE_REPLACED = 4001;

export interface StreamShimOptions {
  /** Base URLs (http/https) whose WebSocket form is served; default the service's defaults. */
  bases?: readonly string[];
  /** The global object to patch; default `globalThis`. */
  target?: { WebSocket: typeof WebSocket };
  /** The fetch used for handshakes and catch-up (tests inject the core here); default `fetch`. */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /**
   * Whether a service worker is answering; default: the page has a controller.
   * When false, sockets fail like a refused connection (error, then close 1006).
   */
  isServiceAvailable?: () => boolean;
  /** Period of the health socket's `ok`, in ms; default `HEALTH_INTERVAL_MS`. */
  healthIntervalMs?: number;
  /** Period of an identifier socket's sequence check, in ms; default `SEQUENCE_CHECK_MS`. */
  sequenceCheckMs?: number;
  /** How long failed catch-ups are retried before the socket closes with CLOSE_UNAVAILABLE; default `GIVE_UP_MS`. */
  giveUpMs?: number;
  /**
   * Opens the channel on which change announcements arrive; default a
   * BroadcastChannel named `pieces-os-worker:changes` (the worker's). Hosts
   * running the service in the same process give their own, so that services are isolated.
   */
  announcements?: () => AnnouncementChannel;
}

/** What the shim needs of a BroadcastChannel: its messages, and closing it. */
export interface AnnouncementChannel {
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

interface Handshake {
  seq: number;
  message: unknown;
  /** The database's identity (identifier streams). */
  database?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function isChange(value: unknown): value is Change {
  return (
    isRecord(value) &&
    isSeq(value.seq) &&
    typeof value.collection === 'string' &&
    typeof value.id === 'string' &&
    (value.deleted === undefined || value.deleted === true)
  );
}

function isHandshake(value: unknown): value is Handshake {
  return isRecord(value) && isSeq(value.seq) && (typeof value.message === 'string' || isRecord(value.message));
}

function isCatchUp(value: unknown): value is { changes: Change[]; complete: boolean; seq: number; database: string } {
  return (
    isRecord(value) &&
    typeof value.complete === 'boolean' &&
    isSeq(value.seq) &&
    typeof value.database === 'string' &&
    Array.isArray(value.changes) &&
    value.changes.every(isChange)
  );
}

/** What a change looks like on the wire: a StreamedIdentifiers with one item. */
function changeMessage(change: Change): string {
  return JSON.stringify({ iterable: [{ [change.collection]: { id: change.id }, ...(change.deleted ? { deleted: true } : {}) }] });
}

interface Client {
  target: StreamSocket;
  send(data: string): void;
}

/** One BroadcastChannel per page, shared by every open stream socket. */
class Announcements {
  private channel: AnnouncementChannel | null = null;
  private readonly sockets = new Set<StreamSocket>();

  constructor(private readonly open: () => AnnouncementChannel) {}

  add(socket: StreamSocket) {
    this.sockets.add(socket);
    if (!this.channel) {
      this.channel = this.open();
      this.channel.onmessage = (event) => {
        const data: unknown = event.data;
        // The worker started over with a new database: every socket checks at once.
        if (isRecord(data) && data.type === 'database') for (const s of this.sockets) s.check();
        // Anything else but a well-formed change announcement is ignored.
        if (!isRecord(data) || data.type !== 'change' || !isChange(data.change)) return;
        for (const s of this.sockets) s.announced(data.change);
      };
    }
  }

  delete(socket: StreamSocket) {
    this.sockets.delete(socket);
    if (this.sockets.size === 0 && this.channel) {
      this.channel.close();
      this.channel = null;
    }
  }
}

interface Feed {
  /** The http(s) URL of the socket path, for the handshake and catch-up fetches. */
  httpUrl: string;
  kind: Collection | 'health' | 'user';
  healthIntervalMs: number;
  sequenceCheckMs: number;
  giveUpMs: number;
  fetch: NonNullable<StreamShimOptions['fetch']>;
  announcements: Announcements;
  available: () => boolean;
}

let pendingFeed: Feed | null = null;

class StreamSocket extends MockWebSocket {
  #client: Client | null = null;
  #openEvent: Event | null = null;
  /** The first message, until it is sent. */
  #snapshot: string | null = null;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #accepted = false;
  /** Highest change sequence delivered (or folded into the snapshot). */
  #seq = 0;
  /** Highest change sequence announced; above #seq means a catch-up is due. */
  #announced = 0;
  #catchingUp = false;
  #started = false;
  /** The identity of the database this socket's sequence numbers belong to. */
  #database: string | undefined;
  #sequenceCheck: ReturnType<typeof setInterval> | undefined;
  /** A scheduled retry of a failed catch-up, and since when catch-ups fail. */
  #retry: ReturnType<typeof setTimeout> | undefined;
  #failingSince = 0;
  #backoff = 0;
  readonly #feed: Feed;
  override readonly extensions = '';
  override readonly bufferedAmount = 0;

  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    this.#feed = pendingFeed!;
    this.#feed.announcements.add(this);
    this.addEventListener('close', () => {
      this.#feed.announcements.delete(this);
      clearInterval(this.#heartbeat);
      clearInterval(this.#sequenceCheck);
      clearTimeout(this.#retry);
    });
    void this.#connect();
  }

  async #handshake(): Promise<Handshake> {
    if (!this.#feed.available()) throw new Error('no service worker controls this page');
    const response = await this.#feed.fetch(this.#feed.httpUrl, { headers: { 'X-Pieces-Stream': 'handshake' } });
    const body: unknown = response.ok ? await response.json() : undefined;
    if (!isHandshake(body)) throw new Error(`handshake answered ${response.status}`);
    return body;
  }

  async #connect() {
    try {
      const body = await this.#handshake();
      this.#snapshot = typeof body.message === 'string' ? body.message : JSON.stringify(body.message);
      this.#seq = body.seq;
      this.#database = body.database;
      this.#accepted = true;
      this.#start();
    } catch {
      // As a refused connection: error, then close 1006, never open.
      if (this.readyState === MockWebSocket.CONNECTING) super.close();
    }
  }

  /** Called by mock-socket when its server accepts the connection. */
  connected(client: Client) {
    this.#client = client;
    this.#start();
  }

  /** Holds mock-socket's `open` until the handshake succeeded. */
  override dispatchEvent(event: Event, ...rest: unknown[]): boolean {
    if (event.type === 'open' && !this.#accepted) {
      this.#openEvent = event;
      (this as { readyState: number }).readyState = MockWebSocket.CONNECTING;
      return true;
    }
    return (super.dispatchEvent as (e: Event, ...r: unknown[]) => boolean)(event, ...rest);
  }

  #start() {
    const closing = this.readyState === MockWebSocket.CLOSING || this.readyState === MockWebSocket.CLOSED;
    if (this.#started || !this.#accepted || !this.#client || closing) return;
    this.#started = true;
    if (this.#openEvent) {
      (this as { readyState: number }).readyState = MockWebSocket.OPEN;
      this.dispatchEvent(this.#openEvent);
      this.#openEvent = null;
    }
    this.#client.send(this.#snapshot!);
    this.#snapshot = null;
    if (this.#feed.kind === 'health') this.#heartbeat = setInterval(() => void this.#beat(), this.#feed.healthIntervalMs);
    else if (this.#feed.kind !== 'user') this.#sequenceCheck = setInterval(() => this.check(), this.#feed.sequenceCheckMs);
    if (this.#announced > this.#seq) void this.#catchUp();
  }

  /** Asks the worker for changes after the last delivered one even if none was announced (one may have been missed). */
  check() {
    if (!this.#started || this.#feed.kind === 'health' || this.#feed.kind === 'user') return;
    void this.#catchUp(true);
  }

  /** The health socket's period: `ok` while the service answers, else the socket closes. */
  async #beat() {
    try {
      const body = await this.#handshake();
      if (this.readyState === MockWebSocket.OPEN) this.#client!.send(String(body.message));
    } catch {
      if (this.readyState === MockWebSocket.OPEN) this.close(CLOSE_UNAVAILABLE, 'the service stopped answering');
    }
  }

  /** A change was announced: if it is of this socket's collection, fetch what came after the last delivered change. */
  announced(change: Change) {
    if (change.collection !== this.#feed.kind) return;
    if (change.seq > this.#announced) this.#announced = change.seq;
    if (this.#started && change.seq > this.#seq) void this.#catchUp();
  }

  async #catchUp(force = false) {
    if (this.#catchingUp) return;
    this.#catchingUp = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    try {
      while ((force || this.#announced > this.#seq) && this.readyState === MockWebSocket.OPEN) {
        force = false;
        const response = await this.#feed.fetch(`${this.#feed.httpUrl}?after=${this.#seq}`, {
          headers: { 'X-Pieces-Stream': 'handshake' },
        });
        const body: unknown = response.ok ? await response.json() : undefined;
        if (!isCatchUp(body)) throw new Error(`catch-up answered ${response.status}`);
        this.#failingSince = 0;
        this.#backoff = 0;
        if (this.readyState !== MockWebSocket.OPEN) break;
        if (body.database !== this.#database) {
          this.close(CLOSE_DATABASE_REPLACED, 'the database was replaced; reconnect for its snapshot');
          break;
        }
        if (!body.complete) {
          this.close(CLOSE_FELL_BEHIND, 'fell behind the change log; reconnect');
          break;
        }
        const before = this.#seq;
        for (const change of body.changes) {
          if (change.seq <= this.#seq || this.readyState !== MockWebSocket.OPEN) continue;
          this.#seq = change.seq;
          this.#client!.send(changeMessage(change));
        }
        // Changes of other collections up to the worker's last one are behind this socket too.
        if (this.readyState === MockWebSocket.OPEN && body.seq > this.#seq) this.#seq = body.seq;
        // Announcements beyond what the worker knows (forged) are forgotten.
        if (this.#announced > this.#seq && this.#seq === before) this.#announced = this.#seq;
      }
    } catch {
      // The worker did not answer (stopped, restarting, storage unavailable): retry with a backoff, then give up.
      if (this.readyState === MockWebSocket.OPEN) {
        const now = Date.now();
        this.#failingSince ||= now;
        if (now - this.#failingSince >= this.#feed.giveUpMs) {
          this.close(CLOSE_UNAVAILABLE, 'the service stopped answering; reconnect');
        } else {
          this.#backoff = Math.min(Math.max(this.#backoff * 2, 250), 8_000);
          this.#retry = setTimeout(() => void this.#catchUp(true), this.#backoff);
        }
      }
    } finally {
      this.#catchingUp = false;
    }
  }

  /** Client frames are accepted and ignored, as the real stream does. */
  override send(_data: string | Blob | ArrayBuffer | ArrayBufferView): void {
    if (this.readyState === MockWebSocket.CONNECTING) {
      throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
  }

  override close(code?: number, reason?: string): void {
    checkClose(code, reason);
    super.close(code, reason);
  }
}

/**
 * Socket URL without its query → its mock-socket server. mock-socket keys its
 * servers by the URL without the query string, so sockets on one path (with
 * or without a query) share one server; each socket is fed on its own.
 */
const servers = new Map<string, Server>();

function serverFor(href: string) {
  const url = href.split('?')[0]!;
  let server = servers.get(url);
  if (!server) {
    server = new Server(url, { mock: false });
    server.on('connection', (client) => {
      const socket = (client as unknown as Client).target;
      if (socket instanceof StreamSocket) socket.connected(client as unknown as Client);
    });
    servers.set(url, server);
  }
  return server;
}

const installed = new WeakMap<object, () => void>();

/**
 * Patches `WebSocket` so that stream URLs under the bases get a stream
 * socket. Returns a function that restores the native constructor.
 * Installing twice on one target replaces the first installation.
 */
export function installStreamShim(options: StreamShimOptions = {}): () => void {
  const target = options.target ?? (globalThis as unknown as { WebSocket: typeof WebSocket });
  installed.get(target)?.();
  const Native = target.WebSocket;
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES, webSocketBase);
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const available =
    options.isServiceAvailable ?? (() => typeof navigator !== 'undefined' && !!navigator.serviceWorker?.controller);
  const announcements = new Announcements(options.announcements ?? (() => new BroadcastChannel(CHANGES_CHANNEL) as unknown as AnnouncementChannel));

  /** The http(s) URL and kind of a socket URL under the bases, or null. */
  function socketOf(url: URL): { httpUrl: string; kind: (typeof SOCKETS)[string] } | null {
    const match = matcher.match(url);
    const path = match && match.path.replace(/\/+$/, '');
    const kind = path && Object.hasOwn(SOCKETS, path) ? SOCKETS[path] : undefined;
    if (!match || !kind) return null;
    return { httpUrl: match.base.origin.replace(/^ws/, 'http') + match.base.path + path, kind };
  }

  function PiecesWebSocket(this: unknown, url: string | URL, protocols?: string | string[]) {
    if (!new.target) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator.");
    let parsed: URL | null = null;
    try {
      parsed = new URL(String(url));
    } catch {
      // Let the native constructor throw its own SyntaxError.
    }
    const socket = parsed && socketOf(parsed);
    if (!parsed || !socket) return new Native(url, protocols);
    const href = parsed.href;
    if (socket.kind === 'copilot') return copilotSocket(href, protocols, { httpUrl: socket.httpUrl, fetch: doFetch, available });
    serverFor(href);
    pendingFeed = {
      ...socket,
      fetch: doFetch,
      kind: socket.kind,
      announcements,
      available,
      healthIntervalMs: options.healthIntervalMs ?? HEALTH_INTERVAL_MS,
      sequenceCheckMs: options.sequenceCheckMs ?? SEQUENCE_CHECK_MS,
      giveUpMs: options.giveUpMs ?? GIVE_UP_MS,
    };
    try {
      return new StreamSocket(href, protocols);
    } finally {
      pendingFeed = null;
    }
  }
  PiecesWebSocket.prototype = Native.prototype;
  for (const [name, value] of Object.entries({ CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 })) {
    Object.defineProperty(PiecesWebSocket, name, { value, enumerable: true });
  }
  Object.defineProperty(PiecesWebSocket, Symbol.hasInstance, {
    value: (value: unknown) => value instanceof Native || value instanceof StreamSocket || value instanceof CopilotSocket,
  });
  target.WebSocket = PiecesWebSocket as unknown as typeof WebSocket;

  const uninstall = () => {
    if (target.WebSocket === (PiecesWebSocket as unknown)) target.WebSocket = Native;
    installed.delete(target);
  };
  installed.set(target, uninstall);
  return uninstall;
}
