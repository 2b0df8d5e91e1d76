/** Applications, their usage events and sessions (with the engagement derived from the events), and external applications. */
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type { EventKind, PiecesDB } from '../schema.js';
import type { Change, Engagement, OutboxScope, Storage } from '../storage.js';
import { commit, log, queueing, type Queueable } from './transactions.js';

const KINDS: Array<[EventKind, keyof Omit<Engagement, 'lastActivity'>]> = [
  ['interaction', 'interactions'],
  ['keyboard', 'keyboard'],
  ['installation', 'installations'],
  ['update', 'updates'],
];

type AnyTx = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[], 'readonly' | 'readwrite'>;

/** Engagement of one application, or within a session's time window, counted from the events in `tx`. */
async function engagement(tx: AnyTx, range: { application: string } | { from: string; to: string }): Promise<Engagement> {
  const events = tx.objectStore('events');
  const result: Engagement = { interactions: 0, keyboard: 0, installations: 0, updates: 0 };
  if ('application' in range) {
    const byKind = events.index('by-application-kind');
    const counts = await Promise.all(KINDS.map(([kind]) => byKind.count([range.application, kind])));
    for (const [i, [, field]] of KINDS.entries()) result[field] = counts[i]!;
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
    const latest = lasts
      .filter((at): at is string => !!at)
      .sort()
      .pop();
    if (latest) result.lastActivity = { value: latest };
  }
  return result;
}

type ApplicationMethods =
  | 'listApplications'
  | 'getApplication'
  | 'hasApplication'
  | 'putApplication'
  | 'recordEvent'
  | 'putSession'
  | 'getSession'
  | 'closeSession'
  | 'listExternalApplications'
  | 'putExternalApplications';

type ApplicationWrites = 'putApplication' | 'recordEvent' | 'putSession' | 'closeSession';

/** The writes of applications, events and sessions; with a scope, the first that writes something queues its operation. */
function applicationWrites(db: IDBPDatabase<PiecesDB>, scope?: OutboxScope): Pick<Storage, ApplicationWrites> {
  return {
    putApplication: (application) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['applications', 'changes', 'outbox'], 'readwrite');
        const changes: Change[] = [];
        await commit(tx, function* () {
          yield tx.objectStore('applications').put(application);
          yield log(tx.objectStore('changes'), [{ collection: 'application', id: application.id }], changes);
          if (outbox) yield outbox.append(tx.objectStore('outbox'), [{ kind: 'application', id: application.id }]);
        });
        return changes;
      }),

    recordEvent: (event, upsert = []) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['events', 'applications', 'changes', 'outbox'], 'readwrite');
        const changes: Change[] = [];
        await commit(tx, function* () {
          for (const application of upsert) yield tx.objectStore('applications').put(application);
          yield tx.objectStore('events').add(event);
          const upserted = upsert.map(({ id }) => ({ collection: 'application' as const, id }));
          if (upserted.length) yield log(tx.objectStore('changes'), upserted, changes);
          if (outbox) yield outbox.append(tx.objectStore('outbox'));
        });
        return changes;
      }),

    putSession: (session) =>
      queueing(scope, async (outbox) => {
        if (!outbox) {
          await db.add('sessions', session);
          return;
        }
        const tx = db.transaction(['sessions', 'outbox'], 'readwrite');
        await commit(tx, function* () {
          yield tx.objectStore('sessions').add(session);
          yield outbox.append(tx.objectStore('outbox'), [{ kind: 'session', id: session.id }]);
        });
      }),

    closeSession: (id, closed) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['sessions', 'outbox'], 'readwrite');
        const sessions = tx.objectStore('sessions');
        const session = await sessions.get(id);
        if (session && !session.closed) {
          session.closed = closed;
          await sessions.put(session);
        }
        // Closing an unknown session changes nothing, and queues nothing; closing again is sent again (it is idempotent).
        if (session && outbox) await outbox.append(tx.objectStore('outbox'));
        await tx.done;
        return session;
      }),
  };
}

export function applicationStore(db: IDBPDatabase<PiecesDB>): Queueable<ApplicationMethods, ApplicationWrites> {
  return {
    ...applicationWrites(db),
    queueing: (scope) => applicationWrites(db, scope),
    async listApplications() {
      const tx = db.transaction(['applications', 'events']);
      const applications = await tx.objectStore('applications').getAll();
      const engagements = await Promise.all(applications.map((a) => engagement(tx, { application: a.id })));
      await tx.done;
      return applications.map((application, i) => ({ application, engagement: engagements[i]! }));
    },

    async getApplication(id) {
      const tx = db.transaction(['applications', 'events']);
      const application = await tx.objectStore('applications').get(id);
      const found = application && (await engagement(tx, { application: id }));
      await tx.done;
      return application && { application, engagement: found! };
    },

    async hasApplication(id) {
      return (await db.count('applications', id)) > 0;
    },

    async getSession(id) {
      const tx = db.transaction(['sessions', 'events']);
      const session = await tx.objectStore('sessions').get(id);
      const found = session && (await engagement(tx, { from: session.opened.value, to: session.closed?.value ?? '\uffff' }));
      await tx.done;
      return session && { session, engagement: found! };
    },

    async listExternalApplications() {
      return db.getAll('external');
    },

    async putExternalApplications(applications) {
      const tx = db.transaction('external', 'readwrite');
      await commit(tx, function* () {
        for (const application of applications) yield tx.store.put(application);
      });
    },
  };
}
