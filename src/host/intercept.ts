/**
 * The one interception layer (@mswjs/interceptors) every host that answers in
 * the client's own process uses: requests for which `answer` gives a response
 * are answered with it (a rejected answer fails as a dropped connection);
 * every other request goes out untouched. Hosts choose the interceptors (their
 * preset): the page's fetch and XMLHttpRequest, or Node's http, fetch and
 * XMLHttpRequest.
 */
import { BatchInterceptor, type Interceptor, type HttpRequestEventMap } from '@mswjs/interceptors';

export type Answer = (request: Request) => Promise<Response> | undefined;

/** Starts answering through `interceptors`; returns the function that stops and restores every patched global. */
export function interceptRequests(interceptors: ReadonlyArray<Interceptor<HttpRequestEventMap>>, answer: Answer): () => void {
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
  return () => interceptor.dispose();
}
