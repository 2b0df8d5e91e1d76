/**
 * Serves repeated reads from memory. The worker is the one writer of its
 * database, so a read's result stays true until the next write. After a
 * write commits, conversation creates and deletes are applied to the cached
 * conversation lists (so snapshots stay in memory while conversations are
 * written); any other write drops the reads it can affect. A read that
 * overlapped a write is not kept. Other connections to the same database
 * (another version of the worker during an update) clear the cache through
 * a BroadcastChannel.
 *
 * Cached results are shared and updated in place: callers use what they
 * read at once and never mutate it.
 */
import type { ConversationRecord, MessageRecord } from './schema.js';
import type { Change, ConversationList, Storage } from './storage.js';

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

type Read = (typeof CACHED)[number];

/** What each write can change; conversation writes are applied, not dropped. */
const AFFECTS: Record<string, readonly Read[]> = {
  putApplication: ['listApplications', 'getApplication'],
  recordEvent: ['listApplications', 'getApplication', 'getSession'],
  putSession: ['getSession'],
  closeSession: ['getSession'],
  putAssets: ['listAssetIds'],
  putExternalApplications: ['listExternalApplications'],
  ensureMeta: [],
  createConversation: [],
  deleteConversation: [],
};

export const INVALIDATION_CHANNEL = 'pieces-os-worker:storage';

export function cacheReads(storage: Storage, channelName: string | null = INVALIDATION_CHANNEL): Storage {
  const cache = new Map<string, unknown>();
  const key = (read: Read, args: unknown[]) => `${read}:${JSON.stringify(args)}`;
  let generation = 0;
  const clearAll = () => {
    generation++;
    cache.clear();
  };
  const channel = channelName && typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(channelName) : null;
  if (channel) channel.onmessage = clearAll;

  const lists = () =>
    [true, false].map((messages) => [messages, cache.get(key('listConversations', [{ messages }])) as ConversationList | undefined] as const);
  const ids = () => cache.get(key('listConversationIds', [])) as { ids: string[]; seq: number } | undefined;

  function created(record: Omit<ConversationRecord, 'seq'>, messages: MessageRecord[], change: Change) {
    for (const [, list] of lists()) {
      if (!list) continue;
      list.conversations.push({ ...record, seq: change.seq });
      for (const message of messages) list.messages?.set(message.id, message);
    }
    const known = ids();
    if (known) cache.set(key('listConversationIds', []), { ids: [...known.ids, record.id], seq: change.seq });
  }

  function deleted(change: Change) {
    for (const [messages, list] of lists()) {
      if (!list) continue;
      const gone = list.conversations.find((c) => c.id === change.conversation);
      for (const id of gone?.messageIds ?? []) list.messages?.delete(id);
      cache.set(key('listConversations', [{ messages }]), {
        ...list,
        conversations: list.conversations.filter((c) => c.id !== change.conversation),
      });
    }
    const known = ids();
    if (known) cache.set(key('listConversationIds', []), { ids: known.ids.filter((id) => id !== change.conversation), seq: change.seq });
  }

  const wrapped: Storage = Object.create(storage);
  const methods = wrapped as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const read of CACHED) {
    const call = (storage[read] as (...args: unknown[]) => Promise<unknown>).bind(storage);
    methods[read] = async (...args: unknown[]) => {
      const k = key(read, args);
      if (cache.has(k)) return cache.get(k);
      const started = generation;
      const value = await call(...args);
      // Unknown ids are not kept: asking for many of them must not grow the cache.
      if (generation === started && value !== undefined) cache.set(k, value);
      return value;
    };
  }
  for (const [write, affects] of Object.entries(AFFECTS)) {
    const call = (storage[write as keyof Storage] as (...args: unknown[]) => Promise<unknown>).bind(storage);
    methods[write] = async (...args: unknown[]) => {
      let result: unknown;
      try {
        result = await call(...args);
      } catch (error) {
        // A failed write changed nothing, but start afresh rather than reason about it.
        clearAll();
        throw error;
      } finally {
        channel?.postMessage('written');
      }
      generation++;
      for (const k of [...cache.keys()]) if (affects.some((read) => k.startsWith(`${read}:`))) cache.delete(k);
      if (write === 'createConversation') created(args[0] as ConversationRecord, args[1] as MessageRecord[], result as Change);
      if (write === 'deleteConversation' && result) deleted(result as Change);
      return result;
    };
  }
  wrapped.close = () => {
    channel?.close();
    storage.close();
  };
  return wrapped;
}
