/**
 * The loopback server: the same service on a real HTTP and WebSocket port
 * (node:http and ws), for clients that cannot run in the test's process: the
 * Python SDK, the Pieces CLI, curl, Postman, fuzzers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { WebSocketServer } from 'ws';
import { loggerFor } from '../core/log.js';
import type { ServiceSettings } from '../core/options.js';
import { operationFor } from '../core/routes.js';
import { SOCKETS } from '../core/stream-wire.js';
import { serviceControls, type PiecesControls } from '../host/controls.js';
import { createNodeHost } from './host.js';
import { openDataFile, type DataFile } from './data-file.js';
import { CONTROL_HEADER, refusedControl, refusedHost, type AccessOptions } from './access.js';
import { answerControl, CONTROLS_PATH } from './http-controls.js';
import { bridgeStream } from './stream-bridge.js';

export interface LoopbackOptions extends Omit<ServiceSettings, 'bases'>, AccessOptions {
  /** Port to listen on; default 39300 (Pieces OS's). 0 picks a free port. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1 (loopback only). */
  host?: string;
  /**
   * `serve --data`: a JSON file in the data format, read at start (its data replaces `data`) and
   * written on `close()`; every write is kept on disk beside it before it is answered (docs/testing.md).
   */
  dataFile?: string;
}

export interface LoopbackServer extends PiecesControls {
  /** `http://<host>:<port>`: the base every request is answered under. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };

/** Writes a short text answer on a raw socket (an upgrade refused) and closes it. */
function refuseUpgrade(socket: Duplex, status: string, message: string) {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`);
}

/** Starts the service on a real port; resolves once it listens. */
export async function startLoopbackServer(options: LoopbackOptions = {}): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1';
  // Read (and its store opened) before anything listens: a file that cannot be kept fails the start.
  const kept: DataFile | null = options.dataFile ? await openDataFile(options.dataFile) : null;
  const http = createServer();
  const sockets = new WebSocketServer({ noServer: true });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 39300, host, () => resolve());
  }).catch((error: unknown) => {
    kept?.close();
    throw error;
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 39300);
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // Every request that reaches the port is read as addressed to `origin`, once its Host is allowed.
  let nodeHost: ReturnType<typeof createNodeHost>;
  try {
    const data = kept && kept.data !== undefined ? { data: kept.data as ServiceSettings['data'] } : {};
    nodeHost = createNodeHost({ ...options, ...data, bases: [origin] }, [origin], kept ? (initialData) => kept.open(initialData) : undefined);
    // The stored records read back now: a store that cannot be opened fails the start.
    if (kept) await nodeHost.storage.identity().catch((error: unknown) => (nodeHost.close(), Promise.reject(error)));
  } catch (error) {
    // Bad settings (data, a mirror of itself): nothing is left listening.
    await new Promise((resolve) => http.close(resolve));
    kept?.close();
    throw error;
  }
  const { service, openStream } = nodeHost;

  // No error of one connection (a reset, a malformed request) may end the process or reach another one.
  http.on('connection', (socket: Socket) => socket.on('error', () => {}));
  http.on('clientError', (_error, socket: Duplex) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  http.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    outgoing.on('error', () => {});
    void answer(incoming).then(
      async (response) => {
        if (response.type === 'error') {
          // A network error: the connection drops without an answer.
          incoming.socket.destroy();
          return;
        }
        const body = Buffer.from(await response.arrayBuffer());
        outgoing.writeHead(response.status, Object.fromEntries(response.headers));
        outgoing.end(incoming.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        if (outgoing.headersSent) return void outgoing.destroy();
        outgoing.writeHead(500, TEXT);
        outgoing.end(`Internal error: ${(error as Error)?.message ?? String(error)}.`);
      },
    );
  });

  /** The answer to one HTTP request: refused (Host, controls), a control, or the service's. */
  async function answer(incoming: IncomingMessage): Promise<Response> {
    const refused = refusedHost(incoming.headers.host, host, options);
    if (refused) return new Response(refused, { status: 403, headers: TEXT });
    let url: URL;
    try {
      url = new URL(origin + incoming.url);
      if (!incoming.url?.startsWith('/')) throw new TypeError('not a path');
    } catch {
      return new Response(`The request target must be a path, not ${JSON.stringify(String(incoming.url).slice(0, 200))}.`, { status: 400, headers: TEXT });
    }
    const hasBody = incoming.method !== 'GET' && incoming.method !== 'HEAD';
    const request = new Request(url, {
      method: incoming.method,
      headers: Object.entries(incoming.headers).flatMap(([name, value]) =>
        value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
      ),
      ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: 'half' } : {}),
    } as RequestInit);
    if (!url.pathname.startsWith(CONTROLS_PATH)) return service.handle(request);
    return controlAnswer(incoming, request, url.pathname);
  }

  /** A control request: only from clients that are not web pages, or from a page of an allowed origin. */
  async function controlAnswer(incoming: IncomingMessage, request: Request, path: string): Promise<Response> {
    const from = incoming.headers.origin;
    const allowed = from !== undefined && (options.allowedOrigins ?? []).includes(from);
    const cors: Record<string, string> = allowed ? { 'Access-Control-Allow-Origin': from, Vary: 'Origin' } : {};
    if (incoming.method === 'OPTIONS' && allowed) {
      // The preflight of an allowed page's control request.
      return new Response(null, {
        status: 204,
        headers: { ...cors, 'Access-Control-Allow-Methods': 'GET, POST', 'Access-Control-Allow-Headers': `${CONTROL_HEADER}, content-type` },
      });
    }
    const refused = refusedControl(incoming.headers as Parameters<typeof refusedControl>[0], options);
    if (refused) return new Response(refused, { status: 403, headers: TEXT });
    const response = await answerControl(service, request, path);
    // Only an allowed page may read what a control answers (never every origin, as the API allows).
    const headers = new Headers(response.headers);
    headers.delete('Access-Control-Allow-Origin');
    headers.delete('Access-Control-Expose-Headers');
    for (const [name, value] of Object.entries(cors)) headers.set(name, value);
    return new Response(response.body, { status: response.status, headers });
  }

  // The service logs a fed socket's connection (its handshake); the copilot socket has none, and a refused upgrade never reaches the service.
  const logger = loggerFor(options.log);
  const logUpgrade = (url: URL, status: number, started: number) => {
    const path = url.pathname.replace(/\/+$/, '');
    const operation = Object.hasOwn(SOCKETS, path) ? operationFor('GET', path) : undefined;
    logger?.({ operation, method: 'GET', url: url.href, path, status, ms: performance.now() - started, overridden: false, socket: 'open' });
  };

  http.on('upgrade', (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const started = performance.now();
    const refused = refusedHost(incoming.headers.host, host, options);
    if (refused) return refuseUpgrade(socket, '403 Forbidden', refused);
    let url: URL | null = null;
    let feed: WebSocket | null = null;
    try {
      if (incoming.url?.startsWith('/')) {
        url = new URL(origin.replace(/^http/, 'ws') + incoming.url);
        feed = openStream(url.href);
      }
    } catch {
      feed = null;
    }
    if (!feed || !url) {
      refuseUpgrade(socket, '404 Not Found', `No WebSocket at ${String(incoming.url).slice(0, 200)}.`);
      if (url) logUpgrade(url, 404, started);
      return;
    }
    const kind = SOCKETS[url.pathname.replace(/\/+$/, '')];
    sockets.handleUpgrade(incoming, socket, head, (connection) => {
      connection.on('error', () => connection.terminate());
      if (kind === 'copilot') logUpgrade(url, 101, started);
      void bridgeStream(feed, {
        send: (data) => connection.send(data),
        close: (code, reason) => connection.close(code, reason),
        refuse: () => connection.terminate(),
        onClose: (listener) => connection.on('close', listener),
        onMessage: (listener) => connection.on('message', (data) => listener(String(data))),
      });
    });
  });

  return {
    url: origin,
    port,
    ...serviceControls(service),
    close: async () => {
      await new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        http.closeAllConnections();
        http.close(() => resolve());
      });
      // Nothing is answered any more: the export is the store as it stays.
      try {
        if (kept) await kept.save(await service.exportData());
      } finally {
        nodeHost.close();
        kept?.close();
      }
    },
  };
}
