/**
 * Every association of the graph table (src/shared/graph.ts's RELATIONS) with a hand-written kind on
 * one side or both (asset, conversation, message, anchor, annotation, tag, website), made from the
 * table's rows: each side lists the other in its field for the other's kind, both written in one
 * `editLinks` transaction (src/storage/idb/links.ts keeps each kind's side in its own record), with
 * `updated` bumped and a change logged for each. Associating what is associated, or disassociating
 * what is not, writes nothing (204 all the same); an unknown record is a 404 naming its kind and id.
 * The associations between two generic kinds are the generic path's (materials.ts); the few written
 * by hand before (an anchor with a conversation or an asset, an asset's tags and websites, a
 * conversation's assets) keep their handlers, and the route table keeps their rows.
 */
import { RELATIONS, type MaterialKind, type RelationRow } from '../../shared/graph.js';
import type { LinkKey } from '../../storage/storage.js';
import type { OperationContext } from '../context.js';
import { notFound, reply } from '../http.js';
import { isGeneric, keyOf, kindRow, relinked } from '../models/material-links.js';
import { uuid, type JsonObject } from '../validate.js';
import { clock, publish } from './common.js';
import type { MaterialOperation } from './materials.js';

/** The associations with a hand-written kind on a side, and a field that lists it on one side at least. */
export const LINK_RELATIONS: readonly RelationRow[] = RELATIONS.filter(
  (row) => (!isGeneric(row.from) || !isGeneric(row.to)) && (row.fromKey !== undefined || row.toKey !== undefined),
);

const manyOf = (kind: MaterialKind, key: string) => kindRow(kind).references[key]?.many ?? true;

const relate = (relation: RelationRow, linked: boolean) => async (context: OperationContext) => {
  const [fromParam, toParam] = relation.params;
  const keys: [LinkKey, LinkKey] = [
    { kind: relation.from, id: uuid(context.params[fromParam], `The ${relation.from} id`) },
    { kind: relation.to, id: uuid(context.params[toParam], `The ${relation.to} id`) },
  ];
  const stamp = { value: clock(context).now().toISOString() };
  const { changes } = await context.service.storage.editLinks(keys, (found) => {
    const [a, b] = keys.map((key) => {
      const record = found.get(keyOf(key.kind, key.id));
      if (!record) throw notFound(`No ${key.kind} with id ${key.id}.`);
      return record;
    }) as [NonNullable<ReturnType<typeof found.get>>, NonNullable<ReturnType<typeof found.get>>];
    const same = a === b;
    const side = (value: JsonObject, kind: MaterialKind, key: string | undefined, id: string) =>
      key ? relinked(value, key, manyOf(kind, key), id, linked) : value;
    const nextA = side(a.value, a.kind, relation.fromKey, b.id);
    const nextB = side(same ? nextA : b.value, b.kind, relation.toKey, a.id);
    const put = same
      ? nextB === a.value
        ? []
        : [{ ...a, value: { ...nextB, id: a.id, updated: stamp } }]
      : [
          ...(nextA === a.value ? [] : [{ ...a, value: { ...nextA, id: a.id, updated: stamp } }]),
          ...(nextB === b.value ? [] : [{ ...b, value: { ...nextB, id: b.id, updated: stamp } }]),
        ];
    return put.length ? { put } : undefined;
  });
  publish(context, changes);
  return reply();
};

/** The route rows of the associations with a hand-written kind, two per pair (associate, disassociate). */
export const LINK_OPERATIONS: readonly MaterialOperation[] = LINK_RELATIONS.flatMap((relation) => [
  { ...relation.associate, method: 'POST' as const, handler: relate(relation, true) },
  { ...relation.disassociate, method: 'POST' as const, handler: relate(relation, false) },
]);
