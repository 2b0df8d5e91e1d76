/** Assets of the data format (in short or whole, with their formats and annotations), tags and websites. */
import {
  AnnotationTypeEnum,
  ClassificationGenericEnum,
  ClassificationSpecificEnum,
  MechanismEnum,
  RoleEnum,
  TagCategoryEnum,
} from '../enums.js';
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import { assetFromInput } from '../models/asset.js';
import { parseApplication } from '../models/application.js';
import type { AnnotationRecord, AssetRecord, FormatRecord, TagRecord, WebsiteRecord } from '../../storage/schema.js';
import { array, boolean, number, object, oneOf, optional, required, string, uuid, type JsonObject } from '../validate.js';
import { checkShape } from '../../shared/shapes.js';
import { fromBase64, grouped, iso } from './fields.js';
import type { MaterialKind } from '../../shared/graph.js';
import { kindRow } from '../models/material-links.js';

/**
 * A record's other associations (`links`: src/storage/idb/links.ts), by its model's wire field
 * ('persons'), each the ids it lists; absent when none.
 */
function parseLinks(input: JsonObject, path: string, kind: MaterialKind): { links?: Record<string, string[]> } {
  const given = optional(input, 'links', path, object);
  if (!given) return {};
  const links: Record<string, string[]> = {};
  for (const [key, ids] of Object.entries(given)) {
    const reference = kindRow(kind).references[key];
    if (!reference?.many || key.includes('.')) throw badRequest(`${path}.links.${key} is not a list of the ${kind}'s associations.`);
    const list = array(ids, `${path}.links.${key}`).map((id, i) => uuid(id, `${path}.links.${key}[${i}]`));
    if (list.length) links[key] = list;
  }
  return Object.keys(links).length ? { links } : {};
}

/** An Annotation as stored: id, type, text, times; links as references. */
export function parseAnnotation(value: unknown, path: string, asset?: string): AnnotationRecord {
  const input = object(value, path);
  required(input, 'id', path, uuid);
  required(input, 'type', path, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  required(input, 'text', path, string);
  required(input, 'created', path, grouped);
  required(input, 'updated', path, grouped);
  const owner = optional(input, 'asset', path, (v, p) => required(object(v, p), 'id', p, uuid));
  if (asset !== undefined && owner !== asset) throw badRequest(`${path}.asset.id must be its asset's id ${asset}.`);
  if (asset === undefined && owner !== undefined)
    throw badRequest(`${path} belongs to asset ${owner}: list it in that asset's annotations.`);
  return input as AnnotationRecord;
}

function format(value: unknown, path: string, asset: string): FormatRecord {
  const input = object(value, path);
  const classification = required(input, 'classification', path, object);
  required(classification, 'generic', `${path}.classification`, (v, p) => oneOf(v, ClassificationGenericEnum, p));
  required(classification, 'specific', `${path}.classification`, (v, p) => oneOf(v, ClassificationSpecificEnum, p));
  const text = optional(input, 'text', path, string);
  const bytes = optional(input, 'bytes', path, fromBase64);
  if ((text === undefined) === (bytes === undefined)) throw badRequest(`${path} must have either text or bytes (base64).`);
  return {
    id: required(input, 'id', path, uuid),
    asset,
    role: required(input, 'role', path, (v, p) => oneOf(v, RoleEnum, p)),
    classification: classification as FormatRecord['classification'],
    application: parseApplication(required(input, 'application', path, object), `${path}.application`) as FormatRecord['application'],
    created: required(input, 'created', path, iso),
    updated: required(input, 'updated', path, iso),
    kind: required(input, 'kind', path, (v, p) => oneOf(v, ['fragment', 'file'] as const, p)),
    ...(text !== undefined ? { text } : { bytes: bytes! }),
    size: required(input, 'size', path, number),
  };
}

/** An asset: in short (`text`), or whole as exported (`formats`). */
export function parseAsset(
  value: unknown,
  path: string,
  clock: Clock,
): { record: AssetRecord; formats: FormatRecord[]; annotations: AnnotationRecord[] } {
  const input = object(value, path);
  if (!('formats' in input)) {
    const { record, formats, annotations } = assetFromInput(input, path, clock);
    return { record, formats, annotations };
  }
  const { formats: formatList, annotations: annotationList, ...rest } = input;
  const id = required(rest, 'id', path, uuid);
  const formats = array(formatList, `${path}.formats`).map((f, i) => format(f, `${path}.formats[${i}]`, id));
  if (formats.length === 0) throw badRequest(`${path}.formats must list at least one format.`);
  const ids = formats.map((f) => f.id);
  const inFormats = (v: unknown, p: string) => {
    const formatId = uuid(v, p);
    if (!ids.includes(formatId)) throw badRequest(`${p} must be the id of one of its formats.`);
    return formatId;
  };
  const flag = (key: 'favorited' | 'discovered' | 'pseudo' | 'demo') => {
    const v = optional(rest, key, path, boolean);
    return v === undefined ? {} : { [key]: v };
  };
  const record: AssetRecord = {
    id,
    name: required(rest, 'name', path, string),
    created: required(rest, 'created', path, iso),
    updated: required(rest, 'updated', path, iso),
    creator: required(rest, 'creator', path, string),
    mechanism: required(rest, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)),
    formats: ids,
    original: required(rest, 'original', path, inFormats),
    preview: required(rest, 'preview', path, inFormats),
    ...flag('favorited'),
    ...flag('discovered'),
    ...flag('pseudo'),
    ...flag('demo'),
  };
  const anchors = optional(rest, 'anchors', path, array)?.map((a, i) => uuid(a, `${path}.anchors[${i}]`));
  if (anchors?.length) record.anchors = anchors;
  Object.assign(record, parseLinks(rest, path, 'asset'));
  const score = optional(rest, 'score', path, object);
  const wrong = score && checkShape('Score', score, `${path}.score`);
  if (wrong) throw badRequest(wrong);
  if (score) record.score = score as NonNullable<AssetRecord['score']>;
  const annotations = (annotationList === undefined || annotationList === null ? [] : array(annotationList, `${path}.annotations`)).map(
    (a, i) => parseAnnotation(a, `${path}.annotations[${i}]`, id),
  );
  return { record, formats, annotations };
}

/** A tag or website: its fields, and the ids of its assets. */
export function parseLinked<T extends TagRecord | WebsiteRecord>(kind: 'tag' | 'website') {
  return (value: unknown, path: string): T => {
    const input = object(value, path);
    const base = {
      id: required(input, 'id', path, uuid),
      created: required(input, 'created', path, iso),
      updated: required(input, 'updated', path, iso),
      ...(optional(input, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)) ? { mechanism: input.mechanism as string } : {}),
      assets: array(required(input, 'assets', path, array), `${path}.assets`).map((a, i) => uuid(a, `${path}.assets[${i}]`)),
      ...parseLinks(input, path, kind),
    };
    const record = (
      kind === 'tag'
        ? {
            ...base,
            text: required(input, 'text', path, string),
            category: required(input, 'category', path, (v, p) => oneOf(v, TagCategoryEnum, p)),
          }
        : { ...base, url: required(input, 'url', path, string), name: required(input, 'name', path, string) }
    ) as T;
    // Its other wire fields (score, …): the model's, as the model has them.
    const fields = optional(input, 'fields', path, object);
    if (fields === undefined) return record;
    const model = kind === 'tag' ? 'Tag' : 'Website';
    const { assets: _assets, mechanism: _mechanism, ...own } = record;
    const problem = checkShape(
      model,
      { ...fields, ...own, created: { value: base.created }, updated: { value: base.updated } },
      `${path}.fields`,
    );
    if (problem) throw badRequest(`${problem}.`.replace(/\.\.$/, '.'));
    return { ...record, fields };
  };
}
