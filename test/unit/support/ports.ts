/**
 * The fast path's two ends in one process, for the port tests: MessageChannels (node's, closed
 * after each test by `closePorts`), and a page's PortClient joined to a worker's port server.
 */
import { MessageChannel } from 'node:worker_threads';
import { PortClient, type ClientPort } from '../../../src/port/client.js';
import { createPortServer, type PortLike } from '../../../src/port/server.js';

const opened: Array<{ close(): void }> = [];

/** Closes every port opened since the last call (call it in `afterEach`). */
export const closePorts = () => {
  for (const port of opened.splice(0)) port.close();
};

/** A new channel: the page's end and the worker's. */
export function channel() {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  return { page: port1 as unknown as ClientPort, worker: port2 as unknown as PortLike };
}

/**
 * A page and a worker joined by ports; the worker's fetch handler answers fallbacks as the
 * Service Worker does (`fetched`: what reached it, copied).
 */
export function joined(
  respond: (request: Request) => Promise<Response>,
  options: { expiryMs?: number; graceMs?: number; pingMs?: number; keptLimit?: number } = {},
) {
  const server = createPortServer(respond, options);
  const fetched: Request[] = [];
  const client = new PortClient({
    ...options,
    connect: async () => {
      const { page, worker } = channel();
      server.serve(worker);
      return { port: page, instance: server.instance, worker: 'w' };
    },
    fetch: async (request) => {
      fetched.push(request.clone());
      return (server.answerRetry(request) ?? respond(request))!;
    },
  });
  return { server, client, fetched };
}
