/**
 * The service in a Service Worker, without touching its fetch handling: the
 * database in IndexedDB, changes announced to every page on the origin's
 * BroadcastChannel, the page API over messages, and the pages' fast path
 * (requests over a MessagePort, see src/port/).
 */
import { Route } from 'workbox-routing';
import { conversationJson } from '../core/models/conversation-wire.js';
import type { ServiceSettings } from '../core/options.js';
import type { Service } from '../core/service.js';
import { broadcastChannel } from '../host/channel.js';
import { createHost } from '../host/create-host.js';
import { webLock } from '../host/mirror/lock.js';
import type { UpstreamIo } from '../host/mirror/upstream.js';
import type { PageReply, PageRequest } from '../host/protocol.js';
import type { ConnectMessage } from '../port/protocol.js';
import { createPortServer, type PortLike } from '../port/server.js';
import { openStorage } from '../storage/idb/storage.js';
import type { ServiceWorkerScope } from './sw-types.js';

export interface WorkerOptions extends ServiceSettings {
  /** IndexedDB database name; default `pieces-os-worker`. */
  databaseName?: string;
  /** Write concurrent creates together, in one transaction, each acknowledged after it; default true. */
  groupCommit?: boolean;
}

/**
 * What a worker's routes are added to: a workbox-routing `Router` (an app's own, or the one
 * behind Workbox's `registerRoute`). Typed structurally so that the public types need no
 * Service Worker lib.
 */
export interface RouteRegistry {
  registerRoute(route: never): unknown;
}

export interface PiecesWorker extends Service {
  /** The answer to a fetch under a base (undefined for any other request: let it pass). */
  respond(request: Request, event?: unknown): Promise<Response> | undefined;
  /** Adds the service's routes to a workbox-routing Router (an app's own, or Workbox's default one). */
  addRoutes(router: RouteRegistry): void;
}

/**
 * Runs the service inside a Service Worker without touching its fetch
 * handling. Answer fetches with the result's `respond(request)` (undefined for
 * requests outside the bases), or add its routes to a Workbox Router.
 */
export function createPiecesWorker(options: WorkerOptions = {}, scope = self as unknown as ServiceWorkerScope): PiecesWorker {
  const { databaseName, groupCommit, ...settings } = options;
  const host = createHost({
    open: (hooks, initialData) =>
      openStorage({
        name: databaseName,
        initialData,
        groupCommit,
        encodeConversation: conversationJson,
        onLost: hooks.lost,
        onBlocked: hooks.blocked,
      }),
    channel: broadcastChannel(),
    settings,
    // Overrides set by a test hold for every tab until reset, across restarts.
    keepOverrides: true,
    // A worker's own fetches never reach its fetch handler: a mirrored Pieces OS is reached with them.
    upstream: {
      fetch: (input, init) => globalThis.fetch(input, init),
      ...(typeof WebSocket === 'undefined' ? {} : { WebSocket: WebSocket as unknown as UpstreamIo['WebSocket'] }),
      lock: webLock(scope.navigator?.locks),
    },
  });
  const { service } = host;
  // The fast path: pages send their requests over a port.
  let fetches = 0;
  const ports = createPortServer((request) => service.respond(request), {
    stats: () => ({ fetches }),
    lock: (name) => holdLock(scope, name),
  });
  scope.addEventListener('message', (event) => {
    const port = event.ports[0];
    if ((event.data as ConnectMessage)?.type === 'pieces:fast-path') {
      // A connect (port attached), or a page telling that it still uses its port.
      if (port) ports.serve(port as unknown as PortLike);
      return;
    }
    const reply = (message: PageReply) => port?.postMessage(message);
    event.waitUntil(
      host
        .answerPageRequest(event.data as PageRequest, () => scope.clients.claim())
        .then(reply, (error: unknown) => reply({ ok: false, error: error instanceof Error ? error.message : String(error) })),
    );
  });
  const worker: PiecesWorker = {
    ...service,
    // A request retried by fetch after it went over a port is answered without running it twice.
    respond(request) {
      const response = ports.answerRetry(request) ?? service.respond(request);
      if (response) fetches++;
      return response;
    },
    addRoutes: (registry) => addRoutes(registry, worker),
  };
  return worker;
}

/** Methods a Workbox Router routes (it answers no other). */
const ROUTED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** One Workbox route per method: every request under a base, answered by the worker. */
function addRoutes(registry: RouteRegistry, worker: PiecesWorker): void {
  for (const method of ROUTED_METHODS) {
    registry.registerRoute(
      new Route(({ url }) => worker.pathUnderBase(url) !== null, { handle: ({ request }) => worker.respond(request)! }, method) as never,
    );
  }
}

/**
 * Holds the Web Lock `name` until this worker instance stops (the browser releases
 * a stopped worker's locks); resolves true once held, false where there are no locks.
 */
function holdLock(scope: ServiceWorkerScope, name: string): Promise<boolean> {
  const locks = scope.navigator?.locks;
  if (!locks) return Promise.resolve(false);
  return new Promise((held) => {
    locks
      .request(name, () => {
        held(true);
        return new Promise<never>(() => {});
      })
      .catch(() => held(false));
  });
}
