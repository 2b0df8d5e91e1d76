/**
 * The copilot socket (`/qgpt/stream`): each frame a client sends is a POST to the service, whose
 * server-sent events come back as the socket's messages; many inputs run at once on one socket.
 */
import { createParser } from 'eventsource-parser';
import { framesOf } from '../core/event-frames.js';
import { STREAM_HEADER } from '../core/stream-wire.js';
import { ServedSocket } from './served-socket.js';

export interface CopilotFeed {
  /** The http(s) URL of the stream path. */
  httpUrl: string;
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  available: () => boolean;
}

/** A frame the page makes for an input the worker could not take (it never reached the stream). */
export function failedFrame(input: string, statusCode: number, errorMessage: string): string {
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

export class CopilotSocket extends ServedSocket {
  readonly #feed: CopilotFeed;
  readonly #inFlight = new Set<AbortController>();
  #pending = 0;

  constructor(url: string, protocols: string | string[] | undefined, feed: CopilotFeed) {
    super(url, protocols);
    this.#feed = feed;
    // As a refused connection when no service worker answers: error, then close 1006, never open.
    if (!feed.available()) queueMicrotask(() => super.close());
    this.addEventListener('close', () => {
      for (const controller of this.#inFlight) controller.abort();
    });
  }

  /** Inputs taken by `send` whose answer has not ended yet (a host may bound them). */
  get pending(): number {
    return this.#pending;
  }

  #deliver(data: string) {
    if (this.readyState === ServedSocket.OPEN) this.client?.send(data);
  }

  override send(data: string | Blob | ArrayBuffer | ArrayBufferView): void {
    if (!this.accepts()) return;
    const text = typeof data === 'string' ? Promise.resolve(data) : new Response(data as BodyInit).text();
    this.#pending++;
    void text.then((input) => this.#forward(input)).finally(() => this.#pending--);
  }

  async #forward(input: string) {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      const response = await this.#feed.fetch(this.#feed.httpUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [STREAM_HEADER]: 'qgpt' },
        body: input,
        signal: controller.signal,
      });
      if (!response.ok || !response.body) {
        this.#deliver(failedFrame(input, response.status, (await response.text()) || `The stream answered ${response.status}.`));
        return;
      }
      // Frames that came as frames (from the service itself, or over the fast path's port): delivered as they
      // are, those sent together at once.
      const frames = framesOf(response);
      if (frames) {
        controller.signal.addEventListener('abort', () => frames.cancel(), { once: true });
        for (let batch = await frames.next(); batch; batch = await frames.next()) for (const frame of batch) this.#deliver(frame);
        return;
      }
      // Each event is a frame, delivered as it is parsed: the frames one piece of the body brought
      // (the service sends those of one task together) are delivered at once, in order.
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const parser = createParser({ onEvent: (event) => this.#deliver(event.data) });
      // Abandoning the answer cancels its response, which tells the worker to drop it.
      controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        this.#deliver(failedFrame(input, 503, `The copilot stream was interrupted: ${(error as Error)?.message ?? String(error)}.`));
      }
    } finally {
      this.#inFlight.delete(controller);
    }
  }
}
