/**
 * Seeds: a Seed (or a bare SeededAsset) validated and made into the records of the asset it
 * describes; the Seed a draft answers; and the seeded values and annotations that format and
 * annotation writes take too.
 */
import type { Clock } from '../clock.js';
import {
  AnnotationTypeEnum,
  ClassificationGenericEnum,
  ClassificationRenderingEnum,
  ClassificationSpecificEnum,
  MechanismEnum,
  SeedTypeEnum,
  TagCategoryEnum,
} from '../enums.js';
import { badRequest } from '../http.js';
import type { NewAsset } from '../../storage/storage.js';
import {
  array,
  boolean,
  embeddedSchema,
  isObject,
  knownKeys,
  number,
  object,
  oneOf,
  optional,
  required,
  string,
  uuid,
  type JsonObject,
} from '../validate.js';
import { parseApplication } from './application.js';
import { assetRecords, type AssetParts, type Content } from './asset-records.js';
import { FIELDS } from './conversation-fields.js';

const SEED_FIELDS = ['schema', 'asset', 'person', 'anchor', 'website', 'type'];
const SEEDED_ASSET_FIELDS = ['schema', 'metadata', 'application', 'format', 'discovered', 'available', 'pseudo', 'enrichment', 'demo'];
const METADATA_FIELDS = ['schema', 'name', 'mechanism', 'tags', 'websites', 'sensitives', 'persons', 'annotations', 'hints', 'anchors'];
const SEEDED_ANNOTATION_LINKS = ['person', 'model', 'anchor', 'conversation'];

function bytesOf(value: unknown, path: string): Uint8Array {
  const items = array(value, path);
  const bytes = new Uint8Array(items.length);
  items.forEach((item, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 0 || item > 255)
      throw badRequest(`${path}[${i}] must be a byte (0 to 255).`);
    bytes[i] = item;
  });
  return bytes;
}

function base64Text(value: unknown, path: string): string {
  const encoded = string(value, path);
  try {
    const binary = atob(encoded.replace(/-/g, '+').replace(/_/g, '/'));
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    throw badRequest(`${path} must be base64 of UTF-8 text.`);
  }
}

/** A SeededFragment or SeededFile: its value (text or bytes) and what it says about its type. */
export function seededValue(value: unknown, path: string, kind: 'fragment' | 'file'): Content {
  const part = object(value, path);
  knownKeys(part, ['schema', 'string', 'bytes', 'metadata'], path, kind === 'file' ? 'SeededFile' : 'SeededFragment');
  optional(part, 'schema', path, embeddedSchema);
  const metadata = optional(part, 'metadata', path, object);
  const hints: Array<string | undefined> = [];
  if (metadata) {
    const mp = `${path}.metadata`;
    knownKeys(
      metadata,
      kind === 'file' ? ['schema', 'name', 'ext', 'size'] : ['schema', 'ext'],
      mp,
      kind === 'file' ? 'FileMetadata' : 'FragmentMetadata',
    );
    hints.push(optional(metadata, 'ext', mp, (v, p) => oneOf(v, ClassificationSpecificEnum, p)));
    if (kind === 'file') {
      hints.push(optional(metadata, 'name', mp, string));
      optional(metadata, 'size', mp, number);
    }
  }
  const stringPart = optional(part, 'string', path, object);
  const bytesPart = optional(part, 'bytes', path, object);
  let text: string | undefined;
  let bytes: Uint8Array | undefined;
  if (stringPart) {
    const sp = `${path}.string`;
    knownKeys(stringPart, ['schema', 'raw', 'base64', 'base64_url', 'data_url'], sp, 'TransferableString');
    text =
      optional(stringPart, 'raw', sp, string) ??
      optional(stringPart, 'base64', sp, base64Text) ??
      optional(stringPart, 'base64_url', sp, base64Text) ??
      optional(stringPart, 'data_url', sp, (v, p) => {
        const url = string(v, p);
        const comma = url.indexOf(',');
        if (!url.startsWith('data:') || comma < 0) throw badRequest(`${p} must be a data: URL.`);
        return url.slice(5, comma).endsWith(';base64') ? base64Text(url.slice(comma + 1), p) : decodeURIComponent(url.slice(comma + 1));
      });
  }
  if (bytesPart) {
    const bp = `${path}.bytes`;
    knownKeys(bytesPart, ['schema', 'raw', 'base64', 'base64_url', 'data_url'], bp, 'TransferableBytes');
    bytes = optional(bytesPart, 'raw', bp, bytesOf);
    for (const key of ['base64', 'base64_url', 'data_url']) {
      const encoded = optional(bytesPart, key, bp, bytesOf);
      if (!bytes && encoded) bytes = Uint8Array.from(atobSafe(new TextDecoder().decode(encoded), `${bp}.${key}`), (c) => c.charCodeAt(0));
    }
  }
  if (text !== undefined && text.length > 0) return { kind, text, hints };
  if (bytes && bytes.byteLength > 0) return { kind, bytes, hints };
  return { kind, hints };
}

function atobSafe(encoded: string, path: string): string {
  try {
    return atob(
      encoded
        .replace(/^data:[^,]*,/, '')
        .replace(/-/g, '+')
        .replace(/_/g, '/'),
    );
  } catch {
    throw badRequest(`${path} must hold base64 bytes.`);
  }
}

/** A SeededAnnotation of a seed's metadata: its type, text and the links it keeps (as references). */
export function seededAnnotation(value: unknown, path: string): { type: string; text: string; extra: JsonObject } {
  const seeded = object(value, path);
  knownKeys(seeded, FIELDS.SeededAnnotation, path, 'SeededAnnotation');
  optional(seeded, 'schema', path, embeddedSchema);
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const text = required(seeded, 'text', path, string);
  const extra: JsonObject = {};
  const mechanism = optional(seeded, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p));
  if (mechanism) extra.mechanism = mechanism;
  for (const key of ['pseudo', 'favorited'] as const) {
    const flag = optional(seeded, key, path, boolean);
    if (flag !== undefined) extra[key] = flag;
  }
  for (const key of SEEDED_ANNOTATION_LINKS) {
    const id = optional(seeded, key, path, uuid);
    if (id) extra[key] = { id };
  }
  return { type, text, extra };
}

export interface ParsedSeed {
  /** The seed as sent, validated. */
  seed: JsonObject;
  asset: NewAsset;
}

/**
 * A Seed (or a bare SeededAsset) of a new asset: validated, and made into the records of the
 * asset it describes. A seed without content (no text, no bytes) is refused.
 */
export function parseSeed(body: unknown, clock: Clock, id: string): ParsedSeed {
  if (body === undefined) throw badRequest('The request body must be a Seed ({type: "SEEDED_ASSET", asset: SeededAsset}).');
  const seed = object(body, 'seed');
  const isBare = 'format' in seed && 'application' in seed;
  let path = 'seed.asset';
  let seeded: JsonObject;
  if (isBare) {
    path = 'seededAsset';
    seeded = seed;
  } else {
    knownKeys(seed, SEED_FIELDS, 'seed', 'Seed');
    optional(seed, 'schema', 'seed', embeddedSchema);
    const type = optional(seed, 'type', 'seed', (v, p) => oneOf(v, SeedTypeEnum, p));
    if (type !== undefined && type !== 'SEEDED_ASSET')
      throw badRequest(`seed.type must be SEEDED_ASSET to make an asset; got ${JSON.stringify(type)}.`);
    seeded = required(seed, 'asset', 'seed', object);
  }
  knownKeys(seeded, SEEDED_ASSET_FIELDS, path, 'SeededAsset');
  optional(seeded, 'schema', path, embeddedSchema);
  const application = required(seeded, 'application', path, parseApplication) as JsonObject & { id: string };
  const format = required(seeded, 'format', path, object);
  const fp = `${path}.format`;
  knownKeys(format, ['schema', 'file', 'fragment', 'classification'], fp, 'SeededFormat');
  optional(format, 'schema', fp, embeddedSchema);
  const fragment = optional(format, 'fragment', fp, (v, p) => seededValue(v, p, 'fragment'));
  const file = optional(format, 'file', fp, (v, p) => seededValue(v, p, 'file'));
  const classification = optional(format, 'classification', fp, (v, p) => {
    const c = object(v, p);
    knownKeys(c, ['schema', 'generic', 'specific', 'rendering'], p, 'SeededClassification');
    optional(c, 'schema', p, embeddedSchema);
    const generic = optional(c, 'generic', p, (x, q) => oneOf(x, ClassificationGenericEnum, q));
    const specific = optional(c, 'specific', p, (x, q) => oneOf(x, ClassificationSpecificEnum, q));
    const rendering = optional(c, 'rendering', p, (x, q) => oneOf(x, ClassificationRenderingEnum, q));
    return { ...(generic ? { generic } : {}), ...(specific ? { specific } : {}), ...(rendering ? { rendering } : {}) };
  });
  const content = [fragment, file].find((c) => c && (c.text !== undefined || c.bytes !== undefined));
  if (!content) {
    throw badRequest(`${fp} has no content: send the text as ${fp}.fragment.string.raw, or a file's bytes as ${fp}.file.bytes.raw.`);
  }
  const metadata = optional(seeded, 'metadata', path, object) ?? {};
  const mp = `${path}.metadata`;
  knownKeys(metadata, METADATA_FIELDS, mp, 'SeededAssetMetadata');
  optional(metadata, 'schema', mp, embeddedSchema);
  const list = <T>(key: string, each: (item: unknown, p: string) => T): T[] =>
    (optional(metadata, key, mp, array) ?? []).map((item, i) => each(item, `${mp}.${key}[${i}]`));
  const tags = list('tags', (item, p) => {
    const tag = object(item, p);
    knownKeys(tag, ['schema', 'text', 'mechanism', 'category'], p, 'SeededAssetTag');
    const mechanism = optional(tag, 'mechanism', p, (v, q) => oneOf(v, MechanismEnum, q));
    const category = optional(tag, 'category', p, (v, q) => oneOf(v, TagCategoryEnum, q));
    return { text: required(tag, 'text', p, string), ...(mechanism ? { mechanism } : {}), ...(category ? { category } : {}) };
  });
  const websites = list('websites', (item, p) => {
    const site = object(item, p);
    knownKeys(site, ['schema', 'url', 'name', 'mechanism'], p, 'SeededAssetWebsite');
    const mechanism = optional(site, 'mechanism', p, (v, q) => oneOf(v, MechanismEnum, q));
    return { url: required(site, 'url', p, string), name: required(site, 'name', p, string), ...(mechanism ? { mechanism } : {}) };
  });
  const annotations = list('annotations', seededAnnotation);
  // Anchors, persons, sensitives and hints are checked to be lists of objects; they are not kept yet.
  for (const key of ['anchors', 'persons', 'sensitives', 'hints']) list(key, (item, p) => object(item, p));
  for (const key of ['enrichment', 'available']) optional(seeded, key, path, object);
  const flags: AssetParts['flags'] = {};
  for (const key of ['discovered', 'pseudo', 'demo'] as const) {
    const flag = optional(seeded, key, path, boolean);
    if (flag !== undefined) flags[key] = flag;
  }
  const name = optional(metadata, 'name', mp, string);
  const asset = assetRecords(
    {
      id,
      ...(name?.trim() ? { name } : {}),
      content: { ...content, hints: [...content.hints, name] },
      ...(classification ? { classification } : {}),
      application,
      mechanism: optional(metadata, 'mechanism', mp, (v, p) => oneOf(v, MechanismEnum, p)) ?? 'MANUAL',
      annotations,
      tags,
      websites,
      flags,
    },
    clock,
  );
  return { seed, asset };
}

/**
 * The Seed a draft answers: the seed as sent, with what the service works out
 * (name, classification, a DESCRIPTION annotation) filled in. Nothing is stored.
 */
export function draftWire(parsed: ParsedSeed, transferables: boolean): JsonObject {
  const { asset } = parsed;
  const sent = (parsed.seed.asset as JsonObject | undefined) ?? parsed.seed;
  const format = { ...(sent.format as JsonObject) };
  if (!transferables) {
    for (const kind of ['fragment', 'file'] as const) {
      if (isObject(format[kind])) {
        const { string: _s, bytes: _b, ...rest } = format[kind] as JsonObject;
        format[kind] = rest;
      }
    }
  }
  const original = asset.formats[0]!;
  format.classification = { ...(isObject(format.classification) ? format.classification : {}), ...original.classification };
  const metadata = { ...((sent.metadata as JsonObject | undefined) ?? {}) };
  metadata.name = asset.record.name;
  const annotations = Array.isArray(metadata.annotations) ? metadata.annotations : [];
  if (!annotations.some((a) => isObject(a) && a.type === 'DESCRIPTION')) {
    const description = asset.annotations.find((a) => a.type === 'DESCRIPTION')!;
    metadata.annotations = [
      ...annotations,
      { type: 'DESCRIPTION', text: description.text, mechanism: description.mechanism ?? 'AUTOMATIC' },
    ];
  }
  const { schema, ...rest } = parsed.seed;
  return {
    ...(schema && parsed.seed.asset ? { schema } : {}),
    ...(parsed.seed.asset ? rest : {}),
    asset: { ...sent, format, metadata },
    type: 'SEEDED_ASSET',
  };
}
