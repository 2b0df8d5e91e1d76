/**
 * Runs the service in a Service Worker: opens the database, answers fetches
 * under the bases, broadcasts conversation changes and serves the page API.
 */
import { registerRoute, Route, type Router } from 'workbox-routing';
import { createHostedService, initialAssets, type HostedOptions } from '../core/hosted.js';
import { answerPageRequest } from '../core/page-api.js';
import type { RouteRegistry, Service } from '../core/service.js';
import { openStorage } from '../storage/idb-storage.js';
import { lazyStorage } from '../storage/lazy.js';
import { cacheReads } from '../storage/read-cache.js';
import type { Change, Storage } from '../storage/storage.js';
import { CHANGES_CHANNEL, type ChangeMessage, type PageReply, type PageRequest, type WorkerMessage } from '../stream/protocol.js';
import { VERSION } from '../version.js';
import type { ServiceWorkerScope } from './sw-types.js';
import { ID_HEADER, type ConnectMessage } from '../port/protocol.js';
import { createPortServer, type PortLike } from '../port/server.js';

export interface WorkerOptions extends HostedOptions {
  /** IndexedDB database name; default `pieces-os-worker`. */
  databaseName?: string;
  /** Write concurrent creates together, in one transaction, each acknowledged after it; default true. */
  groupCommit?: boolean;
}

/**
 * Runs the service inside a Service Worker without touching its fetch
 * handling: opens the database, broadcasts conversation changes and answers
 * the page API. Answer fetches with the result's `respond(request, event)`
 * (undefined for requests outside the bases).
 */
export function createPiecesWorker(options: WorkerOptions = {}, scope = self as unknown as ServiceWorkerScope): Service {
  const storage: Storage = lazyStorage((hooks) =>
    openStorage({
      name: options.databaseName,
      seedAssets: initialAssets(options),
      groupCommit: options.groupCommit,
      onLost: hooks.lost,
      onBlocked: hooks.blocked,
    }).then((s) => cacheReads(s)),
    {
      // A database opened after the previous one was lost is another one: say so to every page.
      onOpen: (opened, reopened) => {
        if (reopened) void opened.identity().then((identity) => channel.postMessage({ type: 'database', identity } satisfies WorkerMessage));
      },
    },
  );
  const channel = new BroadcastChannel(CHANGES_CHANNEL);
  // An announcement only makes sockets fetch what came after their last change: one per
  // collection per write (its last change) says as much as one per change, for a fraction of
  // the messages (a create of 5,000 messages logs 5,001 changes).
  let pending: Map<string, Change> | null = null;
  const announce = (change: Change) => {
    if (!pending) {
      const batch = (pending = new Map());
      queueMicrotask(() => {
        pending = null;
        for (const last of batch.values()) channel.postMessage({ type: 'change', change: last } satisfies ChangeMessage);
      });
    }
    const known = pending.get(change.collection);
    if (!known || change.seq > known.seq) pending.set(change.collection, change);
  };
  const service = createHostedService(storage, announce, options);
  // The fast path: pages send their requests over a port (see src/port/).
  let fetches = 0;
  const ports = createPortServer((request) => service.respond(request), { stats: () => ({ fetches }), lock: (name) => holdLock(scope, name) });
  scope.addEventListener('message', (event) => {
    const port = event.ports[0];
    if ((event.data as ConnectMessage)?.type === 'pieces:fast-path') {
      // A connect (port attached), or a page telling that it still uses its port.
      if (port) ports.serve(port as unknown as PortLike);
      return;
    }
    const reply = (message: PageReply) => port?.postMessage(message);
    event.waitUntil(
      answerPageRequest(service, storage, event.data as PageRequest, () => scope.clients.claim()).then(reply, (error: unknown) =>
        reply({ ok: false, error: error instanceof Error ? error.message : String(error) }),
      ),
    );
  });
  return {
    ...service,
    // A fallback of a request that went over a port first is answered without running it twice.
    respond(request, event) {
      const response = ports.fallback(request) ?? service.respond(request, event);
      if (response) fetches++;
      return response;
    },
    // The same on an app's Router: fallbacks (they carry their id) are matched before the service's routes.
    addRoutes(registry) {
      const router = registry as unknown as Pick<Router, 'registerRoute'>;
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
        router.registerRoute(
          new Route(
            ({ url, request }) => request.headers.has(ID_HEADER) && service.pathUnderBase(url) !== null,
            // Under a base and with an id: fallback() always answers.
            { handle: ({ request }) => ports.fallback(request)! },
            method,
          ),
        );
      }
      service.addRoutes(registry);
    },
  };
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

/**
 * Starts the service as the whole Service Worker: answers fetches under the
 * bases (everything else passes through), takes control at once.
 */
export function startWorker(scope: ServiceWorkerScope, options: WorkerOptions = {}): Service {
  const service = createPiecesWorker(options, scope);
  scope.addEventListener('install', () => void scope.skipWaiting());
  scope.addEventListener('activate', (event) =>
    event.waitUntil(
      scope.clients.claim().then(() => {
        // Pages opened before this worker took over learn its version.
        const announce = new BroadcastChannel(CHANGES_CHANNEL);
        announce.postMessage({ type: 'worker', version: VERSION } satisfies WorkerMessage);
        announce.close();
      }),
    ),
  );
  scope.addEventListener('fetch', (event) => {
    const response = service.respond(event.request, event);
    if (response) event.respondWith(response);
  });
  console.info(`[pieces-os-worker] ${VERSION} answering ${service.bases.join(', ')}`);
  return service;
}

/**
 * For apps that already have a Service Worker built on Workbox: adds the
 * service's routes to their Router, or to Workbox's default router (the one
 * behind `registerRoute`) when none is given, plus the change broadcasts and
 * the page API.
 */
export function addPiecesRoutes(
  router?: RouteRegistry | null,
  options: WorkerOptions = {},
  scope = self as unknown as ServiceWorkerScope,
): Service {
  const service = createPiecesWorker(options, scope);
  service.addRoutes(router ?? { registerRoute: (route: never) => registerRoute(route) });
  return service;
}
