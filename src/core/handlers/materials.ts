/**
 * The generic path: every operation of every kind with no hand-written store (`own: false` in the
 * graph table, src/shared/graph.ts), and every association between two such kinds, made from the
 * table's rows. Each kind gets its collection and item snapshots, create (from its Seeded model),
 * update (the whole model), delete (unlisted from every record that lists it), identifier stream,
 * search and score increment, where the SDK has the operation; each association writes both
 * sides in one transaction. The route table takes its rows from `MATERIAL_OPERATIONS`.
 */
import { KINDS, RELATIONS, type GenericKind, type KindRow, type MaterialKind, type RelationRow } from '../../shared/graph.js';
import { checkShape } from '../../shared/shapes.js';
import { materialKey, type MaterialKey, type MaterialRecord, type Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import type { OperationContext, OperationHandler } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { flattenedAsset } from '../models/asset-wire.js';
import { incrementedScore, lower, searchMaterials, seedRecord, updatedRecord } from '../models/material.js';
import { isGeneric, keyOf, kindRow, referencedBy, relinked } from '../models/material-links.js';
import { searchQuery } from '../models/search.js';
import { fieldsOf } from '../models/material-shapes.js';
import { isObject, uuid, type JsonObject } from '../validate.js';
import { clock, publish, transferables } from './common.js';
import { identifierStream } from './streams.js';

type Value = JsonObject & { id: string };
type Link = { kind: GenericKind; id: string };

/** The kinds the generic path stores. */
export const GENERIC_KINDS: readonly KindRow[] = KINDS.filter((row) => !row.own);

/** The associations whose two kinds are both stored by the generic path. */
export const GENERIC_RELATIONS: readonly RelationRow[] = RELATIONS.filter(
  (row) => isGeneric(row.from) && isGeneric(row.to) && (row.fromKey !== undefined || row.toKey !== undefined),
);

/** The one path parameter of an item operation's path (`/person/{person}` → person). */
const paramOf = (path: string) => /\{(\w+)\}/.exec(path)![1]!;

const idOf = (context: OperationContext, param: string, kind: MaterialKind) => uuid(context.params[param], `The ${kind} id`);

const noSuch = (kind: MaterialKind, id: string, where = '') => notFound(`No ${kind} with id ${id}${where}.`);

/** A record with its `updated` time now, for the kinds whose model has one (a Share, a Backup have none). */
export function stamped(value: JsonObject, time: Clock, kind: MaterialKind): Value {
  const { updated: _updated, ...rest } = value;
  return (fieldsOf(kindRow(kind).model)?.has('updated') ? { ...rest, updated: { value: time.now().toISOString() } } : rest) as Value;
}

/**
 * The field of `kind`'s model that lists records of `other` when they are associated: the
 * association's own key where the SDK names one, else the first field listing that kind.
 */
function backKey(kind: MaterialKind, other: MaterialKind): { key: string; many: boolean } | undefined {
  const relation =
    RELATIONS.find((r) => r.from === kind && r.to === other && r.fromKey !== undefined) ??
    RELATIONS.find((r) => r.to === kind && r.from === other && r.toKey !== undefined);
  const key = relation ? (relation.from === kind ? relation.fromKey : relation.toKey) : undefined;
  const references = kindRow(kind).references;
  const chosen = key ?? Object.keys(references).find((name) => references[name]!.kind === other && references[name]!.many);
  // A field holding whole records (`model`) is not written here.
  return chosen === undefined || references[chosen]?.model ? undefined : { key: chosen, many: references[chosen]?.many ?? true };
}

/** The generic records a record's references list (the others are written by their own stores). */
export const genericLinks = (kind: MaterialKind, value: JsonObject): Link[] =>
  referencedBy(kind, value).filter((link): link is Link => isGeneric(link.kind));

/** `other` listing (or no longer listing) the record `kind/id`; the same object when that changes nothing. */
export function linkedBack(other: MaterialRecord, kind: MaterialKind, id: string, linked: boolean): JsonObject {
  const back = backKey(other.kind, kind);
  if (!back) return other.value;
  if (linked) return relinked(other.value, back.key, back.many, id, true);
  // Unlisted from every field of it that lists the kind.
  let value: JsonObject = other.value;
  for (const [key, reference] of Object.entries(kindRow(other.kind).references))
    if (reference.kind === kind && !reference.model) value = relinked(value, key, reference.many, id, false);
  return value;
}

/** How a create reads a record of a hand-written kind that its record holds whole (a Sensitive's FlattenedAsset). */
const RESOLVERS: Partial<Record<MaterialKind, (storage: Storage, id: string) => Promise<JsonObject | undefined>>> = {
  asset: async (storage, id) => {
    const whole = await storage.getAsset(id);
    return whole ? flattenedAsset(whole) : undefined;
  },
};

/** Whether a record of a hand-written kind exists, for the kinds whose store can say. */
const OWN_EXISTS: Partial<Record<MaterialKind, (storage: Storage, id: string) => Promise<unknown>>> = {
  asset: (storage, id) => storage.getAsset(id),
  anchor: (storage, id) => storage.getAnchor(id),
  annotation: (storage, id) => storage.getAnnotation(id),
  application: async (storage, id) => (await storage.hasApplication(id)) || undefined,
  conversation: (storage, id) => storage.getConversation(id),
  conversationMessage: (storage, id) => storage.getMessage(id),
  tag: (storage, id) => storage.getTag(id),
  website: (storage, id) => storage.getWebsite(id),
};

/**
 * A 404 naming the first record of a hand-written kind that `links` name and that does not exist
 * (read before the write: that store's records are not part of its transaction, and a record
 * listing them is not listed back by them yet).
 */
export async function ownExist(storage: Storage, links: ReadonlyArray<{ kind: MaterialKind; id: string }>, where: string): Promise<void> {
  for (const { kind, id } of links) {
    const exists = OWN_EXISTS[kind];
    if (!isGeneric(kind) && exists && !(await exists(storage, id))) throw noSuch(kind, id, where);
  }
}

async function body(context: OperationContext, model: string): Promise<JsonObject> {
  const value = await readJson(context.request, context.service.maxBodyBytes);
  if (value === undefined) throw badRequest(`The request body is required: send a ${model}.`);
  const problem = checkShape(model, value, lower(model));
  if (problem) throw badRequest(`${problem}.`.replace(/\.\.$/, '.'));
  return value as JsonObject;
}

const snapshot = (row: KindRow) => async (context: OperationContext) => {
  transferables(context.url);
  const records = await context.service.storage.listMaterials(row.kind as GenericKind);
  return reply({ iterable: records.map((record) => record.value) });
};

const item = (row: KindRow, param: string) => async (context: OperationContext) => {
  transferables(context.url);
  const id = idOf(context, param, row.kind);
  const record = await context.service.storage.getMaterial(row.kind as GenericKind, id);
  if (!record) throw noSuch(row.kind, id);
  return reply(record.value);
};

const create = (row: KindRow) => async (context: OperationContext) => {
  transferables(context.url);
  return reply(await createMaterial(context, row, await body(context, row.seeded!)));
};

/** Stores the record of a kind's seed (checked against its Seeded model), with the links back of the records it lists; answers it. */
export async function createMaterial(context: OperationContext, row: KindRow, seed: JsonObject): Promise<JsonObject> {
  const { storage } = context.service;
  const time = clock(context);
  const { value, resolve } = seedRecord(row, seed, time);
  for (const { key, kind, id } of resolve) {
    const whole = await RESOLVERS[kind]?.(storage, id);
    if (!whole) throw noSuch(kind, id, ` (${lower(row.seeded!)}.${key})`);
    value[key] = whole;
  }
  const kind = row.kind as GenericKind;
  await ownExist(storage, referencedBy(kind, value), ` (listed by the new ${kind})`);
  const links = genericLinks(kind, value);
  const { changes } = await storage.editMaterials(links, (found) => {
    const others = links.map((link) => {
      const other = found.get(materialKey(link));
      if (!other) throw noSuch(link.kind, link.id, ` (listed by the new ${kind})`);
      return other;
    });
    return {
      put: [
        { kind, id: value.id, value },
        ...others.map((other) => ({
          kind: other.kind,
          id: other.id,
          value: stamped(linkedBack(other, kind, value.id, true), time, other.kind),
        })),
      ],
    };
  });
  publish(context, changes);
  return value;
}

const update = (row: KindRow) => async (context: OperationContext) => {
  transferables(context.url);
  const sent = await body(context, row.model);
  const kind = row.kind as GenericKind;
  const id = uuid(sent.id, `${lower(row.model)}.id`);
  const time = clock(context);
  const { storage } = context.service;
  const stored = await storage.getMaterial(kind, id);
  if (stored) {
    const before = new Set(referencedBy(kind, stored.value).map((link) => keyOf(link.kind, link.id)));
    const added = referencedBy(kind, sent).filter((link) => !before.has(keyOf(link.kind, link.id)));
    await ownExist(storage, added, ` (${lower(row.model)} lists it)`);
  }
  let answer: Value | undefined;
  const keyed = (links: Link[]) => new Set(links.map(materialKey));
  const { changes } = await storage.editMaterials(
    [{ kind, id }],
    (found) => {
      const stored = found.get(materialKey({ kind, id }));
      if (!stored) throw noSuch(kind, id);
      const next = stamped(updatedRecord(stored.value, sent, time), time, kind);
      const before = keyed(genericLinks(kind, stored.value));
      const after = genericLinks(kind, next);
      const puts = [{ kind, id, value: next }];
      for (const link of after) {
        if (before.has(materialKey(link)) || (link.kind === kind && link.id === id)) continue;
        const other = found.get(materialKey(link));
        if (!other) throw noSuch(link.kind, link.id, ` (${lower(row.model)} lists it)`);
        puts.push({ kind: other.kind, id: other.id, value: stamped(linkedBack(other, kind, id, true), time, other.kind) });
      }
      const now = keyed(after);
      for (const link of genericLinks(kind, stored.value)) {
        const other = found.get(materialKey(link));
        if (now.has(materialKey(link)) || !other || (link.kind === kind && link.id === id)) continue;
        const value = linkedBack(other, kind, id, false);
        if (value !== other.value) puts.push({ kind: other.kind, id: other.id, value: stamped(value, time, other.kind) });
      }
      answer = next;
      return { put: puts };
    },
    (found) => {
      const stored = found.get(materialKey({ kind, id }));
      return stored ? [...genericLinks(kind, stored.value), ...genericLinks(kind, sent)] : [];
    },
  );
  publish(context, changes);
  return reply(answer);
};

/**
 * A delete: the record goes, and every record of any kind that lists it (generic or hand-written)
 * no longer does, stamped `updated`, in the same transaction (src/storage/idb/links.ts).
 */
const remove = (row: KindRow, param: string) => async (context: OperationContext) => {
  const kind = row.kind as GenericKind;
  const id = idOf(context, param, kind);
  const stamp = clock(context).now().toISOString();
  const { changes } = await context.service.storage.editLinks([{ kind, id }], (found) => {
    if (!found.has(materialKey({ kind, id }))) throw noSuch(kind, id);
    return { delete: [{ kind, id }], stamp };
  });
  publish(context, changes);
  return reply();
};

const search = (row: KindRow) => async (context: OperationContext) => {
  const withRecords = transferables(context.url);
  const query = searchQuery(await readJson(context.request, context.service.maxBodyBytes));
  const records = await context.service.storage.listMaterials(row.kind as GenericKind);
  return reply(searchMaterials(row, query, records, withRecords));
};

const scores = (row: KindRow, param: string) => async (context: OperationContext) => {
  const kind = row.kind as GenericKind;
  const id = idOf(context, param, kind);
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  if (!isObject(sent)) throw badRequest('The request body must be a SeededScoreIncrement (a JSON object).');
  const time = clock(context);
  const { changes } = await context.service.storage.editMaterials([{ kind, id }], (found) => {
    const stored = found.get(materialKey({ kind, id }));
    if (!stored) throw noSuch(kind, id);
    return { put: [{ kind, id, value: stamped(incrementedScore(row, sent, stored.value), time, kind) }] };
  });
  publish(context, changes);
  return reply();
};

/**
 * An association (or its undoing) of two generic records: each lists the other in its field for
 * the other's kind, written in one transaction (with `updated` bumped). Associating what is
 * associated, or disassociating what is not, writes nothing (204 all the same); an unknown record
 * is a 404 naming its kind.
 */
const relate = (relation: RelationRow, linked: boolean) => async (context: OperationContext) => {
  const from = relation.from as GenericKind;
  const to = relation.to as GenericKind;
  const [fromParam, toParam] = relation.params;
  const fromId = idOf(context, fromParam, from);
  const toId = idOf(context, toParam, to);
  const time = clock(context);
  const keys: MaterialKey[] = [
    { kind: from, id: fromId },
    { kind: to, id: toId },
  ];
  const { changes } = await context.service.storage.editMaterials(keys, (found) => {
    const a = found.get(materialKey(keys[0]!));
    if (!a) throw noSuch(from, fromId);
    const b = found.get(materialKey(keys[1]!));
    if (!b) throw noSuch(to, toId);
    const same = a === b;
    const manyOf = (kind: MaterialKind, key: string) => kindRow(kind).references[key]?.many ?? true;
    const nextA = relation.fromKey ? relinked(a.value, relation.fromKey, manyOf(from, relation.fromKey), toId, linked) : a.value;
    const nextB = relation.toKey ? relinked(same ? nextA : b.value, relation.toKey, manyOf(to, relation.toKey), fromId, linked) : b.value;
    if (same) return nextB === a.value ? undefined : { put: [{ kind: from, id: fromId, value: stamped(nextB, time, from) }] };
    const put = [
      ...(nextA === a.value ? [] : [{ kind: from, id: fromId, value: stamped(nextA, time, from) }]),
      ...(nextB === b.value ? [] : [{ kind: to, id: toId, value: stamped(nextB, time, to) }]),
    ];
    return put.length ? { put } : undefined;
  });
  publish(context, changes);
  return reply();
};

/** A route row of the generic path (the route table's `Operation`, less its flags it does not use). */
export interface MaterialOperation {
  name: string;
  api: string;
  method: 'GET' | 'POST';
  path: string;
  handler: OperationHandler;
  readOnly?: true;
  socket?: true;
}

/** What the generic path answers for one role of a kind's operations. */
function handlerOf(
  row: KindRow,
  role: keyof KindRow['ops'],
  path: string,
): Omit<MaterialOperation, 'name' | 'api' | 'method' | 'path'> | undefined {
  switch (role) {
    case 'snapshot':
      return { handler: snapshot(row) };
    case 'item':
      return { handler: item(row, paramOf(path)) };
    case 'create':
      return row.seeded ? { handler: create(row) } : undefined;
    case 'update':
      return { handler: update(row) };
    case 'delete':
      return { handler: remove(row, paramOf(path)) };
    case 'stream':
      return { handler: identifierStream(row.kind as GenericKind), socket: true };
    case 'search':
      return { handler: search(row), readOnly: true };
    case 'scores':
      return { handler: scores(row, paramOf(path)) };
    default:
      return undefined;
  }
}

/** The route rows of the generic path, one per SDK operation, from the graph table. */
export const MATERIAL_OPERATIONS: readonly MaterialOperation[] = [
  ...GENERIC_KINDS.flatMap((row) =>
    Object.entries(row.ops).flatMap(([role, op]) => {
      const made = handlerOf(row, role as keyof KindRow['ops'], op.path);
      return made ? [{ name: op.name, api: op.api, method: op.method, path: op.path, ...made }] : [];
    }),
  ),
  ...GENERIC_RELATIONS.flatMap((relation) => [
    { ...relation.associate, method: 'POST' as const, handler: relate(relation, true) },
    { ...relation.disassociate, method: 'POST' as const, handler: relate(relation, false) },
  ]),
];
