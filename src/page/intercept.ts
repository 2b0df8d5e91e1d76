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

export function interceptPageRequests(answer: Answer): () => void {
  const NativeXhr = globalThis.XMLHttpRequest;
  const stop = interceptRequests([new FetchInterceptor(), new XMLHttpRequestInterceptor()], answer);
  const restoreXhr = NativeXhr ? keepSyncXhrNative(globalThis, NativeXhr) : () => {};
  return () => {
    restoreXhr();
    stop();
  };
}
