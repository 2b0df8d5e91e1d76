/**
 * The one interception layer (@mswjs/interceptors): requests `answer` gives a response for are
 * answered with it; every other request goes out untouched. Hosts choose the interceptors.
 */
import { BatchInterceptor, type Interceptor, type HttpRequestEventMap } from '@mswjs/interceptors';
import { untilAborted } from '../shared/abort.js';
import { networkError } from '../shared/network-error.js';

/**
 * The service's answer to a request, or undefined for one it does not answer. `text`, when given,
 * is the request's body as the caller gave it, a string (its bytes are that string's UTF-8): the
 * body need not be read from the Request.
 */
export type Answer = (request: Request, text?: string) => Promise<Response> | undefined;

/**
 * Starts answering through `interceptors`; returns the function that stops and restores every
 * patched global. `owns(url)`: which URLs the service answers. Given it, `fetch` is answered in
 * front of the interceptors: a fetch of any other URL goes straight to the `fetch` there was (the
 * interceptors would build a Request of it and, to pass it on, clone it: for a body, a tee of its
 * stream), and a fetch of an owned one gets `answer`'s Response as a network answer looks
 * (`fetchAnswered`), without the interceptors' Request, controller and second Response around it.
 */
export function interceptRequests(
  interceptors: ReadonlyArray<Interceptor<HttpRequestEventMap>>,
  answer: Answer,
  owns?: (url: URL) => boolean,
): () => void {
  const before = globalThis.fetch;
  const interceptor = new BatchInterceptor({ name: 'pieces-os-worker', interceptors: [...interceptors] });
  // biome-ignore lint/nursery/noMisusedPromises: the interceptors await each 'request' listener (emitAsync) before they let a request through, so the listener must return its promise.
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
  const restoreFetch = owns && typeof before === 'function' && globalThis.fetch !== before ? answerFetches(before, owns, answer) : () => {};
  return () => {
    restoreFetch();
    interceptor.dispose();
  };
}

/**
 * Puts a `fetch` in front of the intercepted one: what the service owns is answered by `answer`
 * (`fetchAnswered`); the rest goes to `before` as it was called.
 */
function answerFetches(before: typeof fetch, owns: (url: URL) => boolean, answer: Answer): () => void {
  // Set as the interceptor set its own (which may be read-only): the property's other attributes kept.
  const patched = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!patched || !(patched.configurable || patched.writable)) return () => {};
  const intercepted = globalThis.fetch;
  const fetchAnswered = answeredFetch(answer, owns, before);
  const filtered: typeof fetch = (input, init) => {
    const url = ownedUrl(input, owns);
    if (!url) return before(input, init);
    // The signal the caller gave, if any (a request's own signal can abort only by following one).
    const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
    let request: Request;
    try {
      request = new Request(typeof input === 'string' ? url : input, init);
    } catch (error) {
      // A request fetch refuses (a GET with a body, a used body): rejected, as fetch rejects it.
      return Promise.reject(error);
    }
    return fetchAnswered(request, signal, typeof init?.body === 'string' ? init.body : undefined);
  };
  Object.defineProperty(globalThis, 'fetch', { ...patched, value: filtered });
  return () => {
    if (globalThis.fetch === filtered) Object.defineProperty(globalThis, 'fetch', { ...patched, value: intercepted });
  };
}

/** The URL a fetch is for, if the service owns it (a relative one is the page's). */
function ownedUrl(input: RequestInfo | URL, owns: (url: URL) => boolean): URL | null {
  let url: URL;
  try {
    url = input instanceof URL ? input : new URL(typeof input === 'string' ? input : input.url, globalThis.location?.href);
  } catch {
    // Not a URL fetch can take: fetch itself says so, as it would without the service.
    return null;
  }
  return owns(url) ? url : null;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** How many redirects a fetch follows (the Fetch standard's limit). */
const MAX_REDIRECTS = 20;
/** The headers that describe a body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];

/**
 * A fetch of what the service owns, answered by `answer` as a caller sees a network answer: the
 * very Response `answer` made, its `url` the request's; `Response.error()` rejects the fetch as a
 * failed connection; a redirect is followed, or refused, as the request's `redirect` says (the
 * Fetch standard's rules: 303, and 301/302 after a POST, go on as a GET without the body; one
 * that keeps a method with a body fails, the body being spent); `signal`, the caller's, rejects
 * the fetch with its reason until the answer is there. A request the service does not answer
 * after all (no worker in control), and a redirect to a URL it does not own, go to `onward`.
 */
function answeredFetch(answer: Answer, owns: (url: URL) => boolean, onward: typeof fetch) {
  const fetchAnswered = async (request: Request, signal: AbortSignal | null, text?: string, redirects = 0): Promise<Response> => {
    signal?.throwIfAborted();
    const answered = answer(request, text);
    if (!answered) return onward(request);
    const response = await (signal ? untilAborted(answered, signal) : answered);
    // `Response.error()`: the connection failed, as the network reports it.
    if (response.type === 'error') throw networkError('the connection failed');
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || request.redirect === 'manual' || location === null) {
      Object.defineProperty(response, 'url', { value: request.url, configurable: true });
      return response;
    }
    if (request.redirect === 'error') throw networkError('unexpected redirect');
    if (redirects >= MAX_REDIRECTS) throw networkError('too many redirects');
    let to: URL;
    try {
      to = new URL(location, request.url);
    } catch {
      throw networkError(`the redirect's location is not a URL: ${location}`);
    }
    if (to.protocol !== 'http:' && to.protocol !== 'https:') throw networkError(`a redirect to ${to.protocol} is not followed`);
    const asGet =
      (response.status === 303 && request.method !== 'GET' && request.method !== 'HEAD') ||
      ((response.status === 301 || response.status === 302) && request.method === 'POST');
    // The body went to the service: a redirect that keeps the method (307, 308) cannot send it again.
    if (!asGet && request.method !== 'GET' && request.method !== 'HEAD')
      throw networkError(`a ${response.status} redirect would send the body again`);
    const headers = new Headers(request.headers);
    if (asGet) for (const name of BODY_HEADERS) headers.delete(name);
    if (to.origin !== new URL(request.url).origin) headers.delete('authorization');
    void response.body?.cancel().catch(() => {});
    const next = new Request(to, {
      method: asGet ? 'GET' : request.method,
      headers,
      signal: request.signal,
      redirect: request.redirect,
      credentials: request.credentials,
      cache: request.cache,
    });
    const final = owns(to) ? await fetchAnswered(next, signal, undefined, redirects + 1) : await onward(next);
    Object.defineProperty(final, 'redirected', { value: true, configurable: true });
    return final;
  };
  return fetchAnswered;
}
