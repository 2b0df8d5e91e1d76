/**
 * The IndexedDB implementation of `Storage`, on `idb`: one module per group of
 * records (applications, conversations, kept snapshots, assets, the whole data),
 * composed here over one connection, with the database's identity and meta values.
 */
import { wrap, type IDBPDatabase } from 'idb';
import { randomUUID } from '../../shared/uuid.js';
import { DB_NAME, missingStores, type GenericKind, type PiecesDB } from '../schema.js';
import type { Change, Logged, Storage, StoredData } from '../storage.js';
import { abortOnThrow, commit, log } from './transactions.js';
import { applicationStore } from './applications.js';
import { anchorStore } from './anchors.js';
import { assetStore } from './assets.js';
import { connect, type ConnectionEvents } from './connection.js';
import { conversationStore } from './conversations.js';
import { listIdsOf, STORE_OF } from './conversations.js';
import { dataStore, loadData } from './data.js';
import { linkedIds, linkedStore } from './linked.js';
import { linkStore } from './links.js';
import { materialIds, materialStore } from './materials.js';
import { mirrorStore } from './mirror.js';
import { snapshotStore } from './snapshots.js';

export { DatabaseVersionError } from './connection.js';
export { CHANGE_LOG_LIMIT } from './transactions.js';

export interface OpenStorageOptions extends ConnectionEvents {
  /** Database name; default `pieces-os-worker`. */
  name?: string;
  /** Records stored on the database's first start (its first open), once; a function is called only then. */
  initialData?: Partial<StoredData> | (() => Partial<StoredData>);
  /** The IndexedDB to open it in; default the global `indexedDB`. */
  factory?: IDBFactory;
  /** Write concurrent creates together, in one transaction (see createConversation); default true. */
  groupCommit?: boolean;
  /**
   * A conversation's wire JSON (what `conversationsSnapshot` is given): with it, the kept snapshots
   * are brought up to date after each write from the start, not only once a snapshot was read (snapshots.ts).
   */
  encodeConversation?: Parameters<Storage['conversationsSnapshot']>[1];
}

const EMPTY: StoredData = {
  applications: [],
  sessions: [],
  events: [],
  conversations: [],
  assets: [],
  external: [],
  formats: [],
  annotations: [],
  tags: [],
  websites: [],
  activities: [],
  anchors: [],
  models: [],
  materials: [],
};

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
  const given = options.initialData;
  const identity = await start(db, () => ({ ...EMPTY, ...(typeof given === 'function' ? given() : given) }));
  const snapshots = snapshotStore(db, { encode: options.encodeConversation });
  const { conversationIds, ...snapshotMethods } = snapshots;
  const applications = applicationStore(db);
  const conversations = conversationStore(db, { groupCommit: options.groupCommit });
  const assets = assetStore(db);
  const anchors = anchorStore(db);
  const materials = materialStore(db);
  const linked = linkedStore(db);
  const links = linkStore(db);
  const storage: Storage = {
    ...applications,
    ...conversations,
    ...snapshotMethods,
    ...assets,
    ...anchors,
    ...materials,
    ...linked,
    ...links,
    ...dataStore(db),
    ...mirrorStore(db),
    // A collection with no hand-written store is a kind of material.
    listIds: (collection) =>
      collection === 'conversation'
        ? conversationIds()
        : Object.hasOwn(STORE_OF, collection)
          ? listIdsOf(db, STORE_OF[collection]!)
          : collection === 'tag' || collection === 'website'
            ? linkedIds(db, collection)
            : materialIds(db, collection as GenericKind),
    async countRecords() {
      const tx = db.transaction(['tags', 'websites'], 'readonly');
      const [tags, websites] = await Promise.all([tx.objectStore('tags').count(), tx.objectStore('websites').count()]);
      return { tags, websites };
    },
    identity: async () => identity,
    getSearchIndex: (name) => db.get('search', name),
    async putSearchIndex(name, index) {
      await db.put('search', index, name);
    },
    async getMeta<T>(key: string) {
      return (await db.get('meta', key)) as T | undefined;
    },
    async setMeta(key, value) {
      if (value === undefined) await db.delete('meta', key);
      else await db.put('meta', value as never, key);
    },
    async ensureMeta<T>(key: string, create: () => T) {
      const tx = db.transaction('meta', 'readwrite');
      let value = (await tx.store.get(key)) as T | undefined;
      if (value === undefined) {
        value = create();
        await tx.store.put(value, key);
      }
      await tx.done;
      return value;
    },
    async updateMeta<T>(key: string, update: (current: T | undefined) => T) {
      const tx = db.transaction('meta', 'readwrite');
      const value = update((await tx.store.get(key)) as T | undefined);
      await tx.store.put(value, key);
      await tx.done;
      return value;
    },
    async updateLoggedMeta<T>(key: string, update: (current: T | undefined) => T, logged: Logged) {
      const tx = db.transaction(['meta', 'changes'], 'readwrite');
      const value = await abortOnThrow(tx, async () => update((await tx.objectStore('meta').get(key)) as T | undefined));
      const changes: Change[] = [];
      await commit(tx, function* () {
        yield tx.objectStore('meta').put(value, key);
        yield log(tx.objectStore('changes'), [{ collection: logged, id: key }], changes);
      });
      return { value, changes };
    },
    close: () => db.close(),
    // The same storage, its writes of records made for the scope (the rest of the connection's state is
    // shared: group commit, kept snapshots).
    queueing: (scope) => ({
      ...storage,
      ...applications.queueing(scope),
      ...conversations.queueing(scope),
      ...assets.queueing(scope),
      ...anchors.queueing(scope),
      ...materials.queueing(scope),
      ...linked.queueing(scope),
      ...links.queueing(scope),
    }),
  };
  return storage;
}

const isEmpty = (data: StoredData) => Object.values(data).every((records) => !records?.length);

/**
 * On the first start of a database: gives it its identity (a random id: a wiped and recreated
 * database has another) and stores the initial data. Later starts read the identity.
 */
async function start(db: IDBPDatabase<PiecesDB>, initialData: () => StoredData): Promise<string> {
  // Most starts only read (a readonly transaction commits at once); the first writes, and checks again as it does.
  const read = db.transaction('meta');
  const [seeded, identity] = await Promise.all([read.store.get('seeded'), read.store.get('identity')]);
  // The initial data is made only where it may be stored: not on the later starts of a seeded database.
  if (typeof identity === 'string' && seeded) return identity;
  const initial = initialData();
  if (typeof identity === 'string' && isEmpty(initial)) return identity;
  const tx = db.transaction('meta', 'readwrite');
  let id = (await tx.store.get('identity')) as string | undefined;
  if (typeof id !== 'string') {
    id = randomUUID();
    await tx.store.put(id, 'identity');
  }
  await tx.done;
  if (!isEmpty(initial)) await loadData(db, initial, { replace: false, unlessSeeded: true });
  return id;
}
