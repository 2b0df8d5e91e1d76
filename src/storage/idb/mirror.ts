/**
 * What a mirrored Pieces OS writes (see MirrorBatch): records as the upstream has them,
 * records it no longer has, local records re-keyed to the ids it gave them, the outbox and
 * the id map, in one transaction, with a change logged for each record that differs, so
 * that stream sockets hear of real changes only. The outbox entries themselves are
 * appended by the writes that made them locally (transactions.ts `queue`).
 */
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { ActivityRecord, AnchorRecord, AnnotationRecord, ConversationRecord, FormatRecord, IdPair, MessageRecord, PiecesDB, TagRecord, WebsiteRecord } from '../schema.js';
import type { Change, MirrorBatch, Storage, StoredAsset } from '../storage.js';
import { listedIds } from '../anchor-links.js';
import { log } from './transactions.js';

const STORES = [
  'applications', 'sessions', 'events', 'conversations', 'messages', 'assets', 'formats', 'annotations', 'tags', 'websites',
  'activities', 'anchors', 'changes', 'outbox', 'idmap', 'meta',
] as const;
type Tx = IDBPTransaction<PiecesDB, Array<(typeof STORES)[number]>, 'readwrite'>;
type Logged = Omit<Change, 'seq'>;

/** A record's JSON text with its own id (and, for a message, its conversation) replaced. */
function withIds(json: string, id: string, conversation?: string): string {
  const value = JSON.parse(json) as Record<string, unknown>;
  value.id = id;
  if (conversation !== undefined) value.conversation = { id: conversation };
  return JSON.stringify(value);
}

/** JSON text with every occurrence of the ids the map knows (UUIDs, as whole strings) replaced. */
function renamed(json: string, upstreamOf: ReadonlyMap<string, string>): string {
  return json.replace(/"([^"\\]{8,64})"/g, (whole, id: string) => {
    const upstream = upstreamOf.get(id);
    return upstream === undefined ? whole : JSON.stringify(upstream);
  });
}

const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((id, i) => id === b![i]);

/** An asset whole, as compared for a change (bytes as numbers). */
const assetText = (whole: StoredAsset) =>
  JSON.stringify({
    ...whole,
    formats: whole.formats.map((f) => (f.bytes ? { ...f, bytes: Array.from(f.bytes) } : f)),
    tags: whole.tags.map(({ assets: _assets, ...tag }) => tag),
    websites: whole.websites.map(({ assets: _assets, ...site }) => site),
  });

export function mirrorStore(db: IDBPDatabase<PiecesDB>): Pick<Storage, 'outboxEntries' | 'idPairs' | 'applyMirror'> {
  return {
    outboxEntries: (after) => db.getAll('outbox', after === undefined ? undefined : IDBKeyRange.lowerBound(after, true)),
    idPairs: () => db.getAll('idmap'),
    async applyMirror(batch) {
      const tx = db.transaction([...STORES], 'readwrite');
      try {
        const changes = await write(tx, batch);
        await tx.done;
        return changes;
      } catch (error) {
        try {
          tx.abort();
        } catch {
          // Already finished: it aborted on its own.
        }
        await tx.done.catch(() => {});
        throw error;
      }
    },
  };
}


async function write(tx: Tx, batch: MirrorBatch): Promise<Change[]> {
  const conversations = tx.objectStore('conversations');
  const messages = tx.objectStore('messages');
  const assets = tx.objectStore('assets');
  const formats = tx.objectStore('formats');
  const annotations = tx.objectStore('annotations');
  const tags = tx.objectStore('tags');
  const websites = tx.objectStore('websites');
  const activities = tx.objectStore('activities');
  const anchors = tx.objectStore('anchors');
  const logged: Logged[] = [];
  /** Conversations to write once the log gives the new ones their snapshot order (the sequence number of their change). */
  const pending = new Map<string, Omit<ConversationRecord, 'seq'> & { seq?: number }>();

  async function dropConversation(id: string) {
    const owned = await messages.index('by-conversation').getAllKeys(id);
    for (const key of owned) {
      await messages.delete(key);
      logged.push({ collection: 'conversationMessage', id: key, deleted: true });
    }
    await conversations.delete(id);
    pending.delete(id);
    logged.push({ collection: 'conversation', id, deleted: true });
  }

  /** The stored conversation (as this batch left it so far). */
  const conversationOf = async (id: string) => pending.get(id) ?? (await conversations.get(id));

  async function dropMessage(id: string) {
    const message = await messages.get(id);
    if (!message) return;
    await messages.delete(id);
    logged.push({ collection: 'conversationMessage', id, deleted: true });
    const owner = await conversationOf(message.conversation);
    if (owner) {
      pending.set(owner.id, { ...owner, messageIds: owner.messageIds.filter((m) => m !== id) });
      logged.push({ collection: 'conversation', id: owner.id });
    }
  }

  /** The tags (websites) an asset is on, and a write of one (the two stores are alike). */
  const listing = (name: 'tags' | 'websites', asset: string) => tx.objectStore(name as 'tags').index('by-asset').getAll(asset) as Promise<Array<TagRecord | WebsiteRecord>>;
  const putListing = (name: 'tags' | 'websites', item: TagRecord | WebsiteRecord) => tx.objectStore(name as 'tags').put(item as TagRecord);

  /** Takes `asset` off the tags (websites) that list it, but those in `keep`. */
  async function offTags(name: 'tags' | 'websites', asset: string, keep: ReadonlySet<string> = new Set()) {
    for (const item of await listing(name, asset)) {
      if (keep.has(item.id)) continue;
      await putListing(name, { ...item, assets: item.assets.filter((id) => id !== asset) });
    }
  }

  /** An asset and what hangs on it (its formats, annotations, its place on tags and websites); its activities stay. */
  async function dropAsset(id: string) {
    if (!(await assets.get(id))) return;
    await assets.delete(id);
    for (const key of await formats.index('by-asset').getAllKeys(id)) await formats.delete(key);
    for (const key of await annotations.index('by-asset').getAllKeys(id)) await annotations.delete(key);
    await offTags('tags', id);
    await offTags('websites', id);
    logged.push({ collection: 'asset', id, deleted: true });
  }

  /** The stored asset whole, as assetText compares it. */
  async function storedAsset(id: string): Promise<StoredAsset | undefined> {
    const record = await assets.get(id);
    if (!record) return undefined;
    const byId = new Map((await formats.index('by-asset').getAll(id)).map((f) => [f.id, f]));
    const byCreated = <T extends { id: string }>(items: T[]) => items.sort((a, b) => (a.id < b.id ? -1 : 1));
    return {
      record,
      formats: record.formats.map((f) => byId.get(f)).filter((f): f is FormatRecord => !!f),
      annotations: byCreated(await annotations.index('by-asset').getAll(id)),
      tags: byCreated(await tags.index('by-asset').getAll(id)),
      websites: byCreated(await websites.index('by-asset').getAll(id)),
    };
  }

  /** Writes an asset whole, as the upstream has it (ids as given); a change only when it differs. */
  async function putAsset(whole: StoredAsset) {
    const { id } = whole.record;
    const current = await storedAsset(id);
    const sorted = (w: StoredAsset) => ({ ...w, annotations: [...w.annotations].sort((a, b) => (a.id < b.id ? -1 : 1)), tags: [...w.tags].sort((a, b) => (a.id < b.id ? -1 : 1)), websites: [...w.websites].sort((a, b) => (a.id < b.id ? -1 : 1)) });
    if (current && assetText(sorted(current)) === assetText(sorted(whole))) return;
    const formatIds = new Set(whole.formats.map((f) => f.id));
    const annotationIds = new Set(whole.annotations.map((a) => a.id));
    for (const key of await formats.index('by-asset').getAllKeys(id)) if (!formatIds.has(key)) await formats.delete(key);
    for (const key of await annotations.index('by-asset').getAllKeys(id)) if (!annotationIds.has(key)) await annotations.delete(key);
    await offTags('tags', id, new Set(whole.tags.map((t) => t.id)));
    await offTags('websites', id, new Set(whole.websites.map((w) => w.id)));
    await assets.put(whole.record);
    for (const format of whole.formats) await formats.put(format);
    for (const annotation of whole.annotations) await annotations.put(annotation);
    // Each asset's own put decides its place on a tag (website): the others' places stay.
    for (const tag of whole.tags) {
      const stored = await tags.get(tag.id);
      await tags.put({ ...tag, assets: [...new Set([...(stored?.assets ?? []), ...tag.assets])] });
    }
    for (const site of whole.websites) {
      const stored = await websites.get(site.id);
      await websites.put({ ...site, assets: [...new Set([...(stored?.assets ?? []), ...site.assets])] });
    }
    logged.push({ collection: 'asset', id });
  }

  /** Puts a record of a plain store when it differs from the stored one, logging its change. */
  async function putPlain<T extends { id: string }>(store: 'applications' | 'activities' | 'anchors', collection: 'application' | 'activity' | 'anchor', record: T) {
    const stored = await tx.objectStore(store).get(record.id);
    if (stored && JSON.stringify(stored) === JSON.stringify(record)) return;
    await tx.objectStore(store).put(record as never);
    logged.push({ collection, id: record.id });
  }

  if (batch.clearIdMap) await tx.objectStore('idmap').clear();

  const pairs = batch.rekey ?? [];
  const upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
  const byKind = (kind: IdPair['kind']) => pairs.filter((pair) => pair.kind === kind);
  const swap = (id: string) => upstreamOf.get(id) ?? id;

  for (const { local, upstream } of byKind('application')) {
    const store = tx.objectStore('applications');
    const application = await store.get(local);
    if (!application) continue;
    if (!(await store.get(upstream))) {
      await store.put({ ...application, id: upstream });
      logged.push({ collection: 'application', id: upstream });
    }
    await store.delete(local);
    logged.push({ collection: 'application', id: local, deleted: true });
    // What names the application follows it: its events, its sessions, the connect and browser ids kept in meta.
    const events = tx.objectStore('events');
    for (const event of await events.index('by-application-at').getAll(IDBKeyRange.bound([local, ''], [local, '\uffff']))) {
      await events.put({ ...event, application: upstream });
    }
    const sessions = tx.objectStore('sessions');
    for (const session of await sessions.getAll()) if (session.application === local) await sessions.put({ ...session, application: upstream });
    const meta = tx.objectStore('meta');
    let cursor = await meta.openCursor();
    while (cursor) {
      if (cursor.value === local) await cursor.update(upstream);
      cursor = await cursor.continue();
    }
  }

  for (const { local, upstream } of byKind('session')) {
    const store = tx.objectStore('sessions');
    const session = await store.get(local);
    if (!session) continue;
    if (!(await store.get(upstream))) await store.put({ ...session, id: upstream });
    await store.delete(local);
  }

  for (const { local, upstream } of byKind('asset')) {
    const record = await assets.get(local);
    if (!record) continue;
    if (await assets.get(upstream)) {
      // The upstream's copy is already here (a stream told of it first): the local one goes.
      await dropAsset(local);
      continue;
    }
    // The asset, its formats and annotations under the upstream's ids, and everything that names it.
    await assets.delete(local);
    await assets.put({ ...record, id: upstream, formats: record.formats.map(swap), original: swap(record.original), preview: swap(record.preview) });
    // The anchors that list it list it under its new id (their own re-keying, below, keeps that).
    for (const anchorId of record.anchors ?? []) {
      const anchor = await anchors.get(anchorId);
      if (!anchor || !anchor.json.includes(local)) continue;
      await anchors.put({ ...anchor, json: renamed(anchor.json, upstreamOf) });
      logged.push({ collection: 'anchor', id: anchor.id });
    }
    for (const format of await formats.index('by-asset').getAll(local)) {
      if (swap(format.id) !== format.id) await formats.delete(format.id);
      await formats.put({ ...format, id: swap(format.id), asset: upstream });
    }
    for (const annotation of await annotations.index('by-asset').getAll(local)) {
      if (swap(annotation.id) !== annotation.id) await annotations.delete(annotation.id);
      await annotations.put({ ...annotation, id: swap(annotation.id), asset: { id: upstream } });
    }
    for (const name of ['tags', 'websites'] as const) {
      for (const item of await listing(name, local)) await putListing(name, { ...item, assets: item.assets.map((id) => (id === local ? upstream : id)) });
    }
    for (const activity of await activities.index('by-asset').getAll(local)) {
      await activities.put({ ...activity, asset: upstream, event: JSON.parse(renamed(JSON.stringify(activity.event), upstreamOf)) as ActivityRecord['event'] });
      logged.push({ collection: 'activity', id: activity.id });
    }
    logged.push({ collection: 'asset', id: local, deleted: true }, { collection: 'asset', id: upstream });
  }

  // Annotations made here on an asset (or on none) the upstream had already.
  for (const { local, upstream } of byKind('annotation')) {
    const annotation = await annotations.get(local);
    if (!annotation) continue;
    await annotations.delete(local);
    const asset = annotation.asset && swap(annotation.asset.id);
    await annotations.put({ ...annotation, id: upstream, ...(asset ? { asset: { id: asset } } : {}) } as AnnotationRecord);
    if (asset && (await assets.get(asset))) logged.push({ collection: 'asset', id: asset });
  }

  // Tags and websites made here with an asset: under the upstream's ids (merged into its record when it is here already).
  for (const name of ['tags', 'websites'] as const) {
    const store = tx.objectStore(name as 'tags');
    for (const { local, upstream } of byKind(name === 'tags' ? 'tag' : 'website')) {
      const item = await store.get(local);
      if (!item) continue;
      const known = await store.get(upstream);
      await store.delete(local);
      const assetsOn = [...new Set([...(known?.assets ?? []), ...item.assets.map(swap)])];
      await store.put({ ...item, ...known, id: upstream, assets: assetsOn });
      for (const asset of assetsOn) logged.push({ collection: 'asset', id: asset });
    }
  }

  for (const { local, upstream } of byKind('anchor')) {
    const anchor = await anchors.get(local);
    if (!anchor) continue;
    await anchors.delete(local);
    logged.push({ collection: 'anchor', id: local, deleted: true });
    if (!(await anchors.get(upstream))) {
      await anchors.put({ ...anchor, id: upstream, json: renamed(anchor.json, upstreamOf) });
      logged.push({ collection: 'anchor', id: upstream });
    }
    // The assets that list it list it under its new id (they are re-keyed already, above).
    for (const assetId of listedIds(anchor.json, 'assets')) {
      const asset = await assets.get(swap(assetId));
      if (!asset?.anchors?.includes(local)) continue;
      await assets.put({ ...asset, anchors: asset.anchors.map((id) => (id === local ? upstream : id)) });
      logged.push({ collection: 'asset', id: asset.id });
    }
    // The conversations that list it list it under its new id.
    const listed = (JSON.parse(anchor.json) as { conversations?: { iterable?: Array<{ id?: unknown }> } }).conversations?.iterable ?? [];
    for (const { id } of listed) {
      if (typeof id !== 'string') continue;
      const conversation = await conversationOf(id);
      if (!conversation) continue;
      pending.set(conversation.id, { ...conversation, json: renamed(conversation.json, upstreamOf) });
      logged.push({ collection: 'conversation', id: conversation.id });
    }
  }

  for (const { local, upstream } of byKind('conversation')) {
    const record = await conversationOf(local);
    if (!record) continue;
    if (await conversationOf(upstream)) {
      // The upstream's copy is already here (a stream told of it first): the local one goes.
      await dropConversation(local);
      continue;
    }
    const owned = await messages.index('by-conversation').getAll(local);
    for (const message of owned) {
      const id = swap(message.id);
      if (id !== message.id) {
        await messages.delete(message.id);
        logged.push({ collection: 'conversationMessage', id: message.id, deleted: true });
      }
      await messages.put({ id, conversation: upstream, json: withIds(message.json, id, upstream) });
      logged.push({ collection: 'conversationMessage', id });
    }
    // The anchors it lists list it under its new id (their own re-keying, below, keeps that).
    const listed = (JSON.parse(record.json) as { anchors?: { iterable?: Array<{ id?: unknown }> } }).anchors?.iterable ?? [];
    for (const anchorId of listed.flatMap((item) => (typeof item?.id === 'string' ? [swap(item.id)] : []))) {
      const anchor = await anchors.get(anchorId);
      if (!anchor || !anchor.json.includes(local)) continue;
      await anchors.put({ ...anchor, json: renamed(anchor.json, upstreamOf) });
      logged.push({ collection: 'anchor', id: anchor.id });
    }
    const rename = (ids: string[] | undefined) => ids?.map(swap);
    await conversations.delete(local);
    pending.delete(local);
    logged.push({ collection: 'conversation', id: local, deleted: true });
    const { seq: _seq, ...rest } = record;
    const deletedMessageIds = rename(record.deletedMessageIds);
    pending.set(upstream, {
      ...rest,
      id: upstream,
      json: withIds(record.json, upstream),
      messageIds: rename(record.messageIds)!,
      ...(deletedMessageIds ? { deletedMessageIds } : {}),
    });
    logged.push({ collection: 'conversation', id: upstream });
  }

  for (const { local, upstream } of byKind('conversationMessage')) {
    const message = await messages.get(local);
    if (!message) continue;
    const owner = await conversationOf(message.conversation);
    await messages.delete(local);
    logged.push({ collection: 'conversationMessage', id: local, deleted: true });
    const known = await messages.get(upstream);
    if (!known) {
      await messages.put({ ...message, id: upstream, json: withIds(message.json, upstream) });
      logged.push({ collection: 'conversationMessage', id: upstream });
    }
    if (owner) {
      const rename = (ids: string[] | undefined) => ids?.map((id) => (id === local ? upstream : id));
      const listed = rename(owner.messageIds)!;
      const deletedMessageIds = rename(owner.deletedMessageIds);
      pending.set(owner.id, {
        ...owner,
        messageIds: known ? listed.filter((id, i) => listed.indexOf(id) === i) : listed,
        ...(deletedMessageIds ? { deletedMessageIds } : {}),
      });
      logged.push({ collection: 'conversation', id: owner.id });
    }
  }

  for (const pair of pairs) await tx.objectStore('idmap').put(pair);

  for (const { kind, id } of batch.remove ?? []) {
    if (kind === 'conversation') {
      if (await conversationOf(id)) await dropConversation(id);
    } else if (kind === 'conversationMessage') {
      await dropMessage(id);
    } else if (kind === 'session') {
      await tx.objectStore('sessions').delete(id);
    } else if (kind === 'asset') {
      await dropAsset(id);
    } else if (kind === 'annotation') {
      const annotation = await annotations.get(id);
      if (!annotation) continue;
      await annotations.delete(id);
      if (annotation.asset && (await assets.get(annotation.asset.id))) logged.push({ collection: 'asset', id: annotation.asset.id });
    } else if (kind === 'application' || kind === 'activity' || kind === 'anchor') {
      const store = tx.objectStore(kind === 'application' ? 'applications' : kind === 'activity' ? 'activities' : 'anchors');
      if (await store.get(id)) {
        await store.delete(id);
        logged.push({ collection: kind, id, deleted: true });
      }
    }
  }

  const put = batch.put ?? {};
  for (const application of put.applications ?? []) await putPlain('applications', 'application', application);
  for (const session of put.sessions ?? []) await tx.objectStore('sessions').put(session);
  for (const asset of put.assets ?? []) await putAsset(asset);
  for (const annotation of put.annotations ?? []) {
    const stored = await annotations.get(annotation.id);
    if (stored && JSON.stringify(stored) === JSON.stringify(annotation)) continue;
    await annotations.put(annotation);
    if (annotation.asset && (await assets.get(annotation.asset.id))) logged.push({ collection: 'asset', id: annotation.asset.id });
  }
  for (const anchor of put.anchors ?? []) await putPlain('anchors', 'anchor', anchor);
  for (const activity of put.activities ?? []) await putPlain('activities', 'activity', activity);
  for (const { conversation, messages: given } of put.conversations ?? []) {
    const stored = await conversationOf(conversation.id);
    const current = stored ? await messages.index('by-conversation').getAll(conversation.id) : [];
    const byId = new Map<string, MessageRecord>(current.map((m) => [m.id, m]));
    let changed =
      !stored ||
      stored.json !== conversation.json ||
      !same(stored.messageIds, conversation.messageIds) ||
      !same(stored.deletedMessageIds, conversation.deletedMessageIds);
    const kept = new Set(given.map((m) => m.id));
    for (const message of current) {
      if (kept.has(message.id)) continue;
      await messages.delete(message.id);
      logged.push({ collection: 'conversationMessage', id: message.id, deleted: true });
      changed = true;
    }
    for (const message of given) {
      if (byId.get(message.id)?.json === message.json) continue;
      await messages.put(message);
      logged.push({ collection: 'conversationMessage', id: message.id });
      changed = true;
    }
    if (!changed) continue;
    pending.set(conversation.id, { ...conversation, ...(stored?.seq === undefined ? {} : { seq: stored.seq }) });
    logged.push({ collection: 'conversation', id: conversation.id });
  }

  for (const message of put.messages ?? []) {
    const owner = await conversationOf(message.conversation);
    if (!owner) continue;
    if ((await messages.get(message.id))?.json !== message.json) {
      await messages.put(message);
      logged.push({ collection: 'conversationMessage', id: message.id });
    }
    if (!owner.messageIds.includes(message.id)) {
      pending.set(owner.id, { ...owner, messageIds: [...owner.messageIds, message.id] });
    }
    logged.push({ collection: 'conversation', id: owner.id });
  }

  if (batch.replace) {
    const keep = new Set(batch.replace.keep);
    // Records made here and queued for the upstream (not yet re-keyed to its ids) stay.
    const mapped = new Set(await tx.objectStore('idmap').getAllKeys());
    for (const entry of await tx.objectStore('outbox').getAll()) for (const { id } of entry.created) if (!mapped.has(id)) keep.add(id);
    for (const kind of batch.replace.kinds) {
      if (kind === 'conversation') {
        for (const { conversation } of put.conversations ?? []) keep.add(conversation.id);
        for (const id of await conversations.getAllKeys()) if (!keep.has(id)) await dropConversation(id);
        for (const id of [...pending.keys()]) if (!keep.has(id)) await dropConversation(id);
      } else if (kind === 'asset') {
        for (const { record } of put.assets ?? []) keep.add(record.id);
        for (const id of await assets.getAllKeys()) if (!keep.has(id)) await dropAsset(id);
        // Tags and websites come with assets: one no asset lists any more (and not made here) goes.
        for (const name of ['tags', 'websites'] as const) {
          const store = tx.objectStore(name as 'tags');
          for (const item of await store.getAll()) if (!item.assets.length && !keep.has(item.id)) await store.delete(item.id);
        }
      } else {
        const given: Array<{ id: string }> = (kind === 'application' ? put.applications : kind === 'activity' ? put.activities : put.anchors) ?? [];
        for (const record of given) keep.add(record.id);
        const store = tx.objectStore(kind === 'application' ? 'applications' : kind === 'activity' ? 'activities' : 'anchors');
        for (const id of await store.getAllKeys()) {
          if (keep.has(id)) continue;
          await store.delete(id);
          logged.push({ collection: kind, id, deleted: true });
        }
      }
    }
  }

  const outbox = tx.objectStore('outbox');
  for (const seq of batch.outbox?.remove ?? []) await outbox.delete(seq);
  for (const entry of batch.outbox?.put ?? []) await outbox.put(entry);

  const meta = tx.objectStore('meta');
  for (const [key, value] of Object.entries(batch.meta ?? {})) {
    if (value === undefined) await meta.delete(key);
    else await meta.put(value, key);
  }

  const changes: Change[] = [];
  await log(tx.objectStore('changes'), logged, changes);
  for (const [id, record] of pending) {
    // A conversation new here takes the sequence number of its (last) change as its snapshot order.
    let seq = record.seq;
    if (seq === undefined) for (const change of changes) if (change.collection === 'conversation' && change.id === id && !change.deleted) seq = change.seq;
    await conversations.put({ ...record, seq: seq! });
  }
  return changes;
}
