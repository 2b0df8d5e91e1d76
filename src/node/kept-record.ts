/**
 * The kept store's recording of writes: an IndexedDB factory whose connections report, per
 * committed write transaction, what it did to each kept store (puts, deletes, clears), through
 * the standard IndexedDB API the storage uses: nothing of the storage modules changes.
 */
import { serialize } from 'node:v8';
import type { IDBFactory } from 'fake-indexeddb';
import { CLEAR, DELETE, DELETE_RANGE, PUT, type Op } from './kept-format.js';

/** Stores not written to disk: derived from the others, rebuilt when needed. */
export const NOT_KEPT = new Set(['snapshots']);

/** `factory`, with every database it opens watched by `watch` before anyone else sees it. */
export function watchingFactory(factory: IDBFactory, watch: (database: IDBDatabase) => void): IDBFactory {
  return {
    open(name: string, version?: number) {
      const request = factory.open(name, version);
      // Registered before the caller's listeners: the connection is watched before its first use.
      request.addEventListener('success', () => watch(request.result));
      return request;
    },
    deleteDatabase: (name: string) => factory.deleteDatabase(name),
    cmp: (a: unknown, b: unknown) => factory.cmp(a, b),
    databases: () => factory.databases(),
  };
}

type Method = (...args: unknown[]) => unknown;

/**
 * Records, per write transaction of `database`, what it does to each kept store, and hands the
 * list to `commit` when it completes: from the first listener of its `complete` event, before
 * anything that waits on the transaction learns that it committed.
 */
export function watchDatabase(database: IDBDatabase, commit: (ops: Op[]) => void, autoIncremented: Set<string>) {
  const transaction = database.transaction as unknown as Method;
  database.transaction = function (this: IDBDatabase, ...args: unknown[]) {
    const tx = transaction.apply(this, args) as IDBTransaction;
    if (args[1] !== 'readwrite') return tx;
    const ops: Op[] = [];
    const objectStore = tx.objectStore as unknown as Method;
    const watched = new WeakSet<IDBObjectStore>();
    tx.objectStore = function (this: IDBTransaction, name: string) {
      const store = objectStore.call(this, name) as IDBObjectStore;
      if (!NOT_KEPT.has(name) && !watched.has(store)) {
        watched.add(store);
        if (store.autoIncrement) autoIncremented.add(name);
        watchStore(store, ops);
      }
      return store;
    } as IDBTransaction['objectStore'];
    tx.addEventListener('complete', () => {
      if (ops.length) commit(ops);
    });
    return tx;
  } as IDBDatabase['transaction'];
}

/** Once `request` succeeds, `op` (called then) joins `ops`. */
function onSuccess(request: IDBRequest, ops: Op[], op: () => Op) {
  request.addEventListener('success', () => ops.push(op()));
  return request;
}

const isRange = (query: unknown): query is IDBKeyRange => typeof query === 'object' && query !== null && 'lowerOpen' in query;

function watchStore(store: IDBObjectStore, ops: Op[]) {
  const name = store.name;
  const { put, add, delete: remove, clear, openCursor, openKeyCursor, index } = store as unknown as Record<string, Method>;
  // The value as given, at the call (the store clones it then too); the key once the store has it.
  const write =
    (method: Method) =>
    (...args: unknown[]) => {
      const bytes = serialize(args[0]);
      const request = method.apply(store, args) as IDBRequest<IDBValidKey>;
      return onSuccess(request, ops, () => [PUT, name, request.result, bytes]);
    };
  const cursors = new WeakSet<IDBCursor>();
  const watchCursors =
    (method: Method, source: object) =>
    (...args: unknown[]) => {
      const request = method.apply(source, args) as IDBRequest<IDBCursor | null>;
      request.addEventListener('success', () => {
        const cursor = request.result;
        if (!cursor || cursors.has(cursor)) return;
        cursors.add(cursor);
        const { update, delete: removeAt } = cursor as unknown as Record<string, Method>;
        Object.assign(cursor, {
          update(value: unknown) {
            const bytes = serialize(value);
            const written = update!.call(cursor, value) as IDBRequest<IDBValidKey>;
            return onSuccess(written, ops, () => [PUT, name, written.result, bytes]);
          },
          delete() {
            const key = structuredClone(cursor.primaryKey);
            return onSuccess(removeAt!.call(cursor) as IDBRequest, ops, () => [DELETE, name, key]);
          },
        });
      });
      return request;
    };
  const indexes = new WeakSet<IDBIndex>();
  Object.assign(store, {
    put: write(put!),
    add: write(add!),
    delete(query: unknown) {
      const op: Op = isRange(query)
        ? [DELETE_RANGE, name, structuredClone(query.lower), structuredClone(query.upper), query.lowerOpen, query.upperOpen]
        : [DELETE, name, structuredClone(query as IDBValidKey)];
      return onSuccess(remove!.call(store, query) as IDBRequest, ops, () => op);
    },
    clear: () => onSuccess(clear!.call(store) as IDBRequest, ops, () => [CLEAR, name]),
    openCursor: watchCursors(openCursor!, store),
    openKeyCursor: watchCursors(openKeyCursor!, store),
    index(indexName: string) {
      const found = index!.call(store, indexName) as IDBIndex;
      if (!indexes.has(found)) {
        indexes.add(found);
        const { openCursor: open, openKeyCursor: openKeys } = found as unknown as Record<string, Method>;
        Object.assign(found, { openCursor: watchCursors(open!, found), openKeyCursor: watchCursors(openKeys!, found) });
      }
      return found;
    },
  });
}
