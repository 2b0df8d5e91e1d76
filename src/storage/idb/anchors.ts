/**
 * Anchors (read, and written together with the conversations and assets that list them),
 * the catalogue models' local state, and the local user's signed-in state: each
 * write logs its change in the same transaction.
 */
import type { IDBPDatabase } from 'idb';
import type { AssetRecord, ConversationRecord, PiecesDB } from '../schema.js';
import { SIGNED_IN_KEY, type Change, type OutboxScope, type Storage } from '../storage.js';
import { LINK_STORES, unlisting } from './links.js';
import { commit, log, queueing, type Queueable, abortOnThrow } from './transactions.js';

type AnchorMethods = 'getAnchor' | 'listAnchors' | 'editAnchor' | 'listModelStates' | 'editModelStates' | 'setSignedIn';

/** Writes an anchor with the records that list it; with a scope, queues its operation when it writes something. */
function anchorWrites(db: IDBPDatabase<PiecesDB>, scope?: OutboxScope): Pick<Storage, 'editAnchor'> {
  return {
    editAnchor: (id, linked, edit) =>
      queueing(scope, async (outbox) => {
        // Every store: an anchor deleted is unlisted from every record that lists it (src/storage/idb/links.ts).
        const tx = db.transaction([...LINK_STORES], 'readwrite');
        const current = await tx.objectStore('anchors').get(id);
        const links = linked(current);
        const [foundConversations, foundAssets] = await Promise.all([
          Promise.all((links.conversations ?? []).map((conversation) => tx.objectStore('conversations').get(conversation))),
          Promise.all((links.assets ?? []).map((asset) => tx.objectStore('assets').get(asset))),
        ]);
        const conversations = new Map<string, ConversationRecord>(
          foundConversations.filter((c): c is ConversationRecord => !!c).map((c) => [c.id, c]),
        );
        const assets = new Map<string, AssetRecord>(foundAssets.filter((a): a is AssetRecord => !!a).map((a) => [a.id, a]));
        const result: ReturnType<typeof edit> = await abortOnThrow(tx, () => edit(current, { conversations, assets }));
        if (!result) {
          await tx.done;
          return [];
        }
        const changes: Change[] = [];
        const written = result.conversations ?? [];
        const writtenAssets = result.assets ?? [];
        const others =
          current && !result.anchor
            ? await unlisting(tx as never, [{ kind: 'anchor', id }], undefined, [
                ...written.map((record) => ({ kind: 'conversation' as const, id: record.id })),
                ...writtenAssets.map((record) => ({ kind: 'asset' as const, id: record.id })),
              ])
            : undefined;
        await commit(tx, function* () {
          if (others) yield* others.writes();
          if (result.anchor) yield tx.objectStore('anchors').put(result.anchor);
          else if (current) yield tx.objectStore('anchors').delete(id);
          // A conversation keeps its place in the snapshot order.
          for (const record of written) yield tx.objectStore('conversations').put({ ...record, seq: conversations.get(record.id)!.seq });
          for (const record of writtenAssets) yield tx.objectStore('assets').put(record);
          yield log(
            tx.objectStore('changes'),
            [
              ...(result.anchor || current
                ? [{ collection: 'anchor' as const, id, ...(result.anchor ? {} : { deleted: true as const }) }]
                : []),
              ...written.map((record) => ({ collection: 'conversation' as const, id: record.id })),
              ...writtenAssets.map((record) => ({ collection: 'asset' as const, id: record.id })),
              ...(others?.logged ?? []),
            ],
            changes,
          );
          if (outbox)
            yield outbox.append(tx.objectStore('outbox'), !current && result.anchor ? [{ kind: 'anchor', id: result.anchor.id }] : []);
        });
        return changes;
      }),
  };
}

export function anchorStore(db: IDBPDatabase<PiecesDB>): Queueable<AnchorMethods, 'editAnchor'> {
  return {
    ...anchorWrites(db),
    queueing: (scope) => anchorWrites(db, scope),
    async getAnchor(id) {
      return db.get('anchors', id);
    },

    async listAnchors() {
      return db.getAllFromIndex('anchors', 'by-created');
    },

    async listModelStates() {
      return db.getAll('models');
    },

    async editModelStates(edit) {
      const tx = db.transaction(['models', 'changes'], 'readwrite');
      const changes: Change[] = [];
      await abortOnThrow(tx, async () => {
        const store = tx.objectStore('models');
        const states = new Map((await store.getAll()).map((state) => [state.id, state]));
        const writes = edit(states);
        const removed = (id: string) => states.get(id)?.model?.custom === true;
        await Promise.all([
          ...writes.map(({ id, record }) => (record ? store.put(record) : store.delete(id))),
          log(
            tx.objectStore('changes'),
            writes.map(({ id, record }) =>
              !record && removed(id) ? { collection: 'model', id, deleted: true } : { collection: 'model', id },
            ),
            changes,
          ),
          tx.done,
        ]);
      });
      return changes;
    },

    async setSignedIn(signedIn) {
      const tx = db.transaction(['meta', 'changes'], 'readwrite');
      const changes: Change[] = [];
      await commit(tx, function* () {
        yield signedIn === undefined ? tx.objectStore('meta').delete(SIGNED_IN_KEY) : tx.objectStore('meta').put(signedIn, SIGNED_IN_KEY);
        yield log(tx.objectStore('changes'), [{ collection: 'user', id: 'local' }], changes);
      });
      return changes;
    },
  };
}
