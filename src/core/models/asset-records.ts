/**
 * Making an asset's records: what a page adds (`addAssets`, an AssetInput) and what a seed
 * describes become one NewAsset (record, formats, annotations, tags, websites), with its name,
 * type and DESCRIPTION worked out where the client gives none.
 */
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import {
  descriptionAnnotationId,
  LEGACY_APPLICATION,
  type AnnotationRecord,
  type AssetRecord,
  type FormatRecord,
} from '../../storage/schema.js';
import type { NewAsset } from '../../storage/storage.js';
import { array, object, optional, required, string, uuid, type JsonObject } from '../validate.js';
import { languageName, topLevelDeclarations } from './asset-summary.js';
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

export const utf8Size = (text: string) => {
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

export const readableSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export interface Content {
  kind: 'fragment' | 'file';
  text?: string;
  bytes?: Uint8Array;
  /** What the client said about the type: an extension, a file name. */
  hints: Array<string | undefined>;
}

export interface AssetParts {
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
    const line = text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0);
    if (line) return line.length > 60 ? `${line.slice(0, 59)}…` : line;
  }
  return `Untitled ${languageName(specific)} snippet`;
}

/** The DESCRIPTION an asset gets when the client gives none: what it is, its size, what it declares. */
export function derivedDescription(text: string | undefined, specific: string, size: number): string {
  if (text === undefined) return `A ${languageName(specific)} file of ${readableSize(size)}.`;
  const lines = text.replace(/\n$/, '').split('\n').length;
  const declarations = topLevelDeclarations(text.slice(0, 64 * 1024), specific).map((d) => d.split(' ')[1]);
  const declared = declarations.length
    ? `, declaring ${declarations.slice(0, 5).join(', ')}${declarations.length > 5 ? ` and ${declarations.length - 5} more` : ''}`
    : '';
  return `A ${languageName(specific)} snippet of ${lines} line${lines === 1 ? '' : 's'}${declared}.`;
}

/** The records of a new asset. */
export function assetRecords(parts: AssetParts, clock: Clock): NewAsset {
  const now = clock.now().toISOString();
  const stamp = { value: now };
  const { content } = parts;
  const text = content.text ?? (content.bytes ? asText(content.bytes) : undefined);
  const given = parts.classification?.specific && parts.classification.specific !== 'UNKNOWN' ? parts.classification.specific : undefined;
  const specific =
    given ?? content.hints.map(specificOf).find((s) => s !== undefined) ?? (text === undefined ? 'bin' : detectSpecific(text));
  const generic =
    parts.classification?.generic && parts.classification.generic !== 'UNKNOWN' ? parts.classification.generic : genericOf(specific);
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
      : [
          format(
            'BOTH',
            content.text !== undefined ? { kind: content.kind, text: content.text } : { kind: content.kind, bytes: content.bytes! },
          ),
        ];
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
      annotations:
        description === undefined
          ? []
          : [{ type: 'DESCRIPTION', text: description, extra: { mechanism: 'MANUAL' }, id: descriptionAnnotationId(id) }],
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
