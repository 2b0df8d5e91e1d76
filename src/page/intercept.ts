/**
 * The page's preset of the interception layer: `fetch` and asynchronous
 * `XMLHttpRequest`; synchronous XHR stays native (the interceptor cannot answer
 * it, see sync-xhr.ts). Used by page mode (the core runs in the page) and by
 * worker mode's fast path (the answer comes from the worker over a MessagePort).
 */
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { XMLHttpRequestInterceptor } from '@mswjs/interceptors/XMLHttpRequest';
import { interceptRequests, type Answer } from '../host/intercept.js';
import { keepSyncXhrNative } from './sync-xhr.js';

/**
 * Intercepts the page's requests; `owns(url)` says which URLs the service answers: a `fetch` of
 * any other goes straight to the `fetch` the page had, never through the interception layer
 * (which builds a Request of it and, to pass it on, clones it: for a body, a tee of its stream).
 */
export function interceptPageRequests(answer: Answer, owns: (url: URL) => boolean): () => void {
  const NativeXhr = globalThis.XMLHttpRequest;
  const before = globalThis.fetch;
  const stop = interceptRequests([new FetchInterceptor(), new XMLHttpRequestInterceptor()], answer);
  const restoreXhr = NativeXhr ? keepSyncXhrNative(globalThis, NativeXhr) : () => {};
  const restoreFetch = typeof before === 'function' ? onlyOwnFetches(before, owns) : () => {};
  return () => {
    restoreFetch();
    restoreXhr();
    stop();
  };
}

/** Puts a filter in front of the intercepted `fetch`: what the service does not own goes to `before` as it was called. */
function onlyOwnFetches(before: typeof fetch, owns: (url: URL) => boolean): () => void {
  const intercepted = globalThis.fetch;
  const filtered: typeof fetch = (input, init) => (isOwned(input, owns) ? intercepted(input, init) : before(input, init));
  globalThis.fetch = filtered;
  return () => {
    if (globalThis.fetch === filtered) globalThis.fetch = intercepted;
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
