/**
 * What every write of the IndexedDB storage shares: a transaction that commits or fails as a
 * whole, the change log that is appended to inside it, and the outbox entry a request's write
 * appends with it (see Storage.queueing).
 */
import { unwrap, type IDBPObjectStore, type StoreNames } from 'idb';
import type { CreatedId, PiecesDB } from '../schema.js';
import type { Change, OutboxScope, PendingOperation, QueueingWrite, Storage } from '../storage.js';

/** How many changes the log keeps for stream catch-up. */
export const CHANGE_LOG_LIMIT = 10_000;

/**
 * Issues a write transaction's requests and waits for them and the commit
 * together. Any request that fails, at once or later, aborts the whole
 * transaction, so a multi-record write never commits in part; a failure surfaces once,
 * as the transaction's error, never unhandled.
 */
export async function commit(tx: { done: Promise<void>; abort(): void }, issue: () => Iterable<Promise<unknown>>): Promise<void> {
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

/**
 * What `run` returns; when it throws, the transaction is aborted and has ended before the error
 * is rethrown, so nothing issued in it commits (a transaction that ended on its own already,
 * a failed request aborting it, stays as it is).
 */
export async function abortOnThrow<T>(tx: { done: Promise<void>; abort(): void }, run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    try {
      tx.abort();
    } catch {
      // Already finished: it aborted on its own.
    }
    await tx.done.catch(() => {});
    throw error;
  }
}

type ChangeStore = IDBPObjectStore<PiecesDB, ArrayLike<StoreNames<PiecesDB>>, 'changes', 'readwrite'>;

/**
 * Appends changes to the log inside a write transaction (so they commit with
 * the write or not at all), then drops what is older than the log keeps.
 * Fills `into` with the numbered changes, in order. The requests go through the
 * plain store, with one listener on the last: requests succeed in the order they
 * were issued, so once the last is added every key is known (one promise per
 * call, not one per change). With `first`, the changes get the keys from `first` on (a key
 * already taken fails the request, and the transaction with it).
 */
/** Per connection, who is told of the changes a transaction logged once it commits (see snapshots.ts). */
const committedListeners = new WeakMap<IDBDatabase, (changes: Change[]) => void>();

/** Tells `listener` the changes of each transaction of `db` that logs some, once it commits (in it, after the write). */
export function onCommitted(db: IDBDatabase, listener: (changes: Change[]) => void): void {
  committedListeners.set(db, listener);
}

export function log(changes: ChangeStore, items: Array<Omit<Change, 'seq'>>, into: Change[], first?: number): Promise<void> {
  if (!items.length) return Promise.resolve();
  const store = unwrap(changes);
  const listener = committedListeners.get(store.transaction.db);
  // `first`: the keys given (first, first + 1, …) rather than generated (see conversations.ts).
  const requests = items.map((item, i) => store.add(first === undefined ? { ...item } : { ...item, seq: first + i }) as IDBRequest<number>);
  const last = requests[requests.length - 1]!;
  return new Promise((resolve, reject) => {
    last.onsuccess = () => {
      const logged = requests.map((request, i) => ({ ...items[i]!, seq: request.result }));
      into.push(...logged);
      if (listener) store.transaction.addEventListener('complete', () => listener(logged));
      const seq = last.result;
      // A failed delete aborts the transaction: the write fails with it.
      if (seq > CHANGE_LOG_LIMIT) store.delete(IDBKeyRange.upperBound(seq - CHANGE_LOG_LIMIT));
      resolve();
    };
    // Any request that fails aborts the transaction, and the last one with it.
    last.onerror = () => reject(last.error);
  });
}

/** Changes after `seq` in the log (oldest first), whether the log still reaches back that far, and the last change. */
export async function readChanges(
  store: {
    getAll(query: IDBKeyRange): Promise<Change[]>;
    openCursor(query?: null, direction?: IDBCursorDirection): Promise<{ key: number } | null>;
  },
  seq: number,
) {
  const [changes, first, last] = await Promise.all([
    store.getAll(IDBKeyRange.lowerBound(seq, true)),
    store.openCursor(),
    store.openCursor(null, 'prev'),
  ]);
  // Complete if nothing after `seq` was pruned: the oldest kept change is at most seq + 1.
  return { changes, complete: !first || first.key <= seq + 1, seq: Math.max(seq, last?.key ?? 0) };
}

type OutboxStore = IDBPObjectStore<PiecesDB, ArrayLike<StoreNames<PiecesDB>>, 'outbox', 'readwrite'>;

/**
 * The operation a write may queue, taken from its request's scope: appended to the outbox inside
 * the write's transaction, so that it is queued if and only if the write commits.
 */
export class Queued {
  appended = false;
  constructor(private readonly pending: PendingOperation) {}

  /** Appends the entry, with the records the write creates (see Storage: what each write creates). */
  append(outbox: OutboxStore, created: readonly CreatedId[] = []): Promise<unknown> {
    this.appended = true;
    return outbox.add({ state: 'queued', ...this.pending.entry(created) } as never);
  }
}

/**
 * Runs a write with the operation it may queue: none without a scope, or when an earlier write
 * of the request has it. Settled once the write is done: queued if it committed with the entry,
 * else (nothing to change, or a failure) given back for the next write of the request.
 */
export function queueing<T>(scope: OutboxScope | undefined, write: (outbox: Queued | undefined) => Promise<T>): Promise<T> {
  const pending = scope?.take();
  if (!pending) return write(undefined);
  const outbox = new Queued(pending);
  return write(outbox).then(
    (result) => {
      pending.settle(outbox.appended);
      return result;
    },
    (error: unknown) => {
      pending.settle(false);
      throw error;
    },
  );
}

/** A module's methods, and its writes of records as one request makes them (see Storage.queueing). */
export type Queueable<M extends keyof Storage, W extends M & QueueingWrite> = Pick<Storage, M> & {
  queueing(scope: OutboxScope): Pick<Storage, W>;
};
