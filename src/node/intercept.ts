/**
 * Node's preset of the interception layer: fetch, http/https, XMLHttpRequest and WebSocket, answered
 * by the latest listening server whose bases hold the request; everything else goes out untouched
 * (a `fetch` under no listening server's bases, straight to Node's own).
 */
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest';
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { XMLHttpRequestInterceptor } from '@mswjs/interceptors/XMLHttpRequest';
import { WebSocketInterceptor } from '@mswjs/interceptors/WebSocket';
import { interceptRequests } from '../host/intercept.js';
import type { NodeHost } from './host.js';
import { bridgeStream } from './stream-bridge.js';

const listening: NodeHost[] = [];
let active: { dispose(): void } | null = null;

/** The answer of the latest listening server whose bases hold the request, or undefined. */
export function answer(request: Request): Promise<Response> | undefined {
  for (let i = listening.length - 1; i >= 0; i--) {
    const response = listening[i]!.service.respond(request);
    if (response) return response.then((answered) => endedOnAbort(answered, request.signal));
  }
  return undefined;
}

/**
 * An event stream whose caller aborts ends as a network fetch's body does: it errors for the
 * reader, and the service's stream is cancelled (an MCP client that drops its SSE stream ends its
 * session at once). Other answers are given as they are.
 */
function endedOnAbort(response: Response, signal: AbortSignal): Response {
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      signal.addEventListener(
        'abort',
        () => {
          controller.error(signal.reason);
          void reader.cancel(signal.reason).catch(() => {});
        },
        { once: true },
      );
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A stream socket from the latest listening server that serves `url`, or null. */
export function openStream(url: string, protocols?: string | string[]): WebSocket | null {
  for (let i = listening.length - 1; i >= 0; i--) {
    const socket = listening[i]!.openStream(url, protocols);
    if (socket) return socket;
  }
  return null;
}

/**
 * A request whose target is not a path (a proxy's absolute form `http://example.test/page`, or `*`)
 * cannot be one of the service's, and the ClientRequest interceptor cannot read it (it throws
 * "Invalid URL"): such requests go to the functions there were, untouched.
 */
function passProxyRequests(): () => void {
  const before = { httpRequest: http.request, httpGet: http.get, httpsRequest: https.request, httpsGet: https.get };
  return () => {
    const notPath = (args: unknown[]) =>
      args.some(
        (arg) =>
          typeof arg === 'object' &&
          arg !== null &&
          !(arg instanceof URL) &&
          typeof (arg as { path?: unknown }).path === 'string' &&
          !(arg as { path: string }).path.startsWith('/'),
      );
    const pass = <F extends (...args: never[]) => unknown>(intercepted: F, original: F): F =>
      ((...args: Parameters<F>) => (notPath(args) ? original : intercepted)(...args)) as F;
    http.request = pass(http.request, before.httpRequest);
    http.get = pass(http.get, before.httpGet);
    https.request = pass(https.request, before.httpsRequest);
    https.get = pass(https.get, before.httpsGet);
  };
}

function start() {
  // The functions before the interceptor patches them; wrapped once it has.
  const wrapProxyRequests = passProxyRequests();
  const stopRequests = interceptRequests(
    [new ClientRequestInterceptor(), new XMLHttpRequestInterceptor(), new FetchInterceptor()],
    answer,
    (url) => listening.some((server) => server.service.pathUnderBase(url) !== null),
  );
  const sockets = new WebSocketInterceptor();
  // biome-ignore lint/nursery/noMisusedPromises: the interceptors await each 'connection' listener before they let a socket through, so the listener must return its promise.
  sockets.on('connection', async ({ client, server }) => {
    const feed = openStream(client.url.href);
    if (!feed) {
      server.connect();
      return;
    }
    // The client opens once the stream did (its first message follows), or fails as refused.
    await bridgeStream(feed, {
      send: (data) => client.send(data),
      close: (code, reason) => client.close(code, reason),
      refuse: () => {
        client.socket.dispatchEvent(new Event('error'));
        client.close(1006, '');
      },
      onClose: (listener) => client.addEventListener('close', listener),
      onMessage: (listener) => client.addEventListener('message', (event) => listener(String(event.data))),
    });
  });
  sockets.apply();
  wrapProxyRequests();
  // `import { request } from 'node:http'` binds the module's own exports: bring them in line with the patch.
  syncBuiltinESMExports();
  return {
    dispose() {
      stopRequests();
      sockets.dispose();
      syncBuiltinESMExports();
    },
  };
}

/** Starts answering for `server`; returns the function that stops. */
export function intercept(server: NodeHost): () => void {
  listening.push(server);
  active ??= start();
  return () => {
    const at = listening.indexOf(server);
    if (at >= 0) listening.splice(at, 1);
    if (listening.length === 0 && active) {
      active.dispose();
      active = null;
    }
  };
}
