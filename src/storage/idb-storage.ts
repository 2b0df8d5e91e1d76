/** The IndexedDB implementation of `Storage`, on `idb`. */
import { unwrap, wrap, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import { randomUUID } from '../core/uuid.js';
import {
  DB_NAME,
  DB_VERSION,
  missingStores,
  upgrade,
  type AssetRecord,
  type Collection,
  type EventKind,
  type PiecesDB,
} from './schema.js';
import { cutSegments, planSnapshot, SEGMENT_END, snapshotBody, type NewSegment, type SnapshotPart } from './snapshots.js';
import type { Change, ConversationEdit, ConversationState, ConversationTarget, Engagement, Storage, StoredData } from './storage.js';

/** How many changes the log keeps for stream catch-up. */
export const CHANGE_LOG_LIMIT = 10_000;

const KINDS: Array<[EventKind, keyof Omit<Engagement, 'lastActivity'>]> = [
  ['interaction', 'interactions'],
  ['keyboard', 'keyboard'],
  ['installation', 'installations'],
  ['update', 'updates'],
];

export interface OpenStorageOptions {
  /** Database name; default `pieces-os-worker`. */
  name?: string;
  /** Assets stored on first start (the database's first open). */
  seedAssets?: AssetRecord[];
  /** The IndexedDB to open it in; default the global `indexedDB`. */
  factory?: IDBFactory;
  /** Write concurrent creates together, in one transaction (see createConversation); default true. */
  groupCommit?: boolean;
  /**
   * Called once when the connection goes away: the browser closed it (site
   * data cleared) or another connection asked it to close (a deletion, or a
   * newer version's upgrade). The storage is unusable from then on.
   */
  onLost?: (reason: string) => void;
  /** Called when the open waits for other connections to an older version to close. */
  onBlocked?: (message: string) => void;
}

export class DatabaseVersionError extends Error {
  constructor(name: string, cause: unknown) {
    super(
      `The database "${name}" was written by a newer version of pieces-os-worker (this one reads version ${DB_VERSION}); it was left untouched. Update the service worker.`,
    );
    this.name = 'DatabaseVersionError';
    this.cause = cause;
  }
}

export async function openStorage(options: OpenStorageOptions = {}): Promise<Storage> {
  const name = options.name ?? DB_NAME;
  const factory = options.factory ?? indexedDB;
  let db = await connect(factory, name, options);
  const missing = missingStores(db);
  if (missing.length) {
    // A database of our name and version without our stores was not written by us: start it afresh.
    db.close();
    await wrap(factory.deleteDatabase(name));
    db = await connect(factory, name, options);
  }
  const storage = new IdbStorage(db, options.groupCommit !== false);
  await storage.start(options.seedAssets ?? []);
  return storage;
}

async function connect(factory: IDBFactory, name: string, options: OpenStorageOptions): Promise<IDBPDatabase<PiecesDB>> {
  let lost = false;
  const lose = (reason: string) => {
    if (lost) return;
    lost = true;
    options.onLost?.(reason);
  };
  try {
    return await open(factory, name, {
      blocked(currentVersion) {
        options.onBlocked?.(
          `The database "${name}" cannot be upgraded from version ${currentVersion} to ${DB_VERSION}: another connection to it is still open (another tab of this site, or an older worker). The upgrade proceeds as soon as it closes; close or reload the other tabs.`,
        );
      },
      blocking(blockedVersion) {
        lose(blockedVersion === null ? 'the database is being deleted' : `another connection is upgrading the database to version ${blockedVersion}`);
      },
      terminated() {
        lose('the browser closed the database connection (site data cleared)');
      },
    });
  } catch (error) {
    if ((error as DOMException)?.name === 'VersionError') throw new DatabaseVersionError(name, error);
    throw error;
  }
}

/** Opens (creating or upgrading) the database in `factory`, and reports what happens to the connection. */
function open(
  factory: IDBFactory,
  name: string,
  events: { blocked(currentVersion: number): void; blocking(blockedVersion: number | null): void; terminated(): void },
): Promise<IDBPDatabase<PiecesDB>> {
  const request = factory.open(name, DB_VERSION);
  request.addEventListener('upgradeneeded', (event) => {
    const database = wrap(request.result) as unknown as IDBPDatabase<PiecesDB>;
    const tx = wrap(request.transaction!) as unknown as Parameters<typeof upgrade>[2];
    upgrade(database, event.oldVersion, tx);
  });
  request.addEventListener('blocked', (event) => events.blocked(event.oldVersion));
  return (wrap(request) as unknown as Promise<IDBPDatabase<PiecesDB>>).then((db) => {
    // Another connection wants to delete or upgrade the database: let it, this connection is done.
    db.addEventListener('versionchange', (event) => {
      db.close();
      events.blocking(event.newVersion);
    });
    // The browser closed it (site data cleared).
    db.addEventListener('close', () => events.terminated());
    return db;
  });
}

/**
 * Issues a write transaction's requests and waits for them and the commit
 * together. Any request that fails, at once or later, aborts the whole
 * transaction, so a multi-record write never commits in part; a failure surfaces once,
 * as the transaction's error, never unhandled.
 */
async function commit(
  tx: { done: Promise<void>; abort(): void },
  issue: () => Iterable<Promise<unknown>>,
): Promise<void> {
  const requests: Array<Promise<unknown>> = [];
  try {
    for (const request of issue()) requests.push(request);
  } catch (error) {
    for (const request of [...requests, tx.done]) request.catch(() => {});
    tx.abort();
    throw error;
  }
  try {
    await Promise.all([...requests, tx.done]);
  } catch (error) {
    try {
      tx.abort();
    } catch {
      // Already finished: it aborted on its own.
    }
    throw error;
  }
}

type ChangeStore = {
  add(value: PiecesDB['changes']['value']): Promise<number>;
  delete(range: IDBKeyRange): Promise<void>;
};

/**
 * Appends changes to the log inside a write transaction (so they commit with
 * the write or not at all), then drops what is older than the log keeps.
 * Fills `into` with the numbered changes, in order.
 */
async function log(changes: ChangeStore, items: Array<Omit<Change, 'seq'>>, into: Change[]): Promise<void> {
  // Issued together (one round trip, not one per item): requests run in order, so the keys ascend in order.
  const pending: Array<Promise<number>> = [];
  try {
    for (const item of items) pending.push(changes.add({ ...item }));
  } catch (error) {
    // A request refused at once aborts the transaction: the ones issued before reject with it, handled here.
    for (const request of pending) request.catch(() => {});
    throw error;
  }
  const keys = await Promise.all(pending);
  keys.forEach((seq, i) => into.push({ ...items[i]!, seq }));
  const seq = keys.at(-1) ?? 0;
  if (seq > CHANGE_LOG_LIMIT) await changes.delete(IDBKeyRange.upperBound(seq - CHANGE_LOG_LIMIT));
}

const STORE_OF: Record<Collection, 'conversations' | 'messages' | 'assets' | 'applications'> = {
  conversation: 'conversations',
  conversationMessage: 'messages',
  asset: 'assets',
  application: 'applications',
};

type NewConversation = Omit<PiecesDB['conversations']['value'], 'seq'>;

interface CreateJob {
  conversation: NewConversation;
  messages: PiecesDB['messages']['value'][];
  resolve(changes: Change[]): void;
  reject(error: unknown): void;
}

/** Most creates written in one group transaction. */
const GROUP_LIMIT = 64;

/** Changes after `seq` in the log (oldest first), whether the log still reaches back that far, and the last change. */
async function readChanges(store: { getAll(query: IDBKeyRange): Promise<Change[]>; openCursor(query?: null, direction?: IDBCursorDirection): Promise<{ key: number } | null> }, seq: number) {
  const [changes, first, last] = await Promise.all([store.getAll(IDBKeyRange.lowerBound(seq, true)), store.openCursor(), store.openCursor(null, 'prev')]);
  // Complete if nothing after `seq` was pruned: the oldest kept change is at most seq + 1.
  return { changes, complete: !first || first.key <= seq + 1, seq: Math.max(seq, last?.key ?? 0) };
}

function blobsClone(): boolean {
  try {
    const copy = structuredClone(new Blob(['x']));
    return copy instanceof Blob && copy.size === 1;
  } catch {
    return false;
  }
}

/** Above this many conversations to encode, a snapshot reads every message at once rather than per conversation. */
const READ_ALL_MESSAGES_FROM = 1_000;

type AnyTx = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[], 'readonly' | 'readwrite'>;

class IdbStorage implements Storage {
  private id = '';

  constructor(
    private readonly db: IDBPDatabase<PiecesDB>,
    private readonly groupCommit = true,
  ) {}

  close() {
    this.db.close();
  }

  /**
   * On the first start of a database: gives it its identity and stores the
   * sample assets. Later starts read the identity.
   */
  async start(assets: AssetRecord[]) {
    // Most starts only read (a readonly transaction commits at once); the first writes, and checks again as it does.
    const read = this.db.transaction('meta');
    const [seeded, identity] = await Promise.all([read.store.get('seeded'), read.store.get('identity')]);
    if (typeof identity === 'string' && (seeded || !assets.length)) {
      this.id = identity;
      return;
    }
    const tx = this.db.transaction(['assets', 'meta'], 'readwrite');
    const meta = tx.objectStore('meta');
    const [seededNow, identityNow] = await Promise.all([meta.get('seeded'), meta.get('identity')]);
    this.id = typeof identityNow === 'string' ? identityNow : randomUUID();
    const id = this.id;
    await commit(tx, function* () {
      if (identityNow !== id) yield meta.put(id, 'identity');
      if (seededNow || !assets.length) return;
      for (const asset of assets) yield tx.objectStore('assets').put(asset);
      yield meta.put(true, 'seeded');
    });
  }

  async identity() {
    return this.id;
  }

  private async engagement(tx: AnyTx, range: { application: string } | { from: string; to: string }): Promise<Engagement> {
    const events = tx.objectStore('events');
    const result: Engagement = { interactions: 0, keyboard: 0, installations: 0, updates: 0 };
    if ('application' in range) {
      const byKind = events.index('by-application-kind');
      const counts = await Promise.all(KINDS.map(([kind]) => byKind.count([range.application, kind])));
      KINDS.forEach(([, field], i) => (result[field] = counts[i]!));
      const last = await events
        .index('by-application-at')
        .openCursor(IDBKeyRange.bound([range.application, ''], [range.application, '\uffff']), 'prev');
      if (last) result.lastActivity = { value: last.value.at };
    } else {
      const byKindAt = events.index('by-kind-at');
      const lasts = await Promise.all(
        KINDS.map(async ([kind, field]) => {
          const window = IDBKeyRange.bound([kind, range.from], [kind, range.to]);
          result[field] = await byKindAt.count(window);
          return (await byKindAt.openCursor(window, 'prev'))?.value.at;
        }),
      );
      const latest = lasts.filter((at): at is string => !!at).sort().pop();
      if (latest) result.lastActivity = { value: latest };
    }
    return result;
  }

  async listApplications() {
    const tx = this.db.transaction(['applications', 'events']);
    const applications = await tx.objectStore('applications').getAll();
    const engagements = await Promise.all(applications.map((a) => this.engagement(tx, { application: a.id })));
    await tx.done;
    return applications.map((application, i) => ({ application, engagement: engagements[i]! }));
  }

  async getApplication(id: string) {
    const tx = this.db.transaction(['applications', 'events']);
    const application = await tx.objectStore('applications').get(id);
    const engagement = application && (await this.engagement(tx, { application: id }));
    await tx.done;
    return application && { application, engagement: engagement! };
  }

  async hasApplication(id: string) {
    return (await this.db.count('applications', id)) > 0;
  }

  async putApplication(application: PiecesDB['applications']['value']) {
    const tx = this.db.transaction(['applications', 'changes'], 'readwrite');
    const changes: Change[] = [];
    await commit(tx, function* () {
      yield tx.objectStore('applications').put(application);
      yield log(tx.objectStore('changes'), [{ collection: 'application', id: application.id }], changes);
    });
    return changes;
  }

  async recordEvent(event: PiecesDB['events']['value'], upsert: PiecesDB['applications']['value'][] = []) {
    const tx = this.db.transaction(['events', 'applications', 'changes'], 'readwrite');
    const changes: Change[] = [];
    await commit(tx, function* () {
      for (const application of upsert) yield tx.objectStore('applications').put(application);
      yield tx.objectStore('events').add(event);
      const upserted = upsert.map(({ id }) => ({ collection: 'application' as const, id }));
      if (upserted.length) yield log(tx.objectStore('changes'), upserted, changes);
    });
    return changes;
  }

  async putSession(session: PiecesDB['sessions']['value']) {
    await this.db.add('sessions', session);
  }

  async getSession(id: string) {
    const tx = this.db.transaction(['sessions', 'events']);
    const session = await tx.objectStore('sessions').get(id);
    const engagement =
      session &&
      (await this.engagement(tx, { from: session.opened.value, to: session.closed?.value ?? '\uffff' }));
    await tx.done;
    return session && { session, engagement: engagement! };
  }

  async closeSession(id: string, closed: { value: string }) {
    const tx = this.db.transaction('sessions', 'readwrite');
    const session = await tx.store.get(id);
    if (session && !session.closed) {
      session.closed = closed;
      await tx.store.put(session);
    }
    await tx.done;
    return session;
  }

  /**
   * Group commit: creates that arrive while one is being written wait and are
   * then written together, in one transaction; each is still acknowledged only
   * after that commit. A group that fails committed nothing: its members are
   * then written one by one, so that one bad create fails alone.
   */
  private readonly waiting: CreateJob[] = [];
  private writing = false;

  createConversation(conversation: NewConversation, messages: PiecesDB['messages']['value'][]): Promise<Change[]> {
    if (!this.groupCommit) return this.createGroup([{ conversation, messages }]).then(([changes]) => changes!);
    return new Promise<Change[]>((resolve, reject) => {
      this.waiting.push({ conversation, messages, resolve, reject });
      if (!this.writing) void this.writeWaiting();
    });
  }

  private async writeWaiting() {
    this.writing = true;
    try {
      while (this.waiting.length) {
        const group = this.waiting.splice(0, GROUP_LIMIT);
        try {
          const changes = await this.createGroup(group);
          group.forEach((job, i) => job.resolve(changes[i]!));
        } catch (error) {
          if (group.length === 1) {
            group[0]!.reject(error);
            continue;
          }
          // Nothing of the group was written: each member on its own, failing alone.
          await Promise.all(group.map((job) => this.createGroup([job]).then(([changes]) => job.resolve(changes!), job.reject)));
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** Writes conversations with their messages in one transaction; the changes of each, in order. */
  private async createGroup(group: Array<Pick<CreateJob, 'conversation' | 'messages'>>): Promise<Change[][]> {
    const tx = this.db.transaction(['conversations', 'messages', 'changes'], 'readwrite');
    // Messages go through the plain store: a failed add aborts the transaction (and `tx.done`)
    // by itself, without a promise per message.
    const store = unwrap(tx.objectStore('messages'));
    const changes = group.map((): Change[] => []);
    await commit(tx, function* () {
      for (const [i, { conversation, messages }] of group.entries()) {
        const items = [
          { collection: 'conversation' as const, id: conversation.id },
          ...messages.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
        ];
        // The conversation's snapshot order is the sequence number of its creation.
        yield log(tx.objectStore('changes'), items, changes[i]!).then(() =>
          tx.objectStore('conversations').add({ ...conversation, seq: changes[i]![0]!.seq }),
        );
        for (const message of messages) store.add(message);
      }
    });
    return changes;
  }

  async deleteConversation(id: string): Promise<Change[] | undefined> {
    const tx = this.db.transaction(['conversations', 'messages', 'changes'], 'readwrite');
    const conversation = await tx.objectStore('conversations').get(id);
    if (!conversation) {
      await tx.done;
      return undefined;
    }
    const messages = tx.objectStore('messages');
    const changes: Change[] = [];
    await commit(tx, function* () {
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
              ],
              changes,
            ),
          ]),
        );
      yield tx.objectStore('conversations').delete(id);
    });
    return changes;
  }

  async editConversation(target: ConversationTarget, edit: (current: ConversationState) => ConversationEdit) {
    const tx = this.db.transaction(['conversations', 'messages', 'changes'], 'readwrite');
    const messages = tx.objectStore('messages');
    const conversationId =
      'conversation' in target ? target.conversation : (await messages.get(target.message))?.conversation;
    const record = conversationId === undefined ? undefined : await tx.objectStore('conversations').get(conversationId);
    if (!record) {
      await tx.done;
      return undefined;
    }
    const current = { record, messages: await this.messagesOf(messages, record.messageIds) };
    let result: ConversationEdit;
    try {
      result = edit(current);
    } catch (error) {
      tx.abort();
      await tx.done.catch(() => {});
      throw error;
    }
    const next = { ...result.record, seq: record.seq };
    const put = result.putMessages ?? [];
    const removed = result.deleteMessages ?? [];
    const changes: Change[] = [];
    await commit(tx, function* () {
      yield tx.objectStore('conversations').put(next);
      for (const message of put) yield messages.put(message);
      for (const id of removed) yield messages.delete(id);
      yield log(
        tx.objectStore('changes'),
        [
          ...put.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
          ...removed.map((id) => ({ collection: 'conversationMessage' as const, id, deleted: true as const })),
          { collection: 'conversation', id: record.id },
        ],
        changes,
      );
    });
    const byId = new Map([...current.messages, ...put].map((m) => [m.id, m]));
    const state = { record: next, messages: next.messageIds.map((id) => byId.get(id)!).filter(Boolean) };
    return { state, changes };
  }

  private async messagesOf(store: { get(id: string): Promise<PiecesDB['messages']['value'] | undefined> }, ids: string[]) {
    const found = await Promise.all(ids.map((id) => store.get(id)));
    return found.filter((m): m is PiecesDB['messages']['value'] => !!m);
  }

  async getConversation(id: string) {
    const tx = this.db.transaction(['conversations', 'messages']);
    const record = await tx.objectStore('conversations').get(id);
    const messages = record && (await this.messagesOf(tx.objectStore('messages'), record.messageIds));
    await tx.done;
    return record && { record, messages: messages! };
  }

  async getMessage(id: string) {
    return this.db.get('messages', id);
  }

  async listConversations({ messages }: { messages: boolean }) {
    const tx = this.db.transaction(messages ? ['conversations', 'messages'] : ['conversations']);
    const [conversations, all] = await Promise.all([
      tx.objectStore('conversations').index('by-seq').getAll(),
      messages ? tx.objectStore('messages').getAll() : undefined,
    ]);
    await tx.done;
    return { conversations, messages: all && new Map(all.map((m) => [m.id, m])) };
  }

  async listIds(collection: Collection) {
    if (collection === 'conversation') return this.conversationIds();
    const name = STORE_OF[collection];
    const tx = this.db.transaction([name, 'changes']);
    const [ids, last] = await Promise.all([
      name === 'assets' ? tx.objectStore('assets').index('by-name').getAllKeys() : tx.objectStore(name as 'messages' | 'applications').getAllKeys(),
      tx.objectStore('changes').openCursor(null, 'prev'),
    ]);
    await tx.done;
    return { ids, seq: last?.key ?? 0 };
  }

  async changesSince(seq: number, collection?: Collection) {
    const tx = this.db.transaction('changes');
    const read = await readChanges(tx.store as never, seq);
    await tx.done;
    return { ...read, changes: collection ? read.changes.filter((c) => c.collection === collection) : read.changes };
  }

  /**
   * Whether segment bodies are stored as Blobs (kept out of the JavaScript heap): where the
   * environment's Blob survives a structured clone (not a DOM emulation's Blob in Node), and
   * until the database refuses one (WebKit's private sessions do). Else they are stored as text.
   */
  private storesBlobs = blobsClone();

  async conversationsSnapshot(withMessages: boolean, encode: (record: PiecesDB['conversations']['value'], messages?: Map<string, PiecesDB['messages']['value']>) => string) {
    const variant = withMessages ? 1 : 0;
    // One transaction: the kept segments are checked against the log, and the stale ranges read, at one point in time.
    const tx = this.db.transaction(withMessages ? ['snapshots', 'changes', 'conversations', 'messages'] : ['snapshots', 'changes', 'conversations']);
    const { parts, reads, built } = await this.planSegments(tx as never, variant);
    const bySeq = tx.objectStore('conversations').index('by-seq');
    const records = await Promise.all(reads.map((range) => bySeq.getAll(IDBKeyRange.bound(range.start, range.end, false, true))));
    let messages: Map<string, PiecesDB['messages']['value']> | undefined;
    if (withMessages) {
      const store = tx.objectStore('messages');
      const count = records.reduce((n, list) => n + list.length, 0);
      const found =
        count >= READ_ALL_MESSAGES_FROM
          ? await store.getAll()
          : (await Promise.all(records.flat().map((record) => store.index('by-conversation').getAll(record.id)))).flat();
      messages = new Map(found.map((m) => [m.id, m]));
    }
    await tx.done;
    const encodeOne = (record: PiecesDB['conversations']['value']) => encode(record, messages);
    const bodies: Array<Blob | string> = [];
    const written: NewSegment[] = [];
    let next = 0;
    for (const part of parts) {
      if ('kept' in part) {
        bodies.push(part.kept.body);
        continue;
      }
      const range = 'stale' in part ? part.stale : part.extend;
      const segments = cutSegments(range, records[next++]!, encodeOne, built, variant, 'extend' in part ? part.extend : undefined);
      for (const segment of segments) bodies.push(new Blob(segment.parts));
      written.push(...segments);
    }
    // Kept for the next read once answered; a failure only means the next read encodes them again.
    if (written.length) void this.keepSegments(variant, parts, written).catch(() => {});
    return snapshotBody(bodies);
  }

  /**
   * Inside `tx`: the kept segments of a variant checked against the change log (see
   * planSnapshot), what each part not kept as it is must read (a stale range whole, an
   * extended segment past its `built`), and the last change (what the result is true as of).
   */
  private async planSegments(tx: IDBPTransaction<PiecesDB, Array<'snapshots' | 'changes' | 'conversations'>, 'readonly'>, variant: 0 | 1) {
    const changeStore = tx.objectStore('changes');
    const [segments, last] = await Promise.all([
      tx.objectStore('snapshots').getAll(IDBKeyRange.bound([variant, 0], [variant, SEGMENT_END])),
      changeStore.openCursor(null, 'prev'),
    ]);
    const log = segments.length
      ? await readChanges(changeStore as never, Math.min(...segments.map((s) => s.built)))
      : { changes: [], complete: true };
    const parts = planSnapshot(segments, log.changes.filter((c) => c.collection === 'conversation'), log.complete);
    const reads = parts.flatMap((part) =>
      'stale' in part ? [part.stale] : 'extend' in part ? [{ start: Math.max(part.extend.start, part.extend.built + 1), end: part.extend.end }] : [],
    );
    return { parts, reads, built: last?.key ?? 0 };
  }

  /**
   * The conversation ids in snapshot order, from the ids the kept segments of the snapshot
   * without messages list (a cold read of the index costs far more), the ranges changed since
   * read from the index.
   */
  private async conversationIds(): Promise<{ ids: string[]; seq: number }> {
    const tx = this.db.transaction(['snapshots', 'changes', 'conversations']);
    const { parts, reads, built } = await this.planSegments(tx, 0);
    const bySeq = tx.objectStore('conversations').index('by-seq');
    const keys = await Promise.all(reads.map((range) => bySeq.getAllKeys(IDBKeyRange.bound(range.start, range.end, false, true))));
    await tx.done;
    let next = 0;
    const ids = parts.flatMap((part) => ('kept' in part ? part.kept.ids : 'extend' in part ? [...part.extend.ids, ...keys[next++]!] : keys[next++]!));
    return { ids, seq: built };
  }

  /** Stores the segments a snapshot wrote in place of those of the parts it did not keep. */
  private async keepSegments(variant: 0 | 1, parts: SnapshotPart[], segments: NewSegment[]) {
    const ranges = parts.flatMap((part) => ('stale' in part ? [part.stale] : 'extend' in part ? [part.extend] : []));
    const write = async (asBlobs: boolean) => {
      const records = await Promise.all(
        segments.map(async ({ parts, size: _size, ...segment }) => ({
          ...segment,
          body: asBlobs ? new Blob(parts) : (await Promise.all(parts.map((part) => (typeof part === 'string' ? part : part.text())))).join(''),
        })),
      );
      const tx = this.db.transaction('snapshots', 'readwrite');
      await commit(tx, function* () {
        for (const range of ranges) yield tx.store.delete(IDBKeyRange.bound([variant, range.start], [variant, range.end], false, true));
        for (const record of records) yield tx.store.put(record);
      });
    };
    if (!this.storesBlobs) return write(false);
    try {
      await write(true);
    } catch {
      // Some engines refuse Blobs in some sessions (WebKit's private ones: UnknownError at commit). As text
      // it works or fails for a reason of its own; once text works, Blobs are not tried again.
      await write(false);
      this.storesBlobs = false;
    }
  }

  async getAsset(id: string) {
    return this.db.get('assets', id);
  }

  async listAssets() {
    return this.db.getAllFromIndex('assets', 'by-name');
  }

  async putAssets(assets: AssetRecord[]) {
    const tx = this.db.transaction(['assets', 'changes'], 'readwrite');
    const changes: Change[] = [];
    await commit(tx, function* () {
      for (const asset of assets) yield tx.objectStore('assets').put(asset);
      yield log(tx.objectStore('changes'), assets.map(({ id }) => ({ collection: 'asset' as const, id })), changes);
    });
    return changes;
  }

  async listExternalApplications() {
    return this.db.getAll('external');
  }

  async putExternalApplications(applications: PiecesDB['external']['value'][]) {
    const tx = this.db.transaction('external', 'readwrite');
    await commit(tx, function* () {
      for (const application of applications) yield tx.store.put(application);
    });
  }

  async dumpData(): Promise<StoredData> {
    const tx = this.db.transaction(['applications', 'sessions', 'events', 'conversations', 'messages', 'assets', 'external']);
    const [applications, sessions, events, conversations, messages, assets, external] = await Promise.all([
      tx.objectStore('applications').getAll(),
      tx.objectStore('sessions').getAll(),
      tx.objectStore('events').getAll(),
      tx.objectStore('conversations').index('by-seq').getAll(),
      tx.objectStore('messages').getAll(),
      tx.objectStore('assets').index('by-name').getAll(),
      tx.objectStore('external').getAll(),
    ]);
    await tx.done;
    const byId = new Map(messages.map((m) => [m.id, m]));
    return {
      applications,
      sessions,
      events,
      conversations: conversations.map(({ seq: _seq, ...conversation }) => ({
        conversation,
        messages: conversation.messageIds.map((id) => byId.get(id)).filter((m): m is NonNullable<typeof m> => !!m),
      })),
      assets,
      external,
    };
  }

  async loadData(data: StoredData, { replace }: { replace: boolean }): Promise<Change[]> {
    const names = ['applications', 'sessions', 'events', 'conversations', 'messages', 'assets', 'external', 'changes', 'meta', 'snapshots'] as const;
    const tx = this.db.transaction([...names], 'readwrite');
    const store = <N extends (typeof names)[number]>(name: N) => tx.objectStore(name);
    const [conversations, messageIds, assetIds, applicationIds] = await Promise.all([
      store('conversations').getAll(),
      store('messages').getAllKeys(),
      store('assets').getAllKeys(),
      store('applications').getAllKeys(),
    ]);
    const existing = new Map(conversations.map((c) => [c.id, c]));
    const incoming = {
      conversation: new Set(data.conversations.map(({ conversation }) => conversation.id)),
      conversationMessage: new Set(data.conversations.flatMap(({ messages }) => messages.map((m) => m.id))),
      asset: new Set(data.assets.map((a) => a.id)),
      application: new Set(data.applications.map((a) => a.id)),
    };
    // What goes: with `replace`, every record not given again; else the messages an updated conversation no longer has.
    const removed = (collection: Collection, ids: string[]) =>
      ids.filter((id) => !incoming[collection].has(id)).map((id) => ({ collection, id, deleted: true as const }));
    const gone = replace
      ? [
          ...removed('conversation', [...existing.keys()]),
          ...removed('conversationMessage', messageIds),
          ...removed('asset', assetIds),
          ...removed('application', applicationIds),
        ]
      : removed(
          'conversationMessage',
          data.conversations.flatMap(({ conversation }) => existing.get(conversation.id)?.messageIds ?? []),
        );
    // What is written: each conversation's change first, then its messages' (as a create logs them).
    const written: Array<Omit<Change, 'seq'>> = [
      ...data.conversations.flatMap(({ conversation, messages }) => [
        { collection: 'conversation' as const, id: conversation.id },
        ...messages.map(({ id }) => ({ collection: 'conversationMessage' as const, id })),
      ]),
      ...data.assets.map(({ id }) => ({ collection: 'asset' as const, id })),
      ...data.applications.map(({ id }) => ({ collection: 'application' as const, id })),
    ];
    const changes: Change[] = [];
    await commit(tx, function* () {
      if (replace) {
        for (const name of ['applications', 'sessions', 'events', 'conversations', 'messages', 'assets', 'external'] as const) {
          yield store(name).clear();
        }
      } else {
        for (const { id } of gone) yield store('messages').delete(id);
      }
      for (const application of data.applications) yield store('applications').put(application);
      for (const session of data.sessions) yield store('sessions').put(session);
      for (const event of data.events) yield store('events').put(event);
      for (const asset of data.assets) yield store('assets').put(asset);
      for (const application of data.external) yield store('external').put(application);
      for (const { messages } of data.conversations) for (const message of messages) yield store('messages').put(message);
      // A new conversation's snapshot order is the sequence number of its change; an updated one keeps its place.
      yield log(store('changes'), [...gone, ...written], changes).then(() =>
        Promise.all(
          data.conversations.map(({ conversation }) => {
            const kept = replace ? undefined : existing.get(conversation.id)?.seq;
            const seq = kept ?? changes.find((c) => c.collection === 'conversation' && c.id === conversation.id && !c.deleted)!.seq;
            return store('conversations').put({ ...conversation, seq });
          }),
        ),
      );
      yield store('meta').put(true, 'seeded');
      // Loading may give a conversation another snapshot order (which the segments assume never happens): start them afresh.
      yield store('snapshots').clear();
    });
    return changes;
  }

  async getMeta<T>(key: string) {
    return (await this.db.get('meta', key)) as T | undefined;
  }

  async setMeta(key: string, value: unknown) {
    if (value === undefined) await this.db.delete('meta', key);
    else await this.db.put('meta', value as never, key);
  }

  async ensureMeta<T>(key: string, create: () => T) {
    const tx = this.db.transaction('meta', 'readwrite');
    let value = (await tx.store.get(key)) as T | undefined;
    if (value === undefined) {
      value = create();
      await tx.store.put(value, key);
    }
    await tx.done;
    return value;
  }
}
