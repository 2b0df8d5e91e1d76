/**
 * The references between stored materials, as their wire models write them: a `Flattened…` list
 * (`{"iterable":[{"id":…}]}`) for a `many` reference, a `{"id":…}` for a single one. What lists
 * what is read from the graph table (src/shared/graph.ts): a kind's `references`.
 */
import { KINDS, type GenericKind, type KindRow, type MaterialKind } from '../../shared/graph.js';
import type { JsonObject } from '../validate.js';

const ROWS = new Map<MaterialKind, KindRow>(KINDS.map((row) => [row.kind, row]));

/** The table's row of a kind. */
export const kindRow = (kind: MaterialKind): KindRow => ROWS.get(kind)!;

/** Whether the generic path stores the kind (no hand-written store serves it). */
export const isGeneric = (kind: MaterialKind): kind is GenericKind => ROWS.get(kind)?.own === false;

/** `kind/id`: how `editMaterials` keys what it found. */
export const keyOf = (kind: MaterialKind, id: string) => `${kind}/${id}`;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a dotted wire key ('grounding.messages'). */
function at(value: JsonObject, key: string): unknown {
  let node: unknown = value;
  for (const step of key.split('.')) node = isObject(node) ? node[step] : undefined;
  return node;
}

/** `value` with the field at a dotted wire key replaced (undefined: removed), its parents made where missing. */
function withField(value: JsonObject, key: string, field: unknown): JsonObject {
  const [step, ...rest] = key.split('.') as [string, ...string[]];
  const next = rest.length ? withField(isObject(value[step]) ? (value[step] as JsonObject) : {}, rest.join('.'), field) : field;
  const { [step]: _old, ...others } = value;
  return next === undefined ? others : { ...others, [step]: next as JsonObject };
}

/** The ids a reference field of a record lists (in order); `key` may be dotted. */
export function listed(value: JsonObject, key: string, many: boolean): string[] {
  const field = at(value, key);
  if (!isObject(field)) return [];
  if (!many) return typeof field.id === 'string' ? [field.id] : [];
  const items = Array.isArray(field.iterable) ? field.iterable : [];
  return items.flatMap((item) => (isObject(item) && typeof item.id === 'string' ? [item.id] : []));
}

/**
 * `value` with `id` added to (or taken from) its reference field `key`; the same object when that
 * changes nothing. A single reference is set to `{id}`, or removed when it names `id`.
 */
export function relinked(value: JsonObject, key: string, many: boolean, id: string, linked: boolean): JsonObject {
  const there = listed(value, key, many).includes(id);
  if (there === linked) return value;
  if (!many) return withField(value, key, linked ? { id } : undefined);
  const current = at(value, key);
  const field = isObject(current) ? current : {};
  const items = Array.isArray(field.iterable) ? field.iterable : [];
  const next = linked ? [...items, { id }] : items.filter((item) => !(isObject(item) && item.id === id));
  // A list made here carries its indices, as the clients read them (the Pieces CLI finds a conversation's ranges by `indices`).
  const indices = isObject(field.indices) ? { ...(field.indices as Record<string, unknown>) } : items.length === 0 ? {} : undefined;
  if (indices) {
    if (linked) indices[id] = items.length;
    else delete indices[id];
  }
  return withField(value, key, { ...field, iterable: next, ...(indices ? { indices } : {}) });
}

/** Every record (kind and id) a record's reference fields list, each once (not those it holds whole). */
export function referencedBy(kind: MaterialKind, value: JsonObject): Array<{ kind: MaterialKind; id: string }> {
  const seen = new Set<string>();
  const found: Array<{ kind: MaterialKind; id: string }> = [];
  for (const [key, reference] of Object.entries(kindRow(kind).references)) {
    // A field holding a record whole (a WorkstreamEvent's Application) embeds it: no link.
    if (reference.model) continue;
    for (const id of listed(value, key, reference.many)) {
      if (seen.has(keyOf(reference.kind, id))) continue;
      seen.add(keyOf(reference.kind, id));
      found.push({ kind: reference.kind, id });
    }
  }
  return found;
}
