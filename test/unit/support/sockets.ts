/** The service's sockets in a unit test: the page's shim over the harness's service, each socket's frames and events recorded. */
import { afterEach } from 'vitest';
import { installStreamShim } from '../../../src/stream/shim.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import type { setup } from './harness.js';

/** Stands in for the browser's native WebSocket (no URL of the tests reaches it). */
class NativeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  constructor(readonly url: string) {}
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

export async function until(condition: () => boolean, what: string, ms = 4_000) {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

export interface RecordedSocket {
  socket: WebSocket;
  /** Every frame, as received (text). */
  frames: string[];
  /** `open`, `error`, `close` in order. */
  events: string[];
  closeCode?: number;
}

/**
 * Serves the service's sockets (the shim) on a WebSocket constructor of their own; changes the
 * service commits are announced to them as a host announces them.
 */
export function sockets(t: Awaited<ReturnType<typeof setup>>, options: { available?: boolean } = {}) {
  const announce = new BroadcastChannel(CHANGES_CHANNEL);
  const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
  const uninstall = installStreamShim({
    target,
    fetch: (input, init) => t.service.handle(new Request(input, init)),
    isServiceAvailable: () => options.available ?? true,
  });
  const listening = t.changes.length;
  // The harness records every change; announce those committed from now on.
  const timer = setInterval(() => {
    while (t.changes.length > announced) announce.postMessage({ type: 'change', change: t.changes[announced++] });
  }, 2);
  let announced = listening;
  cleanups.push(() => {
    clearInterval(timer);
    uninstall();
    announce.close();
  });
  return {
    open(url: string): RecordedSocket {
      const socket = new target.WebSocket(url);
      const recorded: RecordedSocket = { socket, frames: [], events: [] };
      socket.addEventListener('message', (event) => recorded.frames.push(String((event as MessageEvent).data)));
      for (const type of ['open', 'error', 'close']) {
        socket.addEventListener(type, (event) => {
          recorded.events.push(type);
          if (type === 'close') recorded.closeCode = (event as CloseEvent).code;
        });
      }
      cleanups.push(() => socket.readyState <= 1 && socket.close());
      return recorded;
    },
  };
}
