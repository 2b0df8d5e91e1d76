/**
 * A Storage over a database connection that can go away: opened on first use, reopened after it is
 * lost, each connection with its own read cache. See docs/architecture.md, "Storage".
 */
import type { OutboxScope, Storage } from './storage.js';

/** The storage cannot answer now; the message says why. The service answers 503. */
export class StorageUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageUnavailableError';
  }
}

export interface ConnectionHooks {
  /** The connection went away (see OpenStorageOptions.onLost). */
  lost(reason: string): void;
  /** The open waits for other connections (see OpenStorageOptions.onBlocked). */
  blocked(message: string): void;
}

export interface ReconnectOptions {
  /** How long a call waits for an open blocked by another connection; default 3 s. */
  blockedWaitMs?: number;
  /** Called with each new connection's storage once open, with whether it replaces a lost one. */
  onOpen?(storage: Storage, reopened: boolean): void;
}

/** Errors a transaction gets from a closed or closing connection, or from stores that are not there. */
const CONNECTION_ERRORS = new Set(['InvalidStateError', 'NotFoundError', 'TransactionInactiveError']);

/**
 * Errors of an open or a transaction the browser aborted: for a reason of its own, or because it is
 * closing the connection (Chromium's "Clear site data" aborts the opens and transactions under way,
 * "The connection was closed." or "Connection is closing because of: Force close delete origin.",
 * before it reports the close).
 */
const ABORT_ERRORS = new Set(['AbortError', 'UnknownError']);

/**
 * Whether a connection whose transaction was aborted still works: a read that no cache answers.
 * On a connection the browser is closing it fails (the new transaction is refused or aborted too).
 */
async function stillOpen(storage: Storage): Promise<boolean> {
  try {
    await storage.changesSince(Number.MAX_SAFE_INTEGER);
    return true;
  } catch {
    return false;
  }
}

interface Connection {
  opening: Promise<Storage>;
  /** The storage, once open: calls then use it at once. */
  open?: Storage;
  lost: string | null;
  /** Resolves with the reason when the open is blocked. */
  blocked: Promise<string>;
}

export function reconnectingStorage(
  open: ((hooks: ConnectionHooks) => Promise<Storage>) | Promise<Storage>,
  options: ReconnectOptions = {},
): Storage {
  // A storage opened once (in memory, say) is waited for, never reopened.
  if (typeof open !== 'function') return onceOpened(open);
  const openConnection = open;
  const blockedWaitMs = options.blockedWaitMs ?? 3000;
  let current: Connection | null = null;
  let opened = 0;

  function connect(): Connection {
    let onBlocked!: (message: string) => void;
    const connection: Connection = {
      lost: null,
      blocked: new Promise((resolve) => (onBlocked = resolve)),
      opening: undefined as never,
    };
    connection.opening = openConnection({
      lost(reason) {
        connection.lost ??= reason;
        if (current === connection) current = null;
        void connection.opening.then(
          (storage) => storage.close(),
          () => {},
        );
      },
      blocked: (message) => onBlocked(message),
    }).then(
      (storage) => {
        connection.open = storage;
        options.onOpen?.(storage, opened++ > 0);
        return storage;
      },
      (error: unknown) => {
        // A failed open is tried again by the next call.
        if (current === connection) current = null;
        throw error;
      },
    );
    connection.opening.catch(() => {});
    return connection;
  }

  /** The connection's storage; a blocked open fails after `blockedWaitMs` (and goes on in the background). */
  async function ready(connection: Connection): Promise<Storage> {
    // Open: no race. (A race adds a reaction to `blocked`, which never settles once the connection is
    // open: one per call, kept for the connection's life.)
    if (connection.open) return connection.open;
    const first = await Promise.race([connection.opening, connection.blocked.then((message) => ({ message }))]);
    if (!('message' in first)) return first;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StorageUnavailableError(first.message)), blockedWaitMs);
    });
    try {
      return await Promise.race([connection.opening, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Calls `key` on the connection's storage (or the view `pick` makes of it: see Storage.queueing). */
  async function call(key: keyof Storage, args: unknown[], pick: (storage: Storage) => Storage): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const connection = (current ??= connect());
      let storage: Storage | undefined;
      try {
        storage = await ready(connection);
        return await (pick(storage)[key] as (...a: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        const name = (error as { name?: string })?.name ?? '';
        // An aborted open (the origin's data being cleared) opened nothing; an aborted transaction, on a
        // connection that is closing, wrote nothing: both are tried once more on a new connection.
        const gone =
          connection.lost !== null ||
          CONNECTION_ERRORS.has(name) ||
          (ABORT_ERRORS.has(name) && (storage === undefined || !(await stillOpen(storage))));
        if (!gone) throw error;
        connection.lost ??= `the connection failed: ${(error as Error)?.message ?? error}`;
        if (current === connection) current = null;
        storage?.close();
        if (attempt > 0) {
          throw new StorageUnavailableError(`The database went away while answering (${connection.lost}); nothing was written. Try again.`);
        }
      }
    }
  }

  const close = () => {
    const connection = current;
    current = null;
    void connection?.opening.then(
      (s) => s.close(),
      () => {},
    );
  };
  const over = (pick: (storage: Storage) => Storage): Storage =>
    new Proxy({} as Storage, {
      get(_target, key: keyof Storage) {
        if (key === 'close') return close;
        // A request's view: each call on whichever connection is open then.
        if (key === 'queueing') return (scope: OutboxScope) => over((storage) => pick(storage).queueing(scope));
        return (...args: unknown[]) => call(key, args, pick);
      },
    });
  return over((storage) => storage);
}

function onceOpened(opening: Promise<Storage>): Storage {
  const over = (view: Promise<Storage>): Storage => {
    // A failed open is reported by every call, not as an unhandled rejection.
    view.catch(() => {});
    return new Proxy({} as Storage, {
      get(_target, key: keyof Storage) {
        if (key === 'close')
          return () =>
            void opening.then(
              (s) => s.close(),
              () => {},
            );
        if (key === 'queueing') return (scope: OutboxScope) => over(view.then((storage) => storage.queueing(scope)));
        return async (...args: unknown[]) => {
          const storage = await view;
          return (storage[key] as (...a: unknown[]) => unknown)(...args);
        };
      },
    });
  };
  return over(opening);
}
