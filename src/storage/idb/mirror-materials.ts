/**
 * The materials of the generic kinds (the `materials` store) in a mirror batch (see MirrorBatch):
 * put as the upstream has them, dropped, replaced whole per kind, and re-keyed, driven by the
 * graph table (src/shared/graph.ts) rather than a row per kind: a material is its wire JSON, and
 * what lists a re-keyed record is found from the kinds' `references`. Records written here wait
 * in `pending` until the change log has numbered them: a new one takes the sequence number of
 * its change as its list order, as the generic path's own writes do.
 */
import { KINDS, type GenericKind } from '../../shared/graph.js';
import { rewriteIds } from '../../shared/rewrite-ids.js';
import type { IdPair, MaterialRecord, RecordKind } from '../schema.js';
import type { Change } from '../storage.js';
import { ofKind } from './materials.js';
import type { MirrorWrite } from './mirror-write.js';

type Pending = Omit<MaterialRecord, 'seq'> & { seq?: number };

const GENERIC = new Set<string>(KINDS.filter((row) => !row.own).map((row) => row.kind));

/** Whether a kind is stored in the materials store. */
export const isMaterial = (kind: RecordKind | string): kind is GenericKind => GENERIC.has(kind);

/** The generic kinds whose records list records of `kind` (by the table's references; not those held whole). */
const LISTING = new Map<string, GenericKind[]>();
for (const row of KINDS) {
  if (row.own) continue;
  for (const reference of Object.values(row.references)) {
    if ((reference as { model?: string }).model) continue;
    const kinds = LISTING.get(reference.kind) ?? [];
    if (!kinds.includes(row.kind as GenericKind)) LISTING.set(reference.kind, [...kinds, row.kind as GenericKind]);
  }
}

const keyOf = (kind: string, id: string) => `${kind}/${id}`;

export type MirrorMaterials = ReturnType<typeof mirrorMaterials>;

export function mirrorMaterials(w: MirrorWrite) {
  const store = w.tx.objectStore('materials');
  /** Records this batch wrote (or deleted: null), as it left them. */
  const pending = new Map<string, Pending | null>();
  const get = async (kind: GenericKind, id: string): Promise<Pending | undefined> => {
    const key = keyOf(kind, id);
    if (pending.has(key)) return pending.get(key) ?? undefined;
    return store.get([kind, id]);
  };
  const set = (record: Pending) => pending.set(keyOf(record.kind, record.id), record);
  /** Every record of a kind, as this batch left them. */
  const all = async (kind: GenericKind): Promise<Pending[]> => {
    const found = new Map((await store.index('by-kind-seq').getAll(ofKind(kind))).map((record) => [record.id, record as Pending]));
    for (const [key, record] of pending) {
      if (!key.startsWith(`${kind}/`)) continue;
      const id = key.slice(kind.length + 1);
      if (record) found.set(id, record);
      else found.delete(id);
    }
    return [...found.values()];
  };

  const m = {
    /** A material as the upstream has it; a change only when it differs (a stored one keeps its place). */
    async put(given: Omit<MaterialRecord, 'seq'>) {
      const stored = await get(given.kind, given.id);
      if (stored && JSON.stringify(stored.value) === JSON.stringify(given.value)) return;
      set({ kind: given.kind, id: given.id, value: given.value, ...(stored?.seq === undefined ? {} : { seq: stored.seq }) });
      w.note(given.kind, given.id);
    },

    /** A material the upstream no longer has. */
    async drop(kind: GenericKind, id: string) {
      if (!(await get(kind, id))) return;
      pending.set(keyOf(kind, id), null);
      w.note(kind, id, true);
    },

    /** The kind made exactly the ids `keep` names (the caller adds what it put and what is made here and queued). */
    async replace(kind: GenericKind, keep: ReadonlySet<string>) {
      for (const record of await all(kind)) if (!keep.has(record.id)) await m.drop(kind, record.id);
    },

    /**
     * Materials made here re-keyed to the upstream's ids (under the new id, in their place in the
     * list; when the upstream's is stored already, it is kept and the local one goes), then every
     * material that lists a re-keyed record, of any kind, listing its new id.
     */
    async rekey(pairs: readonly IdPair[]) {
      if (!pairs.length) return;
      const upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
      for (const { kind, local, upstream } of pairs) {
        if (!isMaterial(kind)) continue;
        const record = await get(kind, local);
        if (!record) continue;
        pending.set(keyOf(kind, local), null);
        w.note(kind, local, true);
        if (await get(kind, upstream)) continue;
        set({ ...record, id: upstream, value: { ...rewriteIds(record.value, upstreamOf), id: upstream } });
        w.note(kind, upstream);
      }
      const listing = new Set(pairs.flatMap((pair) => LISTING.get(pair.kind) ?? []));
      for (const kind of listing) {
        for (const record of await all(kind)) {
          const value = rewriteIds(record.value, upstreamOf);
          if (value === record.value) continue;
          set({ ...record, value });
          w.note(kind, record.id);
        }
      }
    },

    /** Writes what this batch left, once the log has numbered its changes: a new material's place is its change's. */
    async finish(changes: readonly Change[]) {
      for (const [key, record] of pending) {
        const slash = key.indexOf('/');
        const [kind, id] = [key.slice(0, slash), key.slice(slash + 1)];
        if (!record) {
          await store.delete([kind, id]);
          continue;
        }
        let seq = record.seq;
        if (seq === undefined)
          for (const change of changes) if (change.collection === kind && change.id === id && !change.deleted) seq = change.seq;
        await store.put({ ...record, seq: seq! });
      }
    },
  };
  return m;
}
