/** The IndexedDB implementation of `Storage`, on `idb`. */
import { deleteDB, openDB, unwrap, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import {
  DB_NAME,
  DB_VERSION,
  missingStores,
  upgrade,
  type AssetRecord,
  type EventKind,
  type PiecesDB,
} from './schema.js';
import type { Change, Engagement, Storage } from './storage.js';

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
  let db = await connect(name, options);
  const missing = missingStores(db);
  if (missing.length) {
    // A database of our name and version without our stores was not written by us: start it afresh.
    db.close();
    await deleteDB(name);
    db = await connect(name, options);
  }
  const storage = new IdbStorage(db);
  await storage.start(options.seedAssets ?? []);
  return storage;
}

async function connect(name: string, options: OpenStorageOptions): Promise<IDBPDatabase<PiecesDB>> {
  let lost = false;
  const lose = (reason: string) => {
    if (lost) return;
    lost = true;
    options.onLost?.(reason);
  };
  try {
    const db: IDBPDatabase<PiecesDB> = await openDB<PiecesDB>(name, DB_VERSION, {
      upgrade(database, oldVersion, _newVersion, tx) {
        upgrade(database, oldVersion, tx);
      },
      blocked(currentVersion) {
        options.onBlocked?.(
          `The database "${name}" cannot be upgraded from version ${currentVersion} to ${DB_VERSION}: another connection to it is still open (another tab of this site, or an older worker). The upgrade proceeds as soon as it closes; close or reload the other tabs.`,
        );
      },
      blocking(_currentVersion, blockedVersion) {
        // Another connection wants to delete or upgrade the database: let it, this connection is done.
        db.close();
        lose(blockedVersion === null ? 'the database is being deleted' : `another connection is upgrading the database to version ${blockedVersion}`);
      },
      terminated() {
        lose('the browser closed the database connection (site data cleared)');
      },
    });
    return db;
  } catch (error) {
    if ((error as DOMException)?.name === 'VersionError') throw new DatabaseVersionError(name, error);
    throw error;
  }
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

/** Drops changes older than the log keeps. */
function prune(changes: { delete(range: IDBKeyRange): Promise<void> }, seq: number): Promise<void> {
  return seq > CHANGE_LOG_LIMIT ? changes.delete(IDBKeyRange.upperBound(seq - CHANGE_LOG_LIMIT)) : Promise.resolve();
}

type AnyTx = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[], 'readonly' | 'readwrite'>;

class IdbStorage implements Storage {
  private id = '';

  constructor(private readonly db: IDBPDatabase<PiecesDB>) {}

  close() {
    this.db.close();
  }

  /**
   * On the first start of a database: gives it its identity and stores the
   * sample assets. Later starts read the identity.
   */
  async start(assets: AssetRecord[]) {
    const tx = this.db.transaction(['assets', 'meta'], 'readwrite');
    const meta = tx.objectStore('meta');
    const [seeded, identity] = await Promise.all([meta.get('seeded'), meta.get('identity')]);
    this.id = typeof identity === 'string' ? identity : crypto.randomUUID();
    const id = this.id;
    await commit(tx, function* () {
      if (identity !== id) yield meta.put(id, 'identity');
      if (seeded || !assets.length) return;
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
    await this.db.put('applications', application);
  }

  async recordEvent(event: PiecesDB['events']['value'], upsert: PiecesDB['applications']['value'][] = []) {
    const tx = this.db.transaction(['events', 'applications'], 'readwrite');
    await commit(tx, function* () {
      for (const application of upsert) yield tx.objectStore('applications').put(application);
      yield tx.objectStore('events').add(event);
    });
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

  async createConversation(
    conversation: Omit<PiecesDB['conversations']['value'], 'seq'>,
    messages: PiecesDB['messages']['value'][],
  ): Promise<Change> {
    const tx = this.db.transaction(['conversations', 'messages', 'changes'], 'readwrite');
    const changes = tx.objectStore('changes');
    // Messages go through the plain store: a failed add aborts the transaction (and `tx.done`)
    // by itself, without a promise per message.
    const store = unwrap(tx.objectStore('messages'));
    let seq = 0;
    await commit(tx, function* () {
      yield changes.add({ conversation: conversation.id }).then((key) => {
        seq = key;
        return Promise.all([tx.objectStore('conversations').add({ ...conversation, seq }), prune(changes, seq)]);
      });
      for (const message of messages) store.add(message);
    });
    return { seq, conversation: conversation.id };
  }

  async deleteConversation(id: string): Promise<Change | undefined> {
    const tx = this.db.transaction(['conversations', 'messages', 'changes'], 'readwrite');
    const conversation = await tx.objectStore('conversations').get(id);
    if (!conversation) {
      await tx.done;
      return undefined;
    }
    const messages = tx.objectStore('messages');
    const changes = tx.objectStore('changes');
    let seq = 0;
    await commit(tx, function* () {
      yield messages.index('by-conversation').getAllKeys(id).then((owned) => Promise.all(owned.map((key) => messages.delete(key))));
      yield changes.add({ conversation: id, deleted: true }).then((key) => prune(changes, (seq = key)));
      yield tx.objectStore('conversations').delete(id);
    });
    return { seq, conversation: id, deleted: true };
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

  async listConversationIds() {
    const tx = this.db.transaction(['conversations', 'changes']);
    const [ids, last] = await Promise.all([
      tx.objectStore('conversations').index('by-seq').getAllKeys(),
      tx.objectStore('changes').openCursor(null, 'prev'),
    ]);
    await tx.done;
    return { ids, seq: last?.key ?? 0 };
  }

  async changesSince(seq: number) {
    const tx = this.db.transaction('changes');
    const [changes, first] = await Promise.all([
      tx.store.getAll(IDBKeyRange.lowerBound(seq, true)),
      tx.store.openCursor(),
    ]);
    await tx.done;
    // Complete if nothing after `seq` was pruned: the oldest kept change is at most seq + 1.
    const complete = !first || first.key <= seq + 1;
    return { changes: changes as Change[], complete };
  }

  async getAsset(id: string) {
    return this.db.get('assets', id);
  }

  async listAssetIds() {
    return this.db.getAllKeysFromIndex('assets', 'by-name');
  }

  async putAssets(assets: AssetRecord[]) {
    const tx = this.db.transaction('assets', 'readwrite');
    await commit(tx, function* () {
      for (const asset of assets) yield tx.store.put(asset);
    });
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

  async getMeta<T>(key: string) {
    return (await this.db.get('meta', key)) as T | undefined;
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
