/**
 * A request's ids made here rewritten to the upstream's (path parameters, declared body fields,
 * the application header) before it is passed through or answered here.
 */
import { findRoute } from '../../core/routes.js';
import type { OutboxEntry } from '../../storage/schema.js';
import { pathOf, rewrite } from './outbox-plan.js';
import { mirrorOf } from './writes.js';

/** A request as it is sent or answered: its ids made here rewritten to the upstream's, and what it is (its route, its queued form). */
export interface Rewritten {
  found: ReturnType<typeof findRoute>;
  entry: OutboxEntry;
  request: Request;
  text: string | null;
  /** Its body is JSON (or it has none): it can be queued. */
  parseable: boolean;
  /** Its path under the base, rewritten. */
  path: string;
  changed: boolean;
}

/** The request with the ids the map `upstreamOf` knows rewritten. */
export function rewriteRequest(
  request: Request,
  url: URL,
  path: string,
  text: string | null,
  upstreamOf: ReadonlyMap<string, string>,
): Rewritten {
  const found = findRoute(request.method, path);
  const header = request.headers.get('application') ?? request.headers.get('x-application-id') ?? undefined;
  let body: unknown;
  try {
    body = text?.trim() ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const parseable = !text?.trim() || body !== undefined;
  const entry = {
    seq: 0,
    operation: found?.operation.name ?? '',
    params: found?.params ?? {},
    ...(body === undefined ? {} : { body }),
    ...(header ? { application: header } : {}),
    created: [],
    state: 'queued',
    at: '',
  } satisfies OutboxEntry;
  if (!upstreamOf.size || !found) return { found, entry, request, text, parseable, path, changed: false };
  const call = rewrite(entry, upstreamOf);
  const rewritten: OutboxEntry = {
    ...entry,
    params: call.params,
    ...(call.body === undefined ? {} : { body: call.body }),
    ...(call.application ? { application: call.application } : {}),
  };
  const changedPath = mirrorOf(found.operation.name)
    ? pathOf(entry, { params: call.params })
    : found.operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(call.params[name] ?? ''));
  // rewriteIds gives the body back as it was when it names no id the map knows.
  const newText = call.body !== undefined && call.body !== body ? JSON.stringify(call.body) : text;
  if (changedPath === path && newText === text && call.application === header)
    return { found, entry, request, text, parseable, path, changed: false };
  const headers = new Headers(request.headers);
  if (call.application && headers.has('application')) headers.set('application', call.application);
  if (call.application && headers.has('x-application-id')) headers.set('x-application-id', call.application);
  const prefix = url.origin + url.pathname.slice(0, url.pathname.length - path.length);
  const init: RequestInit = { method: request.method, headers, ...(newText ? { body: newText } : {}) };
  return {
    found,
    entry: rewritten,
    request: new Request(prefix + changedPath + url.search, init),
    text: newText,
    parseable,
    path: changedPath,
    changed: true,
  };
}

/** A request that needs no rewriting, as rewriteRequest describes one. */
export function asIs(request: Request, path: string): Rewritten {
  const entry: OutboxEntry = { seq: 0, operation: '', params: {}, created: [], state: 'queued', at: '' };
  return { found: undefined, entry, request, text: null, parseable: true, path, changed: false };
}
