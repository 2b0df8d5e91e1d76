/**
 * Worker mode's fast path: the page's requests under the bases go to the worker over a MessagePort
 * (src/port/); every other request, and every one the port cannot carry, goes by fetch.
 */
import { baseMatcher } from '../shared/bases.js';
import { PortClient, type ClientPort, type Connected } from '../port/client.js';
import type { ConnectMessage, ToPage } from '../port/protocol.js';
import { interceptPageRequests } from './intercept.js';

/** How often a page that uses the fast path lets its worker know, as its fetches would (a message event). */
const TOUCH_MS = 10_000;
/** How long a worker gets to answer a connect before the page uses fetch instead. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface FastPath {
  /** Requests that went over the port, and by fetch after a port failed. */
  counts: { port: number; fetch: number };
  /**
   * A fetch straight to the port, for the stream shim's own requests: the answer is the port's
   * Response itself (an event stream's frames readable as frames), not a copy made by the
   * interception layer.
   */
  fetch(input: string, init?: RequestInit): Promise<Response>;
  stop(): void;
}

export function startFastPath(bases: readonly string[]): FastPath {
  const matcher = baseMatcher(bases);
  const container = navigator.serviceWorker;
  const nativeFetch = globalThis.fetch.bind(globalThis);
  let touched = 0;

  const connect = async (): Promise<Connected | null> => {
    const worker = container.controller;
    if (!worker) return null;
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ type: 'pieces:fast-path' } satisfies ConnectMessage, [port2]);
    touched = Date.now();
    const ready = await new Promise<ToPage | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), CONNECT_TIMEOUT_MS);
      port1.onmessage = (event: MessageEvent) => {
        clearTimeout(timer);
        resolve(event.data as ToPage);
      };
    });
    // A worker without the fast path answers the page API's way (ok: false).
    if (ready?.type !== 'ready') {
      port1.close();
      return null;
    }
    const { lock } = ready;
    const locks = typeof navigator.locks === 'undefined' ? undefined : navigator.locks;
    return {
      port: port1 as unknown as ClientPort,
      instance: ready.instance,
      worker,
      // The worker holds `lock` while it runs: waiting for it tells when the instance stopped.
      ...(lock && locks
        ? {
            watch: (stopped: () => void) => {
              const watching = new AbortController();
              locks.request(lock, { mode: 'shared', signal: watching.signal }, () => stopped()).catch(() => {});
              return () => watching.abort();
            },
          }
        : {}),
    };
  };

  const client = new PortClient({ connect, fetch: (request) => nativeFetch(request) });
  const onControllerChange = () => client.reconnect();
  container.addEventListener('controllerchange', onControllerChange);

  /** The port's answer to a request under the bases (undefined for any other, or with no worker in control). */
  const answer = (request: Request, text?: string): Promise<Response> | undefined => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    if (!matcher.match(url) || !container.controller) return undefined;
    if (Date.now() - touched > TOUCH_MS) {
      touched = Date.now();
      container.controller.postMessage({ type: 'pieces:fast-path' } satisfies ConnectMessage);
    }
    return client.request(request, text);
  };
  const stopIntercepting = interceptPageRequests(answer, (url) => matcher.match(url) !== null);

  return {
    counts: client.counts,
    fetch(input, init) {
      const request = new Request(input, init);
      return answer(request, typeof init?.body === 'string' ? init.body : undefined) ?? nativeFetch(request);
    },
    stop() {
      stopIntercepting();
      container.removeEventListener('controllerchange', onControllerChange);
      client.reconnect();
    },
  };
}
