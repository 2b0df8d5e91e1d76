/**
 * The service core: `handle(request) -> Promise<Response>` over a Storage,
 * built on a workbox-routing Router. Hosts (the Service Worker, tests, any
 * other runtime) are thin adapters around it.
 */
import { Route, Router } from 'workbox-routing';
import type { OperationContext, ServiceContext } from './context.js';
import { errorResponse, HttpError, MAX_BODY_BYTES, text } from './http.js';
import { compilePath, OPERATIONS, type Operation, type PathMatcher } from './routes.js';
import type { Change, Storage } from '../storage/storage.js';
import { baseMatcher, DEFAULT_BASES } from './bases.js';
import { knownOperation } from './catalogue.js';
import type { UserConfig } from './models/user.js';

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
  userAgent?: string;
  now?: () => Date;
  newId?: () => string;
}

/** Methods for which a catch-all route answers 404/405 under a base (the ones Workbox routes). */
const FALLBACK_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface Service {
  readonly bases: readonly string[];
  /** Answers a request under a base; anything else passes to `fetch` untouched. */
  handle(request: Request): Promise<Response>;
  /** The response for a request under a base, or undefined when the request is not the service's. */
  respond(request: Request, event?: unknown): Promise<Response> | undefined;
  /** Adds the service's routes to a workbox-routing Router (e.g. an app's existing one). */
  addRoutes(router: Router): void;
  /** The path under a base, or null when the URL is outside every base. */
  pathUnderBase(url: URL): string | null;
}

export function createService(options: ServiceOptions): Service {
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES);
  const warn = options.warn ?? ((message: string) => console.warn(`[pieces-os-worker] ${message}`));
  const warned = new Set<string>();
  const maxBodyBytes = Math.min(options.maxBodyBytes ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
  const context: ServiceContext = {
    storage: options.storage,
    userAgent: options.userAgent ?? globalThis.navigator?.userAgent ?? 'unknown',
    maxBodyBytes,
    now: options.now ?? (() => new Date()),
    newId: options.newId ?? (() => crypto.randomUUID()),
    notify: options.onChange ?? (() => {}),
    user: options.user === undefined ? {} : options.user,
  };
  const compiled = OPERATIONS.map((operation) => ({ operation, match: compilePath(operation.path) }));

  function pathUnderBase(url: URL): string | null {
    return matcher.match(url)?.path ?? null;
  }

  async function run(operation: Operation, request: Request, url: URL, params: Record<string, string>) {
    try {
      const operationContext: OperationContext = { request, url, params, service: context };
      return await operation.handler(operationContext);
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
      new HttpError(405, `${request.method} is not allowed on ${path}; use ${allow}.`, { Allow: allow }),
    );
  }

  /** 404; for a Pieces OS path this service does not serve, the message names the operation (warned once per operation). */
  function unserved(method: string, path: string): Response {
    const known = knownOperation(method, path);
    if (!known) return errorResponse(new HttpError(404, `No operation at ${path}.`));
    const message = `${method} ${path} is the Pieces OS operation ${known}, which this service does not serve.`;
    if (!warned.has(known)) {
      warned.add(known);
      warn(message);
    }
    return errorResponse(new HttpError(404, message));
  }

  function addRoutes(router: Router) {
    for (const { operation, match } of compiled) {
      const route = new Route(
        ({ url }) => {
          const path = pathUnderBase(url);
          return path === null ? false : match(path) ?? false;
        },
        { handle: ({ request, url, params }) => run(operation, request, url, (params ?? {}) as Record<string, string>) },
        operation.method,
      );
      router.registerRoute(route);
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

  function respond(request: Request, event?: unknown): Promise<Response> | undefined {
    const handled = router.handleRequest({ request, event: event as never });
    if (handled) return handled;
    // Methods the Router has no routes for (PROPFIND, …) still get an answer under a base.
    const url = new URL(request.url);
    const path = pathUnderBase(url);
    return path === null ? undefined : fallback(request, url, path);
  }

  return {
    bases: matcher.list,
    respond,
    handle: (request) => respond(request) ?? fetch(request),
    addRoutes,
    pathUnderBase,
  };
}

/** Maps an unexpected error to a response: storage full is 507, everything else a 500 naming the fault. */
export function failure(error: unknown): Response {
  if (error instanceof HttpError) return errorResponse(error);
  const name = (error as { name?: string })?.name;
  if (name === 'QuotaExceededError') {
    return text('The browser storage is full: the write was not made. Free some space and try again.', 507);
  }
  console.error('[pieces-os-worker] internal error', error);
  return text(`Internal error: ${(error as Error)?.message ?? String(error)}.`, 500);
}
