/**
 * The loopback server: the same service on a real HTTP and WebSocket port
 * (node:http and ws), for clients that cannot run in the test's process: the
 * Python SDK, the Pieces CLI, curl, Postman, fuzzers. Here it is assembled: what an HTTP request
 * is answered is in serve-answer.ts, how it is written in serve-send.ts, the WebSocket upgrades in
 * serve-upgrade.ts, the bounds in serve-bounds.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { MAX_BODY_BYTES } from '../core/http.js';
import { loggerFor } from '../core/log.js';
import type { ServiceSettings } from '../core/options.js';
import { serviceControls, type PiecesControls } from '../host/controls.js';
import type { AccessOptions } from './access.js';
import { openDataFile, type DataFile } from './data-file.js';
import { createNodeHost } from './host.js';
import { answer, type Listening } from './serve-answer.js';
import { admitConnection, bodyBudget, limitsOf, type Connection, type LoopbackLimits } from './serve-bounds.js';
import { noop, refuseRaw, send, TEXT } from './serve-send.js';
import { upgrades } from './serve-upgrade.js';

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

/** `error`'s message, without the full stop it may end with (the answer adds its own). */
const messageOf = (error: unknown) => String((error as Error)?.message ?? error).replace(/[.\s]+$/, '');

/** Starts the service on a real port; resolves once it listens. */
export async function startLoopbackServer(options: LoopbackOptions = {}): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1';
  // Read (and its store opened) before anything listens: a file that cannot be kept fails the start.
  const kept: DataFile | null = options.dataFile ? await openDataFile(options.dataFile) : null;
  const limits = limitsOf(options);
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
  // Answered once in-process before the port is announced: a client's first request finds the
  // service's modules compiled and its tables built (the Python clients give health 0.1 s; the
  // first answer of a cold process took 110-170 ms on a loaded 2-core machine).
  await service.handle(new Request(`${origin}/.well-known/health`, { method: 'HEAD' }));

  // Open connections, oldest first.
  const connections = new Map<Socket, Connection>();
  const bodies = bodyBudget(limits.maxBodyBytesInFlight, maxBodyBytes);
  const listening: Listening = { service, host, origin, options };

  http.on('connection', (socket: Socket) => {
    // No error of one connection (a reset, a malformed request) may end the process or reach another one.
    socket.on('error', noop);
    admitConnection(connections, socket, limits.maxConnections);
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
    outgoing.on('close', () => connection.requests--);
    if (!bodies.admit(incoming, outgoing)) return;
    const finished = new Promise<void>((resolve) => {
      outgoing.on('finish', resolve);
      outgoing.on('close', resolve);
    });
    connection.queue = connection.queue.then(async () => {
      // Its client left while it waited: not answered (nothing runs for a connection that is gone).
      if (outgoing.destroyed) return;
      let response: Response;
      try {
        response = await answer(listening, incoming);
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

  const upgrade = upgrades({
    ...listening,
    connections,
    sockets,
    openStream,
    logger: loggerFor(options.log),
    maxFrameBytes: maxBodyBytes,
    maxQuestionsInFlight: limits.maxQuestionsInFlight,
    take,
  });
  http.on('upgrade', upgrade.onUpgrade);

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
  states.set(server, () => ({ connections: connections.size, streams: upgrade.streams(), bodyBytes: bodies.bytes() }));
  return server;
}
