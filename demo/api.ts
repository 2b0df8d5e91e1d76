/** The demo's API client: every call is timed and written to the request log. */
import { OPERATIONS } from 'pieces-os-worker/core';

export interface Call {
  operation: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  bytes: number;
  body: string;
}

export type CallListener = (call: Call) => void;

/**
 * Each operation's path as a pattern: a `{param}` segment matches any one
 * segment. The table lists its static paths before its parameterised ones, so
 * the first match names the operation (`/applications/external` is not an
 * application id).
 */
const matchers = OPERATIONS.map(({ name, method, path }) => {
  const segments = path.split('/').map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return { name, method, pattern: new RegExp(`^${segments.join('/')}$`) };
});

/** The operation a method and path name, from the package's operation table. */
export function operationName(method: string, path: string): string {
  const pathname = path.split('?')[0]!;
  return matchers.find((o) => o.method === method && o.pattern.test(pathname))?.name ?? 'unknown';
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The demo's client: GET and POST under one base, each call logged; a failed call throws an ApiError. */
export type Api = ReturnType<typeof createApi>;

export function createApi(base: string, onCall: CallListener) {
  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ value: T; call: Call }> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
    }
    const started = performance.now();
    const response = await fetch(base + path, init);
    const text = await response.text();
    const entry: Call = {
      operation: operationName(method, path),
      method,
      path,
      status: response.status,
      ms: performance.now() - started,
      bytes: new TextEncoder().encode(text).byteLength,
      body: text,
    };
    onCall(entry);
    if (!response.ok) throw new ApiError(response.status, text || `HTTP ${response.status}`);
    return { value: (text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as T, call: entry };
  }
  return {
    get: <T>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('POST', path, body, headers),
  };
}
