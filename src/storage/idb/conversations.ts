/**
 * Conversations and their messages: creates (written together when they
 * arrive together: group commit), deletes, edits in one transaction, reads,
 * and the ids and change log the identifier streams read.
 */
import { unwrap, type IDBPDatabase } from 'idb';
import type { ActivityRecord, AnchorRecord, MessageRecord, PiecesDB } from '../schema.js';
import type { Change, OutboxScope, Storage } from '../storage.js';
import { relinked } from '../anchor-links.js';
import { LINK_STORES, unlisting } from './links.js';
import { commit, log, queueing, readChanges, type Queueable, type Queued, abortOnThrow } from './transactions.js';

type NewConversation = Omit<PiecesDB['conversations']['value'], 'seq'>;

interface Create {
  conversation: NewConversation;
  messages: MessageRecord[];
  anchors?: AnchorRecord[];
  /** The activity that records the creation, written in the same transaction. */
  activity?: ActivityRecord;
  /** The operation it queues (see Storage.queueing). */
  outbox?: Queued;
}

interface CreateJob extends Create {
  resolve(changes: Change[]): void;
  reject(error: unknown): void;
}

/** Most creates written in one group transaction. */
const GROUP_LIMIT = 64;

/** The store of each collection with a hand-written store (the rest are materials: see materials.ts). */
export const STORE_OF: Readonly<
  Record<string, 'messages' | 'assets' | 'applications' | 'activities' | 'anchors' | 'models' | 'formats' | 'annotations'>
> = {
  conversationMessage: 'messages',
  format: 'formats',
  annotation: 'annotations',
  asset: 'assets',
  application: 'applications',
  activity: 'activities',
  anchor: 'anchors',
  model: 'models',
};

/**
 * The change-log key the next create of this connection expects to get: the key after the last
 * one its creates committed (undefined until one did, and after a guess failed). A conversation's
 * snapshot order is the key of its creation's change: knowing it, the whole create is issued in
 * one round of requests instead of waiting for the log's keys first. A guess is wrong only when
 * another writer logged changes since (another connection, or another write of this one): the
 * key is taken then, the add fails and the transaction aborts whole, having changed nothing.
 */
interface NextKey {
  seq: number | undefined;
}

/**
 * Writes conversations with their messages (and anchors, and creation activities) in one
 * transaction; the changes of each, in order. With `next.seq` known, in one round of requests.
 */
async function createTogether(db: IDBPDatabase<PiecesDB>, group: Create[], next: NextKey = { seq: undefined }): Promise<Change[][]> {
  const withAnchors = group.some(({ anchors }) => anchors?.length);
  const withActivities = group.some(({ activity }) => activity);
  const withOutbox = group.some(({ outbox }) => outbox);
  const tx = db.transaction(
    [
      'conversations',
      'messages',
      'changes',
      ...(withAnchors ? (['anchors'] as const) : []),
      ...(withActivities ? (['activities'] as const) : []),
      ...(withOutbox ? (['outbox'] as const) : []),
    ],
    'readwrite',
  );
  // Records go through the plain stores: a failed add aborts the transaction (and `tx.done`)
  // by itself, without a promise per record.
  const conversations = unwrap(tx.objectStore('conversations'));
  const messages = unwrap(tx.objectStore('messages'));
  const changes: Change[][] = [];
  const logged: Change[] = [];
  const first = next.seq;
  next.seq = undefined;
  // Each create's changes, the conversation's first, in one run of the log for the group.
  const items = group.flatMap(({ conversation, messages, anchors = [], activity }) => [
    { collection: 'conversation' as const, id: conversation.id },
    ...messages.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
    ...anchors.map(({ id }) => ({ collection: 'anchor' as const, id })),
    ...(activity ? [{ collection: 'activity' as const, id: activity.id }] : []),
  ]);
  const addConversations = (firstSeq: number) => {
    let at = firstSeq;
    for (const { conversation, messages, anchors = [], activity } of group) {
      // The conversation's snapshot order is the sequence number of its creation.
      conversations.add({ ...conversation, seq: at });
      at += 1 + messages.length + anchors.length + (activity ? 1 : 0);
    }
  };
  await commit(tx, function* () {
    if (first === undefined) yield log(tx.objectStore('changes'), items, logged).then(() => addConversations(logged[0]!.seq));
    else {
      yield log(tx.objectStore('changes'), items, logged, first);
      addConversations(first);
    }
    for (const { messages: owned } of group) for (const message of owned) messages.add(message);
    if (withAnchors) for (const { anchors = [] } of group) for (const anchor of anchors) unwrap(tx.objectStore('anchors')).put(anchor);
    if (withActivities) for (const { activity } of group) if (activity) unwrap(tx.objectStore('activities')).put(activity);
    // Queued in the order the creates are written (the order of their changes).
    if (withOutbox) {
      for (const { outbox, conversation, messages: made } of group) {
        if (outbox)
          yield outbox.append(tx.objectStore('outbox'), [
            { kind: 'conversation', id: conversation.id },
            ...made.map(({ id }) => ({ kind: 'conversationMessage' as const, id })),
          ]);
      }
    }
  });
  next.seq = logged.at(-1)!.seq + 1;
  let at = 0;
  for (const { messages, anchors = [], activity } of group)
    changes.push(logged.slice(at, (at += 1 + messages.length + anchors.length + (activity ? 1 : 0))));
  return changes;
}

/**
 * Group commit: creates that arrive while one is being written wait and are
 * then written together, in one transaction; each is still acknowledged only
 * after that commit. A group that fails committed nothing: its members are
 * then written one by one, so that one bad create fails alone.
 */
function groupCommit(db: IDBPDatabase<PiecesDB>, next: NextKey): (create: Create) => Promise<Change[]> {
  const waiting: CreateJob[] = [];
  let writing = false;
  async function writeWaiting() {
    writing = true;
    try {
      while (waiting.length) {
        const group = waiting.splice(0, GROUP_LIMIT);
        try {
          const guessed = next.seq;
          const changes = await createTogether(db, group, next).catch(async (error: unknown) => {
            // The guessed key was taken by another writer: once more, with the log's keys.
            // (The failed add's ConstraintError, or the AbortError of the requests after it.)
            const name = (error as { name?: string })?.name;
            if (
              guessed !== undefined &&
              (name === 'ConstraintError' || name === 'AbortError') &&
              (await lastChange(db).catch(() => 0)) >= guessed
            ) {
              return createTogether(db, group, next);
            }
            throw error;
          });
          for (const [i, job] of group.entries()) job.resolve(changes[i]!);
        } catch (error) {
          if (group.length === 1) {
            group[0]!.reject(error);
            continue;
          }
          // Nothing of the group was written: each member on its own, failing alone.
          await Promise.all(group.map((job) => createTogether(db, [job]).then(([changes]) => job.resolve(changes!), job.reject)));
        }
      }
    } finally {
      writing = false;
    }
  }
  return (create) =>
    new Promise<Change[]>((resolve, reject) => {
      waiting.push({ ...create, resolve, reject });
      if (!writing) void writeWaiting();
    });
}

/** The key of the last change logged (0 when there is none). */
async function lastChange(db: IDBPDatabase<PiecesDB>): Promise<number> {
  const cursor = await db.transaction('changes').store.openCursor(null, 'prev');
  return cursor?.key ?? 0;
}

async function messagesOf(store: { get(id: string): Promise<MessageRecord | undefined> }, ids: string[]) {
  const found = await Promise.all(ids.map((id) => store.get(id)));
  return found.filter((m): m is MessageRecord => !!m);
}

type ConversationMethods =
  | 'createConversation'
  | 'deleteConversation'
  | 'editConversation'
  | 'getConversation'
  | 'getMessage'
  | 'listConversations'
  | 'changesSince';

export interface ConversationStoreOptions {
  /** Write concurrent creates together, in one transaction; default true. */
  groupCommit?: boolean;
}

type ConversationWrites = 'createConversation' | 'deleteConversation' | 'editConversation';

export function conversationStore(
  db: IDBPDatabase<PiecesDB>,
  options: ConversationStoreOptions = {},
): Queueable<ConversationMethods, ConversationWrites> {
  const next: NextKey = { seq: undefined };
  const create =
    options.groupCommit === false ? (job: Create) => createTogether(db, [job]).then(([changes]) => changes!) : groupCommit(db, next);
  /** The writes; with a scope, the first that writes something queues its operation (creates written together queue in their order). */
  const writes = (scope?: OutboxScope): Pick<Storage, ConversationWrites> => ({
    createConversation: (conversation, messages, anchors, activity) =>
      queueing(scope, (outbox) =>
        create({
          conversation,
          messages,
          ...(anchors?.length ? { anchors } : {}),
          ...(activity ? { activity } : {}),
          ...(outbox ? { outbox } : {}),
        }),
      ),

    deleteConversation: (id) =>
      queueing(scope, async (outbox) => {
        // Every store a record listing it or its messages may be in (src/storage/idb/links.ts).
        const tx = db.transaction([...LINK_STORES], 'readwrite');
        const conversation = await tx.objectStore('conversations').get(id);
        if (!conversation) {
          await tx.done;
          return undefined;
        }
        // Its anchors stay, no longer listing it.
        const anchors = await Promise.all(anchorIdsOf(conversation.json).map((anchor) => tx.objectStore('anchors').get(anchor)));
        const unlinked = anchors.flatMap((anchor) => (anchor ? [withoutConversation(anchor, id)] : []));
        const messages = tx.objectStore('messages');
        // Nor does any other record that lists it or its messages.
        const ownedIds = await messages.index('by-conversation').getAllKeys(id);
        const others = await unlisting(
          tx as never,
          [{ kind: 'conversation', id }, ...ownedIds.map((key) => ({ kind: 'conversationMessage' as const, id: key }))],
          undefined,
          unlinked.map((anchor) => ({ kind: 'anchor' as const, id: anchor.id })),
        );
        const changes: Change[] = [];
        await commit(tx, function* () {
          for (const anchor of unlinked) yield tx.objectStore('anchors').put(anchor);
          yield* others.writes();
          yield messages
            .index('by-conversation')
            .getAllKeys(id)
            .then((owned) =>
              Promise.all([
                ...owned.map((key) => messages.delete(key)),
                log(
                  tx.objectStore('changes'),
                  [
                    { collection: 'conversation', id, deleted: true },
                    ...owned.map((key) => ({ collection: 'conversationMessage' as const, id: key, deleted: true as const })),
                    ...unlinked.map((anchor) => ({ collection: 'anchor' as const, id: anchor.id })),
                    ...others.logged.filter(
                      (change) => !(change.collection === 'anchor' && unlinked.some((anchor) => anchor.id === change.id)),
                    ),
                  ],
                  changes,
                ),
              ]),
            );
          yield tx.objectStore('conversations').delete(id);
          if (outbox) yield outbox.append(tx.objectStore('outbox'));
        });
        return changes;
      }),

    editConversation: (target, edit) =>
      queueing(scope, async (outbox) => {
        // Every store: a message deleted is unlisted from every record that lists it (src/storage/idb/links.ts).
        const tx = db.transaction([...LINK_STORES], 'readwrite');
        const messages = tx.objectStore('messages');
        const conversationId = 'conversation' in target ? target.conversation : (await messages.get(target.message))?.conversation;
        const record = conversationId === undefined ? undefined : await tx.objectStore('conversations').get(conversationId);
        if (!record) {
          await tx.done;
          return undefined;
        }
        const current = { record, messages: await messagesOf(messages, record.messageIds) };
        const result: ReturnType<typeof edit> = await abortOnThrow(tx, () => edit(current));
        const next = { ...result.record, seq: record.seq };
        const put = result.putMessages ?? [];
        const removed = result.deleteMessages ?? [];
        const others = removed.length
          ? await unlisting(
              tx as never,
              removed.map((key) => ({ kind: 'conversationMessage' as const, id: key })),
              undefined,
              [
                { kind: 'conversation', id: record.id },
                ...put.map((message) => ({ kind: 'conversationMessage' as const, id: message.id })),
              ],
            )
          : undefined;
        const changes: Change[] = [];
        await commit(tx, function* () {
          if (others) yield* others.writes();
          yield tx.objectStore('conversations').put(next);
          for (const message of put) yield messages.put(message);
          for (const id of removed) yield messages.delete(id);
          yield log(
            tx.objectStore('changes'),
            [
              ...put.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
              ...removed.map((id) => ({ collection: 'conversationMessage' as const, id, deleted: true as const })),
              { collection: 'conversation', id: record.id },
              ...(others?.logged ?? []),
            ],
            changes,
          );
          if (outbox) {
            const known = new Set(current.messages.map((m) => m.id));
            yield outbox.append(
              tx.objectStore('outbox'),
              put.filter((m) => !known.has(m.id)).map(({ id }) => ({ kind: 'conversationMessage' as const, id })),
            );
          }
        });
        const byId = new Map([...current.messages, ...put].map((m) => [m.id, m]));
        const state = { record: next, messages: next.messageIds.map((id) => byId.get(id)!).filter(Boolean) };
        return { state, changes };
      }),
  });
  return {
    ...writes(),
    queueing: writes,
    async getConversation(id) {
      const tx = db.transaction(['conversations', 'messages']);
      const record = await tx.objectStore('conversations').get(id);
      const messages = record && (await messagesOf(tx.objectStore('messages'), record.messageIds));
      await tx.done;
      return record && { record, messages: messages! };
    },

    async getMessage(id) {
      return db.get('messages', id);
    },

    async listConversations({ messages }) {
      const tx = db.transaction(messages ? ['conversations', 'messages'] : ['conversations']);
      const [conversations, all] = await Promise.all([
        tx.objectStore('conversations').index('by-seq').getAll(),
        messages ? tx.objectStore('messages').getAll() : undefined,
      ]);
      await tx.done;
      return { conversations, messages: all && new Map(all.map((m) => [m.id, m])) };
    },

    async changesSince(seq, collection) {
      const tx = db.transaction('changes');
      const read = await readChanges(tx.store as never, seq);
      await tx.done;
      return { ...read, changes: collection ? read.changes.filter((c) => c.collection === collection) : read.changes };
    },
  };
}

/** The ids of a collection other than conversations (whose ids come with the snapshots, see snapshots.ts), and the last change. */
export async function listIdsOf(
  db: IDBPDatabase<PiecesDB>,
  name: 'messages' | 'assets' | 'applications' | 'activities' | 'anchors' | 'models' | 'formats' | 'annotations',
): Promise<{ ids: string[]; seq: number }> {
  const tx = db.transaction([name, 'changes']);
  const keys = () => {
    if (name === 'assets') return tx.objectStore('assets').index('by-name').getAllKeys();
    if (name === 'activities') return tx.objectStore('activities').index('by-created').getAllKeys();
    if (name === 'anchors') return tx.objectStore('anchors').index('by-created').getAllKeys();
    return tx.objectStore(name).getAllKeys();
  };
  const [ids, last] = await Promise.all([keys(), tx.objectStore('changes').openCursor(null, 'prev')]);
  await tx.done;
  return { ids, seq: last?.key ?? 0 };
}

/** The ids of the anchors a conversation's JSON lists. */
export function anchorIdsOf(json: string): string[] {
  if (!json.includes('"anchors"')) return [];
  const { anchors } = JSON.parse(json) as { anchors?: { iterable?: Array<{ id?: unknown }> } };
  return (anchors?.iterable ?? []).flatMap((item) => (typeof item.id === 'string' ? [item.id] : []));
}

/** An anchor record that no longer lists the conversation `id`. */
function withoutConversation(anchor: AnchorRecord, id: string): AnchorRecord {
  return { ...anchor, json: relinked(anchor.json, 'conversations', id, false) };
}
