/**
 * The records of the kinds the generic path stores, made from the graph table
 * (src/shared/graph.ts): a create's record from its Seeded model, an update's, a search over
 * their text, a score increment. The wire form is the SDK model's, references as Flattened lists.
 *
 * A Seeded model becomes its record the way Pieces OS makes one (SDK 4.1.0's models):
 * - a field the model has, of the same type, is copied (`type`, `text`, `name`, …);
 * - a field naming records of another kind (the table's `seeds`: `asset: "id"`, `summary: {id}`,
 *   `anchors: {iterable:[…]}`) lists them in the model's field it names (`assets`, `summaries`,
 *   `anchors`), and where that field holds the record whole (a Sensitive's `asset`, a
 *   FlattenedAsset) the caller reads it (`resolve`);
 * - a seed's `mechanism`, `access` or `model` goes into the model's map of them keyed by the
 *   seed's `asset` (`mechanisms`, `access`, `models`: "a Map<String, …> where the key is an asset
 *   id", the SDK's own words), when the seed names an asset;
 * - then `id` (the clock's), `created` and `updated` (now), a `score` of zeros, and a required
 *   `mechanism` of MANUAL (what the user made by hand) where the seed gave none.
 */
import type { GenericKind, KindRow, MaterialKind } from '../../shared/graph.js';
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import { isObject, type Json, type JsonObject } from '../validate.js';
import { fieldsOf } from './material-shapes.js';
import { listed } from './material-links.js';

const stamp = (clock: Clock) => ({ value: clock.now().toISOString() });

/** What a Seeded field becomes in its record (see the module's comment). */
type SeedField =
  /** A field naming records of another kind: their ids, and the model's field (`into`) that lists them. */
  | { as: 'names'; key: string; kind: MaterialKind; ids: string[]; into?: string; target?: KindRow['references'][string] }
  /** A field the model has, of the same type: copied as given. */
  | { as: 'copied'; key: string; given: Json }
  /** A field the model keeps in a map keyed by the seed's asset (`mechanisms`, `access`, `models`). */
  | { as: 'map'; key: string; given: Json; map: string };

/** The fields of a (valid) seed, each as what it becomes in the record; the others (`schema`, unset ones) are left out. */
function* seedFields(row: KindRow, seed: JsonObject): Generator<SeedField> {
  const model = fieldsOf(row.model)!;
  const seeded = fieldsOf(row.seeded!)!;
  for (const [key, given] of Object.entries(seed)) {
    const type = seeded.get(key)?.type;
    if (key === 'schema' || type === undefined || given === null || given === undefined) continue;
    const field = model.get(key);
    const named = row.seeds?.[key];
    // A field naming records (the table's `seeds`), but for one holding a record whole of the model's own type (copied).
    if (named && !(named.model && field?.type === type)) {
      const ids = named.id ? [given as string] : listed({ given } as JsonObject, 'given', named.many);
      const target = named.into === undefined ? undefined : row.references[named.into];
      yield { as: 'names', key, kind: named.kind, ids, ...(named.into ? { into: named.into } : {}), ...(target ? { target } : {}) };
    } else if (field && field.type === type) yield { as: 'copied', key, given };
    else {
      const map = [`${key}s`, key].find((name) => model.get(name)?.type === `${type}{}`);
      if (map) yield { as: 'map', key, given, map };
    }
  }
}

/** A single reference (of another kind) a create must hold whole: the model field's type names that kind's model, not a reference. */
export interface Resolve {
  key: string;
  kind: MaterialKind;
  id: string;
}

/**
 * What a (valid) Seeded body makes: the record (without the records `resolve` names, which the
 * caller reads and sets), and the single references it must hold whole.
 */
export function seedRecord(row: KindRow, seed: JsonObject, clock: Clock): { value: JsonObject & { id: string }; resolve: Resolve[] } {
  const model = fieldsOf(row.model)!;
  const value: JsonObject = {};
  const resolve: Resolve[] = [];
  const asset = typeof seed.asset === 'string' ? seed.asset : undefined;
  for (const field of seedFields(row, seed)) {
    if (field.as === 'copied') value[field.key] = field.given;
    else if (field.as === 'map') {
      if (asset !== undefined) value[field.map] = { [asset]: field.given };
    } else if (field.into && field.target && !field.target.model)
      value[field.into] = field.target.many ? { iterable: field.ids.map((id) => ({ id })) } : { id: field.ids[0]! };
    else if (field.into && field.target && !field.target.many && field.ids[0] !== undefined)
      resolve.push({ key: field.into, kind: field.kind, id: field.ids[0] });
  }
  const id = clock.newId();
  const record: JsonObject & { id: string } = { id, ...value, created: stamp(clock), updated: stamp(clock) };
  if (model.has('score') && record.score === undefined) record.score = { manual: 0, automatic: 0 };
  if (model.get('mechanism')?.required && record.mechanism === undefined) record.mechanism = 'MANUAL';
  for (const [key, field] of model) {
    if (!field.required || record[key] !== undefined || resolve.some((r) => r.key === key)) continue;
    if (field.type === 'GroupedTimestamp') record[key] = stamp(clock);
    else throw badRequest(`${lower(row.seeded!)} cannot make a ${row.model}: it has no ${key} (the ${row.model} needs one).`);
  }
  return { value: record, resolve };
}

/** Equal JSON values, whatever the order of their keys. */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (!isObject(a) || !isObject(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  return keys.length === Object.keys(b).filter((key) => b[key] !== undefined).length && keys.every((key) => sameJson(a[key], b[key]));
};

/**
 * Whether `record` (one the upstream made) may be what `seed` made (see seedRecord): each field
 * the seed gives it as given is equal, and each list the seed names records into lists them.
 * How a create whose answer was lost is found again.
 */
export function madeFromSeed(row: KindRow, seed: unknown, record: unknown): boolean {
  if (!isObject(seed) || !isObject(record)) return false;
  for (const field of seedFields(row, seed)) {
    if (field.as === 'copied' && !sameJson(record[field.key], field.given)) return false;
    if (field.as === 'names' && field.into && field.target && !field.target.model) {
      const holds = listed(record, field.into, field.target.many);
      if (!field.ids.every((id) => holds.includes(id))) return false;
    }
  }
  return true;
}

/** `SeededPerson` → `seededPerson`: how a body's model is named in messages. */
export const lower = (model: string) => model[0]!.toLowerCase() + model.slice(1);

/** An update's record: the whole model as sent, its id and `created` kept, `updated` now. */
export function updatedRecord(stored: JsonObject & { id: string }, body: JsonObject, clock: Clock): JsonObject & { id: string } {
  return { ...body, id: stored.id, created: stored.created ?? body.created ?? stamp(clock), updated: stamp(clock) };
}

const SEARCH_SKIP = new Set(['id', 'schema', 'created', 'updated', 'deleted', 'score']);

/** The text of a record a search looks through: every string it holds but its ids, times, scores and references. */
function textOf(row: KindRow, value: JsonObject): string {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (typeof node === 'string') found.push(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (isObject(node)) for (const [key, child] of Object.entries(node)) if (!SEARCH_SKIP.has(key)) walk(child);
  };
  for (const [key, child] of Object.entries(value)) if (!SEARCH_SKIP.has(key) && !(key in row.references)) walk(child);
  return found.join('\n');
}

const terms = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

/**
 * The item key of a kind's Searched model (`SearchedPerson.person`): the kind's name, but for a
 * workstream summary (`SearchedWorkstreamSummary.summary`). (The graph table does not carry the
 * Searched models yet.)
 */
const SEARCHED_KEY: Partial<Record<GenericKind, string>> = { workstreamSummary: 'summary' };

/**
 * A search over a kind's records (the query of a SearchInput): those whose text holds the whole
 * query (`exact`) or some of its words, best first; `similarity` is the share of the query's words
 * the record holds. With `transferables`, each item carries its record.
 */
export function searchMaterials(
  row: KindRow,
  query: string,
  records: ReadonlyArray<{ value: JsonObject & { id: string } }>,
  transferables: boolean,
): JsonObject {
  const phrase = query.toLowerCase();
  const wanted = [...new Set(terms(query))];
  const key = SEARCHED_KEY[row.kind as GenericKind] ?? row.kind;
  const items = records
    .map(({ value }, order) => {
      const text = textOf(row, value);
      const words = new Set(terms(text));
      const exact = text.toLowerCase().includes(phrase);
      const similarity = wanted.length ? wanted.filter((term) => words.has(term)).length / wanted.length : 0;
      return { value, order, exact, similarity };
    })
    .filter((item) => item.exact || item.similarity > 0)
    .sort((a, b) => Number(b.exact) - Number(a.exact) || b.similarity - a.similarity || a.order - b.order);
  return {
    iterable: items.map(({ value, exact, similarity }) => ({
      ...(transferables ? { [key]: value } : {}),
      exact,
      similarity: exact ? 1 : similarity,
      identifier: value.id,
    })),
  };
}

const SCORE_KEYS = ['reuse', 'update', 'reference', 'priority', 'searched'] as const;

/**
 * A SeededScoreIncrement's part for `kind` (its singular or plural key): the Score counts it
 * names `true` go up by one. 400 when the body names nothing of this kind.
 */
export function incrementedScore(row: KindRow, body: JsonObject, value: JsonObject): JsonObject {
  const plural = row.plural ? lower(row.plural) : undefined;
  const key = [row.kind, plural].find((name) => name !== undefined && body[name] !== undefined);
  if (key === undefined) throw badRequest(`seededScoreIncrement.${row.kind} is required: the counts of the ${row.kind} to increment.`);
  const seeded = body[key];
  if (!isObject(seeded)) throw badRequest(`seededScoreIncrement.${key} must be a JSON object (a SeededScore).`);
  const score: JsonObject = isObject(value.score) ? { ...value.score } : { manual: 0, automatic: 0 };
  for (const [name, flag] of Object.entries(seeded)) {
    if (name === 'schema') continue;
    if (!(SCORE_KEYS as readonly string[]).includes(name))
      throw badRequest(`seededScoreIncrement.${key}.${name} is not a field of SeededScore.`);
    if (typeof flag !== 'boolean') throw badRequest(`seededScoreIncrement.${key}.${name} must be true or false.`);
    if (flag) score[name] = (typeof score[name] === 'number' ? (score[name] as number) : 0) + 1;
  }
  return { ...value, score };
}
