/**
 * Changes to a stored asset: `assetUpdate` (name, `favorited`, its annotations' text and type),
 * a format's new value, and annotations made and changed on their own.
 */
import type { Clock } from '../clock.js';
import { AnnotationTypeEnum } from '../enums.js';
import { badRequest } from '../http.js';
import type { AnnotationRecord, AssetRecord, FormatRecord } from '../../storage/schema.js';
import type { StoredAsset } from '../../storage/storage.js';
import { array, boolean, isObject, knownKeys, object, oneOf, optional, required, string, uuid, type JsonObject } from '../validate.js';
import { utf8Size, type Content } from './asset-records.js';
import { seededAnnotation, seededValue } from './asset-seed.js';

const ASSET_FIELDS = [
  'schema',
  'id',
  'name',
  'creator',
  'created',
  'updated',
  'synced',
  'deleted',
  'formats',
  'preview',
  'original',
  'shares',
  'mechanism',
  'websites',
  'interacted',
  'tags',
  'sensitives',
  'persons',
  'curated',
  'discovered',
  'activities',
  'score',
  'favorited',
  'pseudo',
  'annotations',
  'hints',
  'anchors',
  'conversations',
  'summaries',
  'messages',
  'demo',
];

/** The id of an Asset sent to `assetUpdate`. */
export function updatedAssetId(body: unknown): string {
  if (body === undefined) throw badRequest('The request body must be the Asset to update.');
  return required(object(body, 'asset'), 'id', 'asset', uuid);
}

/**
 * What `assetUpdate` changes: the name, `favorited`, and the text (and type) of the asset's
 * annotations; formats change through formatUpdateValue, tags and websites through their
 * associations. Returns the new record and annotations, and what changed (for the activity).
 */
export function updateAsset(body: JsonObject, current: StoredAsset, clock: Clock) {
  knownKeys(body, ASSET_FIELDS, 'asset', 'Asset');
  const name = optional(body, 'name', 'asset', string);
  const favorited = optional(body, 'favorited', 'asset', boolean);
  const now = clock.now().toISOString();
  const record: AssetRecord = { ...current.record };
  const changed = { name: false, description: false, annotations: false, favorited: false };
  if (name !== undefined && name !== record.name) {
    if (!name.trim()) throw badRequest('asset.name must not be empty.');
    record.name = name;
    changed.name = true;
  }
  if (favorited !== undefined && favorited !== (record.favorited ?? false)) {
    record.favorited = favorited;
    changed.favorited = true;
  }
  const annotations = optional(body, 'annotations', 'asset', object);
  const put: AnnotationRecord[] = [];
  if (annotations) {
    const stored = new Map(current.annotations.map((a) => [a.id, a]));
    optional(annotations, 'iterable', 'asset.annotations', array)?.forEach((item, i) => {
      const p = `asset.annotations.iterable[${i}]`;
      const annotation = object(item, p);
      const id = required(annotation, 'id', p, uuid);
      const before = stored.get(id);
      if (!before) throw badRequest(`${p}.id ${id} is not an annotation of this asset; create it with annotationsCreateNewAnnotation.`);
      const text = required(annotation, 'text', p, string);
      const type = required(annotation, 'type', p, (v, q) => oneOf(v, AnnotationTypeEnum, q));
      if (text === before.text && type === before.type) return;
      put.push({ ...before, text, type, updated: { value: now } });
      changed.annotations = true;
      if (type === 'DESCRIPTION' || before.type === 'DESCRIPTION') changed.description = true;
    });
  }
  if (changed.name || changed.favorited || changed.annotations) record.updated = now;
  return { record, annotations: put, changed };
}

/** The new value of a format (`formatUpdateValue`): its id, its text or bytes, and the asset it says it belongs to. */
export function parseFormatValue(body: unknown): { id: string; asset?: string; text?: string; bytes?: Uint8Array } {
  if (body === undefined) throw badRequest('The request body must be the Format with its new value.');
  const format = object(body, 'format');
  const id = required(format, 'id', 'format', uuid);
  const asset = optional(format, 'asset', 'format', (v, p) => (typeof v === 'string' ? uuid(v, p) : required(object(v, p), 'id', p, uuid)));
  const values = (['fragment', 'file'] as const)
    .map((kind) => optional(format, kind, 'format', (v, p) => seededValue(isObject(v) ? { ...v, metadata: undefined } : v, p, kind)))
    .filter((c): c is Content => !!c && (c.text !== undefined || c.bytes !== undefined));
  const value = values[0];
  if (!value) throw badRequest('format has no value: send the new text as format.fragment.string.raw (or format.file.string.raw).');
  return { id, ...(asset ? { asset } : {}), ...(value.text !== undefined ? { text: value.text } : { bytes: value.bytes! }) };
}

/** A format with a new value (its size and time updated). */
export function withValue(format: FormatRecord, value: { text?: string; bytes?: Uint8Array }, clock: Clock): FormatRecord {
  const { text: _text, bytes: _bytes, ...rest } = format;
  return {
    ...rest,
    ...(value.text !== undefined
      ? { text: value.text, size: utf8Size(value.text) }
      : { bytes: value.bytes!, size: value.bytes!.byteLength }),
    updated: clock.now().toISOString(),
  };
}

/** An annotation made from a SeededAnnotation (`annotationsCreateNewAnnotation`). */
export function parseNewAnnotation(body: unknown, clock: Clock): AnnotationRecord {
  if (body === undefined) throw badRequest('The request body must be a SeededAnnotation ({type, text, asset?}).');
  const seeded = object(body, 'seededAnnotation');
  const { type, text, extra } = seededAnnotation(seeded, 'seededAnnotation');
  const asset = optional(seeded, 'asset', 'seededAnnotation', uuid);
  const stamp = { value: clock.now().toISOString() };
  return {
    ...extra,
    id: clock.newId(),
    created: stamp,
    updated: stamp,
    type,
    text,
    ...(asset ? { asset: { id: asset } } : {}),
  } as AnnotationRecord;
}

/** What `annotationUpdate` changes of an annotation: its text, type, `favorited`. */
export function updateAnnotation(body: unknown, stored: AnnotationRecord, clock: Clock): AnnotationRecord {
  const annotation = object(body, 'annotation');
  const text = required(annotation, 'text', 'annotation', string);
  const type = required(annotation, 'type', 'annotation', (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const favorited = optional(annotation, 'favorited', 'annotation', boolean);
  const asset = optional(annotation, 'asset', 'annotation', (v, p) => required(object(v, p), 'id', p, uuid));
  if ((asset ?? stored.asset?.id) !== stored.asset?.id)
    throw badRequest(
      `annotation.asset cannot be changed (the annotation belongs to ${stored.asset ? `asset ${stored.asset.id}` : 'no asset'}).`,
    );
  return { ...stored, text, type, ...(favorited === undefined ? {} : { favorited }), updated: { value: clock.now().toISOString() } };
}
