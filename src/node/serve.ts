/**
 * The loopback server: the same service on a real HTTP and WebSocket port
 * (node:http and ws), for clients that cannot run in the test's process: the
 * Python SDK, the Pieces CLI, curl, Postman, fuzzers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { ServiceSettings } from '../core/options.js';
import { serviceControls, type PiecesControls } from '../host/controls.js';
import { createNodeHost } from './host.js';
import { answerControl, CONTROLS_PATH } from './http-controls.js';
import { bridgeStream } from './stream-bridge.js';

export interface LoopbackOptions extends Omit<ServiceSettings, 'bases'> {
  /** Port to listen on; default 39300 (Pieces OS's). 0 picks a free port. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1 (loopback only). */
  host?: string;
}

export interface LoopbackServer extends PiecesControls {
  /** `http://<host>:<port>`: the base every request is answered under. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** Starts the service on a real port; resolves once it listens. */
export async function startLoopbackServer(options: LoopbackOptions = {}): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1';
  const http = createServer();
  const sockets = new WebSocketServer({ noServer: true });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 39300, host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 39300);
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // Every request that reaches the port is read as addressed to `origin`, whatever Host header it carries.
  let nodeHost: ReturnType<typeof createNodeHost>;
  try {
    nodeHost = createNodeHost({ ...options, bases: [origin] }, [origin]);
  } catch (error) {
    // Bad settings (data, a mirror of itself): nothing is left listening.
    await new Promise((resolve) => http.close(resolve));
    throw error;
  }
  const { service, openStream } = nodeHost;

  http.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const hasBody = incoming.method !== 'GET' && incoming.method !== 'HEAD';
    const request = new Request(origin + incoming.url, {
      method: incoming.method,
      headers: Object.entries(incoming.headers).flatMap(([name, value]) =>
        value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
      ),
      ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: 'half' } : {}),
    } as RequestInit);
    const path = new URL(request.url).pathname;
    const answer = path.startsWith(CONTROLS_PATH) ? answerControl(service, request, path) : service.handle(request);
    answer.then(
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
        outgoing.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        outgoing.end(`Internal error: ${(error as Error)?.message ?? String(error)}.`);
      },
    );
  });

  http.on('upgrade', (incoming: IncomingMessage, socket, head) => {
    const feed = openStream(origin.replace(/^http/, 'ws') + incoming.url);
    if (!feed) {
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nNo WebSocket at ${incoming.url}.`);
      return;
    }
    sockets.handleUpgrade(incoming, socket, head, (connection) => {
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        nodeHost.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
