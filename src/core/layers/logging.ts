/** The request log's layer (outermost): sees the final status, and whether an override answered. */
import type { Logger } from '../log.js';
import { operationFor } from '../routes.js';
import { ofOpenSocket, SOCKETS, STREAM_HEADER } from '../stream-wire.js';
import type { Layer } from './compose.js';

export const logging =
  (logger: Logger): Layer =>
  async (call, next) => {
    const started = performance.now();
    const response = await next();
    const { request, url, path } = call;
    // A socket's catch-ups and heartbeats are part of its connection, not requests of their own;
    // its handshake is the connection (logged as a WebSocket's), a copilot POST a message sent on it.
    if (ofOpenSocket(request, url)) return response;
    const stream = Object.hasOwn(SOCKETS, path) ? request.headers.get(STREAM_HEADER) : null;
    const socket = stream === 'handshake' ? 'open' : stream === 'qgpt' ? 'message' : undefined;
    const status = response.type === 'error' ? 0 : response.status;
    logger({
      operation: socket ? operationFor('GET', path) : call.operation,
      method: request.method,
      url: request.url,
      path,
      status: socket === 'open' && response.ok ? 101 : status,
      ms: performance.now() - started,
      overridden: call.overridden,
      ...(socket ? { socket } : {}),
    });
    return response;
  };
