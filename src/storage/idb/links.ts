/**
 * Associations of records of any kind (src/shared/graph.ts's RELATIONS), written in one transaction
 * over every store that keeps a side of one. Each kind is read and written through a small adapter
 * that shows its record as the wire model's reference fields (`{iterable: [{id}]}` lists): a
 * generic material is its stored value; a conversation, message or anchor its wire JSON text; an
 * annotation its wire record; an asset, tag or website (structured records) a view of the ids they
 * keep: the record's own lists (an asset's `anchors`, a tag's or website's `assets`), what other
 * stores keep of it (an asset's tags and websites: the tags' and websites' `assets`), and the rest in
 * its `links` map. A record deleted is unlisted in the same transaction from every record of every
 * kind whose reference fields list it (`unlisting`, used by every delete).
 */
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import { KINDS, RELATIONS, type GenericKind, type MaterialKind } from '../../shared/graph.js';
import type { JsonObject } from '../../shared/json.js';
import type { AssetRecord, Logged, PiecesDB, TagRecord, WebsiteRecord } from '../schema.js';
import type { Change, LinkedRecord, LinkEdit, LinkKey, OutboxScope, Storage } from '../storage.js';
import { ofKind } from './materials.js';
import { abortOnThrow, commit, log, queueing } from './transactions.js';

/** Every store a side of an association is kept in, with the change log and the outbox. */
export const LINK_STORES = [
  'materials',
  'conversations',
  'messages',
  'anchors',
  'annotations',
  'assets',
  'tags',
  'websites',
  'changes',
  'outbox',
] as const;

type LinkStore = (typeof LINK_STORES)[number];
// Any transaction over at least the link stores (a delete's, which has stores of its own as well).
type Tx = IDBPTransaction<PiecesDB, StoreNames<PiecesDB>[] | LinkStore[], 'readwrite'>;

const REFERENCES = new Map(KINDS.map((row) => [row.kind, row.references]));
const OWN = new Set(KINDS.filter((row) => row.own).map((row) => row.kind));

/** The fields of each kind an association writes (RELATIONS' keys). */
const LINKED = new Map<MaterialKind, Set<string>>();
for (const relation of RELATIONS)
  for (const [kind, key] of [
    [relation.from, relation.fromKey],
    [relation.to, relation.toKey],
  ] as const)
    if (key) LINKED.set(kind, (LINKED.get(kind) ?? new Set()).add(key));

/**
 * The fields of `holder` that list records of `kind` and that a delete of one unlists it from: a
 * generic kind's references (but those holding a record whole), a hand-written kind's fields an
 * association writes (a message's own conversation is not one).
 */
const listingFields = (holder: MaterialKind, kind: MaterialKind) =>
  Object.entries(REFERENCES.get(holder) ?? {}).filter(
    ([key, reference]) => reference.kind === kind && (OWN.has(holder) ? !!LINKED.get(holder)?.has(key) : !reference.model),
  );

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The ids a top-level `{iterable: [{id}]}` field lists. */
function idsAt(value: JsonObject, key: string): string[] {
  const field = value[key];
  const items = isObject(field) && Array.isArray(field.iterable) ? field.iterable : [];
  return items.flatMap((item) => (isObject(item) && typeof item.id === 'string' ? [item.id] : []));
}

const flat = (ids: readonly string[]) => ({ iterable: ids.map((id) => ({ id })) });

/** The `many` reference fields of a kind, by wire key (top-level only: a structured record's). */
const manyKeys = (kind: MaterialKind) =>
  Object.entries(REFERENCES.get(kind) ?? {})
    .filter(([key, reference]) => reference.many && !key.includes('.'))
    .map(([key]) => key);

/** How one kind's record is read as its reference fields, and written back from them. */
interface Adapter<R> {
  get(tx: Tx, id: string): Promise<R | undefined>;
  all(tx: Tx): Promise<R[]>;
  view(tx: Tx, record: R): Promise<JsonObject & { id: string }> | (JsonObject & { id: string });
  /** The record with `value`'s reference fields (and `updated`). */
  write(record: R, value: JsonObject): R;
  put(tx: Tx, record: R): Promise<unknown>;
  /** Whether the record's stored form may name `id` (a quick test before reading it as a view). */
  names(record: R, id: string): boolean;
}

const updatedOf = (value: JsonObject) => {
  const updated = value.updated;
  return isObject(updated) && typeof updated.value === 'string' ? updated.value : undefined;
};

/** A record kept as its wire JSON text (`json`). */
function textAdapter<N extends 'conversations' | 'messages' | 'anchors'>(store: N): Adapter<PiecesDB[N]['value']> {
  return {
    get: (tx, id) => tx.objectStore(store).get(id) as Promise<PiecesDB[N]['value'] | undefined>,
    all: (tx) => tx.objectStore(store).getAll() as Promise<Array<PiecesDB[N]['value']>>,
    view: (_tx, record) => ({ ...(JSON.parse(record.json) as JsonObject), id: record.id }),
    write: (record, value) => ({ ...record, json: JSON.stringify(value) }),
    put: (tx, record) => tx.objectStore(store).put(record as never),
    names: (record, id) => record.json.includes(id),
  };
}

/**
 * A structured record (asset, tag, website): `own` are its fields kept on the record itself,
 * `derived` those another store keeps (read from it, never written here); the rest go in `links`.
 */
function structuredAdapter<R extends AssetRecord | TagRecord | WebsiteRecord>(
  kind: MaterialKind,
  store: 'assets' | 'tags' | 'websites',
  own: Record<string, { read: (record: R) => readonly string[]; write: (record: R, ids: string[]) => R }>,
  derived: Record<string, (tx: Tx, record: R) => Promise<readonly string[]>> = {},
): Adapter<R> {
  const keys = manyKeys(kind);
  return {
    get: (tx, id) => tx.objectStore(store).get(id) as Promise<R | undefined>,
    all: (tx) => tx.objectStore(store).getAll() as Promise<R[]>,
    async view(tx, record) {
      const value: JsonObject & { id: string } = { id: record.id, updated: { value: record.updated } };
      for (const key of keys) {
        const derive = derived[key];
        const ids = derive ? await derive(tx, record) : (own[key]?.read(record) ?? record.links?.[key] ?? []);
        if (ids.length) value[key] = flat(ids);
      }
      return value;
    },
    write(record, value) {
      let next: R = { ...record, updated: updatedOf(value) ?? record.updated };
      const links: Record<string, string[]> = {};
      for (const key of keys) {
        if (derived[key]) continue;
        const ids = idsAt(value, key);
        const field = own[key];
        if (field) next = field.write(next, ids);
        else if (ids.length) links[key] = ids;
      }
      const { links: _old, ...rest } = next;
      return (Object.keys(links).length ? { ...rest, links } : rest) as R;
    },
    put: (tx, record) => tx.objectStore(store).put(record as never),
    names: (record, id) =>
      Object.values(record.links ?? {}).some((ids) => ids.includes(id)) ||
      Object.values(own).some((field) => field.read(record).includes(id)),
  };
}

const onAssets = {
  assets: {
    read: (record: TagRecord | WebsiteRecord) => record.assets,
    write: <R extends TagRecord | WebsiteRecord>(record: R, ids: string[]): R => ({ ...record, assets: ids }),
  },
};

const ADAPTERS: Partial<Record<MaterialKind, Adapter<never>>> = {
  conversation: textAdapter('conversations'),
  conversationMessage: textAdapter('messages'),
  anchor: textAdapter('anchors'),
  annotation: {
    get: (tx, id) => tx.objectStore('annotations').get(id),
    all: (tx) => tx.objectStore('annotations').getAll(),
    view: (_tx, record) => record,
    write: (record, value) => ({ ...record, ...value, id: record.id }),
    put: (tx, record) => tx.objectStore('annotations').put(record),
    names: (record, id) => JSON.stringify(record).includes(id),
  } satisfies Adapter<PiecesDB['annotations']['value']>,
  asset: structuredAdapter<AssetRecord>(
    'asset',
    'assets',
    {
      anchors: {
        read: (record) => record.anchors ?? [],
        write: (record, ids) => {
          const { anchors: _old, ...rest } = record;
          return ids.length ? { ...rest, anchors: ids } : rest;
        },
      },
    },
    {
      // An asset's tags and websites are theirs: each lists the assets it is on.
      tags: async (tx, record) => (await tx.objectStore('tags').index('by-asset').getAllKeys(record.id)) as string[],
      websites: async (tx, record) => (await tx.objectStore('websites').index('by-asset').getAllKeys(record.id)) as string[],
    },
  ),
  tag: structuredAdapter<TagRecord>('tag', 'tags', onAssets),
  website: structuredAdapter<WebsiteRecord>('website', 'websites', onAssets),
} as never;

type Material = PiecesDB['materials']['value'];

/** A generic kind's adapter: its material's value. */
function genericAdapter(kind: GenericKind): Adapter<Material> {
  return {
    get: (tx, id) => tx.objectStore('materials').get([kind, id]),
    all: (tx) => tx.objectStore('materials').index('by-kind-seq').getAll(ofKind(kind)),
    view: (_tx, record) => record.value,
    write: (record, value) => ({ ...record, value: { ...value, id: record.id } }),
    put: (tx, record) => tx.objectStore('materials').put(record),
    names: (record, id) => JSON.stringify(record.value).includes(id),
  };
}

const adapterOf = (kind: MaterialKind): Adapter<unknown> =>
  (OWN.has(kind) ? ADAPTERS[kind] : genericAdapter(kind as GenericKind)) as Adapter<unknown>;

/** Whether the kind's records can be read and written here (every kind of an association). */
export const linkable = (kind: MaterialKind) => !OWN.has(kind) || !!ADAPTERS[kind];

/** The change a record's write logs: its kind (a material, an identifier stream's collection). */
const changeOf = (kind: MaterialKind, id: string, deleted?: true): Omit<Change, 'seq'> => ({
  collection: kind as Logged,
  id,
  ...(deleted ? { deleted } : {}),
});

const keyOf = ({ kind, id }: LinkKey) => `${kind}/${id}`;

/** `value` with `id` taken from every field of it that lists `kind` (the same object when none does). */
function without(holder: MaterialKind, value: JsonObject, kind: MaterialKind, id: string): JsonObject {
  let next = value;
  for (const [key, reference] of listingFields(holder, kind)) {
    const path = key.split('.');
    const parents: JsonObject[] = [];
    let node: unknown = next;
    for (const step of path) {
      if (!isObject(node)) break;
      parents.push(node);
      node = node[step];
    }
    if (parents.length !== path.length || !isObject(node)) continue;
    let field: JsonObject | undefined;
    if (!reference.many) {
      if (node.id !== id) continue;
      field = undefined;
    } else {
      const items = Array.isArray(node.iterable) ? node.iterable : [];
      if (!items.some((item) => isObject(item) && item.id === id)) continue;
      const rest = items.filter((item) => !(isObject(item) && item.id === id));
      // Indices, where the list keeps them, are positions again.
      const indices = isObject(node.indices)
        ? Object.fromEntries(rest.flatMap((item, i) => (isObject(item) && typeof item.id === 'string' ? [[item.id, i]] : [])))
        : undefined;
      field = { ...node, iterable: rest, ...(indices ? { indices } : {}) };
    }
    // Rebuilt from the innermost field out.
    let built: JsonObject | undefined = field;
    for (let i = path.length - 1; i >= 0; i--) {
      const { [path[i]!]: _old, ...rest } = parents[i]!;
      built = built === undefined ? rest : { ...rest, [path[i]!]: built };
    }
    next = built!;
  }
  return next;
}

/** The kinds whose reference fields list records of `kind`. */
const holdersOf = (kind: MaterialKind) =>
  KINDS.filter((row) => linkable(row.kind) && listingFields(row.kind, kind).length > 0).map((row) => row.kind);

/**
 * What deleting `deleted` unlists, read in `tx`: every record (not itself deleted) whose reference
 * fields list one of them, written without it (`updated` set to `stamp` where given). `writes()`
 * issues the puts; `logged` are their changes.
 */
export async function unlisting(
  tx: Tx,
  deleted: readonly LinkKey[],
  stamp?: string,
  /** Records the caller writes itself in the transaction (left as it writes them). */
  skip: readonly LinkKey[] = [],
): Promise<{ writes: () => Array<Promise<unknown>>; logged: Array<Omit<Change, 'seq'>> }> {
  const gone = new Set([...deleted, ...skip].map(keyOf));
  const next = new Map<string, { kind: MaterialKind; record: unknown; value: JsonObject }>();
  const byHolder = new Map<MaterialKind, MaterialKind[]>();
  for (const { kind } of deleted) for (const holder of holdersOf(kind)) byHolder.set(holder, [...(byHolder.get(holder) ?? []), kind]);
  for (const [holder, kinds] of byHolder) {
    const adapter = adapterOf(holder);
    const targets = deleted.filter((key) => kinds.includes(key.kind));
    for (const record of await adapter.all(tx)) {
      if (!targets.some(({ id }) => adapter.names(record, id))) continue;
      const current = next.get(`${holder}/${(record as { id: string }).id}`);
      const before = current?.value ?? (await adapter.view(tx, record));
      if (gone.has(keyOf({ kind: holder, id: before.id as string }))) continue;
      let value = before;
      for (const { kind, id } of targets) value = without(holder, value, kind, id);
      if (value === before) continue;
      next.set(keyOf({ kind: holder, id: before.id as string }), { kind: holder, record: current?.record ?? record, value });
    }
  }
  const written = [...next.values()].map(({ kind, record, value }) => ({
    kind,
    record: adapterOf(kind).write(record, stamp ? { ...value, updated: { value: stamp } } : value),
  }));
  return {
    writes: () => written.map(({ kind, record }) => adapterOf(kind).put(tx, record)),
    logged: written.map(({ kind, record }) => changeOf(kind, (record as { id: string }).id)),
  };
}

function linkWrites(db: IDBPDatabase<PiecesDB>, scope?: OutboxScope): Pick<Storage, 'editLinks'> {
  return {
    editLinks: (keys, edit) =>
      queueing(scope, async (outbox) => {
        const tx = db.transaction([...LINK_STORES], 'readwrite') as unknown as Tx;
        const found = new Map<string, LinkedRecord>();
        const raw = new Map<string, unknown>();
        for (const key of keys) {
          if (found.has(keyOf(key))) continue;
          const adapter = adapterOf(key.kind);
          const record = await adapter.get(tx, key.id);
          if (!record) continue;
          raw.set(keyOf(key), record);
          found.set(keyOf(key), { kind: key.kind, id: key.id, value: await adapter.view(tx, record) });
        }
        const result: LinkEdit | undefined = await abortOnThrow(tx, () => edit(found));
        const put = result?.put ?? [];
        const removed = (result?.delete ?? []).filter((key) => found.has(keyOf(key)));
        if (!put.length && !removed.length) {
          await tx.done;
          return { found, changes: [] };
        }
        for (const key of [...put, ...removed])
          if (!raw.has(keyOf(key))) throw new Error(`editLinks: ${keyOf(key)} was not read (only what the keys name is written).`);
        const unlisted = removed.length ? await unlisting(tx, removed, result?.stamp) : undefined;
        const changes: Change[] = [];
        await commit(tx, function* () {
          for (const { kind, id, value } of put) {
            const adapter = adapterOf(kind);
            yield adapter.put(tx, adapter.write(raw.get(keyOf({ kind, id })), value));
          }
          for (const { kind, id } of removed) {
            if (OWN.has(kind)) throw new Error(`editLinks: a ${kind} is deleted by its own store.`);
            yield tx.objectStore('materials').delete([kind, id]);
          }
          if (unlisted) yield* unlisted.writes();
          yield log(
            tx.objectStore('changes'),
            [
              ...put.map(({ kind, id }) => changeOf(kind, id)),
              ...removed.map(({ kind, id }) => changeOf(kind, id, true)),
              ...(unlisted?.logged ?? []),
            ],
            changes,
          );
          if (outbox) yield outbox.append(tx.objectStore('outbox'));
        });
        return { found, changes };
      }),
  };
}

export function linkStore(
  db: IDBPDatabase<PiecesDB>,
): Pick<Storage, 'editLinks'> & { queueing(scope: OutboxScope): Pick<Storage, 'editLinks'> } {
  return { ...linkWrites(db), queueing: (scope) => linkWrites(db, scope) };
}

const ASSET_FIELDS = REFERENCES.get('asset') ?? {};

/** A record of `kind` as its wire JSON (a material's value, a JSON-text record parsed, an annotation), read in `tx`. */
async function wireOf(tx: Tx, kind: MaterialKind, id: string): Promise<JsonObject | undefined> {
  if (kind === 'annotation') return tx.objectStore('annotations').get(id);
  const store =
    kind === 'conversation' ? 'conversations' : kind === 'conversationMessage' ? 'messages' : kind === 'anchor' ? 'anchors' : undefined;
  if (store) {
    const record = await tx.objectStore(store).get(id);
    if (!record) return undefined;
    const wire: JsonObject = { ...(JSON.parse(record.json) as JsonObject), id };
    // A conversation's messages are kept beside its JSON: listed as references (FlattenedConversationMessages).
    return 'messageIds' in record ? { ...wire, messages: { iterable: record.messageIds.map((message) => ({ id: message })) } } : wire;
  }
  return OWN.has(kind) ? undefined : (await tx.objectStore('materials').get([kind, id]))?.value;
}

/**
 * The records an asset's `links` name, whole as their wire JSON, by the Asset's field (those that
 * exist, in its order): what its Asset lists whole (Persons, WorkstreamSummaries, …). Read in a
 * transaction over the stores of `LINKED_READS` as well.
 */
export async function linkedOf(tx: unknown, links: AssetRecord['links']): Promise<Record<string, JsonObject[]> | undefined> {
  if (!links) return undefined;
  const entries = await Promise.all(
    Object.entries(links).map(async ([key, ids]) => {
      const kind = ASSET_FIELDS[key]?.kind;
      const found = kind ? await Promise.all(ids.map((id) => wireOf(tx as Tx, kind, id))) : [];
      return [key, found.filter((item): item is JsonObject => !!item)] as const;
    }),
  );
  const linked = Object.fromEntries(entries.filter(([, items]) => items.length));
  return Object.keys(linked).length ? linked : undefined;
}

/** The stores an asset's read needs beside its own for `linkedOf`. */
export const LINKED_READS = ['materials', 'conversations', 'messages'] as const;
