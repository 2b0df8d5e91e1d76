/**
 * What a mirrored Pieces OS writes (see MirrorBatch): records as the upstream has them,
 * records it no longer has, local records re-keyed to the ids it gave them, the outbox and
 * the id map, in one transaction, with a change logged for each record that differs, so
 * that stream sockets hear of real changes only. The outbox entries themselves are
 * appended by the writes that made them locally (transactions.ts `queue`).
 */
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { ConversationRecord, IdPair, MessageRecord, PiecesDB } from '../schema.js';
import type { Change, MirrorBatch, Storage } from '../storage.js';
import { log } from './transactions.js';

const STORES = ['applications', 'sessions', 'events', 'conversations', 'messages', 'assets', 'changes', 'outbox', 'idmap', 'meta'] as const;
type Tx = IDBPTransaction<PiecesDB, Array<(typeof STORES)[number]>, 'readwrite'>;
type Logged = Omit<Change, 'seq'>;

/** A record's JSON text with its own id (and, for a message, its conversation) replaced. */
function withIds(json: string, id: string, conversation?: string): string {
  const value = JSON.parse(json) as Record<string, unknown>;
  value.id = id;
  if (conversation !== undefined) value.conversation = { id: conversation };
  return JSON.stringify(value);
}

const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((id, i) => id === b![i]);

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

  if (batch.clearIdMap) await tx.objectStore('idmap').clear();

  const pairs = batch.rekey ?? [];
  const upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
  const byKind = (kind: IdPair['kind']) => pairs.filter((pair) => pair.kind === kind);

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
    const store = tx.objectStore('assets');
    const asset = await store.get(local);
    if (!asset) continue;
    if (!(await store.get(upstream))) {
      await store.put({ ...asset, id: upstream });
      logged.push({ collection: 'asset', id: upstream });
    }
    await store.delete(local);
    logged.push({ collection: 'asset', id: local, deleted: true });
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
      const id = upstreamOf.get(message.id) ?? message.id;
      if (id !== message.id) {
        await messages.delete(message.id);
        logged.push({ collection: 'conversationMessage', id: message.id, deleted: true });
      }
      await messages.put({ id, conversation: upstream, json: withIds(message.json, id, upstream) });
      logged.push({ collection: 'conversationMessage', id });
    }
    const rename = (ids: string[] | undefined) => ids?.map((id) => upstreamOf.get(id) ?? id);
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
    } else {
      const store = tx.objectStore(kind === 'application' ? 'applications' : 'assets');
      if (await store.get(id)) {
        await store.delete(id);
        logged.push({ collection: kind, id, deleted: true });
      }
    }
  }

  const put = batch.put ?? {};
  for (const application of put.applications ?? []) {
    const store = tx.objectStore('applications');
    const stored = await store.get(application.id);
    if (stored && JSON.stringify(stored) === JSON.stringify(application)) continue;
    await store.put(application);
    logged.push({ collection: 'application', id: application.id });
  }
  for (const session of put.sessions ?? []) await tx.objectStore('sessions').put(session);
  for (const asset of put.assets ?? []) {
    const store = tx.objectStore('assets');
    const stored = await store.get(asset.id);
    if (stored && JSON.stringify(stored) === JSON.stringify(asset)) continue;
    await store.put(asset);
    logged.push({ collection: 'asset', id: asset.id });
  }
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
      } else {
        const given = kind === 'application' ? put.applications : put.assets;
        for (const record of given ?? []) keep.add(record.id);
        const store = tx.objectStore(kind === 'application' ? 'applications' : 'assets');
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
