/**
 * What a mirrored Pieces OS writes (see MirrorBatch): records as the upstream has them,
 * records it no longer has, local records re-keyed to the ids it gave them, the outbox and
 * the id map, in one transaction, with a change logged for each record that differs, so
 * that stream sockets hear of real changes only. Each step is driven by the kinds' table
 * (mirror-kinds.ts). The outbox entries themselves are appended by the writes that made them
 * locally (transactions.ts `queue`).
 */
import type { IDBPDatabase } from 'idb';
import type { IdPair, PiecesDB } from '../schema.js';
import type { Change, MirrorBatch, Storage } from '../storage.js';
import { KINDS, kindOf, type Kind, type Reference, type Rekeyed } from './mirror-kinds.js';
import { isMaterial, mirrorMaterials, type MirrorMaterials } from './mirror-materials.js';
import { mirrorWrite, type MirrorTx, type MirrorWrite, type RecordStore } from './mirror-write.js';
import { abortOnThrow } from './transactions.js';

/** The stores a batch writes: the kinds' own, those that name them, the log, the outbox, the id map and meta. */
const STORES = [
  ...new Set([
    ...KINDS.flatMap((row) => [row.store, ...(row.rekey?.refs ?? []).map((ref) => ref.store)]),
    'materials',
    'changes',
    'outbox',
    'idmap',
    'meta',
  ] as const),
];

export function mirrorStore(db: IDBPDatabase<PiecesDB>): Pick<Storage, 'outboxEntries' | 'idPairs' | 'applyMirror'> {
  return {
    outboxEntries: (after) => db.getAll('outbox', after === undefined ? undefined : IDBKeyRange.lowerBound(after, true)),
    idPairs: () => db.getAll('idmap'),
    async applyMirror(batch) {
      const tx = db.transaction(STORES, 'readwrite');
      return abortOnThrow(tx, async () => {
        const changes = await write(tx, batch);
        await tx.done;
        return changes;
      });
    },
  };
}

/** Materials of the generic kinds are written by the graph table (mirror-materials.ts), beside the kinds' rows. */
async function write(tx: MirrorTx, batch: MirrorBatch): Promise<Change[]> {
  const w = mirrorWrite(tx);
  const m = mirrorMaterials(w);
  if (batch.clearIdMap) await tx.objectStore('idmap').clear();
  await rekey(w, batch.rekey ?? []);
  await m.rekey(batch.rekey ?? []);
  for (const { kind, id } of batch.remove ?? []) {
    if (isMaterial(kind)) await m.drop(kind, id);
    else await kindOf(kind)?.drop?.(w, id);
  }
  const put = batch.put ?? {};
  for (const row of KINDS) for (const given of row.put?.of(put) ?? []) await row.put!.write(w, given);
  for (const material of put.materials ?? []) await m.put(material);
  if (batch.replace) await replace(w, m, batch.replace, put);
  const outbox = tx.objectStore('outbox');
  for (const seq of batch.outbox?.remove ?? []) await outbox.delete(seq);
  for (const entry of batch.outbox?.put ?? []) await outbox.put(entry);
  const meta = tx.objectStore('meta');
  for (const [key, value] of Object.entries(batch.meta ?? {})) {
    if (value === undefined) await meta.delete(key);
    else await meta.put(value, key);
  }
  const changes = await w.finish();
  await m.finish(changes);
  return changes;
}

/** Local records re-keyed to the ids the upstream gave them, kind by kind in the table's order; the pairs kept in the id map. */
async function rekey(w: MirrorWrite, pairs: readonly IdPair[]) {
  const upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
  const swap = (id: string) => upstreamOf.get(id) ?? id;
  for (const row of KINDS) {
    for (const { local, upstream } of row.rekey ? pairs.filter((pair) => pair.kind === row.kind) : []) {
      await rekeyOne(w, row, { local, upstream, upstreamOf, swap });
    }
  }
  for (const pair of pairs) await w.tx.objectStore('idmap').put(pair);
}

/** One record under its new key (see Kind `rekey`), then what names it. */
async function rekeyOne(w: MirrorWrite, row: Kind, ids: Rekeyed) {
  const { stored: onStored, moved: move, refs } = row.rekey!;
  const record = await w.get(row.store, ids.local);
  if (!record) return;
  const stored = await w.get(row.store, ids.upstream);
  if (stored && onStored === 'drop') return row.drop!(w, ids.local);
  const moved = move(record, ids, stored);
  await w.delete(row.store, ids.local);
  if (row.log) w.note(row.log, ids.local, true);
  if (!stored || onStored === 'replace') {
    await w.put(row.store, moved);
    if (row.log) w.note(row.log, ids.upstream);
  }
  for (const ref of refs) await follow(w, ref, record, moved, ids);
}

/** The records of a reference (see Kind `rekey`) naming the re-keyed record by its new id, their changes logged. */
async function follow<R>(w: MirrorWrite, ref: Reference<R>, record: R, moved: R, ids: Rekeyed) {
  if (ref.find === 'all') {
    // Read whole, by a cursor: the store may keep its keys out of its records (meta).
    let cursor = await w.tx.objectStore(ref.store as 'meta').openCursor();
    while (cursor) {
      const next = ref.set!(cursor.value as never, ids);
      if (next !== cursor.value) await cursor.update(next);
      cursor = await cursor.continue();
    }
    return;
  }
  const store = ref.store as RecordStore;
  const found =
    'index' in ref.find
      ? await w.byIndex(store, ref.find.index, ref.find.range?.(ids.local) ?? ids.local)
      : (await Promise.all([...new Set(ref.find.listed(record, ids, moved))].map((id) => w.get(store, id)))).filter(
          (item) => item !== undefined,
        );
  for (const item of found) {
    const id = ref.owned ? ids.swap(item.id) : item.id;
    const next = ref.set ? ref.set((id === item.id ? item : { ...item, id }) as never, ids) : item;
    if (id !== item.id) {
      await w.delete(store, item.id);
      if (ref.log) w.note(ref.log, item.id, true);
    } else if (ref.set && next === item) continue;
    if (ref.set) await w.put(store, next as never);
    if (ref.log) w.note(ref.log, id);
  }
}

/**
 * Kinds made exactly the records `put` gives, the ids `keep` names, and the records the outbox's
 * entries created that the id map does not map yet (made here and queued for the upstream: read
 * in this transaction, so that a write queued meanwhile is never dropped).
 */
async function replace(
  w: MirrorWrite,
  m: MirrorMaterials,
  { kinds, keep: given }: NonNullable<MirrorBatch['replace']>,
  put: NonNullable<MirrorBatch['put']>,
) {
  const keep = new Set(given);
  const mapped = new Set(await w.tx.objectStore('idmap').getAllKeys());
  for (const entry of await w.tx.objectStore('outbox').getAll()) for (const { id } of entry.created) if (!mapped.has(id)) keep.add(id);
  for (const kind of kinds) {
    if (isMaterial(kind)) {
      await m.replace(kind, new Set([...keep, ...(put.materials ?? []).filter((given) => given.kind === kind).map((given) => given.id)]));
      continue;
    }
    const row = kindOf(kind)!;
    for (const record of row.put?.of(put) ?? []) keep.add(row.put!.id(record));
    for (const id of await w.keys(row.store)) if (!keep.has(id)) await row.drop!(w, id);
    await row.replaced?.(w, keep);
  }
}
