/**
 * The copilot stream (`/qgpt/stream`) while the upstream answers: each client frame the
 * page's socket shim carries as a POST goes to the upstream's own WebSocket, and what it
 * answers comes back as the POST's server-sent events, until the request's last frame
 * (COMPLETED, FAILED, STOPPED or RESET). A stop for a request in flight goes on that
 * request's socket.
 */
import { EVENT_STREAM_HEADERS, EventFrames, eventStream } from '../../core/event-frames.js';
import type { WebSocketLike } from './upstream.js';

const LAST = new Set(['COMPLETED', 'FAILED', 'STOPPED', 'RESET']);

export class CopilotBridge {
  /** Sockets of requests in flight, by request id. */
  readonly #running = new Map<string, WebSocketLike>();

  constructor(private readonly open: (url: string) => WebSocketLike) {}

  /**
   * The answer to one client frame, from the upstream at `wsUrl`; rejects (before any frame)
   * when the upstream's socket cannot be opened, so that the service answers instead.
   */
  answer(wsUrl: string, input: string): Promise<Response> {
    let parsed: { request?: unknown; stop?: unknown; reset?: unknown } = {};
    try {
      parsed = JSON.parse(input) as typeof parsed;
    } catch {
      // Sent as it is: the upstream says what is wrong with it.
    }
    const request = typeof parsed.request === 'string' ? parsed.request : undefined;
    const running = request === undefined ? undefined : this.#running.get(request);
    if ((parsed.stop === true || parsed.reset === true) && running && running.readyState === 1) {
      // A stop travels on the answer's own socket; that answer's stream carries what follows.
      running.send(input);
      return Promise.resolve(new Response('', { headers: EVENT_STREAM_HEADERS }));
    }
    return new Promise((resolve, reject) => {
      const socket = this.open(wsUrl);
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        if (request !== undefined && this.#running.get(request) === socket) this.#running.delete(request);
        frames.close();
        if (socket.readyState <= 1) socket.close();
      };
      // The upstream's frames as they come: the reader stopping (the page's socket closed) closes the upstream's.
      const frames = new EventFrames(finish);
      socket.onopen = () => {
        if (request !== undefined) this.#running.set(request, socket);
        socket.send(input);
        resolve(eventStream(frames));
      };
      socket.onmessage = (event) => {
        if (done) return;
        const data = String(event.data);
        frames.push([data]);
        try {
          const frame = JSON.parse(data) as { status?: string; request?: string };
          if (frame.status && LAST.has(frame.status) && (request === undefined || frame.request === undefined || frame.request === request))
            finish();
        } catch {
          // Not JSON: passed on as it is.
        }
      };
      socket.onerror = () => reject(new Error(`the upstream's copilot stream at ${wsUrl} could not be opened`));
      socket.onclose = () => finish();
    });
  }
}
