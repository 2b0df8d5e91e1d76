/**
 * The Node host: `setupPiecesServer()` answers this process's requests to the Pieces OS bases, as MSW's
 * `setupServer` does for handlers (docs/testing.md).
 */
import { WebSocket as MockWebSocket } from 'mock-socket';
import { WebSocket as NodeWebSocket } from 'ws';
import type { ServiceSettings } from '../core/options.js';
import { serviceControls, type PiecesControls } from '../host/controls.js';
import { createNodeHost } from './host.js';
import { intercept, openStream } from './intercept.js';

export type PiecesServerOptions = ServiceSettings;

export interface PiecesServer extends PiecesControls {
  /** The base URLs answered. */
  readonly bases: readonly string[];
  /** Starts answering requests under the bases (fetch, http, XMLHttpRequest, WebSocket); nothing else is touched. */
  listen(): void;
  /** Stops answering and restores every patched global. `listen()` may be called again. */
  close(): void;
  /** Answers one request directly, without interception. */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

export function setupPiecesServer(options: PiecesServerOptions = {}): PiecesServer {
  const host = createNodeHost(options);
  let stop: (() => void) | null = null;
  return {
    bases: host.service.bases,
    listen() {
      stop ??= intercept(host);
    },
    close() {
      stop?.();
      stop = null;
      // A mirror's sockets and timers stop too (until the server is used again).
      host.mirror?.pause();
    },
    fetch: host.fetch,
    ...serviceControls(host.service),
  };
}

/**
 * A WebSocket class for runtimes without a global one (Node 20): stream URLs
 * under a listening server's bases are served by it; every other URL connects
 * for real (the global WebSocket where there is one, else the `ws` package).
 */
export const WebSocket = function WebSocket(url: string | URL, protocols?: string | string[]) {
  if (!new.target) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator.");
  const stream = openStream(String(url), protocols);
  if (stream) return stream;
  const Native =
    (globalThis as { WebSocket?: typeof globalThis.WebSocket }).WebSocket ?? (NodeWebSocket as unknown as typeof globalThis.WebSocket);
  return new Native(url, protocols);
} as unknown as typeof globalThis.WebSocket;
for (const [name, value] of Object.entries({ CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 })) {
  Object.defineProperty(WebSocket, name, { value, enumerable: true });
}
// `socket instanceof WebSocket` holds for what it makes: a service's socket (mock-socket's) or a real one.
Object.defineProperty(WebSocket, Symbol.hasInstance, {
  value: (value: unknown) =>
    value instanceof MockWebSocket ||
    value instanceof NodeWebSocket ||
    (typeof globalThis.WebSocket === 'function' && value instanceof globalThis.WebSocket),
});

export { memoryStorage } from '../storage/memory.js';
export { formatEntry, type LogEntry, type Logger } from '../core/log.js';
export type { Override } from '../core/overrides.js';
export type { OperationName } from '../core/routes.js';
export type { PiecesData, PiecesSeed } from '../core/data.js';
export type { ServiceSettings } from '../core/options.js';
export { startLoopbackServer, type LoopbackOptions, type LoopbackServer } from './serve.js';
export { piecesControls, type EvaluatingPage } from './page-controls.js';
export type { PiecesControls };
