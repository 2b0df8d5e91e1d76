/**
 * The page's interception layer (@mswjs/interceptors): `fetch` and
 * asynchronous `XMLHttpRequest` for which `answer` gives a response are
 * answered with it; every other request goes out untouched. Synchronous XHR
 * stays native (the interceptor cannot answer it, see sync-xhr.ts). Used by
 * page mode (the core runs in the page) and by worker mode's fast path (the
 * answer comes from the worker over a MessagePort).
 */
import { BatchInterceptor } from '@mswjs/interceptors';
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { XMLHttpRequestInterceptor } from '@mswjs/interceptors/XMLHttpRequest';
import { keepSyncXhrNative } from './sync-xhr.js';

export function interceptRequests(answer: (request: Request) => Promise<Response> | undefined): () => void {
  const NativeXhr = globalThis.XMLHttpRequest;
  const interceptor = new BatchInterceptor({
    name: 'pieces-os-worker',
    interceptors: [new FetchInterceptor(), new XMLHttpRequestInterceptor()],
  });
  interceptor.on('request', async ({ request, controller }) => {
    const response = answer(request);
    if (!response) return;
    try {
      controller.respondWith(await response);
    } catch (error) {
      // A dropped connection, as the network reports it.
      controller.errorWith(error);
    }
  });
  interceptor.apply();
  const restoreXhr = NativeXhr ? keepSyncXhrNative(globalThis, NativeXhr) : () => {};
  return () => {
    restoreXhr();
    interceptor.dispose();
  };
}
