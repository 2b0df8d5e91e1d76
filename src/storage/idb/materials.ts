/**
 * Materials of the kinds the generic path stores (GenericKind: persons, hints, workstream
 * summaries, …), one store for all of them keyed by `[kind, id]`. Nothing here knows a kind: what
 * a record holds and how records reference each other is the caller's (src/core), which reads and
 * writes related records together in one `editMaterials` transaction.
 */
import type { IDBPDatabase } from 'idb';
import type { GenericKind, MaterialRecord, PiecesDB } from '../schema.js';
import { materialKey, type Change, type MaterialEdit, type MaterialKey, type OutboxScope, type Storage } from '../storage.js';
import { abortOnThrow, commit, log, queueing, type Queueable } from './transactions.js';

type MaterialMethods = 'getMaterial' | 'listMaterials' | 'editMaterials';

/** Every key of one kind in the `[kind, seq]` index: its creation order. */
export const ofKind = (kind: string) => IDBKeyRange.bound([kind, -Infinity], [kind, Infinity]);

/** The ids of a kind's materials in creation order, and the last change folded into them. */
export async function materialIds(db: IDBPDatabase<PiecesDB>, kind: GenericKind): Promise<{ ids: string[]; seq: number }> {
  const tx = db.transaction(['materials', 'changes']);
  const [keys, last] = await Promise.all([
    tx.objectStore('materials').index('by-kind-seq').getAllKeys(ofKind(kind)),
    tx.objectStore('changes').openCursor(null, 'prev'),
  ]);
  await tx.done;
  return { ids: keys.map(([, id]) => id), seq: last?.key ?? 0 };
}

/** The puts and deletes of an edit, each key once (a key both put and deleted, or given twice, is the caller's mistake). */
function checked(result: MaterialEdit): { put: NonNullable<MaterialEdit['put']>; remove: MaterialKey[] } {
  const put = result.put ?? [];
  const remove = result.delete ?? [];
  const seen = new Set<string>();
  for (const key of [...put, ...remove]) {
    const k = materialKey(key);
    if (seen.has(k)) throw new Error(`editMaterials: ${k} is written twice in one edit.`);
    seen.add(k);
  }
  for (const record of put) {
    if (record.value.id !== record.id) throw new Error(`editMaterials: ${materialKey(record)} has value.id ${record.value.id}.`);
  }
  return { put, remove };
}

function materialWrites(db: IDBPDatabase<PiecesDB>, scope?: OutboxScope): Pick<Storage, 'editMaterials'> {
  return {
    editMaterials: (keys, edit, more) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction(['materials', 'changes', 'outbox'], 'readwrite');
        const materials = tx.objectStore('materials');
        const found = new Map<string, MaterialRecord>();
        const read = async (wanted: ReadonlyArray<MaterialKey>, into: Map<string, MaterialRecord>) => {
          const missing = [...new Map(wanted.map((key) => [materialKey(key), key])).entries()].filter(([k]) => !into.has(k));
          const records = await Promise.all(missing.map(([, { kind, id }]) => materials.get([kind, id])));
          for (const record of records) if (record) into.set(materialKey(record), record);
        };
        await read(keys, found);
        if (more) await read(await abortOnThrow(tx, () => more(found)), found);
        const result = await abortOnThrow(tx, () => {
          const made = edit(found);
          return made && checked(made);
        });
        if (!result || (!result.put.length && !result.remove.length)) {
          await tx.done;
          return { found, changes: [] };
        }
        // What is stored of the keys written (read or not before): a stored record keeps its seq, a deleted one logs only if it was there.
        const stored = new Map(found);
        await read([...result.put, ...result.remove], stored);
        const puts = result.put;
        const removed = result.remove.filter((key) => stored.has(materialKey(key)));
        const changes: Change[] = [];
        await commit(tx, function* () {
          for (const { kind, id } of result.remove) yield materials.delete([kind, id]);
          // A new record's seq is its change's: the records are put once the log has numbered them.
          yield log(
            tx.objectStore('changes'),
            [
              ...puts.map(({ kind, id }) => ({ collection: kind, id })),
              ...removed.map(({ kind, id }) => ({ collection: kind, id, deleted: true as const })),
            ],
            changes,
          ).then(() => {
            const requests: Array<Promise<unknown>> = [];
            try {
              for (const [i, { kind, id, value }] of puts.entries()) {
                requests.push(materials.put({ kind, id, seq: stored.get(materialKey({ kind, id }))?.seq ?? changes[i]!.seq, value }));
              }
            } catch (error) {
              // A record the database cannot store (it aborts the transaction): the puts issued before it fail with it.
              for (const request of requests) request.catch(() => {});
              throw error;
            }
            return Promise.all(requests);
          });
          if (outbox) {
            const created = puts.filter((record) => !stored.has(materialKey(record))).map(({ kind, id }) => ({ kind, id }));
            yield outbox.append(tx.objectStore('outbox'), created);
          }
        });
        return { found, changes };
      }),
  };
}

export function materialStore(db: IDBPDatabase<PiecesDB>): Queueable<MaterialMethods, 'editMaterials'> {
  return {
    ...materialWrites(db),
    queueing: (scope) => materialWrites(db, scope),
    getMaterial: (kind, id) => db.get('materials', [kind, id]),
    listMaterials: (kind) => db.getAllFromIndex('materials', 'by-kind-seq', ofKind(kind)),
  };
}
