/**
 * Serves repeated reads from memory until a write can have changed them; other connections' writes
 * clear it through the host's channel. See docs/architecture.md, "Storage".
 */
import type { Logged, ConversationRecord, MessageRecord } from './schema.js';
import type { Change, ConversationList, QueueingWrite, Storage } from './storage.js';

/** Reads whose result depends only on the stored data (and their arguments). */
const CACHED = [
  'listApplications',
  'getApplication',
  'getSession',
  'listConversations',
  'getConversation',
  'getMessage',
  'listIds',
  'getAsset',
  'findAsset',
  'listAssets',
  'getAnnotation',
  'listAnnotations',
  'getTag',
  'getWebsite',
  'listLinked',
  'findLinked',
  'listActivities',
  'listExternalApplications',
  'listModelStates',
  'getMaterial',
  'listMaterials',
  // Meta values (the OS and user ids, sign-in, the model's configuration): read by every
  // connect, user and applications read, under keys the code names (never a client's).
  'getMeta',
] as const satisfies ReadonlyArray<keyof Storage>;

type Read = (typeof CACHED)[number];

/** Every read of assets and what hangs on them (a tag or website is shared by assets). */
const ASSET_READS: readonly Read[] = [
  'getAsset',
  'findAsset',
  'listAssets',
  'getAnnotation',
  'listAnnotations',
  'getTag',
  'getWebsite',
  'listLinked',
  'findLinked',
  'listActivities',
];

/**
 * What each write can change beyond what its changes say. Changes of
 * conversations and messages are applied to the cached lists; the cached
 * reads of the records a change names are dropped, and so is the id list of
 * any other collection it touches.
 */
const AFFECTS: Record<string, readonly Read[]> & Record<QueueingWrite, readonly Read[]> = {
  putApplication: ['listApplications', 'getApplication'],
  recordEvent: ['listApplications', 'getApplication', 'getSession'],
  putSession: ['getSession'],
  closeSession: ['getSession'],
  putAssets: ASSET_READS,
  createAsset: ASSET_READS,
  editAsset: ASSET_READS,
  // A delete unlists the record from every record of any kind that lists it (src/storage/idb/links.ts).
  deleteAsset: CACHED,
  putAnnotation: ['getAnnotation', 'listAnnotations'],
  deleteAnnotation: CACHED,
  recordActivities: ['listActivities'],
  editActivity: ['listActivities'],
  putExternalApplications: ['listExternalApplications'],
  editAnchor: CACHED,
  editModelStates: ['listModelStates'],
  editMaterials: ['getMaterial', 'listMaterials'],
  editLinked: ASSET_READS,
  // An association may change a record of any kind.
  editLinks: CACHED,
  setSignedIn: ['getMeta'],
  ensureMeta: ['getMeta'],
  setMeta: ['getMeta'],
  updateMeta: ['getMeta'],
  updateLoggedMeta: ['getMeta'],
  createConversation: ['listConversations', 'listActivities'],
  deleteConversation: ['listConversations', ...ASSET_READS, 'getMaterial', 'listMaterials'],
  // A message deleted is unlisted from the records that list it (assets, materials, …).
  editConversation: ['listConversations', ...ASSET_READS, 'getMaterial', 'listMaterials'],
  loadData: CACHED,
  // What the mirror writes may touch any record.
  applyMirror: CACHED,
};

/** Most stored text (UTF-16 code units of JSON) the cached conversation lists hold together: 4 Mi. */
export const READ_CACHE_BUDGET = 4 * 1024 * 1024;

/** Stored text of a conversation (with its message ids) and of messages, as the budget counts it. */
const conversationSize = (record: Omit<ConversationRecord, 'seq'>) => record.json.length + record.messageIds.length * 40;
const messageSize = (message: MessageRecord) => message.json.length + 80;

function listSize(list: ConversationList): number {
  let size = 0;
  for (const record of list.conversations) size += conversationSize(record);
  for (const message of list.messages?.values() ?? []) size += messageSize(message);
  return size;
}

export const INVALIDATION_CHANNEL = 'pieces-os-worker:storage';

export function cacheReads(
  storage: Storage,
  channelOrName: string | BroadcastChannel | null = INVALIDATION_CHANNEL,
  budget = READ_CACHE_BUDGET,
): Storage {
  const cache = new Map<string, unknown>();
  /** Budgeted size of each cached conversation list. */
  const sizes = new Map<string, number>();
  const key = (read: Read, args: unknown[]) => `${read}:${JSON.stringify(args)}`;
  let generation = 0;
  const clearAll = () => {
    generation++;
    cache.clear();
    sizes.clear();
  };
  const used = () => [...sizes.values()].reduce((a, b) => a + b, 0);
  /** Keeps a conversation list if it fits in what the budget leaves. */
  function keepList(k: string, list: ConversationList) {
    const size = listSize(list);
    if (used() + size > budget) return;
    cache.set(k, list);
    sizes.set(k, size);
  }
  const channel =
    typeof channelOrName !== 'string'
      ? channelOrName
      : typeof BroadcastChannel !== 'undefined'
        ? new BroadcastChannel(channelOrName)
        : null;
  channel?.addEventListener('message', clearAll);
  /**
   * Tells the other caches that this one wrote. Writes whose results come back in one task
   * (the creates of one group commit) are told once: each of them committed before that task
   * began (a commit is seen in the task that completes it), and the message goes out right
   * after it, once the answers of those writes are sent (no message between two threads is
   * ordered with another on a different channel: sent before the answer, it would not arrive
   * surely before it either), and before anything announced after them (announcements leave in
   * a later task on the same channel object).
   */
  let told = false;
  const tellWritten = () => {
    if (told) return;
    told = true;
    setTimeout(() => {
      told = false;
      try {
        channel?.postMessage('written');
      } catch {
        // Closed meanwhile (the connection was closed): nobody left to tell from here.
      }
    });
  };

  const idsKey = (collection: Logged) => key('listIds', [collection]);

  /** Applies committed changes: conversation ids follow in place, everything else they name is dropped. */
  function applyChanges(changes: Change[]) {
    if (changes.length === 0) return;
    const last = changes[changes.length - 1]!.seq;
    const conversationIds = cache.get(idsKey('conversation')) as { ids: string[]; seq: number } | undefined;
    let ids = conversationIds?.ids;
    for (const change of changes) {
      if (change.collection === 'conversation') {
        cache.delete(key('getConversation', [change.id]));
        if (ids && change.deleted) ids = ids.filter((id) => id !== change.id);
        else if (ids && !ids.includes(change.id)) ids = [...ids, change.id];
      } else {
        cache.delete(idsKey(change.collection));
        if (change.collection === 'conversationMessage') cache.delete(key('getMessage', [change.id]));
        if (change.collection === 'model') cache.delete(key('listModelStates', []));
      }
    }
    if (ids) cache.set(idsKey('conversation'), { ids, seq: last });
    // The id lists the changes did not touch are as true at the new sequence number.
    for (const [k, kept] of cache) {
      if (k.startsWith('listIds:') && k !== idsKey('conversation')) cache.set(k, { ids: (kept as { ids: string[] }).ids, seq: last });
    }
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
      // Unknown ids are not kept: asking for many of them must not grow the cache. (A meta key
      // is one the code names: its absence is kept like any value.)
      if (generation !== started || (value === undefined && read !== 'getMeta')) return value;
      if (read === 'listConversations') keepList(k, value as ConversationList);
      else cache.set(k, value);
      return value;
    };
  }
  /** `into`'s writes: `target`'s, each dropping what it can have changed. */
  const writesOf = (target: Storage, into: Record<string, (...args: unknown[]) => Promise<unknown>>) => {
    for (const [write, affects] of Object.entries(AFFECTS)) {
      const call = (target[write as keyof Storage] as (...args: unknown[]) => Promise<unknown>).bind(target);
      into[write] = async (...args: unknown[]) => {
        let result: unknown;
        try {
          result = await call(...args);
        } catch (error) {
          // A failed write changed nothing, but start afresh rather than reason about it.
          clearAll();
          throw error;
        } finally {
          tellWritten();
        }
        generation++;
        for (const k of [...cache.keys()]) {
          if (!affects.some((read) => k.startsWith(`${read}:`))) continue;
          cache.delete(k);
          sizes.delete(k);
        }
        if (Array.isArray(result)) applyChanges(result as Change[]);
        else if (result && typeof result === 'object' && 'changes' in result) applyChanges((result as { changes: Change[] }).changes);
        return result;
      };
    }
  };
  writesOf(storage, methods);
  // A request's view (see Storage.queueing): the same cached reads, its writes made for the scope.
  wrapped.queueing = (scope) => {
    const view: Storage = Object.create(wrapped);
    writesOf(storage.queueing(scope), view as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>);
    return view;
  };
  wrapped.close = () => {
    // A channel given by the caller is theirs (shared with other caches, or with the next connection's).
    if (typeof channelOrName === 'string') channel?.close();
    else channel?.removeEventListener('message', clearAll);
    storage.close();
  };
  return wrapped;
}
