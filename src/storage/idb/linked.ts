/**
 * Tags and websites on their own (TagsApi, WebsitesApi): listed in creation order, found by their
 * text (URL), and written with the assets they are on. A record lists the ids of its assets
 * (`assets`), and an asset reads its tags and websites by that list: a record written or deleted
 * here changes what the asset shows, so the asset's change is logged with the record's, in the
 * same transaction.
 */
import type { IDBPDatabase } from 'idb';
import type { AssetRecord, PiecesDB } from '../schema.js';
import type { Change, LinkedKind, LinkedRecords, OutboxScope, Storage } from '../storage.js';
import { LINK_STORES, unlisting } from './links.js';
import { abortOnThrow, commit, log, queueing, type Queueable } from './transactions.js';

type LinkedMethods = 'listLinked' | 'findLinked' | 'editLinked';

const STORE = { tag: 'tags', website: 'websites' } as const;
const BY_KEY = { tag: 'by-text', website: 'by-url' } as const;

/** Creation order: `created`, then the id (records created at once, by one request, share their time). */
const byCreated = (a: { created: string; id: string }, b: { created: string; id: string }) =>
  a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** The ids of a kind's records in creation order, and the last change folded into them. */
export async function linkedIds(db: IDBPDatabase<PiecesDB>, kind: LinkedKind): Promise<{ ids: string[]; seq: number }> {
  const tx = db.transaction([STORE[kind], 'changes']);
  const [records, last] = await Promise.all([tx.objectStore(STORE[kind]).getAll(), tx.objectStore('changes').openCursor(null, 'prev')]);
  await tx.done;
  return { ids: records.sort(byCreated).map((record) => record.id), seq: last?.key ?? 0 };
}

function linkedWrites(db: IDBPDatabase<PiecesDB>, scope?: OutboxScope): Pick<Storage, 'editLinked'> {
  return {
    editLinked: (kind, target, edit) =>
      queueing(scope, async (outbox) => {
        // (One of two stores of the same shape: typed as the tags'.)
        // Every store a record listing it may be in: a deleted one is unlisted from them all.
        const tx = db.transaction([...LINK_STORES], 'readwrite');
        const records = tx.objectStore(STORE[kind] as 'tags');
        const current = ('id' in target ? await records.get(target.id) : await records.index(BY_KEY[kind] as 'by-text').get(target.key)) as
          | LinkedRecords[typeof kind]
          | undefined;
        const wanted = [...new Set([...(current?.assets ?? []), ...(target.assets ?? [])])];
        const read = await Promise.all(wanted.map((id) => tx.objectStore('assets').get(id)));
        const assets = new Map(read.filter((asset): asset is AssetRecord => !!asset).map((asset) => [asset.id, asset]));
        const result = await abortOnThrow(tx, () => edit(current, assets));
        if (!result) {
          await tx.done;
          return [];
        }
        const { record, assets: written = [] } = result;
        const id = record?.id ?? current?.id;
        // A deleted record is unlisted from every other record that lists it (src/storage/idb/links.ts).
        const others =
          !record && current
            ? await unlisting(
                tx,
                [{ kind, id: current.id }],
                undefined,
                written.map((asset) => ({ kind: 'asset' as const, id: asset.id })),
              )
            : undefined;
        const changes: Change[] = [];
        await commit(tx, function* () {
          if (others) yield* others.writes();
          if (record) yield records.put(record as never);
          else if (current) yield records.delete(current.id);
          for (const asset of written) yield tx.objectStore('assets').put(asset);
          yield log(
            tx.objectStore('changes'),
            [
              ...(id === undefined ? [] : [{ collection: kind, id, ...(record ? {} : { deleted: true as const }) }]),
              ...written.map((asset) => ({ collection: 'asset' as const, id: asset.id })),
              ...(others?.logged ?? []),
            ],
            changes,
          );
          if (outbox) yield outbox.append(tx.objectStore('outbox'), record && !current ? [{ kind, id: record.id }] : []);
        });
        return changes;
      }),
  };
}

export function linkedStore(db: IDBPDatabase<PiecesDB>): Queueable<LinkedMethods, 'editLinked'> {
  return {
    ...linkedWrites(db),
    queueing: (scope) => linkedWrites(db, scope),
    listLinked: async (kind) => ((await db.getAll(STORE[kind])) as Array<LinkedRecords[typeof kind]>).sort(byCreated) as never,
    findLinked: async (kind, key) => (await db.getFromIndex(STORE[kind] as 'tags', BY_KEY[kind] as 'by-text', key)) as never,
  };
}
