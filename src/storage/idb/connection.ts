/**
 * A connection to the database: opened (created or upgraded by the numbered
 * steps of schema.ts), and watched for what makes it go away.
 */
import { wrap, type IDBPDatabase } from 'idb';
import { DB_VERSION, upgrade, type PiecesDB } from '../schema.js';

export interface ConnectionEvents {
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

export async function connect(factory: IDBFactory, name: string, options: ConnectionEvents): Promise<IDBPDatabase<PiecesDB>> {
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
        lose(
          blockedVersion === null
            ? 'the database is being deleted'
            : `another connection is upgrading the database to version ${blockedVersion}`,
        );
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
