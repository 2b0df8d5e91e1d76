/**
 * A model's download progress socket (`/model/{model}/download/progress`): it
 * opens once the service accepted it (a `fetch` with `X-Pieces-Stream: progress`
 * whose answer streams the ModelDownloadProgress frames as server-sent events,
 * as long as the socket is open) and delivers each frame as one `message`. A
 * stream that ends while the socket is open (a worker restarted) is asked for
 * again, with a backoff; when the service stops answering for `giveUpMs` the
 * socket closes with CLOSE_UNAVAILABLE. Refused at once (no service, an unknown
 * model): error, then close 1006, as a refused connection.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { WebSocket as MockWebSocket } from 'mock-socket';
import { framesOf } from '../core/event-frames.js';
import { STREAM_HEADER } from '../core/stream-wire.js';
import { ServedSocket, type SocketClient } from './served-socket.js';

export interface ProgressFeed {
  /** The http(s) URL of the socket path. */
  httpUrl: string;
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  available: () => boolean;
  giveUpMs: number;
  /** Close code when the service stopped answering. */
  closeUnavailable: number;
}

/** The frames of one answer, in batches (null once it ended); `cancel` stops it. */
interface FrameSource {
  next(): Promise<string[] | null>;
  cancel(): unknown;
}

export class ProgressSocket extends ServedSocket {
  readonly #feed: ProgressFeed;
  readonly #controller = new AbortController();
  #openEvent: Event | null = null;
  #accepted = false;
  #reader: FrameSource | null = null;

  constructor(url: string, protocols: string | string[] | undefined, feed: ProgressFeed) {
    super(url, protocols);
    this.#feed = feed;
    this.addEventListener('close', () => this.#controller.abort());
    void this.#run();
  }

  /** Holds mock-socket's `open` until the service accepted the socket. */
  override dispatchEvent(event: Event, ...rest: unknown[]): boolean {
    if (event.type === 'open' && !this.#accepted) {
      this.#openEvent = event;
      (this as { readyState: number }).readyState = MockWebSocket.CONNECTING;
      return true;
    }
    return (super.dispatchEvent as (e: Event, ...r: unknown[]) => boolean)(event, ...rest);
  }

  override connected(client: SocketClient) {
    super.connected(client);
    this.#opened();
  }

  #opened() {
    if (!this.#accepted || !this.client || !this.#openEvent) return;
    (this as { readyState: number }).readyState = MockWebSocket.OPEN;
    this.dispatchEvent(this.#openEvent);
    this.#openEvent = null;
  }

  /** The frames of the answer, or null when the service did not answer. Throws when it refused the socket. */
  async #listen(): Promise<FrameSource | null> {
    let response: Response;
    try {
      response = await this.#feed.fetch(this.#feed.httpUrl, { headers: { [STREAM_HEADER]: 'progress' }, signal: this.#controller.signal });
    } catch {
      return null;
    }
    if (response.status >= 500 || response.type === 'error') return null;
    if (!response.ok || !response.body) throw new Error(`the progress socket was refused: ${response.status}`);
    // Frames that came as frames (from the service itself, or over the fast path's port): as they are.
    const frames = framesOf(response);
    if (frames) {
      this.#controller.signal.addEventListener('abort', () => frames.cancel(), { once: true });
      return frames;
    }
    const reader = response.body
      .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? null : [value.data];
      },
      cancel: () => reader.cancel().catch(() => {}),
    };
  }

  async #run() {
    let failingSince = 0;
    let backoff = 0;
    while (!this.#controller.signal.aborted) {
      let reader: FrameSource | null;
      try {
        if (!this.#feed.available()) throw new Error('no service worker controls this page');
        reader = await this.#listen();
      } catch {
        // Refused: as a refused connection before it opened; closed after.
        if (this.readyState === MockWebSocket.CONNECTING) super.close();
        else if (this.readyState === MockWebSocket.OPEN) this.close(this.#feed.closeUnavailable, 'the service refused the progress socket');
        return;
      }
      if (this.#controller.signal.aborted) return;
      if (reader) {
        failingSince = 0;
        backoff = 0;
        this.#reader = reader;
        if (!this.#accepted) {
          this.#accepted = true;
          this.#opened();
        }
        try {
          for (let batch = await reader.next(); batch; batch = await reader.next()) {
            for (const frame of batch) if (this.readyState === MockWebSocket.OPEN) this.client?.send(frame);
          }
        } catch {
          // The stream broke (a worker stopped): asked for again below.
        }
        this.#reader = null;
        continue;
      }
      const now = Date.now();
      failingSince ||= now;
      if (now - failingSince >= this.#feed.giveUpMs) {
        if (this.readyState === MockWebSocket.CONNECTING) super.close();
        else if (this.readyState === MockWebSocket.OPEN)
          this.close(this.#feed.closeUnavailable, 'the service stopped answering; reconnect');
        return;
      }
      backoff = Math.min(Math.max(backoff * 2, 250), 8_000);
      await new Promise((resolve) => setTimeout(resolve, backoff));
    }
  }

  override close(code?: number, reason?: string): void {
    super.close(code, reason);
    this.#controller.abort();
    this.#reader?.cancel();
  }

  /** Client frames are accepted and ignored, as the real socket does. */
  override send(_data: string | Blob | ArrayBuffer | ArrayBufferView): void {
    this.accepts();
  }
}
