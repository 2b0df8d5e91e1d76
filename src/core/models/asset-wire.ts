/**
 * The SDK models built from an asset's stored records: Asset, FlattenedAsset, Format,
 * Annotation, Tag, Website.
 */
import type { AnnotationRecord, AssetRecord, FormatRecord, TagRecord, WebsiteRecord } from '../../storage/schema.js';
import type { StoredAsset } from '../../storage/storage.js';
import type { JsonObject } from '../validate.js';
import { readableSize } from './asset-records.js';

const time = (value: string) => ({ value });

/** Keyed indices of a list (`{id: position}`), as clients read them. */
const indices = (items: ReadonlyArray<{ id: string }>) => Object.fromEntries(items.map((item, i) => [item.id, i]));

export function flattenedAsset(whole: StoredAsset): JsonObject {
  const { record } = whole;
  const refs = (items: ReadonlyArray<{ id: string }>) => ({ iterable: items.map(({ id }) => ({ id })), indices: indices(items) });
  return {
    id: record.id,
    name: record.name,
    creator: record.creator,
    created: time(record.created),
    updated: time(record.updated),
    formats: { iterable: record.formats.map((id) => ({ id })) },
    preview: { base: record.preview },
    original: record.original,
    mechanism: record.mechanism,
    ...flags(record),
    ...(whole.annotations.length ? { annotations: refs(whole.annotations) } : {}),
    ...(whole.tags.length ? { tags: refs(whole.tags) } : {}),
    ...(whole.websites.length ? { websites: refs(whole.websites) } : {}),
    ...(whole.anchors?.length ? { anchors: refs(whole.anchors) } : {}),
    // Its other associations (src/storage/idb/links.ts), each a Flattened… list.
    ...Object.fromEntries(
      Object.entries(record.links ?? {}).map(([key, ids]) => [
        key,
        key === 'annotations' ? refs(union(whole.annotations, ids)) : refs(ids.map((id) => ({ id }))),
      ]),
    ),
  };
}

/** Owned items, then the ids linked that are not among them. */
const union = (owned: ReadonlyArray<{ id: string }>, linked: readonly string[]) => [
  ...owned,
  ...linked.filter((id) => !owned.some((item) => item.id === id)).map((id) => ({ id })),
];

const flags = (record: AssetRecord) => ({
  ...(record.favorited !== undefined ? { favorited: record.favorited } : {}),
  ...(record.discovered !== undefined ? { discovered: record.discovered } : {}),
  ...(record.pseudo !== undefined ? { pseudo: record.pseudo } : {}),
  ...(record.demo !== undefined ? { demo: record.demo } : {}),
  ...(record.score ? { score: record.score } : {}),
});

/** A format's value on the wire: a fragment's or a file's string or bytes. */
function value(format: FormatRecord): JsonObject {
  const transferable: JsonObject =
    format.text !== undefined ? { string: { raw: format.text } } : { bytes: { raw: Array.from(format.bytes ?? []) } };
  return { [format.kind]: transferable };
}

/** The flattened form of a format (`asset` its id), as in ReferencedFormat.reference. */
export function flattenedFormat(format: FormatRecord, withValue: boolean): JsonObject {
  return {
    id: format.id,
    creator: format.application.id,
    classification: format.classification,
    role: format.role,
    application: format.application,
    asset: format.asset,
    bytes: { value: format.size, readable: readableSize(format.size) },
    created: time(format.created),
    updated: time(format.updated),
    ...(withValue ? value(format) : {}),
  };
}

/** A whole Format: its asset as a FlattenedAsset; the value when `withValue`. */
export function formatWire(format: FormatRecord, whole: StoredAsset, withValue: boolean, asset = flattenedAsset(whole)): JsonObject {
  return { ...flattenedFormat(format, withValue), asset };
}

export const annotationWire = (annotation: AnnotationRecord): JsonObject => annotation;

/** A tag or a website, with the assets it is on (its `mechanism` is the store's own) and its other fields kept (its score, …). */
function linkedWire(record: TagRecord | WebsiteRecord): JsonObject {
  const { assets, mechanism: _mechanism, created, updated, fields, links, ...rest } = record;
  const list = (ids: readonly string[]) => ({ iterable: ids.map((id) => ({ id })), indices: indices(ids.map((id) => ({ id }))) });
  return {
    ...fields,
    ...rest,
    created: time(created),
    updated: time(updated),
    ...(assets.length ? { assets: list(assets) } : {}),
    // Its other associations (src/storage/idb/links.ts), each a Flattened… list.
    ...Object.fromEntries(Object.entries(links ?? {}).map(([key, ids]) => [key, list(ids)])),
  };
}

export const tagWire: (tag: TagRecord) => JsonObject = linkedWire;
export const websiteWire: (website: WebsiteRecord) => JsonObject = linkedWire;

/**
 * The SDK Asset of a stored asset: its formats whole, its original and preview
 * as references with their flattened format (the value too when `transferables`),
 * and its annotations, tags, websites and anchors whole (with `indices`).
 */
export function assetWire(whole: StoredAsset, transferables: boolean): JsonObject {
  const { record } = whole;
  const flat = flattenedAsset(whole);
  const byId = new Map(whole.formats.map((f) => [f.id, f]));
  const reference = (id: string): JsonObject => {
    const format = byId.get(id);
    return format ? { id, reference: flattenedFormat(format, transferables) } : { id };
  };
  const listed = <T extends { id: string }>(items: T[], wire: (item: T) => JsonObject) => ({
    iterable: items.map(wire),
    indices: indices(items),
  });
  return {
    id: record.id,
    name: record.name,
    creator: record.creator,
    created: time(record.created),
    updated: time(record.updated),
    formats: { iterable: whole.formats.map((format) => formatWire(format, whole, transferables, flat)) },
    preview: { base: reference(record.preview) },
    original: reference(record.original),
    mechanism: record.mechanism,
    ...flags(record),
    ...(whole.annotations.length ? { annotations: listed(whole.annotations, annotationWire) } : {}),
    ...(whole.tags.length ? { tags: listed(whole.tags, tagWire) } : {}),
    ...(whole.websites.length ? { websites: listed(whole.websites, websiteWire) } : {}),
    ...(whole.anchors?.length ? { anchors: listed(whole.anchors, (anchor) => JSON.parse(anchor.json) as JsonObject) } : {}),
    // Its other associations, whole (Persons, WorkstreamSummaries, …): an annotation linked joins those it owns.
    ...Object.fromEntries(
      Object.entries(whole.linked ?? {}).map(([key, items]) => {
        const all =
          key === 'annotations'
            ? [...whole.annotations, ...items.filter((item) => !whole.annotations.some((a) => a.id === item.id))]
            : items;
        return [key, listed(all as Array<JsonObject & { id: string }>, (item) => item)];
      }),
    ),
  };
}
