/**
 * Tags and websites on their own (TagsApi, TagApi, WebsitesApi, WebsiteApi): the record a
 * SeededTag (SeededWebsite) makes, the record an update of the whole Tag (Website) makes, and a
 * search over their text (URL and name). Bodies are checked strictly against the SDK's models
 * (src/shared/shapes.ts). A tag is known by its text and a website by its URL, as the assets'
 * own path knows them (a seed's tag of a stored text is that tag).
 */
import { KINDS, type KindRow } from '../../shared/graph.js';
import { checkShape } from '../../shared/shapes.js';
import type { LinkedKind, LinkedRecords } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import type { JsonObject } from '../validate.js';
import { lower, searchMaterials } from './material.js';

/** What differs between the two kinds: their models and the field that names a record. */
export const LINKED = {
  tag: { model: 'Tag', seeded: 'SeededTag', key: 'text' },
  website: { model: 'Website', seeded: 'SeededWebsite', key: 'url' },
} as const satisfies Record<LinkedKind, { model: string; seeded: string; key: string }>;

export const linkedRow = (kind: LinkedKind): KindRow => KINDS.find((row) => row.kind === kind)!;

/** The fields a record keeps as its own (the rest of a model, but its references, is kept in `fields`). */
const OWN_FIELDS = new Set(['schema', 'id', 'created', 'updated', 'text', 'category', 'url', 'name', 'mechanism']);

/** A body checked against an SDK model: a 400 naming the first field that is not as the model says. */
export function checked(model: string, value: unknown): JsonObject {
  if (value === undefined) throw badRequest(`The request body is required: send a ${model}.`);
  const problem = checkShape(model, value, lower(model));
  if (problem) throw badRequest(`${problem}.`.replace(/\.\.$/, '.'));
  return value as JsonObject;
}

/** What a (checked) seed makes: the new record, if no stored one of its text (URL) is used, and the asset it is on. */
export interface Seeded<K extends LinkedKind> {
  key: string;
  asset?: string;
  record: LinkedRecords[K];
}

/**
 * A SeededTag (SeededWebsite) as a new record: its text and category (its URL and name), its
 * mechanism, and the asset it is on. A seed's `person` (a website's `conversation`) is refused:
 * that association is made by its own operation once the record exists.
 */
export function seededRecord<K extends LinkedKind>(kind: K, body: unknown, clock: Clock): Seeded<K> {
  const { seeded } = LINKED[kind];
  const seed = checked(seeded, body);
  for (const field of ['person', 'conversation'])
    if (seed[field] !== undefined && seed[field] !== null)
      throw badRequest(
        `${lower(seeded)}.${field} is not taken here: create the ${kind}, then associate it with the ${field} (${kind === 'tag' ? 'TagApi' : 'WebsiteApi'}).`,
      );
  const now = clock.now().toISOString();
  const asset = typeof seed.asset === 'string' ? seed.asset : undefined;
  const base = {
    id: clock.newId(),
    created: now,
    updated: now,
    ...(typeof seed.mechanism === 'string' ? { mechanism: seed.mechanism } : {}),
    assets: asset === undefined ? [] : [asset],
  };
  const record =
    kind === 'tag'
      ? {
          ...base,
          text: seed.text as string,
          category: typeof seed.category === 'string' ? seed.category : 'UNKNOWN',
          fields: { score: { manual: 0, automatic: 0 }, ...(Array.isArray(seed.tagsVector) ? { tagsVector: seed.tagsVector } : {}) },
        }
      : { ...base, url: seed.url as string, name: seed.name as string, fields: { score: { manual: 0, automatic: 0 } } };
  const key = kind === 'tag' ? (seed.text as string) : (seed.url as string);
  return { key, ...(asset === undefined ? {} : { asset }), record: record as unknown as LinkedRecords[K] };
}

/** The id and the text (URL) of an update's body (a whole Tag or Website, checked). */
export function updateTarget(kind: LinkedKind, body: unknown): { id: string; key: string; sent: JsonObject } {
  const sent = checked(LINKED[kind].model, body);
  return { id: sent.id as string, key: sent[LINKED[kind].key] as string, sent };
}

/**
 * An update's record: the model's own fields as sent (text and category, URL and name), its other
 * fields kept as sent (score, interactions, …); its references (the assets it is on, …) are the
 * stored ones (they change through the association operations); `created` kept, `updated` now.
 */
export function updatedRecord<K extends LinkedKind>(stored: LinkedRecords[K], sent: JsonObject, clock: Clock): LinkedRecords[K] {
  const references = linkedRow('text' in stored ? 'tag' : 'website').references;
  const fields = Object.fromEntries(Object.entries(sent).filter(([key]) => !OWN_FIELDS.has(key) && !(key in references)));
  const own =
    'text' in stored
      ? { text: sent.text as string, category: sent.category as string }
      : { url: sent.url as string, name: sent.name as string };
  return { ...stored, ...own, fields, updated: clock.now().toISOString() } as LinkedRecords[K];
}

/**
 * A search (the query of a SearchInput) over tags by their text, websites by their URL and name:
 * those holding the whole query (`exact`) or some of its words, best first, each with its record
 * (`wire`) when `transferables`.
 */
export function searchLinked<K extends LinkedKind>(
  kind: K,
  query: string,
  records: ReadonlyArray<LinkedRecords[K]>,
  wire: (record: LinkedRecords[K]) => JsonObject,
  transferables: boolean,
): JsonObject {
  const searched = records.map((record) => ({
    value: { id: record.id, ...('text' in record ? { text: record.text } : { url: record.url, name: record.name }) },
  }));
  const found = searchMaterials(linkedRow(kind), query, searched, false) as { iterable: JsonObject[] };
  const byId = new Map(records.map((record) => [record.id, record]));
  return {
    iterable: found.iterable.map((item) => ({ ...(transferables ? { [kind]: wire(byId.get(item.identifier as string)!) } : {}), ...item })),
  };
}
