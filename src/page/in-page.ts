/**
 * Page mode: the same core, run in the page where no service worker can.
 * `fetch` and `XMLHttpRequest` for the bases are answered in the page
 * (@mswjs/interceptors; every other request goes out untouched), the stream
 * shim is fed by this core, and the data lives in IndexedDB, shared by every
 * tab of the origin (an in-memory IndexedDB when the browser's is unavailable). Tabs announce
 * their commits on one BroadcastChannel: it clears the other tabs' read
 * caches and wakes their stream sockets.
 *
 * Loaded with a dynamic import, so pages in worker mode never download it.
 */
import { answerPageRequest } from '../core/page-api.js';
import { createHostedService, initialAssets, type HostedOptions } from '../core/hosted.js';
import { openStorage } from '../storage/idb-storage.js';
import { cacheReads } from '../storage/read-cache.js';
import type { AssetRecord } from '../storage/schema.js';
import type { Change, Storage } from '../storage/storage.js';
import { CHANGES_CHANNEL, type ChangeMessage, type PageReply, type PageRequest } from '../stream/protocol.js';
import { LocalAnnouncements } from '../stream/local.js';
import { installStreamShim } from '../stream/shim.js';
import { warn } from './messages.js';
import { installSyncProbes } from './sync-probe.js';
import { interceptRequests } from './intercept.js';

/** The global under which a page in page mode offers its page API to test drivers. */
export const PAGE_HOST = Symbol.for('pieces-os-worker.page-host');

export interface InPageOptions extends HostedOptions {
  stream: boolean;
  syncProbes: boolean;
}

export interface InPageHost {
  bases: readonly string[];
  /** Where the data lives. */
  storage: 'indexeddb' | 'memory';
  ask(request: PageRequest): Promise<PageReply>;
  stop(): void;
}

async function openShared(seedAssets: AssetRecord[]): Promise<{ storage: Storage; kind: InPageHost['storage'] }> {
  try {
    if (typeof indexedDB === 'undefined') throw new Error('no indexedDB');
    return { storage: await openStorage({ seedAssets }), kind: 'indexeddb' };
  } catch (error) {
    // This page cannot use the browser's IndexedDB at all: give it an
    // in-memory one (fake-indexeddb, installed as the page's IndexedDB).
    await import('fake-indexeddb/auto');
    warn(
      `IndexedDB is unavailable here (${(error as Error)?.name ?? error}): this page now has an in-memory IndexedDB; the data is this tab's only and is lost when it closes.`,
    );
    return { storage: await openStorage({ seedAssets }), kind: 'memory' };
  }
}

export async function startInPage(options: InPageOptions): Promise<InPageHost> {
  const { storage: opened, kind } = await openShared(initialAssets(options));
  // One channel object both clears the other tabs' caches and announces
  // changes, so a clear always arrives before the change that follows it. It
  // reaches this tab's stream sockets too (they listen on their own object).
  // Where the browser refuses BroadcastChannel (Firefox with site data
  // blocked, where the store is this tab's memory anyway), changes reach this
  // tab's sockets in-process.
  let channel: BroadcastChannel | null = null;
  try {
    channel = new BroadcastChannel(CHANGES_CHANNEL);
  } catch {
    channel = null;
  }
  const local = channel ? null : new LocalAnnouncements();
  const storage = cacheReads(opened, channel);
  const announce = (change: Change) =>
    channel ? channel.postMessage({ type: 'change', change } satisfies ChangeMessage) : local!.announce(change);
  const service = createHostedService(storage, announce, options);

  const stopIntercepting = interceptRequests((request) => service.respond(request));

  const uninstall = options.stream
    ? installStreamShim({
        bases: service.bases,
        fetch: (input, init) => service.handle(new Request(input, init)),
        isServiceAvailable: () => true,
        ...(local ? { announcements: local.open } : {}),
      })
    : () => {};

  // Synchronous XHR is beyond the interceptor: it stays native, and its
  // discovery probes under the bases are answered as in worker mode.
  const uninstallProbes =
    typeof XMLHttpRequest !== 'undefined' && options.syncProbes
      ? installSyncProbes({ bases: service.bases, isServiceAvailable: () => true })
      : () => {};

  const ask = (request: PageRequest) => answerPageRequest(service, storage, request, async () => {});
  // Where Node-side test drivers (piecesControls(page)) find the service of a page in page mode.
  Object.defineProperty(globalThis, PAGE_HOST, { value: { ask }, configurable: true });

  return {
    bases: service.bases,
    storage: kind,
    ask,
    stop() {
      uninstall();
      uninstallProbes();
      stopIntercepting();
      storage.close();
      delete (globalThis as Record<symbol, unknown>)[PAGE_HOST];
    },
  };
}
