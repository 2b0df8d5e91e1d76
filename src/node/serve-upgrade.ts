/**
 * The loopback server's WebSocket upgrades: an accepted handshake opens the service's socket in
 * this process and bridges it to the `ws` connection (a client that does not read is dropped,
 * a copilot socket's questions are bounded); a refused one leaves nothing behind. A request
 * that asks for another protocol is answered as the plain request it also is.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Logger } from '../core/log.js';
import { operationFor } from '../core/routes.js';
import { SOCKETS } from '../core/stream-wire.js';
import { failedFrame } from '../stream/copilot-socket.js';
import { refusedHost, refusedOrigin } from './access.js';
import type { Listening } from './serve-answer.js';
import { questionsBound, type Connection } from './serve-bounds.js';
import { noop, refuseRaw, TEXT } from './serve-send.js';
import { bridgeStream } from './stream-bridge.js';

export interface Upgrades extends Omit<Listening, 'service'> {
  /** Open connections (an upgrade on any other socket is dropped). */
  connections: Map<Socket, Connection>;
  sockets: WebSocketServer;
  /** The service's socket for a URL of one of its sockets. */
  openStream(url: string): WebSocket | null;
  logger: Logger | undefined;
  /** The largest frame read, and the most that may wait for a client that does not read. */
  maxFrameBytes: number;
  maxQuestionsInFlight: number;
  /** Queues a plain request on its connection (serve.ts). */
  take(connection: Connection, incoming: IncomingMessage, outgoing: ServerResponse): void;
}

/** The `upgrade` listener of the server, and the number of the service's sockets it holds open. */
export function upgrades({
  connections,
  sockets,
  openStream,
  logger,
  host,
  origin,
  options,
  maxFrameBytes,
  maxQuestionsInFlight,
  take,
}: Upgrades) {
  let streams = 0;
  const overQuestions = questionsBound(maxQuestionsInFlight);

  // The service logs a fed socket's connection (its handshake); the copilot socket has none, and a refused
  // upgrade never reaches the service.
  const logUpgrade = (url: URL, status: number, started: number) => {
    const path = url.pathname.replace(/\/+$/, '');
    const operation = Object.hasOwn(SOCKETS, path) ? operationFor('GET', path) : undefined;
    logger?.({ operation, method: 'GET', url: url.href, path, status, ms: performance.now() - started, overridden: false, socket: 'open' });
  };

  function onUpgrade(incoming: IncomingMessage, socket: Duplex, head: Buffer) {
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
        if (client.bufferedAmount > maxFrameBytes) client.terminate();
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
                  `Too many questions in flight on this socket (${maxQuestionsInFlight} at most): wait for an answer to end.`,
                ),
              );
              return;
            }
            listener(text);
          }),
      });
    });
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

  return { onUpgrade, streams: () => streams };
}
