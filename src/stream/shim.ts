/**
 * The page-side WebSocket shim for `/conversations/stream/identifiers`.
 *
 * Service Workers never see WebSocket connections, so the page's global
 * `WebSocket` is patched: stream URLs under the bases get a socket built on
 * mock-socket, fed by the worker; every other URL gets the native WebSocket.
 *
 * A stream socket opens with a handshake `fetch` (it wakes a stopped worker)
 * that returns every current conversation id and the change sequence number
 * they reflect. The worker announces each committed change on a
 * BroadcastChannel; an announcement only tells the socket to ask the worker
 * for the changes after the last one it delivered (`?after=N`), so changes
 * arrive in commit order, none twice, none lost, and a forged announcement
 * can at most cause one extra fetch.
 */
import { Server, WebSocket as MockWebSocket } from 'mock-socket';
import { DEFAULT_BASES, parseBase, webSocketBase, type Base } from '../core/bases.js';
import type { Change } from '../storage/storage.js';
import { CHANGES_CHANNEL } from './protocol.js';
import { CopilotSocket, copilotSocket, QGPT_STREAM_PATH } from './qgpt.js';

export const STREAM_PATH = '/conversations/stream/identifiers';

/** Close code used when a socket fell further behind than the change log reaches: reconnect for a fresh snapshot. */
export const CLOSE_FELL_BEHIND = 1013;

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
}

type Identifier = { conversation: { id: string }; deleted?: true };

interface Handshake {
  seq: number;
  identifiers: { iterable: Identifier[] };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function isChange(value: unknown): value is Change {
  return (
    isRecord(value) &&
    isSeq(value.seq) &&
    typeof value.conversation === 'string' &&
    (value.deleted === undefined || value.deleted === true)
  );
}

function isHandshake(value: unknown): value is Handshake {
  return (
    isRecord(value) &&
    isSeq(value.seq) &&
    isRecord(value.identifiers) &&
    Array.isArray(value.identifiers.iterable) &&
    value.identifiers.iterable.every((item) => isRecord(item) && isRecord(item.conversation) && typeof item.conversation.id === 'string')
  );
}

function isCatchUp(value: unknown): value is { changes: Change[]; complete: boolean } {
  return isRecord(value) && typeof value.complete === 'boolean' && Array.isArray(value.changes) && value.changes.every(isChange);
}

/** What a change looks like on the wire: a StreamedIdentifiers with one item. */
function changeMessage(change: Change): string {
  const item: Identifier = { conversation: { id: change.conversation }, ...(change.deleted ? { deleted: true } : {}) };
  return JSON.stringify({ iterable: [item] });
}

interface Client {
  target: StreamSocket;
  send(data: string): void;
}

/** One BroadcastChannel per page, shared by every open stream socket. */
class Announcements {
  private channel: BroadcastChannel | null = null;
  private readonly sockets = new Set<StreamSocket>();

  add(socket: StreamSocket) {
    this.sockets.add(socket);
    if (!this.channel) {
      this.channel = new BroadcastChannel(CHANGES_CHANNEL);
      this.channel.onmessage = (event: MessageEvent) => {
        const data: unknown = event.data;
        // Anything but a well-formed change announcement is ignored.
        if (!isRecord(data) || data.type !== 'change' || !isChange(data.change)) return;
        for (const s of this.sockets) s.announced(data.change.seq);
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
  /** The http(s) URL of the stream path, for the handshake and catch-up fetches. */
  httpUrl: string;
  fetch: NonNullable<StreamShimOptions['fetch']>;
  announcements: Announcements;
  available: () => boolean;
}

let pendingFeed: Feed | null = null;

class StreamSocket extends MockWebSocket {
  #client: Client | null = null;
  #openEvent: Event | null = null;
  /** The first message, until it is sent. */
  #snapshot: Handshake['identifiers'] | null = null;
  #accepted = false;
  /** Highest change sequence delivered (or folded into the snapshot). */
  #seq = 0;
  /** Highest change sequence announced; above #seq means a catch-up is due. */
  #announced = 0;
  #catchingUp = false;
  #started = false;
  readonly #feed: Feed;
  override readonly extensions = '';
  override readonly bufferedAmount = 0;

  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    this.#feed = pendingFeed!;
    this.#feed.announcements.add(this);
    this.addEventListener('close', () => this.#feed.announcements.delete(this));
    void this.#connect();
  }

  async #connect() {
    try {
      if (!this.#feed.available()) throw new Error('no service worker controls this page');
      const response = await this.#feed.fetch(this.#feed.httpUrl, { headers: { 'X-Pieces-Stream': 'handshake' } });
      const body: unknown = response.ok ? await response.json() : undefined;
      if (!isHandshake(body)) throw new Error(`handshake answered ${response.status}`);
      this.#snapshot = body.identifiers;
      this.#seq = body.seq;
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
    this.#client.send(JSON.stringify(this.#snapshot));
    this.#snapshot = null;
    if (this.#announced > this.#seq) void this.#catchUp();
  }

  /** A change was announced: fetch what came after the last delivered change. */
  announced(seq: number) {
    if (seq > this.#announced) this.#announced = seq;
    if (this.#started && seq > this.#seq) void this.#catchUp();
  }

  async #catchUp() {
    if (this.#catchingUp) return;
    this.#catchingUp = true;
    try {
      while (this.#announced > this.#seq && this.readyState === MockWebSocket.OPEN) {
        const response = await this.#feed.fetch(`${this.#feed.httpUrl}?after=${this.#seq}`, {
          headers: { 'X-Pieces-Stream': 'handshake' },
        });
        const body: unknown = response.ok ? await response.json() : undefined;
        if (!isCatchUp(body)) break;
        if (!body.complete) {
          this.close(CLOSE_FELL_BEHIND, 'fell behind the change log; reconnect');
          break;
        }
        for (const change of body.changes) {
          if (change.seq <= this.#seq || this.readyState !== MockWebSocket.OPEN) continue;
          this.#seq = change.seq;
          this.#client!.send(changeMessage(change));
        }
        // Announcements beyond what the worker knows (forged) are forgotten.
        if (this.#announced > this.#seq && body.changes.length === 0) this.#announced = this.#seq;
      }
    } catch {
      // The worker could not answer: the next announcement retries.
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
    if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999) && code !== CLOSE_FELL_BEHIND) {
      throw new DOMException(
        `Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`,
        'InvalidAccessError',
      );
    }
    if (reason !== undefined && new TextEncoder().encode(reason).byteLength > 123) {
      throw new DOMException("Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes.", 'SyntaxError');
    }
    super.close(code, reason);
  }
}

/** Stream URL → its mock-socket server (one per distinct URL). */
const servers = new Map<string, Server>();

function serverFor(url: string) {
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
  const bases = (options.bases ?? DEFAULT_BASES).map(parseBase);
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const available =
    options.isServiceAvailable ?? (() => typeof navigator !== 'undefined' && !!navigator.serviceWorker?.controller);
  const announcements = new Announcements();

  /** The base whose WebSocket form serves `url` as the stream at `path`, or null. */
  function streamBase(url: URL, path = STREAM_PATH): Base | null {
    for (const base of bases) {
      const ws = webSocketBase(base);
      if (url.origin === ws.origin && url.pathname === ws.path + path) return base;
    }
    return null;
  }

  function PiecesWebSocket(this: unknown, url: string | URL, protocols?: string | string[]) {
    if (!new.target) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator.");
    let parsed: URL | null = null;
    try {
      parsed = new URL(String(url));
    } catch {
      // Let the native constructor throw its own SyntaxError.
    }
    const copilot = parsed && streamBase(parsed, QGPT_STREAM_PATH);
    if (copilot) {
      return copilotSocket(parsed!.href, protocols, { httpUrl: copilot.origin + copilot.path + QGPT_STREAM_PATH, fetch: doFetch, available });
    }
    const base = parsed && streamBase(parsed);
    if (!parsed || !base) return new Native(url, protocols);
    const href = parsed.href;
    serverFor(href);
    pendingFeed = { httpUrl: base.origin + base.path + STREAM_PATH, fetch: doFetch, announcements, available };
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
