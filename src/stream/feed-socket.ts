/**
 * A socket fed by the service: an identifier stream (handshake, then catch-up on announcements and
 * periodic checks), the health heartbeat, or a value sent on open and when it changes (the user profile, the OS settings,
 * the vision status, the suggestions). See docs/architecture.md, "Sockets".
 */
import { WebSocket as MockWebSocket } from 'mock-socket';
import type { Change } from '../storage/storage.js';
import {
  changeFrame,
  FOLLOWS,
  HEARTBEAT_PARAM,
  isCatchUp,
  isHandshake,
  isWholeAssets,
  STREAM_HEADER,
  wholeAssetFrames,
  type Handshake,
  type SocketKind,
} from '../core/stream-wire.js';
import type { Announcements } from './announcements.js';
import { ServedSocket, type SocketClient } from './served-socket.js';

/** Close code when the service stopped answering (the health socket, or a catch-up for GIVE_UP_MS). */
export const CLOSE_UNAVAILABLE = 4503;

/** Close code when a socket fell further behind than the change log reaches: reconnect for a fresh snapshot. */
export const CLOSE_FELL_BEHIND = 4013;

/** Close code when the database was replaced (wiped and created again): reconnect for its snapshot. */
export const CLOSE_DATABASE_REPLACED = 4001;

/** What feeds a socket. */
export interface Feed {
  /** The http(s) URL of the socket path, for the handshake and catch-up fetches. */
  httpUrl: string;
  kind: Exclude<SocketKind, 'copilot' | 'progress'>;
  healthIntervalMs: number;
  sequenceCheckMs: number;
  giveUpMs: number;
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  announcements: Announcements;
  available: () => boolean;
}

const HANDSHAKE = { headers: { [STREAM_HEADER]: 'handshake' } };

export class FeedSocket extends ServedSocket {
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
  /** A stream of whole assets: each asset's JSON as last sent (a delete's frame is the asset as the client last had it). */
  readonly #sent: Map<string, string> | undefined;
  readonly #feed: Feed;

  constructor(url: string, protocols: string | string[] | undefined, feed: Feed) {
    super(url, protocols);
    this.#feed = feed;
    this.#sent = isWholeAssets(feed.kind) ? new Map() : undefined;
    feed.announcements.add(this);
    this.addEventListener('close', () => {
      feed.announcements.delete(this);
      clearInterval(this.#heartbeat);
      clearInterval(this.#sequenceCheck);
      clearTimeout(this.#retry);
    });
    void this.#connect();
  }

  /** The handshake; `heartbeat`: the health socket's periodic one, on the socket already open. */
  async #handshake(heartbeat = false): Promise<Handshake> {
    if (!this.#feed.available()) throw new Error('no service worker controls this page');
    // A socket other than an identifier stream is opened with its URL's query (the applet version's `applet_type`).
    const query = this.#identifiers() ? '' : new URL(this.url).search;
    const response = await this.#feed.fetch(heartbeat ? `${this.#feed.httpUrl}?${HEARTBEAT_PARAM}` : this.#feed.httpUrl + query, HANDSHAKE);
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

  override connected(client: SocketClient) {
    super.connected(client);
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
    if (this.#started || !this.#accepted || !this.client || closing) return;
    this.#started = true;
    if (this.#openEvent) {
      (this as { readyState: number }).readyState = MockWebSocket.OPEN;
      this.dispatchEvent(this.#openEvent);
      this.#openEvent = null;
    }
    this.client.send(this.#snapshot!);
    if (this.#sent) {
      for (const asset of (JSON.parse(this.#snapshot!) as { iterable: Array<{ id: string }> }).iterable)
        this.#sent.set(asset.id, JSON.stringify(asset));
    }
    this.#lastProfile = this.#snapshot;
    this.#snapshot = null;
    if (this.#feed.kind === 'health') this.#heartbeat = setInterval(() => void this.#beat(), this.#feed.healthIntervalMs);
    else if (this.#identifiers()) this.#sequenceCheck = setInterval(() => this.check(), this.#feed.sequenceCheckMs);
    if (this.#announced > this.#seq) void this.#catchUp();
  }

  /** An identifier stream (not the health, user, OS settings, vision or runtime status socket). */
  #identifiers() {
    return !['health', 'user', 'osSettings', 'vision', 'ollamaStatus', 'foundryStatus', 'appletVersion', 'workstreamSuggestions'].includes(
      this.#feed.kind,
    );
  }

  /** A socket that sends its value again when it changes (the user profile, the OS settings, the vision status, the suggestions). */
  #value() {
    return ['user', 'osSettings', 'vision', 'workstreamSuggestions'].includes(this.#feed.kind);
  }

  /** Asks the service for changes after the last delivered one even if none was announced (one may have been missed). */
  check() {
    if (!this.#started) return;
    if (this.#value()) void this.#profile();
    if (this.#identifiers()) void this.#catchUp(true);
  }

  /**
   * A value socket: the value read again, sent when it is not the one sent last. One read at a
   * time: a change announced during a read makes one more read after it, so that an older read
   * answered late never has the last word.
   */
  #lastProfile: string | null = null;
  #reading = false;
  #readAgain = false;
  async #profile() {
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = true;
    try {
      do {
        this.#readAgain = false;
        const body = await this.#handshake();
        const message = typeof body.message === 'string' ? body.message : JSON.stringify(body.message);
        if (message !== this.#lastProfile && this.readyState === MockWebSocket.OPEN) {
          this.#lastProfile = message;
          this.client!.send(message);
        }
      } while (this.#readAgain && this.readyState === MockWebSocket.OPEN);
    } catch {
      // The service did not answer: the next change or check asks again.
    } finally {
      this.#reading = false;
    }
  }

  /** The health socket's period: `ok` while the service answers, else the socket closes. */
  async #beat() {
    try {
      const body = await this.#handshake(true);
      if (this.readyState === MockWebSocket.OPEN) this.client!.send(String(body.message));
    } catch {
      if (this.readyState === MockWebSocket.OPEN) this.close(CLOSE_UNAVAILABLE, 'the service stopped answering');
    }
  }

  /** A change was announced: if it is of this socket's collection (or the one it follows), fetch what came after the last delivered change. */
  announced(change: Change) {
    if (change.collection !== (FOLLOWS[this.#feed.kind] ?? this.#feed.kind)) return;
    if (this.#value()) {
      if (this.#started) void this.#profile();
      return;
    }
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
        const response = await this.#feed.fetch(`${this.#feed.httpUrl}?after=${this.#seq}`, HANDSHAKE);
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
        const changes = body.changes.filter((change) => change.seq > before);
        if (this.#sent) {
          for (const frame of wholeAssetFrames(changes, body, this.#sent)) this.client!.send(frame);
          if (changes.length) this.#seq = changes.at(-1)!.seq;
        }
        for (const change of this.#sent ? [] : changes) {
          if (this.readyState !== MockWebSocket.OPEN) break;
          this.#seq = change.seq;
          this.client!.send(changeFrame(change));
        }
        // Changes of other collections up to the service's last one are behind this socket too.
        if (this.readyState === MockWebSocket.OPEN && body.seq > this.#seq) this.#seq = body.seq;
        // Announcements beyond what the service knows (forged) are forgotten.
        if (this.#announced > this.#seq && this.#seq === before) this.#announced = this.#seq;
      }
    } catch {
      // The service did not answer (stopped, restarting, storage unavailable): retry with a backoff, then give up.
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
    this.accepts();
  }
}
