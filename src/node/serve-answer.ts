/**
 * What the loopback server answers one HTTP request: refused (its Host, its Origin, a control
 * from a page not listed), a control (`/__pieces/`), or the service's answer as the page of an
 * allowed origin may read it.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { HostService } from '../host/create-host.js';
import { CONTROL_HEADER, refusedControl, refusedHost, refusedOrigin, type AccessOptions } from './access.js';
import { answerControl, CONTROLS_PATH } from './http-controls.js';
import { TEXT } from './serve-send.js';

/** Methods fetch cannot carry and nothing here serves: answered 501, never taken for a proxy's or a debugger's. */
const UNSERVED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** Where the server listens: `origin` (`http://<host>:<port>`), every request read as addressed to it once its Host is allowed. */
export interface Listening {
  service: HostService;
  host: string;
  origin: string;
  options: AccessOptions;
}

/** The answer to one HTTP request: refused (Host, Origin, controls), a control, or the service's. */
export async function answer({ service, host, origin, options }: Listening, incoming: IncomingMessage): Promise<Response> {
  const refused = refusedHost(incoming.headers.host, host, options) ?? refusedOrigin(incoming.headers.origin, options);
  if (refused) return new Response(refused, { status: 403, headers: TEXT });
  let url: URL;
  try {
    url = new URL(origin + incoming.url);
    if (!incoming.url?.startsWith('/')) throw new TypeError('not a path');
  } catch {
    return new Response(`The request target must be a path, not ${JSON.stringify(String(incoming.url).slice(0, 200))}.`, {
      status: 400,
      headers: TEXT,
    });
  }
  const method = incoming.method ?? 'GET';
  if (UNSERVED_METHODS.has(method)) return new Response(`${method} is not served here.`, { status: 501, headers: TEXT });
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const request = new Request(url, {
    method,
    headers: Object.entries(incoming.headers).flatMap(([name, value]) =>
      value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
    ),
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
  if (!url.pathname.startsWith(CONTROLS_PATH)) return forOrigin(await service.handle(request), incoming);
  return controlAnswer(options, service, incoming, request, url.pathname);
}

/**
 * The service's answer as the page of an allowed origin may read it: its origin in
 * `Access-Control-Allow-Origin` (never every origin), and, for a preflight, the method and headers asked for.
 */
function forOrigin(response: Response, incoming: IncomingMessage): Response {
  const from = incoming.headers.origin;
  if (response.type === 'error') return response;
  const headers = new Headers(response.headers);
  headers.append('Vary', 'Origin');
  if (from !== undefined) {
    headers.set('Access-Control-Allow-Origin', from);
    const method = incoming.headers['access-control-request-method'];
    if (incoming.method === 'OPTIONS' && method) {
      headers.set('Access-Control-Allow-Methods', response.headers.get('Allow') ?? method);
      const asked = incoming.headers['access-control-request-headers'];
      if (asked) headers.set('Access-Control-Allow-Headers', asked);
    }
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** A control request: only from clients that are not web pages, or from a page of an allowed origin. */
async function controlAnswer(
  options: AccessOptions,
  service: HostService,
  incoming: IncomingMessage,
  request: Request,
  path: string,
): Promise<Response> {
  const from = incoming.headers.origin;
  const allowed = from !== undefined && (options.allowedOrigins ?? []).includes(from);
  const cors: Record<string, string> = allowed ? { 'Access-Control-Allow-Origin': from, Vary: 'Origin' } : {};
  if (incoming.method === 'OPTIONS' && allowed) {
    // The preflight of an allowed page's control request.
    return new Response(null, {
      status: 204,
      headers: {
        ...cors,
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': `${CONTROL_HEADER}, content-type`,
      },
    });
  }
  const refused = refusedControl(incoming.headers as Parameters<typeof refusedControl>[0], options);
  if (refused) return new Response(refused, { status: 403, headers: TEXT });
  const response = await answerControl(service, request, path);
  // Only a listed page may read what a control answers: the service's own CORS headers are dropped.
  const headers = new Headers(response.headers);
  headers.delete('Access-Control-Allow-Origin');
  headers.delete('Access-Control-Expose-Headers');
  for (const [name, value] of Object.entries(cors)) headers.set(name, value);
  return new Response(response.body, { status: response.status, headers });
}
