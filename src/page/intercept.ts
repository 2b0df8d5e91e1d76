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
 * Intercepts the page's requests; `owns(url)` says which URLs the service answers (a `fetch` of any other
 * goes straight to the page's `fetch`).
 */
export function interceptPageRequests(answer: Answer, owns: (url: URL) => boolean): () => void {
  const NativeXhr = globalThis.XMLHttpRequest;
  const stop = interceptRequests([new FetchInterceptor(), new XMLHttpRequestInterceptor()], answer, owns);
  const restoreXhr = NativeXhr ? keepSyncXhrNative(globalThis, NativeXhr) : () => {};
  return () => {
    restoreXhr();
    stop();
  };
}
