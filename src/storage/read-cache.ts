/**
 * Serves repeated reads from memory. The worker is the one writer of its
 * database, so a read's result stays true until the next write: every write
 * clears the cache after it commits, and a read that overlapped a write is
 * not kept. Other connections to the same database (another version of the
 * worker during an update) clear it through a BroadcastChannel.
 *
 * Cached results are shared: callers must not mutate what they read.
 */
import type { Storage } from './storage.js';

/** Reads whose result depends only on the stored data (and their arguments). */
const CACHED = [
  'listApplications',
  'getApplication',
  'getSession',
  'listConversations',
  'listConversationIds',
  'listAssetIds',
  'listExternalApplications',
] as const satisfies ReadonlyArray<keyof Storage>;

const WRITES = [
  'putApplication',
  'recordEvent',
  'putSession',
  'closeSession',
  'createConversation',
  'deleteConversation',
  'putAssets',
  'putExternalApplications',
  'ensureMeta',
] as const satisfies ReadonlyArray<keyof Storage>;

export const INVALIDATION_CHANNEL = 'pieces-os-worker:storage';

export function cacheReads(storage: Storage, channelName: string | null = INVALIDATION_CHANNEL): Storage {
  const cache = new Map<string, unknown>();
  let generation = 0;
  const clear = () => {
    generation++;
    cache.clear();
  };
  const channel = channelName && typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(channelName) : null;
  if (channel) channel.onmessage = clear;

  const wrapped: Storage = Object.create(storage);
  for (const name of CACHED) {
    const read = (storage[name] as (...args: unknown[]) => Promise<unknown>).bind(storage);
    (wrapped as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const key = `${name}:${JSON.stringify(args)}`;
      if (cache.has(key)) return cache.get(key);
      const started = generation;
      const value = await read(...args);
      if (generation === started) cache.set(key, value);
      return value;
    };
  }
  for (const name of WRITES) {
    const write = (storage[name] as (...args: unknown[]) => Promise<unknown>).bind(storage);
    (wrapped as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      try {
        return await write(...args);
      } finally {
        clear();
        channel?.postMessage('written');
      }
    };
  }
  wrapped.close = () => {
    channel?.close();
    storage.close();
  };
  return wrapped;
}
