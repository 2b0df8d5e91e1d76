/**
 * One write of what a mirrored Pieces OS sent (a MirrorBatch, see mirror.ts), as the kinds' table
 * (mirror-kinds.ts) and the driver share it: the records of the transaction's stores, the changes to
 * log, and the conversations to write last (a new one takes the sequence number of its change as its snapshot
 * order), with the named writes of records that span several stores.
 */
import type { IDBPTransaction, StoreNames } from 'idb';
import type { AnnotationRecord, ConversationRecord, FormatRecord, MessageRecord, PiecesDB, TagRecord, WebsiteRecord } from '../schema.js';
import type { Change, StoredAsset, StoredData } from '../storage.js';
import { log } from './transactions.js';

export type MirrorTx = IDBPTransaction<PiecesDB, Array<StoreNames<PiecesDB>>, 'readwrite'>;

/** The stores of records keyed by their `id`. */
export type RecordStore = { [S in StoreNames<PiecesDB>]: PiecesDB[S]['value'] extends { id: string } ? S : never }[StoreNames<PiecesDB>];
export type ValueOf<S extends RecordStore | 'meta'> = PiecesDB[S]['value'];

type PendingConversation = Omit<ConversationRecord, 'seq'> & { seq?: number };
type Logged = Omit<Change, 'seq'>;

/** Two lists of ids alike (absent as empty). */
const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((id, i) => id === b![i]);

const byId = <T extends { id: string }>(items: T[]) => items.sort((a, b) => (a.id < b.id ? -1 : 1));

/** An asset whole, as compared for a change (bytes as numbers, lists by id). */
const assetText = (whole: StoredAsset) =>
  JSON.stringify({
    ...whole,
    formats: whole.formats.map((f) => (f.bytes ? { ...f, bytes: Array.from(f.bytes) } : f)),
    annotations: byId([...whole.annotations]),
    tags: byId(whole.tags.map(({ assets: _assets, ...tag }) => tag)),
    websites: byId(whole.websites.map(({ assets: _assets, ...site }) => site)),
  });

/** A format or annotation, as compared for a change (bytes as numbers). */
const partText = (record: FormatRecord | AnnotationRecord) =>
  JSON.stringify(record, (_key, value: unknown) => (value instanceof Uint8Array ? Array.from(value) : value));

export type MirrorWrite = ReturnType<typeof mirrorWrite>;

export function mirrorWrite(tx: MirrorTx) {
  const logged: Logged[] = [];
  /** Conversations to write once the log gives the new ones their snapshot order (the sequence number of their change). */
  const pending = new Map<string, PendingConversation>();
  // One store type for all: the table's rows keep each store's own record type.
  const store = (name: RecordStore) => tx.objectStore(name as 'anchors');

  const w = {
    tx,
    note(collection: Logged['collection'], id: string, deleted?: true) {
      logged.push({ collection, id, ...(deleted ? { deleted } : {}) });
    },
    /** The stored record (a conversation as this write left it so far). */
    async get<S extends RecordStore>(name: S, id: string): Promise<ValueOf<S> | undefined> {
      if (name === 'conversations' && pending.has(id)) return pending.get(id) as ValueOf<S>;
      return (await store(name).get(id)) as ValueOf<S> | undefined;
    },
    async put<S extends RecordStore>(name: S, record: ValueOf<S>): Promise<void> {
      if (name === 'conversations') pending.set(record.id, record as PendingConversation);
      else await store(name).put(record as never);
    },
    async delete(name: RecordStore, id: string): Promise<void> {
      await store(name).delete(id);
      if (name === 'conversations') pending.delete(id);
    },
    /** Every stored key (conversations this write made too). */
    async keys(name: RecordStore): Promise<string[]> {
      const keys = await store(name).getAllKeys();
      return name === 'conversations' ? [...new Set([...keys, ...pending.keys()])] : keys;
    },
    /** Records of `name` whose index `index` holds `query`. */
    byIndex<S extends RecordStore>(name: S, index: string, query: IDBValidKey | IDBKeyRange): Promise<Array<ValueOf<S>>> {
      return store(name)
        .index(index as 'by-created')
        .getAll(query as string) as Promise<Array<ValueOf<S>>>;
    },

    /** A conversation with its messages. */
    async dropConversation(id: string) {
      if (!(await w.get('conversations', id))) return;
      const messages = tx.objectStore('messages');
      for (const key of await messages.index('by-conversation').getAllKeys(id)) {
        await messages.delete(key);
        w.note('conversationMessage', key, true);
      }
      await w.delete('conversations', id);
      w.note('conversation', id, true);
    },

    /** A message, taken off its conversation. */
    async dropMessage(id: string) {
      const message = await w.get('messages', id);
      if (!message) return;
      await w.delete('messages', id);
      w.note('conversationMessage', id, true);
      const owner = await w.get('conversations', message.conversation);
      if (owner) {
        await w.put('conversations', { ...owner, messageIds: owner.messageIds.filter((m) => m !== id) });
        w.note('conversation', owner.id);
      }
    },

    /** Takes `asset` off the tags (websites) that list it, but those in `keep`. */
    async offTags(name: 'tags' | 'websites', asset: string, keep: ReadonlySet<string> = new Set()) {
      for (const item of await w.byIndex(name, 'by-asset', asset)) {
        if (!keep.has(item.id)) await w.put(name, { ...item, assets: item.assets.filter((id) => id !== asset) });
      }
    },

    /** An asset and what hangs on it (its formats, annotations, its place on tags and websites); its activities stay. */
    async dropAsset(id: string) {
      if (!(await w.get('assets', id))) return;
      await w.delete('assets', id);
      for (const name of ['formats', 'annotations'] as const) {
        for (const key of await tx.objectStore(name).index('by-asset').getAllKeys(id)) {
          await w.delete(name, key);
          w.note(name === 'formats' ? 'format' : 'annotation', key, true);
        }
      }
      await w.offTags('tags', id);
      await w.offTags('websites', id);
      w.note('asset', id, true);
    },

    /** The stored asset whole, as assetText compares it. */
    async storedAsset(id: string): Promise<StoredAsset | undefined> {
      const record = await w.get('assets', id);
      if (!record) return undefined;
      const formats = new Map((await w.byIndex('formats', 'by-asset', id)).map((f) => [f.id, f]));
      return {
        record,
        formats: record.formats.map((f) => formats.get(f)).filter((f): f is FormatRecord => !!f),
        annotations: await w.byIndex('annotations', 'by-asset', id),
        tags: await w.byIndex('tags', 'by-asset', id),
        websites: await w.byIndex('websites', 'by-asset', id),
      };
    },

    /** Writes an asset whole, as the upstream has it (ids as given); a change only when it differs. */
    async putAsset(whole: StoredAsset) {
      const { id } = whole.record;
      const current = await w.storedAsset(id);
      if (current && assetText(current) === assetText(whole)) return;
      const kept = { formats: new Set(whole.formats.map((f) => f.id)), annotations: new Set(whole.annotations.map((a) => a.id)) };
      for (const name of ['formats', 'annotations'] as const) {
        for (const key of await tx.objectStore(name).index('by-asset').getAllKeys(id)) {
          if (kept[name].has(key)) continue;
          await w.delete(name, key);
          w.note(name === 'formats' ? 'format' : 'annotation', key, true);
        }
      }
      await w.offTags('tags', id, new Set(whole.tags.map((t) => t.id)));
      await w.offTags('websites', id, new Set(whole.websites.map((site) => site.id)));
      await w.put('assets', whole.record);
      // Each format and annotation that differs from the stored one is a change of its own stream.
      const before = {
        formats: new Map(current?.formats.map((f) => [f.id, f])),
        annotations: new Map(current?.annotations.map((a) => [a.id, a])),
      };
      const differs = (stored: FormatRecord | AnnotationRecord | undefined, given: FormatRecord | AnnotationRecord) =>
        !stored || partText(stored) !== partText(given);
      for (const format of whole.formats) {
        await w.put('formats', format);
        if (differs(before.formats.get(format.id), format)) w.note('format', format.id);
      }
      for (const annotation of whole.annotations) {
        await w.put('annotations', annotation);
        if (differs(before.annotations.get(annotation.id), annotation)) w.note('annotation', annotation.id);
      }
      // Each asset's own put decides its place on a tag (website): the others' places stay.
      for (const name of ['tags', 'websites'] as const) {
        for (const item of name === 'tags' ? whole.tags : whole.websites) {
          const stored: TagRecord | WebsiteRecord | undefined = await w.get(name, item.id);
          await w.put(name, { ...item, assets: [...new Set([...(stored?.assets ?? []), ...item.assets])] } as TagRecord & WebsiteRecord);
        }
      }
      w.note('asset', id);
    },

    /** Puts a record of a store of whole records when it differs from the stored one, logging its change. */
    async putPlain(
      name: 'applications' | 'activities' | 'anchors',
      collection: 'application' | 'activity' | 'anchor',
      record: ValueOf<typeof name>,
    ) {
      const stored = await w.get(name, record.id);
      if (stored && JSON.stringify(stored) === JSON.stringify(record)) return;
      await w.put(name, record);
      w.note(collection, record.id);
    },

    /** A conversation as the upstream has it, with exactly its messages; a change only when something differs. */
    async putConversation({ conversation, messages: given }: StoredData['conversations'][number]) {
      const stored = await w.get('conversations', conversation.id);
      const current = stored ? await w.byIndex('messages', 'by-conversation', conversation.id) : [];
      const known = new Map<string, MessageRecord>(current.map((m) => [m.id, m]));
      let changed =
        !stored ||
        stored.json !== conversation.json ||
        !same(stored.messageIds, conversation.messageIds) ||
        !same(stored.deletedMessageIds, conversation.deletedMessageIds);
      const kept = new Set(given.map((m) => m.id));
      for (const message of current) {
        if (kept.has(message.id)) continue;
        await w.delete('messages', message.id);
        w.note('conversationMessage', message.id, true);
        changed = true;
      }
      for (const message of given) {
        if (known.get(message.id)?.json === message.json) continue;
        await w.put('messages', message);
        w.note('conversationMessage', message.id);
        changed = true;
      }
      if (!changed) return;
      pending.set(conversation.id, { ...conversation, ...(stored?.seq === undefined ? {} : { seq: stored.seq }) });
      w.note('conversation', conversation.id);
    },

    /** A message as the upstream has it, in its stored conversation (at its end when new there); none without it. */
    async putMessage(message: MessageRecord) {
      const owner = await w.get('conversations', message.conversation);
      if (!owner) return;
      if ((await w.get('messages', message.id))?.json !== message.json) {
        await w.put('messages', message);
        w.note('conversationMessage', message.id);
      }
      if (!owner.messageIds.includes(message.id)) await w.put('conversations', { ...owner, messageIds: [...owner.messageIds, message.id] });
      w.note('conversation', owner.id);
    },

    /** Logs the changes, then writes the conversations: a new one takes the sequence number of its (last) change. */
    async finish(): Promise<Change[]> {
      const changes: Change[] = [];
      await log(tx.objectStore('changes'), logged, changes);
      const conversations = tx.objectStore('conversations');
      for (const [id, record] of pending) {
        let seq = record.seq;
        if (seq === undefined)
          for (const change of changes) if (change.collection === 'conversation' && change.id === id && !change.deleted) seq = change.seq;
        await conversations.put({ ...record, seq: seq! });
      }
      return changes;
    },
  };
  return w;
}
