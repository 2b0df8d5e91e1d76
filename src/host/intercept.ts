/**
 * The one interception layer (@mswjs/interceptors): requests `answer` gives a response for are
 * answered with it; every other request goes out untouched. Hosts choose the interceptors.
 */
import { BatchInterceptor, type Interceptor, type HttpRequestEventMap } from '@mswjs/interceptors';

export type Answer = (request: Request) => Promise<Response> | undefined;

/**
 * Starts answering through `interceptors`; returns the function that stops and restores every
 * patched global. `owns(url)`: which URLs the service answers; a `fetch` of any other goes straight
 * to the `fetch` there was, never through the interceptors (which build a Request of it and, to pass
 * it on, clone it: for a body, a tee of its stream).
 */
export function interceptRequests(interceptors: ReadonlyArray<Interceptor<HttpRequestEventMap>>, answer: Answer, owns?: (url: URL) => boolean): () => void {
  const before = globalThis.fetch;
  const interceptor = new BatchInterceptor({ name: 'pieces-os-worker', interceptors: [...interceptors] });
  interceptor.on('request', async ({ request, controller }) => {
    const response = answer(request);
    if (!response) return;
    try {
      controller.respondWith(await response);
    } catch (error) {
      // A dropped connection, as the network reports it.
      controller.errorWith(error as Error);
    }
  });
  interceptor.apply();
  const restoreFetch = owns && typeof before === 'function' && globalThis.fetch !== before ? onlyOwnFetches(before, owns) : () => {};
  return () => {
    restoreFetch();
    interceptor.dispose();
  };
}

/** Puts a filter in front of the intercepted `fetch`: what the service does not own goes to `before` as it was called. */
function onlyOwnFetches(before: typeof fetch, owns: (url: URL) => boolean): () => void {
  // Set as the interceptor set its own (which may be read-only): the property's other attributes kept.
  const patched = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!patched || !(patched.configurable || patched.writable)) return () => {};
  const intercepted = globalThis.fetch;
  const filtered: typeof fetch = (input, init) => (isOwned(input, owns) ? intercepted(input, init) : before(input, init));
  Object.defineProperty(globalThis, 'fetch', { ...patched, value: filtered });
  return () => {
    if (globalThis.fetch === filtered) Object.defineProperty(globalThis, 'fetch', { ...patched, value: intercepted });
  };
}

function isOwned(input: RequestInfo | URL, owns: (url: URL) => boolean): boolean {
  let url: URL;
  try {
    url = input instanceof URL ? input : new URL(typeof input === 'string' ? input : input.url, globalThis.location?.href);
  } catch {
    // Not a URL fetch can take: fetch itself says so, as it would without the service.
    return false;
  }
  return owns(url);
}
