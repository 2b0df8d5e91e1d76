/**
 * The one interception layer (@mswjs/interceptors): requests `answer` gives a response for are
 * answered with it; every other request goes out untouched. Hosts choose the interceptors.
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
