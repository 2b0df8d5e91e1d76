/**
 * The page side of the copilot stream (`/qgpt/stream`): a WebSocket whose
 * frames the worker answers. Each frame a client sends (a QGPTStreamInput)
 * becomes a `fetch` POST to the stream path with `X-Pieces-Stream: qgpt`;
 * the response streams that input's QGPTStreamOutput frames as server-sent
 * events, each delivered as one `message`. Many inputs run at once on one
 * socket; a `stop: true` input is one more POST, which the worker applies to
 * the running answer. Closing the socket abandons the answers in flight.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { Server, WebSocket as MockWebSocket } from 'mock-socket';
import { checkClose } from './close.js';


interface Client {
  target: unknown;
  send(data: string): void;
}

export interface CopilotFeed {
  /** The http(s) URL of the stream path. */
  httpUrl: string;
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  available: () => boolean;
}

let pendingFeed: CopilotFeed | null = null;

/** Stream URL → its mock-socket server. */
const servers = new Map<string, Server>();

function serverFor(url: string) {
  if (servers.has(url)) return;
  const server = new Server(url, { mock: false });
  server.on('connection', (client) => {
    const socket = (client as unknown as Client).target;
    if (socket instanceof CopilotSocket) socket.connected(client as unknown as Client);
  });
  servers.set(url, server);
}

/** A frame the page makes for an input the worker could not take (it never reached the stream). */
function failedFrame(input: string, statusCode: number, errorMessage: string): string {
  let request: unknown;
  let conversation: unknown;
  try {
    ({ request, conversation } = JSON.parse(input) as { request?: unknown; conversation?: unknown });
  } catch {
    // Not JSON: no ids to echo.
  }
  return JSON.stringify({
    ...(typeof request === 'string' ? { request } : {}),
    conversation: typeof conversation === 'string' ? conversation : '',
    status: 'FAILED',
    statusCode,
    errorMessage,
  });
}

export class CopilotSocket extends MockWebSocket {
  #client: Client | null = null;
  readonly #feed: CopilotFeed;
  readonly #inFlight = new Set<AbortController>();
  override readonly extensions = '';
  override readonly bufferedAmount = 0;

  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    this.#feed = pendingFeed!;
    // As a refused connection when no service worker answers: error, then close 1006, never open.
    if (!this.#feed.available()) queueMicrotask(() => super.close());
    this.addEventListener('close', () => {
      for (const controller of this.#inFlight) controller.abort();
    });
  }

  /** Called by mock-socket when its server accepts the connection. */
  connected(client: Client) {
    this.#client = client;
  }

  #deliver(data: string) {
    if (this.readyState === MockWebSocket.OPEN) this.#client?.send(data);
  }

  override send(data: string | Blob | ArrayBuffer | ArrayBufferView): void {
    if (this.readyState === MockWebSocket.CONNECTING) {
      throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
    // A socket that is closing or closed drops what is sent, as the browser's does.
    if (this.readyState !== MockWebSocket.OPEN) return;
    const text = typeof data === 'string' ? Promise.resolve(data) : new Response(data as BodyInit).text();
    void text.then((input) => this.#forward(input));
  }

  async #forward(input: string) {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      const response = await this.#feed.fetch(this.#feed.httpUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Pieces-Stream': 'qgpt' },
        body: input,
        signal: controller.signal,
      });
      if (!response.ok || !response.body) {
        this.#deliver(failedFrame(input, response.status, (await response.text()) || `The stream answered ${response.status}.`));
        return;
      }
      const reader = response.body
        .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
        .pipeThrough(new EventSourceParserStream())
        .getReader();
      // Abandoning the answer cancels its response, which tells the worker to drop it.
      controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.#deliver(value.data);
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        this.#deliver(failedFrame(input, 503, `The copilot stream was interrupted: ${(error as Error)?.message ?? String(error)}.`));
      }
    } finally {
      this.#inFlight.delete(controller);
    }
  }

  override close(code?: number, reason?: string): void {
    checkClose(code, reason);
    super.close(code, reason);
  }
}

/** A copilot socket for `href` (a ws(s) URL of the stream path under a base). */
export function copilotSocket(href: string, protocols: string | string[] | undefined, feed: CopilotFeed): CopilotSocket {
  serverFor(href);
  pendingFeed = feed;
  try {
    return new CopilotSocket(href, protocols);
  } finally {
    pendingFeed = null;
  }
}
