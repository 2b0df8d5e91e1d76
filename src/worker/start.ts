/** The worker's entry points: the whole Service Worker (`startWorker`), or routes added to an app's own (`addPiecesRoutes`). */
import { registerRoute } from 'workbox-routing';
import { CHANGES_CHANNEL, type WorkerMessage } from '../core/stream-wire.js';
import { VERSION } from '../shared/version.js';
import { createPiecesWorker, type PiecesWorker, type RouteRegistry, type WorkerOptions } from './pieces-worker.js';
import { routeOthersToNetwork } from './static-routes.js';
import type { ServiceWorkerScope } from './sw-types.js';
import { say } from '../shared/console.js';

/**
 * Starts the service as the whole Service Worker: answers fetches under the
 * bases (everything else passes through, without a fetch event where the browser
 * has static routes), takes control at once.
 */
export function startWorker(scope: ServiceWorkerScope, options: WorkerOptions = {}): PiecesWorker {
  const worker = createPiecesWorker(options, scope);
  scope.addEventListener('install', (event) => {
    routeOthersToNetwork(event, worker.bases);
    void scope.skipWaiting();
  });
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
    const response = worker.respond(event.request);
    if (response !== undefined) event.respondWith(response);
  });
  say('info', `${VERSION} answering ${worker.bases.join(', ')}`);
  return worker;
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
): PiecesWorker {
  const worker = createPiecesWorker(options, scope);
  worker.addRoutes(router ?? { registerRoute: (route: never) => registerRoute(route) });
  return worker;
}
