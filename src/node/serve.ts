/**
 * The loopback server: the same service on a real HTTP and WebSocket port
 * (node:http and ws), for clients that cannot run in the test's process: the
 * Python SDK, the Pieces CLI, curl, Postman, fuzzers.
 */
import { createServer, ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { WebSocketServer } from 'ws';
import { MAX_BODY_BYTES } from '../core/http.js';
import { loggerFor } from '../core/log.js';
import type { ServiceSettings } from '../core/options.js';
import { operationFor } from '../core/routes.js';
import { SOCKETS } from '../core/stream-wire.js';
import { serviceControls, type PiecesControls } from '../host/controls.js';
import { createNodeHost } from './host.js';
import { failedFrame } from '../stream/copilot-socket.js';
import { openDataFile, type DataFile } from './data-file.js';
import { CONTROL_HEADER, refusedControl, refusedHost, refusedOrigin, type AccessOptions } from './access.js';
import { answerControl, CONTROLS_PATH } from './http-controls.js';
import { bridgeStream } from './stream-bridge.js';

export interface LoopbackOptions extends Omit<ServiceSettings, 'bases'>, AccessOptions, LoopbackLimits {
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

/** What one client may hold of the loopback server (docs/testing.md, "Bounds"). Times in ms; 0 turns a time off. */
export interface LoopbackLimits {
  /**
   * Connections (HTTP and WebSocket) open at once; default 256. At the limit a new connection
   * closes the oldest one with no request in progress, or, when there is none, is answered 503 and closed.
   */
  maxConnections?: number;
  /** Time a client has to send a request's headers (from its first byte, or from connecting); default 10 s. Then: 408 and closed. */
  headersTimeout?: number;
  /** Time a client has to send a whole request, body included; default 30 s. Then: 408 and closed. */
  requestTimeout?: number;
  /** A connection where nothing moves either way (a client that does not read its answer) is closed after it; default 120 s. */
  idleTimeout?: number;
  /** Request bodies being received at once, in bytes (each counted at its Content-Length); default 64 MiB. Over it: 503. */
  maxBodyBytesInFlight?: number;
  /** Questions one copilot socket (`/qgpt/stream`) may have unanswered; default 8. Over it: a FAILED frame (statusCode 429). */
  maxQuestionsInFlight?: number;
}

export const DEFAULT_LIMITS: Required<LoopbackLimits> = {
  maxConnections: 256,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  idleTimeout: 120_000,
  maxBodyBytesInFlight: 64 * 1024 * 1024,
  maxQuestionsInFlight: 8,
};

export interface LoopbackServer extends PiecesControls {
  /** `http://<host>:<port>`: the base every request is answered under. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** What a loopback server holds now (for tests and measurements; not part of the package's API). */
export interface LoopbackState {
  /** Open connections, HTTP and WebSocket. */
  connections: number;
  /** Service sockets (streams) open for WebSocket clients. */
  streams: number;
  /** Request body bytes counted in flight. */
  bodyBytes: number;
}

const states = new WeakMap<LoopbackServer, () => LoopbackState>();

/** What `server` holds now. */
export function loopbackState(server: LoopbackServer): LoopbackState {
  return states.get(server)!();
}

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const noop = () => {};

/** Methods fetch cannot carry and nothing here serves: answered 501, never taken for a proxy's or a debugger's. */
const UNSERVED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** Writes a short text answer on a raw socket (an upgrade or a connection refused) and closes it. */
function refuseRaw(socket: Duplex, status: string, message: string) {
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}

/** `error`'s message, without the full stop it may end with (the answer adds its own). */
const messageOf = (error: unknown) => String((error as Error)?.message ?? error).replace(/[.\s]+$/, '');

/** Resolves once `outgoing` may take more (drain) or is gone (close). */
const drained = (outgoing: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });

/** Headers of one connection, not of the answer: never passed on from the service's Response. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** Body bytes gathered before they are written: a body that ends within them goes with its length. */
const GATHER_BYTES = 1024 * 1024;

/**
 * Sends `response` on `outgoing`, its body piece by piece, each once the client took what came before
 * (a client that does not read holds up its own answer only). A stream of events goes out as it comes;
 * any other body in pieces of up to GATHER_BYTES (the service's come in many small chunks), with its
 * length when it is no larger.
 */
async function send(response: Response, outgoing: ServerResponse, head: boolean): Promise<void> {
  // How the body is framed on this connection is Node's to say (a mirrored answer may bring its upstream's).
  const headers = Object.fromEntries([...response.headers].filter(([name]) => !HOP_BY_HOP.has(name)));
  const reader = head ? null : response.body?.getReader();
  if (head) void response.body?.cancel().catch(noop);
  if (!reader) return void outgoing.writeHead(response.status, headers).end();
  const gather = response.headers.get('content-type')?.startsWith('text/event-stream') ? 1 : GATHER_BYTES;
  try {
    let started = false;
    for (;;) {
      const pieces: Uint8Array[] = [];
      let size = 0;
      let done = false;
      while (size < gather) {
        const chunk = await reader.read();
        if (chunk.done) {
          done = true;
          break;
        }
        pieces.push(chunk.value);
        size += chunk.value.byteLength;
      }
      const piece = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, size);
      if (!started && done) return void outgoing.writeHead(response.status, { ...headers, 'content-length': String(size) }).end(piece);
      if (!started)
        outgoing.writeHead(response.status, Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-length')));
      started = true;
      if (size > 0 && !outgoing.write(piece)) await drained(outgoing);
      if (outgoing.destroyed) return;
      if (done) return void outgoing.end();
    }
  } catch {
    // The body failed midway: the client sees the connection drop, not a truncated answer taken as whole.
    outgoing.destroy();
  } finally {
    if (outgoing.destroyed) void reader.cancel().catch(noop);
  }
}

/** One connection: its requests in progress (answered in order, one at a time), and whether it became a WebSocket. */
interface Connection {
  requests: number;
  websocket: boolean;
  queue: Promise<void>;
}

/** Starts the service on a real port; resolves once it listens. */
export async function startLoopbackServer(options: LoopbackOptions = {}): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1';
  // Read (and its store opened) before anything listens: a file that cannot be kept fails the start.
  const kept: DataFile | null = options.dataFile ? await openDataFile(options.dataFile) : null;
  const limits = {
    ...DEFAULT_LIMITS,
    ...Object.fromEntries(Object.entries(options).filter(([name, value]) => name in DEFAULT_LIMITS && value !== undefined)),
  };
  const maxBodyBytes = Math.min(options.maxBodyBytes ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
  const timeouts = [limits.headersTimeout, limits.requestTimeout].filter((ms) => ms > 0);
  const http = createServer({
    headersTimeout: limits.headersTimeout,
    requestTimeout: limits.requestTimeout,
    // How often Node looks for requests past their time (its default, 30 s, would let them run that much longer).
    connectionsCheckingInterval: Math.max(25, Math.min(1000, ...timeouts.map((ms) => Math.floor(ms / 4)))),
  });
  http.timeout = limits.idleTimeout;
  // A frame may be as large as a request body; nothing larger is read (ws closes with 1009).
  const sockets = new WebSocketServer({ noServer: true, maxPayload: maxBodyBytes });
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
    nodeHost = createNodeHost(
      { ...options, ...data, bases: [origin] },
      [origin],
      kept ? (initialData) => kept.open(initialData) : undefined,
    );
    // The stored records read back now: a store that cannot be opened fails the start.
    if (kept) {
      await nodeHost.storage.identity().catch((error: unknown) => {
        nodeHost.close();
        throw error;
      });
    }
  } catch (error) {
    // Bad settings (data, a mirror of itself): nothing is left listening.
    await new Promise((resolve) => http.close(resolve));
    kept?.close();
    throw error;
  }
  const { service, openStream } = nodeHost;

  // Open connections, oldest first.
  const connections = new Map<Socket, Connection>();
  let streams = 0;
  let bodyBytes = 0;

  http.on('connection', (socket: Socket) => {
    // No error of one connection (a reset, a malformed request) may end the process or reach another one.
    socket.on('error', noop);
    if (connections.size >= limits.maxConnections) {
      // Room is made by closing the oldest connection that waits for nothing (idle, or still sending its headers).
      const idle = [...connections].find(([, connection]) => connection.requests === 0 && !connection.websocket)?.[0];
      if (!idle)
        return refuseRaw(
          socket,
          '503 Service Unavailable',
          `Too many connections (${limits.maxConnections} at most); try again once one closes.`,
        );
      connections.delete(idle);
      idle.destroy();
    }
    connections.set(socket, { requests: 0, websocket: false, queue: Promise.resolve() });
    socket.on('close', () => connections.delete(socket));
  });
  http.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return void socket.destroy();
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    socket.end(`HTTP/1.1 ${timedOut ? '408 Request Timeout' : '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
  });
  // CONNECT: this is no proxy.
  http.on('connect', (incoming: IncomingMessage, socket: Duplex) => {
    socket.on('error', noop);
    refuseRaw(socket, '501 Not Implemented', `${incoming.method} is not served here: the loopback server is not a proxy.`);
  });

  http.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    outgoing.on('error', noop);
    const connection = connections.get(incoming.socket as Socket);
    if (!connection) return void incoming.socket.destroy();
    take(connection, incoming, outgoing);
  });

  /** Queues a request on its connection: answered once those before it are sent, unless its body is over the budget. */
  function take(connection: Connection, incoming: IncomingMessage, outgoing: ServerResponse) {
    connection.requests++;
    let counted = 0;
    outgoing.on('close', () => {
      connection.requests--;
      bodyBytes -= counted;
    });
    if (incoming.headers['content-length'] !== undefined || incoming.headers['transfer-encoding'] !== undefined) {
      const declared = Number(incoming.headers['content-length']);
      counted = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, maxBodyBytes) : maxBodyBytes;
      if (bodyBytes + counted > limits.maxBodyBytesInFlight) {
        counted = 0;
        outgoing.shouldKeepAlive = false;
        outgoing
          .writeHead(503, { ...TEXT, 'Retry-After': '1' })
          .end(`Too many request bodies in flight (${limits.maxBodyBytesInFlight} bytes at most); try again once they are answered.`);
        return;
      }
      bodyBytes += counted;
    }
    const finished = new Promise<void>((resolve) => {
      outgoing.on('finish', resolve);
      outgoing.on('close', resolve);
    });
    connection.queue = connection.queue.then(async () => {
      // Its client left while it waited: not answered (nothing runs for a connection that is gone).
      if (outgoing.destroyed) return;
      let response: Response;
      try {
        response = await answer(incoming);
      } catch (error) {
        response = new Response(`Internal error: ${messageOf(error)}.`, { status: 500, headers: TEXT });
      }
      // A network error: the connection drops without an answer.
      if (response.type === 'error') return void incoming.socket.destroy();
      if (outgoing.destroyed) return void response.body?.cancel().catch(noop);
      await send(response, outgoing, incoming.method === 'HEAD');
      await finished;
    });
  }

  /** The answer to one HTTP request: refused (Host, Origin, controls), a control, or the service's. */
  async function answer(incoming: IncomingMessage): Promise<Response> {
    const refused = refusedHost(incoming.headers.host, host, options) ?? refusedOrigin(incoming.headers.origin, options);
    if (refused) return new Response(refused, { status: 403, headers: TEXT });
    let url: URL;
    try {
      url = new URL(origin + incoming.url);
      if (!incoming.url?.startsWith('/')) throw new TypeError('not a path');
    } catch {
      return new Response(`The request target must be a path, not ${JSON.stringify(String(incoming.url).slice(0, 200))}.`, {
        status: 400,
        headers: TEXT,
      });
    }
    const method = incoming.method ?? 'GET';
    if (UNSERVED_METHODS.has(method)) return new Response(`${method} is not served here.`, { status: 501, headers: TEXT });
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const request = new Request(url, {
      method,
      headers: Object.entries(incoming.headers).flatMap(([name, value]) =>
        value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
      ),
      ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: 'half' } : {}),
    } as RequestInit);
    if (!url.pathname.startsWith(CONTROLS_PATH)) return forOrigin(await service.handle(request), incoming);
    return controlAnswer(incoming, request, url.pathname);
  }

  /**
   * The service's answer as the page of an allowed origin may read it: its origin in
   * `Access-Control-Allow-Origin` (never every origin), and, for a preflight, the method and headers asked for.
   */
  function forOrigin(response: Response, incoming: IncomingMessage): Response {
    const from = incoming.headers.origin;
    if (response.type === 'error') return response;
    const headers = new Headers(response.headers);
    headers.append('Vary', 'Origin');
    if (from !== undefined) {
      headers.set('Access-Control-Allow-Origin', from);
      const method = incoming.headers['access-control-request-method'];
      if (incoming.method === 'OPTIONS' && method) {
        headers.set('Access-Control-Allow-Methods', response.headers.get('Allow') ?? method);
        const asked = incoming.headers['access-control-request-headers'];
        if (asked) headers.set('Access-Control-Allow-Headers', asked);
      }
    }
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
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
        headers: {
          ...cors,
          'Access-Control-Allow-Methods': 'GET, POST',
          'Access-Control-Allow-Headers': `${CONTROL_HEADER}, content-type`,
        },
      });
    }
    const refused = refusedControl(incoming.headers as Parameters<typeof refusedControl>[0], options);
    if (refused) return new Response(refused, { status: 403, headers: TEXT });
    const response = await answerControl(service, request, path);
    // Only a listed page may read what a control answers: the service's own CORS headers are dropped.
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
    socket.on('error', noop);
    const connection = connections.get(socket as Socket);
    if (!connection) return void socket.destroy();
    // Another protocol (h2c): not taken; the request is answered as the plain request it also is.
    if (String(incoming.headers.upgrade).toLowerCase() !== 'websocket') return answerPlain(connection, incoming, socket as Socket);
    const started = performance.now();
    const refused = refusedHost(incoming.headers.host, host, options) ?? refusedOrigin(incoming.headers.origin, options);
    if (refused) return refuseRaw(socket, '403 Forbidden', refused);
    let url: URL | null = null;
    try {
      if (incoming.url?.startsWith('/')) url = new URL(origin.replace(/^http/, 'ws') + incoming.url);
    } catch {
      url = null;
    }
    const path = url?.pathname.replace(/\/+$/, '');
    const kind = path !== undefined && Object.hasOwn(SOCKETS, path) ? SOCKETS[path] : undefined;
    if (!url || !kind) {
      refuseRaw(socket, '404 Not Found', `No WebSocket at ${String(incoming.url).slice(0, 200)}.`);
      if (url) logUpgrade(url, 404, started);
      return;
    }
    connection.websocket = true;
    // The service's socket opens once the handshake is accepted: a refused one (ws answers it) leaves nothing behind.
    sockets.handleUpgrade(incoming, socket, head, (client) => {
      client.on('error', () => client.terminate());
      let feed: WebSocket | null = null;
      try {
        feed = openStream(url.href);
      } catch {
        feed = null;
      }
      if (!feed) return void client.close(1011, 'The stream could not start.');
      streams++;
      feed.addEventListener('close', () => streams--);
      if (kind === 'copilot') logUpgrade(url, 101, started);
      const deliver = (data: string) => {
        if (client.readyState !== client.OPEN) return;
        client.send(data);
        // A client that does not read: dropped once what waits for it passes a frame's limit, its frames never piling up here.
        if (client.bufferedAmount > maxBodyBytes) client.terminate();
      };
      void bridgeStream(feed, {
        send: deliver,
        close: (code, reason) => client.close(code, reason),
        refuse: () => client.terminate(),
        onClose: (listener) => client.on('close', listener),
        onMessage: (listener) =>
          client.on('message', (data) => {
            const text = String(data);
            if (kind === 'copilot' && overQuestions(feed, text)) {
              deliver(
                failedFrame(
                  text,
                  429,
                  `Too many questions in flight on this socket (${limits.maxQuestionsInFlight} at most): wait for an answer to end.`,
                ),
              );
              return;
            }
            listener(text);
          }),
      });
    });
  });

  // Questions a copilot socket took before the service's socket opened (waiting in the bridge, not yet counted by it).
  const early = new WeakMap<WebSocket, number>();

  /** Whether a copilot socket's input is a question over its limit (a stop or reset always goes through). */
  function overQuestions(feed: WebSocket, input: string): boolean {
    const connecting = feed.readyState === feed.CONNECTING;
    const waiting = connecting ? (early.get(feed) ?? 0) : 0;
    if (((feed as WebSocket & { pending?: number }).pending ?? 0) + waiting < limits.maxQuestionsInFlight) {
      if (connecting) early.set(feed, waiting + 1);
      return false;
    }
    try {
      const sent = JSON.parse(input) as { stop?: unknown; reset?: unknown } | null;
      return !(sent?.stop || sent?.reset);
    } catch {
      return true;
    }
  }

  /** A request that asked for another protocol than WebSocket, answered on its raw socket as a plain request, then closed. */
  function answerPlain(connection: Connection, incoming: IncomingMessage, socket: Socket) {
    const outgoing = new ServerResponse(incoming);
    outgoing.shouldKeepAlive = false;
    outgoing.assignSocket(socket);
    outgoing.on('finish', () => socket.end());
    const length = incoming.headers['content-length'];
    if (incoming.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
      // Its body was never read as one (the request was taken for an upgrade).
      outgoing
        .writeHead(400, TEXT)
        .end(
          `A request asking to upgrade to ${String(incoming.headers.upgrade).slice(0, 100)} may not carry a body here; send it without Upgrade.`,
        );
      return;
    }
    incoming.push(null);
    take(connection, incoming, outgoing);
  }

  const server: LoopbackServer = {
    url: origin,
    port,
    ...serviceControls(service),
    close: async () => {
      await new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        http.closeAllConnections();
        for (const socket of connections.keys()) socket.destroy();
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
  states.set(server, () => ({ connections: connections.size, streams, bodyBytes }));
  return server;
}
