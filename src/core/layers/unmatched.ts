/**
 * Finds the operation that serves the request (`call.route`, then answered inside); without one:
 * 405 (with `Allow`) for a path the table serves with another method, `HEAD` from the `GET`,
 * `OPTIONS`; else 404, naming the SDK operation when the path is one of Pieces OS's (warned once
 * per operation).
 */
import { knownOperation, namedMoreExactly } from '../catalogue.js';
import { clip, HttpError, reply } from '../http.js';
import { findRoute, fixedSegments, OPERATIONS, routes, type Operation } from '../routes.js';
import { isUuid } from '../validate.js';
import type { Layer } from './compose.js';

/**
 * Whether a route that matched `path` with `params` really serves it: not when a parameter took a
 * segment the SDK spells out as a path of its own (`/assets/draft` is not an asset id). Ids are
 * UUIDs, so the SDK's catalogue is read only for a parameter that is not one.
 */
function owns(operation: Operation, params: Record<string, string>, path: string): boolean {
  return Object.values(params).every(isUuid) || !namedMoreExactly(path, fixedSegments(operation));
}

/** `warn`: where a Pieces OS path this service does not serve is reported. */
export function unmatched(warn: (message: string) => void): Layer {
  const warned = new Set<string>();

  /** 404; for a Pieces OS path this service does not serve, the message names the operation (warned once per operation). */
  function unserved(method: string, path: string): Response {
    const known = knownOperation(method, path);
    if (!known) return reply(new HttpError(404, `No operation at ${clip(path)}.`));
    const message = `${clip(method, 40)} ${clip(path)} is the Pieces OS operation ${known}, which this service does not serve.`;
    if (!warned.has(known)) {
      warned.add(known);
      warn(message);
    }
    return reply(new HttpError(404, message));
  }

  return async (call, next) => {
    const { request, path } = call;
    const found = findRoute(request.method, path);
    if (found && owns(found.operation, found.params, path)) {
      call.route = found;
      return next();
    }
    const matching = routes().filter(({ operation, match }) => {
      const params = match(path);
      return params !== null && owns(operation, params, path);
    });
    if (matching.length === 0) return unserved(request.method, path || '/');
    // Another Pieces OS operation this service does not serve (POST /model/update beside GET /model/{model}).
    const known = request.method === 'GET' || request.method === 'POST' ? knownOperation(request.method, path) : undefined;
    if (known && !OPERATIONS.some((operation) => `${operation.api}.${operation.name}` === known)) return unserved(request.method, path);
    const methods = matching.map(({ operation }) => operation.method);
    const allow = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].join(', ');
    if (request.method === 'OPTIONS') return reply(undefined, { headers: { Allow: allow } });
    const get = matching.find(({ operation }) => operation.method === 'GET');
    if (request.method === 'HEAD' && get) {
      call.route = { operation: get.operation, params: get.match(path)! };
      const response = await next();
      return reply(undefined, { status: response.status, headers: response.headers });
    }
    return reply(new HttpError(405, `${clip(request.method, 40)} is not allowed on ${clip(path)}; use ${allow}.`, { Allow: allow }));
  };
}
