/**
 * The service core: `handle(request) -> Promise<Response>` over a Storage,
 * built on a workbox-routing Router. Hosts (the Service Worker, tests, any
 * other runtime) are thin adapters around it.
 */
import { Route, Router } from 'workbox-routing';
import type { OperationContext, ServiceContext } from './context.js';
import { clip, errorResponse, HttpError, markRerunnable, MAX_BODY_BYTES, text } from './http.js';
import { compilePath, OPERATIONS, type Operation, type PathMatcher } from './routes.js';
import type { Change, Storage } from '../storage/storage.js';
import { baseMatcher, DEFAULT_BASES } from './bases.js';
import { knownOperation } from './catalogue.js';
import { parseData, toData, type PiecesData, type PiecesSeed } from './data.js';
import { loggerFor, type Logger } from './log.js';
import type { UserConfig } from './models/user.js';
import { randomUUID } from './uuid.js';
import { Overrides, type Override } from './overrides.js';
import { Copilot } from './copilot/copilot.js';
import type { ModelAdapter, ModelConfig } from './copilot/model.js';
import { parseAssets } from './models/asset.js';

export { DEFAULT_BASES };

export interface ServiceOptions {
  storage: Storage;
  /**
   * Base URLs answered by the service (a port range may be written compactly:
   * `http://localhost:39300-39333`); default `DEFAULT_BASES`.
   */
  bases?: readonly string[];
  /** The local user profile (GET /user, connect); null for none. Default: a local profile. */
  user?: UserConfig | null;
  /** Where unserved Pieces OS paths are reported, once per path; default `console.warn`. */
  warn?: (message: string) => void;
  /** Largest accepted request body, in bytes; default and ceiling 16 MiB. */
  maxBodyBytes?: number;
  /** Called after every committed change, in commit order. */
  onChange?: (change: Change) => void;
  /** The copilot's model: an adapter or a configuration; default the extractive answers (no model). */
  model?: ModelAdapter | ModelConfig;
  userAgent?: string;
  /** The clock for every time the service records (`created`, `updated`, events); default `new Date()`. */
  now?: () => Date;
  /** The id generator for every record the service creates; default `crypto.randomUUID()`. */
  newId?: () => string;
  /** What `reset()` restores (the data format of `seed`); default an empty store. */
  initialData?: PiecesSeed;
  /** Print each request and its answer (`true`), or give each log entry to a function. */
  log?: boolean | Logger;
  /** Keeps the runtime overrides across restarts: loaded before the first request, saved on each change. */
  keepOverrides?: { load(): Promise<unknown>; save(overrides: Override[]): Promise<void> };
}

/** Operations answered at once, even while the database opens (a client's 100 ms health probe on a cold worker). */
const ANSWERED_WITHOUT_DATABASE = new Set(['getWellKnownHealth', 'getWellKnownVersion']);

/** Methods for which a catch-all route answers 404/405 under a base (the ones Workbox routes). */
const FALLBACK_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * What routes are added to: a workbox-routing `Router` (an app's own, or the
 * one behind Workbox's `registerRoute`). Typed structurally so that the public
 * types need no Service Worker lib.
 */
export interface RouteRegistry {
  registerRoute(route: never): unknown;
}

export interface Service {
  readonly bases: readonly string[];
  /** Answers a request under a base; anything else passes to `fetch` untouched. */
  handle(request: Request): Promise<Response>;
  /** The response for a request under a base, or undefined when the request is not the service's. */
  respond(request: Request, event?: unknown): Promise<Response> | undefined;
  /** Adds the service's routes to a workbox-routing Router (e.g. an app's existing one). */
  addRoutes(router: RouteRegistry): void;
  /** The path under a base, or null when the URL is outside every base. */
  pathUnderBase(url: URL): string | null;
  /** Replaces the whole store with the initial data. */
  reset(): Promise<void>;
  /** Adds records (the data format); a record with an existing id replaces it. Invalid data changes nothing. */
  seed(data: PiecesSeed): Promise<void>;
  /** The whole store in the data format. */
  exportData(): Promise<PiecesData>;
  /** Adds runtime overrides, tried before those already in force; in force at once, the promise says when kept. */
  use(...overrides: Override[]): Promise<void>;
  /** Removes every runtime override; at once, the promise says when kept. */
  resetOverrides(): Promise<void>;
  /** The runtime overrides in force, newest first. */
  listOverrides(): Override[];
  /** Stores assets (AssetInput objects, validated), announces them and makes them findable by relevance at once. */
  addAssets(assets: unknown): Promise<void>;
  /** The copilot's model adapter. */
  model(): Promise<ModelAdapter>;
  /**
   * Switches the copilot's model (none: back to the host's); a configuration is kept in the
   * database and survives restarts. A bad configuration rejects with a 400 HttpError.
   */
  setModel(model?: ModelAdapter | ModelConfig): Promise<ModelAdapter>;
}

export function createService(options: ServiceOptions): Service {
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES);
  const warn = options.warn ?? ((message: string) => console.warn(`[pieces-os-worker] ${message}`));
  const warned = new Set<string>();
  const maxBodyBytes = Math.min(options.maxBodyBytes ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
  const copilot = new Copilot(options.storage, options.model);
  const onChange = options.onChange ?? (() => {});
  const context: ServiceContext = {
    storage: options.storage,
    userAgent: options.userAgent ?? globalThis.navigator?.userAgent ?? 'unknown',
    maxBodyBytes,
    now: options.now ?? (() => new Date()),
    newId: options.newId ?? randomUUID,
    notify: (change) => {
      if (change.collection === 'conversation') copilot.corpus.conversationChanged(change.id);
      onChange(change);
    },
    copilot,
    user: options.user === undefined ? {} : options.user,
  };
  const compiled = OPERATIONS.map((operation) => ({ operation, match: compilePath(operation.path) }));

  function pathUnderBase(url: URL): string | null {
    return matcher.match(url)?.path ?? null;
  }

  async function run(operation: Operation, request: Request, url: URL, params: Record<string, string>) {
    try {
      const operationContext: OperationContext = { request, url, params, service: context };
      const response = await operation.handler(operationContext);
      return operation.readOnly ? markRerunnable(response) : response;
    } catch (error) {
      return failure(error);
    }
  }

  /** 404 for an unknown path, 405 (with Allow) for a known path and another method. */
  async function fallback(request: Request, url: URL, path: string): Promise<Response> {
    const matching = compiled.filter(({ match }) => match(path));
    if (matching.length === 0) return unserved(request.method, path || '/');
    const methods = matching.map(({ operation }) => operation.method);
    const allow = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].join(', ');
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: { Allow: allow, 'Access-Control-Allow-Origin': '*' } });
    const get = matching.find(({ operation }) => operation.method === 'GET');
    if (request.method === 'HEAD' && get) {
      const response = await run(get.operation, request, url, get.match(path)!);
      return new Response(null, { status: response.status, headers: response.headers });
    }
    return errorResponse(
      new HttpError(405, `${clip(request.method, 40)} is not allowed on ${clip(path)}; use ${allow}.`, { Allow: allow }),
    );
  }

  /** 404; for a Pieces OS path this service does not serve, the message names the operation (warned once per operation). */
  function unserved(method: string, path: string): Response {
    const known = knownOperation(method, path);
    if (!known) return errorResponse(new HttpError(404, `No operation at ${clip(path)}.`));
    const message = `${method} ${path} is the Pieces OS operation ${known}, which this service does not serve.`;
    if (!warned.has(known)) {
      warned.add(known);
      warn(message);
    }
    return errorResponse(new HttpError(404, message));
  }

  function addRoutes(registry: RouteRegistry) {
    const router = registry as unknown as Pick<Router, 'registerRoute'>;
    for (const { operation, match } of compiled) {
      for (const method of [operation.method, ...(operation.streamMethod ? [operation.streamMethod] : [])]) {
        const route = new Route(
          ({ url }) => {
            const path = pathUnderBase(url);
            return path === null ? false : match(path) ?? false;
          },
          { handle: ({ request, url, params }) => run(operation, request, url, (params ?? {}) as Record<string, string>) },
          method,
        );
        router.registerRoute(route);
      }
    }
    for (const method of FALLBACK_METHODS) {
      router.registerRoute(
        new Route(
          ({ url }) => pathUnderBase(url) !== null,
          { handle: ({ request, url }) => fallback(request, url, pathUnderBase(url)!) },
          method as 'GET',
        ),
      );
    }
  }

  const router = new Router();
  addRoutes(router);

  /** The service's answer, from the route table (no override applied). */
  function answer(request: Request, url: URL, path: string, event?: unknown): Promise<Response> {
    // The Router's own handleRequest reads the page's `location`; matching needs no origin.
    const { route, params } = router.findMatchingRoute({ url, sameOrigin: false, request, event: event as never });
    if (route) {
      try {
        return Promise.resolve(route.handler.handle({ url, request, event: event as never, params }));
      } catch (error) {
        return Promise.resolve(failure(error));
      }
    }
    // Methods the Router has no routes for (PROPFIND, …) still get an answer under a base.
    return fallback(request, url, path);
  }

  const operationOf = (method: string, path: string) =>
    compiled.find(({ operation, match }) => (operation.method === method || (method === 'HEAD' && operation.method === 'GET')) && match(path))
      ?.operation.name;

  const overrides = new Overrides();
  const logger = loggerFor(options.log);
  const kept = options.keepOverrides;
  // Saves follow one another, so the last one written is the list in force.
  let saving = Promise.resolve();
  const save = () => {
    if (kept) saving = saving.then(() => kept.save(overrides.list())).catch(() => {});
    return saving;
  };
  let loading: Promise<void> | null = kept
    ? kept
        .load()
        .then((list) => {
          // Overrides given since the start stay in front of the ones kept.
          if (Array.isArray(list) && list.length) overrides.restore(list);
        })
        .catch(() => {})
        .finally(() => (loading = null))
    : null;

  async function answerWithOverrides(request: Request, url: URL, path: string, event?: unknown): Promise<Response> {
    const started = performance.now();
    const operation = overrides.size || logger || loading ? operationOf(request.method, path) : undefined;
    // Kept overrides are in force before the first answer, except discovery's, which never waits for the database.
    if (loading && !ANSWERED_WITHOUT_DATABASE.has(operation!)) await loading;
    const before = overrides.size;
    const outcome = overrides.size ? overrides.take(request.method, path, operation) : undefined;
    // A used-up `once` is written away before the answer, so that a restart cannot revive it.
    if (overrides.size !== before) await save();
    if (outcome?.delay) await new Promise((resolve) => setTimeout(resolve, outcome.delay));
    const response = outcome?.response ? outcome.response() : await answer(request, url, path, event);
    // A stream socket's catch-up requests are part of its connection, not requests of their own.
    const catchUp = url.searchParams.has('after') && request.headers.has('x-pieces-stream');
    if (!catchUp) logger?.({
      operation,
      method: request.method,
      url: request.url,
      path,
      status: response.type === 'error' ? 0 : response.status,
      ms: performance.now() - started,
      overridden: !!outcome,
    });
    return response;
  }

  function respond(request: Request, event?: unknown): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = pathUnderBase(url);
    return path === null ? undefined : answerWithOverrides(request, url, path, event);
  }

  const clock = { now: () => context.now().toISOString(), newId: () => context.newId() };
  const load = async (data: PiecesSeed, replace: boolean) => {
    const changes = await context.storage.loadData(parseData(data, clock), { replace });
    copilot.reset();
    for (const change of changes) context.notify(change);
  };

  return {
    bases: matcher.list,
    respond,
    handle: (request) => respond(request) ?? fetch(request),
    addRoutes,
    pathUnderBase,
    reset: () => load(options.initialData ?? {}, true),
    seed: (data) => load(data, false),
    exportData: async () => toData(await context.storage.dumpData()),
    use: (...list) => {
      overrides.use(list);
      return save();
    },
    resetOverrides: () => {
      overrides.reset();
      return save();
    },
    listOverrides: () => overrides.list(),
    async addAssets(assets) {
      const records = parseAssets(assets, context.newId, context.now().toISOString());
      const changes = await context.storage.putAssets(records);
      copilot.corpus.assetsWritten(records);
      for (const change of changes) context.notify(change);
    },
    model: () => copilot.model(),
    setModel: (model) => copilot.setModel(model),
  };
}

/**
 * Maps an unexpected error to a response: storage full is 507, storage
 * unavailable for now (wiped under the worker, an upgrade blocked) 503 with
 * the reason, everything else a 500 naming the fault.
 */
export function failure(error: unknown): Response {
  if (error instanceof HttpError) return errorResponse(error);
  const name = (error as { name?: string })?.name;
  if (name === 'QuotaExceededError') {
    return text('The browser storage is full: the write was not made. Free some space and try again.', 507);
  }
  if (name === 'StorageUnavailableError') return text((error as Error).message, 503, { 'Retry-After': '1' });
  console.error('[pieces-os-worker] internal error', error);
  return text(`Internal error: ${(error as Error)?.message ?? String(error)}.`, 500);
}
