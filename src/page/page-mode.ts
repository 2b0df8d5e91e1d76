/**
 * Page mode: the same core run in the page where no service worker can (see docs/architecture.md).
 * Loaded with a dynamic import, so pages in worker mode never download it.
 */
import { conversationJson } from '../core/models/conversation-wire.js';
import type { ServiceSettings } from '../core/options.js';
import { broadcastChannel } from '../host/channel.js';
import { createHost } from '../host/create-host.js';
import { webLock } from '../host/mirror/lock.js';
import type { UpstreamIo } from '../host/mirror/upstream.js';
import type { PageReply, PageRequest } from '../host/protocol.js';
import { openStorage } from '../storage/idb/storage.js';
import { interceptPageRequests } from './intercept.js';
import { nativeFetch, NativeWebSocket } from './native.js';
import { warn } from './messages.js';
import { installSyncProbes } from './sync-probe.js';

/** The global under which a page in page mode offers its page API to test drivers. */
export const PAGE_HOST = Symbol.for('pieces-os-worker.page-host');

export interface PageModeOptions extends ServiceSettings {
  stream: boolean;
  syncProbes: boolean;
}

export interface PageModeHost {
  bases: readonly string[];
  /** Where the data lives. */
  storage: 'indexeddb' | 'memory';
  ask(request: PageRequest): Promise<PageReply>;
  stop(): void;
}

export async function startPageMode(options: PageModeOptions): Promise<PageModeHost> {
  const { stream, syncProbes, ...settings } = options;
  const host = createHost({
    // The database is reopened after it went away (site data cleared, deleted by another tab).
    open: (hooks, initialData) =>
      openStorage({ initialData, encodeConversation: conversationJson, onLost: hooks.lost, onBlocked: hooks.blocked }),
    channel: broadcastChannel(),
    settings,
    keepOverrides: true,
    // The page's fetch and WebSocket as they were before this library patched them; one tab (the lock's holder) replays.
    upstream: {
      fetch: (input, init) => (nativeFetch ?? fetch)(input, init),
      ...(NativeWebSocket ? { WebSocket: NativeWebSocket as unknown as UpstreamIo['WebSocket'] } : {}),
      lock: webLock(typeof navigator === 'undefined' ? undefined : navigator.locks),
    },
  });
  const { service } = host;
  // Opened now: a page that cannot use the browser's IndexedDB at all gets an in-memory one
  // (fake-indexeddb, installed as the page's IndexedDB), which the next open finds.
  let kind: PageModeHost['storage'] = 'indexeddb';
  try {
    if (typeof indexedDB === 'undefined') throw new Error('no indexedDB');
    await host.storage.identity();
  } catch (error) {
    await import('fake-indexeddb/auto');
    warn(
      `IndexedDB is unavailable here (${(error as Error)?.name ?? error}): this page now has an in-memory IndexedDB; the data is this tab's only and is lost when it closes.`,
    );
    kind = 'memory';
    await host.storage.identity();
  }
  const stopIntercepting = interceptPageRequests(
    (request) => service.respond(request),
    (url) => service.pathUnderBase(url) !== null,
  );
  const stopStreams = stream ? host.feedStreams() : () => {};
  // Synchronous XHR is beyond the interceptor: it stays native, and its
  // discovery probes under the bases are answered as in worker mode.
  const stopProbes =
    typeof XMLHttpRequest !== 'undefined' && syncProbes
      ? installSyncProbes({ bases: service.bases, isServiceAvailable: () => true })
      : () => {};

  const ask = (request: PageRequest) => host.answerPageRequest(request);
  // Where Node-side test drivers (piecesControls(page)) find the service of a page in page mode.
  Object.defineProperty(globalThis, PAGE_HOST, { value: { ask }, configurable: true });

  return {
    bases: service.bases,
    storage: kind,
    ask,
    stop() {
      stopStreams();
      stopProbes();
      stopIntercepting();
      host.close();
      delete (globalThis as Record<symbol, unknown>)[PAGE_HOST];
    },
  };
}
