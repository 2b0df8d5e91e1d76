/**
 * Assets: what clients send to make and change them (a Seed's SeededAsset, an
 * Asset to update, a Format's new value) and what a page adds (`addAssets`),
 * made into stored records; and the SDK models built from those records
 * (Asset, Format, FlattenedAsset, Annotation, Tag, Website, Activity, Seed).
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
import {
  descriptionAnnotationId,
  LEGACY_APPLICATION,
  type ActivityRecord,
  type AnnotationRecord,
  type AssetRecord,
  type FormatRecord,
  type TagRecord,
  type WebsiteRecord,
} from '../../storage/schema.js';
import type { NewAsset, StoredAsset } from '../../storage/storage.js';
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
import { languageName, topLevelDeclarations } from './asset-summary.js';
import { parseApplication } from './application.js';
import { detectSpecific, genericOf, specificOf } from './classify.js';

export interface AssetInput {
  /** File name, e.g. `debounce.ts`; its extension gives the language unless `language` is set. */
  name: string;
  text: string;
  language?: string;
  description?: string;
  /** A UUID; one is assigned when absent. Adding an existing id replaces that asset. */
  id?: string;
  /** ISO-8601 creation time; now when absent. */
  created?: string;
  /** The id of its one format; assigned when absent. */
  formatId?: string;
}

/** The application that creates the service's own records (assets a page adds, and the service's activities). */
export const SERVICE_APPLICATION = LEGACY_APPLICATION;

/** Most text of one asset the search index reads (the rest is stored and served, not indexed). */
export const INDEXED_TEXT_LIMIT = 1024 * 1024;

const utf8Size = (text: string) => {
  // TextEncoder would copy the whole text; counting is enough.
  let size = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) size += 1;
    else if (code < 0x800) size += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      size += 4;
      i++;
    } else size += 3;
  }
  return size;
};

const readableSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

// ————————————————————————————————————————— making records

interface Content {
  kind: 'fragment' | 'file';
  text?: string;
  bytes?: Uint8Array;
  /** What the client said about the type: an extension, a file name. */
  hints: Array<string | undefined>;
}

interface AssetParts {
  id: string;
  name?: string;
  content: Content;
  classification?: { generic?: string; specific?: string; rendering?: string };
  application: JsonObject & { id: string };
  mechanism: string;
  annotations: Array<{ type: string; text: string; extra: JsonObject; id?: string }>;
  tags: Array<{ text: string; category?: string; mechanism?: string }>;
  websites: Array<{ url: string; name: string; mechanism?: string }>;
  flags: Pick<AssetRecord, 'discovered' | 'pseudo' | 'demo'>;
  formatIds?: string[];
}

/** The text of a value that is text: UTF-8 without a NUL byte. */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The name an asset gets when the client gives none: its first declaration, else its first line. */
export function derivedName(text: string | undefined, specific: string): string {
  if (text) {
    const declaration = topLevelDeclarations(text.slice(0, 64 * 1024), specific)[0]?.split(' ')[1];
    if (declaration) return genericOf(specific) === 'CODE' ? `${declaration}.${specific}` : declaration;
    const line = text.split('\n').map((l) => l.trim()).find((l) => l.length > 0);
    if (line) return line.length > 60 ? `${line.slice(0, 59)}…` : line;
  }
  return `Untitled ${languageName(specific)} snippet`;
}

/** The DESCRIPTION an asset gets when the client gives none: what it is, its size, what it declares. */
export function derivedDescription(text: string | undefined, specific: string, size: number): string {
  if (text === undefined) return `A ${languageName(specific)} file of ${readableSize(size)}.`;
  const lines = text.replace(/\n$/, '').split('\n').length;
  const declarations = topLevelDeclarations(text.slice(0, 64 * 1024), specific).map((d) => d.split(' ')[1]);
  const declared = declarations.length ? `, declaring ${declarations.slice(0, 5).join(', ')}${declarations.length > 5 ? ` and ${declarations.length - 5} more` : ''}` : '';
  return `A ${languageName(specific)} snippet of ${lines} line${lines === 1 ? '' : 's'}${declared}.`;
}

/** The records of a new asset. */
function assetRecords(parts: AssetParts, clock: Clock): NewAsset {
  const now = clock.now().toISOString();
  const stamp = { value: now };
  const { content } = parts;
  const text = content.text ?? (content.bytes ? asText(content.bytes) : undefined);
  const given = parts.classification?.specific && parts.classification.specific !== 'UNKNOWN' ? parts.classification.specific : undefined;
  const specific = given ?? content.hints.map(specificOf).find((s) => s !== undefined) ?? (text === undefined ? 'bin' : detectSpecific(text));
  const generic = parts.classification?.generic && parts.classification.generic !== 'UNKNOWN' ? parts.classification.generic : genericOf(specific);
  const classification = { generic, specific, ...(parts.classification?.rendering ? { rendering: parts.classification.rendering } : {}) };
  const ids = parts.formatIds ?? [];
  const format = (role: string, value: Pick<FormatRecord, 'kind' | 'text' | 'bytes'>): FormatRecord => ({
    id: ids.shift() ?? clock.newId(),
    asset: parts.id,
    role,
    classification,
    application: parts.application,
    created: now,
    updated: now,
    ...value,
    size: value.text !== undefined ? utf8Size(value.text) : value.bytes!.byteLength,
  });
  // Bytes that are text get a text preview; text, and bytes that are not text, are their own preview.
  const formats =
    content.bytes && text !== undefined && generic !== 'IMAGE'
      ? [format('ORIGINAL', { kind: content.kind, bytes: content.bytes }), format('PREVIEW', { kind: 'fragment', text })]
      : [format('BOTH', content.text !== undefined ? { kind: content.kind, text: content.text } : { kind: content.kind, bytes: content.bytes! })];
  const original = formats[0]!;
  const preview = formats[formats.length - 1]!;
  const annotations = parts.annotations.map(({ type, text, extra, id }) => ({
    ...extra,
    id: id ?? clock.newId(),
    created: stamp,
    updated: stamp,
    type,
    text,
    asset: { id: parts.id },
  })) as AnnotationRecord[];
  if (!annotations.some((a) => a.type === 'DESCRIPTION')) {
    annotations.push({
      id: clock.newId(),
      created: stamp,
      updated: stamp,
      type: 'DESCRIPTION',
      text: derivedDescription(text, specific, original.size),
      mechanism: 'AUTOMATIC',
      asset: { id: parts.id },
    });
  }
  return {
    record: {
      id: parts.id,
      name: parts.name ?? derivedName(text, specific),
      created: now,
      updated: now,
      creator: parts.application.id,
      mechanism: parts.mechanism,
      formats: formats.map((f) => f.id),
      original: original.id,
      preview: preview.id,
      ...parts.flags,
    },
    formats,
    annotations,
    tags: parts.tags.map((tag) => ({
      id: clock.newId(),
      text: tag.text,
      category: tag.category ?? 'UNKNOWN',
      created: now,
      updated: now,
      ...(tag.mechanism ? { mechanism: tag.mechanism } : {}),
      assets: [parts.id],
    })),
    websites: parts.websites.map((site) => ({
      id: clock.newId(),
      url: site.url,
      name: site.name,
      created: now,
      updated: now,
      ...(site.mechanism ? { mechanism: site.mechanism } : {}),
      assets: [parts.id],
    })),
  };
}

/** `addAssets` input: AssetInput objects, validated, as whole new assets. */
export function parseAssets(value: unknown, clock: Clock): NewAsset[] {
  return array(value, 'assets').map((item, i) => assetFromInput(item, `assets[${i}]`, clock));
}

/** One AssetInput (a name, a text, a language, a description) as a whole new asset. */
export function assetFromInput(value: unknown, path: string, clock: Clock): NewAsset {
  const input = object(value, path);
  const name = required(input, 'name', path, string);
  const text = required(input, 'text', path, string);
  const description = optional(input, 'description', path, string);
  const language = optional(input, 'language', path, string);
  const created = optional(input, 'created', path, (v, p) => {
    const iso = string(v, p);
    if (Number.isNaN(Date.parse(iso))) throw badRequest(`${p} must be an ISO-8601 date, not ${JSON.stringify(iso)}.`);
    return iso;
  });
  const formatId = optional(input, 'formatId', path, uuid);
  const specific = specificOf(language) ?? specificOf(name);
  const id = optional(input, 'id', path, uuid) ?? clock.newId();
  const whole = assetRecords(
    {
      id,
      name,
      content: { kind: 'fragment', text, hints: [] },
      ...(specific ? { classification: { specific } } : {}),
      application: { ...SERVICE_APPLICATION },
      mechanism: 'MANUAL',
      // The description's id is derived from the asset's: the same asset added again keeps it.
      annotations: description === undefined ? [] : [{ type: 'DESCRIPTION', text: description, extra: { mechanism: 'MANUAL' }, id: descriptionAnnotationId(id) }],
      tags: [],
      websites: [],
      flags: {},
      ...(formatId ? { formatIds: [formatId] } : {}),
    },
    clock,
  );
  if (created) {
    // Kept as written (the data format's round trip).
    whole.record.created = whole.record.updated = created;
    for (const format of whole.formats) format.created = format.updated = created;
    for (const annotation of whole.annotations) annotation.created = annotation.updated = { value: created };
  }
  return whole;
}

const SEED_FIELDS = ['schema', 'asset', 'person', 'anchor', 'website', 'type'];
const SEEDED_ASSET_FIELDS = ['schema', 'metadata', 'application', 'format', 'discovered', 'available', 'pseudo', 'enrichment', 'demo'];
const METADATA_FIELDS = ['schema', 'name', 'mechanism', 'tags', 'websites', 'sensitives', 'persons', 'annotations', 'hints', 'anchors'];
const SEEDED_ANNOTATION_LINKS = ['person', 'model', 'anchor', 'conversation'];
const SEEDED_ANNOTATION_FIELDS = [
  'schema', 'mechanism', 'asset', 'person', 'type', 'text', 'model', 'pseudo', 'favorited', 'anchor', 'conversation',
  'workstreamSummary', 'messages', 'assets', 'persons', 'anchors', 'conversations', 'websites', 'tags', 'summaries', 'workstreamEvents',
];

function bytesOf(value: unknown, path: string): Uint8Array {
  const items = array(value, path);
  const bytes = new Uint8Array(items.length);
  items.forEach((item, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 0 || item > 255) throw badRequest(`${path}[${i}] must be a byte (0 to 255).`);
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
function seededValue(value: unknown, path: string, kind: 'fragment' | 'file'): Content {
  const part = object(value, path);
  knownKeys(part, ['schema', 'string', 'bytes', 'metadata'], path, kind === 'file' ? 'SeededFile' : 'SeededFragment');
  optional(part, 'schema', path, embeddedSchema);
  const metadata = optional(part, 'metadata', path, object);
  const hints: Array<string | undefined> = [];
  if (metadata) {
    const mp = `${path}.metadata`;
    knownKeys(metadata, kind === 'file' ? ['schema', 'name', 'ext', 'size'] : ['schema', 'ext'], mp, kind === 'file' ? 'FileMetadata' : 'FragmentMetadata');
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
    return atob(encoded.replace(/^data:[^,]*,/, '').replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    throw badRequest(`${path} must hold base64 bytes.`);
  }
}

/** A SeededAnnotation of a seed's metadata: its type, text and the links it keeps (as references). */
function seededAnnotation(value: unknown, path: string): { type: string; text: string; extra: JsonObject } {
  const seeded = object(value, path);
  knownKeys(seeded, SEEDED_ANNOTATION_FIELDS, path, 'SeededAnnotation');
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
    if (type !== undefined && type !== 'SEEDED_ASSET') throw badRequest(`seed.type must be SEEDED_ASSET to make an asset; got ${JSON.stringify(type)}.`);
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

const ASSET_FIELDS = [
  'schema', 'id', 'name', 'creator', 'created', 'updated', 'synced', 'deleted', 'formats', 'preview', 'original', 'shares',
  'mechanism', 'websites', 'interacted', 'tags', 'sensitives', 'persons', 'curated', 'discovered', 'activities', 'score',
  'favorited', 'pseudo', 'annotations', 'hints', 'anchors', 'conversations', 'summaries', 'messages', 'demo',
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
    ...(value.text !== undefined ? { text: value.text, size: utf8Size(value.text) } : { bytes: value.bytes!, size: value.bytes!.byteLength }),
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
  return { ...extra, id: clock.newId(), created: stamp, updated: stamp, type, text, ...(asset ? { asset: { id: asset } } : {}) } as AnnotationRecord;
}

/** What `annotationUpdate` changes of an annotation: its text, type, `favorited`. */
export function updateAnnotation(body: unknown, stored: AnnotationRecord, clock: Clock): AnnotationRecord {
  const annotation = object(body, 'annotation');
  const text = required(annotation, 'text', 'annotation', string);
  const type = required(annotation, 'type', 'annotation', (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const favorited = optional(annotation, 'favorited', 'annotation', boolean);
  const asset = optional(annotation, 'asset', 'annotation', (v, p) => required(object(v, p), 'id', p, uuid));
  if ((asset ?? stored.asset?.id) !== stored.asset?.id) throw badRequest(`annotation.asset cannot be changed (the annotation belongs to ${stored.asset ? `asset ${stored.asset.id}` : 'no asset'}).`);
  return { ...stored, text, type, ...(favorited === undefined ? {} : { favorited }), updated: { value: clock.now().toISOString() } };
}

/** Activities recorded by this service so far: orders the activities of one millisecond. */
let recorded = 0;

/** An activity about an asset or a conversation. */
export function activity(
  clock: Clock,
  about: { asset: string; pair: string; value: string; keep?: boolean } | { conversation: string; pair: string; value: string },
  application: JsonObject & { id: string } = { ...SERVICE_APPLICATION },
): ActivityRecord {
  // The wire spells these keys in snake case (`identifier_description_pair`, `asset_created`).
  const pair = { [about.pair.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]: about.value };
  const event: JsonObject =
    'asset' in about
      ? { asset: { asset: { id: about.asset }, identifier_description_pair: pair } }
      : { conversation: { conversation: { id: about.conversation }, identifier_description_pair: pair } };
  const created = clock.now().toISOString();
  return {
    id: clock.newId(),
    created,
    order: `${created}|${String(++recorded).padStart(12, '0')}`,
    event,
    application,
    mechanism: 'MANUAL',
    ...('asset' in about && about.keep !== false ? { asset: about.asset } : {}),
  };
}

// ————————————————————————————————————————— wire models

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
  };
}

const flags = (record: AssetRecord) => ({
  ...(record.favorited !== undefined ? { favorited: record.favorited } : {}),
  ...(record.discovered !== undefined ? { discovered: record.discovered } : {}),
  ...(record.pseudo !== undefined ? { pseudo: record.pseudo } : {}),
  ...(record.demo !== undefined ? { demo: record.demo } : {}),
});

/** A format's value on the wire: a fragment's or a file's string or bytes. */
function value(format: FormatRecord): JsonObject {
  const transferable: JsonObject = format.text !== undefined ? { string: { raw: format.text } } : { bytes: { raw: Array.from(format.bytes ?? []) } };
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

export function tagWire(tag: TagRecord): JsonObject {
  const { assets, mechanism: _mechanism, created, updated, ...rest } = tag;
  return { ...rest, created: time(created), updated: time(updated), ...(assets.length ? { assets: { iterable: assets.map((id) => ({ id })), indices: indices(assets.map((id) => ({ id }))) } } : {}) };
}

export function websiteWire(website: WebsiteRecord): JsonObject {
  const { assets, mechanism: _mechanism, created, updated, ...rest } = website;
  return { ...rest, created: time(created), updated: time(updated), ...(assets.length ? { assets: { iterable: assets.map((id) => ({ id })), indices: indices(assets.map((id) => ({ id }))) } } : {}) };
}

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
  const listed = <T extends { id: string }>(items: T[], wire: (item: T) => JsonObject) => ({ iterable: items.map(wire), indices: indices(items) });
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
  };
}

/** An Activity: its asset joined as a FlattenedAsset while the asset exists. */
export function activityWire(record: ActivityRecord, asset: StoredAsset | undefined): JsonObject {
  return {
    id: record.id,
    created: time(record.created),
    updated: time(record.created),
    event: record.event,
    application: record.application,
    mechanism: record.mechanism,
    ...(asset ? { asset: flattenedAsset(asset) } : {}),
  };
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
    metadata.annotations = [...annotations, { type: 'DESCRIPTION', text: description.text, mechanism: description.mechanism ?? 'AUTOMATIC' }];
  }
  const { schema, ...rest } = parsed.seed;
  return {
    ...(schema && parsed.seed.asset ? { schema } : {}),
    ...(parsed.seed.asset ? rest : {}),
    asset: { ...sent, format, metadata },
    type: 'SEEDED_ASSET',
  };
}

/** What relevance and search read of an asset: its name, language, description and (at most INDEXED_TEXT_LIMIT of) its text. */
export function assetMaterialOf(whole: StoredAsset) {
  const preview = whole.formats.find((f) => f.id === whole.record.preview && f.text !== undefined) ?? whole.formats.find((f) => f.text !== undefined);
  const original = whole.formats.find((f) => f.id === whole.record.original) ?? whole.formats[0];
  const text = preview?.text ?? '';
  const description = whole.annotations.filter((a) => a.type === 'DESCRIPTION').map((a) => a.text).join('\n');
  return {
    id: whole.record.id,
    name: whole.record.name,
    language: original?.classification.specific ?? 'txt',
    text: text.length > INDEXED_TEXT_LIMIT ? text.slice(0, INDEXED_TEXT_LIMIT) : text,
    ...(description ? { description } : {}),
  };
}

/** What the summary of a conversation made from an asset reads. */
export function summaryInput(whole: StoredAsset) {
  const material = assetMaterialOf(whole);
  const preview = whole.formats.find((f) => f.id === whole.record.preview && f.text !== undefined) ?? whole.formats.find((f) => f.text !== undefined);
  return { name: material.name, language: material.language, text: preview?.text ?? '', ...(material.description ? { description: material.description } : {}) };
}
