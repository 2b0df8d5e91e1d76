/**
 * Runs the service in a Service Worker: opens the database, answers fetches
 * under the bases, broadcasts conversation changes and serves the page API.
 */
import type { Router } from 'workbox-routing';
import { HttpError } from '../core/http.js';
import { parseModelConfig, type ModelAdapter, type ModelConfig } from '../core/copilot/model.js';
import { createService, type Service } from '../core/service.js';
import type { UserConfig } from '../core/models/user.js';
import { array, object, optional, required, string } from '../core/validate.js';
import { SAMPLE_ASSETS } from '../fixtures/sample-assets.js';
import { openStorage } from '../storage/idb-storage.js';
import { lazyStorage } from '../storage/lazy.js';
import { cacheReads } from '../storage/read-cache.js';
import type { Change, Storage } from '../storage/storage.js';
import { CHANGES_CHANNEL, type ChangeMessage, type PageReply, type PageRequest, type WorkerMessage } from '../stream/protocol.js';
import { VERSION } from '../version.js';
import type { ServiceWorkerScope } from './sw-types.js';
import { answerControl, isControl } from './controls.js';

export interface WorkerOptions {
  /** Base URLs to answer (a port range may be written `http://localhost:39300-39333`); default `DEFAULT_BASES`. */
  bases?: readonly string[];
  /** The local user profile; null for none. */
  user?: UserConfig | null;
  /** IndexedDB database name; default `pieces-os-worker`. */
  databaseName?: string;
  /** Store the sample assets on the database's first start (and on `reset()`); default true. */
  sampleAssets?: boolean;
  maxBodyBytes?: number;
  /** Print each request and its answer in the worker's console. */
  log?: boolean;
  /**
   * The copilot's model: an adapter or a configuration; default the extractive answers
   * (no model). A page may switch it at run time (`setModel` of the page API).
   */
  model?: ModelAdapter | ModelConfig;
}

function createWorkerService(scope: ServiceWorkerScope, options: WorkerOptions) {
  const storage: Storage = lazyStorage((hooks) =>
    openStorage({
      name: options.databaseName,
      seedAssets: options.sampleAssets === false ? [] : SAMPLE_ASSETS,
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
  const service = createService({
    storage,
    bases: options.bases,
    user: options.user,
    maxBodyBytes: options.maxBodyBytes,
    model: options.model,
    onChange: announce,
    log: options.log,
    initialData: { assets: options.sampleAssets === false ? [] : SAMPLE_ASSETS },
    // Overrides set by a test hold for every tab until reset, across worker restarts.
    keepOverrides: { load: () => storage.getMeta('overrides'), save: (list) => storage.setMeta('overrides', list) },
  });
  scope.addEventListener('message', (event) => {
    const port = event.ports[0];
    const reply = (message: PageReply) => port?.postMessage(message);
    event.waitUntil(
      answerPage(scope, service, storage, event.data as PageRequest).then(reply, (error: unknown) =>
        reply({ ok: false, error: error instanceof Error ? error.message : String(error) }),
      ),
    );
  });
  return service;
}

async function answerPage(
  scope: ServiceWorkerScope,
  service: Service,
  storage: Storage,
  request: PageRequest,
): Promise<PageReply> {
  if (isControl(request)) return answerControl(service, request);
  switch (request?.type) {
    case 'pieces:hello':
      return { ok: true, version: VERSION, bases: service.bases };
    case 'pieces:claim':
      await scope.clients.claim();
      return { ok: true };
    case 'pieces:add-assets':
      await service.addAssets(request.assets);
      return { ok: true };
    case 'pieces:report-external-applications':
      await storage.putExternalApplications(
        array(request.applications, 'applications').map((item, i) => {
          const application = object(item, `applications[${i}]`);
          const version = optional(application, 'version', `applications[${i}]`, string);
          return { name: required(application, 'name', `applications[${i}]`, string), ...(version ? { version } : {}) };
        }),
      );
      return { ok: true };
    case 'pieces:set-model':
      return { ok: true, model: (await service.setModel(request.model === undefined || request.model === null ? undefined : parseModelConfig(request.model))).description };
    case 'pieces:get-model':
      return { ok: true, model: (await service.model()).description };
    default:
      throw new HttpError(400, `Unknown page request ${JSON.stringify((request as { type?: unknown })?.type)}.`);
  }
}

/**
 * Starts the service as the whole Service Worker: answers fetches under the
 * bases (everything else passes through), takes control at once.
 */
export function startWorker(scope: ServiceWorkerScope, options: WorkerOptions = {}): Service {
  const service = createWorkerService(scope, options);
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
 * service's routes to their Router (and its change broadcasts and page API).
 */
export function addPiecesRoutes(router: Router, options: WorkerOptions = {}, scope = self as unknown as ServiceWorkerScope): Service {
  const service = createWorkerService(scope, options);
  service.addRoutes(router);
  return service;
}
