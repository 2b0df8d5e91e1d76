/**
 * The SDK's ExportedDatabase (`GET /database/export`, `POST /database/import`) as this service's
 * own data format (src/core/data/format.ts): each section of the format is the UTF-8 bytes of its
 * JSON, in the ExportedDatabase field that names it (`assets`, `conversations`, `persons`, …: a
 * section, or a generic kind's collection named as its plural); the sections the model has no
 * field for (sessions, events, external applications, the materials of the other kinds) are
 * entries of `values`, each named by its section. The fields of what this service keeps none of
 * (analyses, fragments, files, …) are empty. `version` is the data format's version.
 *
 * Backups are not part of it: they are copies of the store, not its records (an import keeps them).
 */
import { KINDS, type GenericKind } from '../../shared/graph.js';
import { DATA_VERSION, type PiecesData, type PiecesSeed } from '../data/format.js';
import { badRequest, clip } from '../http.js';
import { isObject, type JsonObject } from '../validate.js';
import { lower } from './material.js';

/** The data format's sections that ExportedDatabase names the same way. */
const SECTIONS = ['applications', 'assets', 'models', 'tags', 'websites', 'activities', 'annotations', 'anchors', 'conversations'] as const;
/** The ExportedDatabase fields of records this service keeps none of: always empty here. */
const NONE = ['analyses', 'codeAnalyses', 'files', 'formatMetrics', 'formats', 'fragments', 'imageAnalyses', 'ocrAnalyses'] as const;
/** Its other fields that take records (SDK 4.1.0's ExportedDatabase): a generic kind's plural among them names its field. */
const OTHER_FIELDS = new Set([
  'persons',
  'sensitives',
  'relationships',
  'hints',
  'anchorPoints',
  'conversationMessages',
  'workstreamEvents',
  'ranges',
  'workstreamSummaries',
  'workstreamPatternEngineSources',
]);
/** The sections carried in `values`. */
const VALUES = ['sessions', 'events', 'externalApplications', 'materials'] as const;
/** The model's optional format lists (values of messages and events, kept inline here): accepted empty. */
const OPTIONAL_VALUES = ['messageValues', 'workstreamEventValues'] as const;

/** The generic kinds that have an ExportedDatabase field of their own (a person's is `persons`), and that field. */
const KIND_FIELDS = new Map<GenericKind, string>(
  KINDS.flatMap((row) => {
    if (row.own) return [];
    const field = row.plural && lower(row.plural);
    return field && OTHER_FIELDS.has(field) ? [[row.kind as GenericKind, field] as const] : [];
  }),
);
/** Not exported: a backup is a copy of the store. */
export const UNEXPORTED: GenericKind = 'backup';

const bytes = (value: unknown): number[] => Array.from(new TextEncoder().encode(JSON.stringify(value)));

/** The data (every section, backups left out) as an ExportedDatabase. */
export function exportedDatabase(data: PiecesData): JsonObject {
  const out: JsonObject = { version: String(DATA_VERSION) };
  for (const name of NONE) out[name] = [];
  for (const name of SECTIONS) out[name] = bytes(data[name]);
  for (const [kind, field] of KIND_FIELDS) out[field] = bytes(data.materials[kind] ?? []);
  const rest: JsonObject = {};
  for (const [kind, records] of Object.entries(data.materials) as Array<[GenericKind, JsonObject[]]>)
    if (kind !== UNEXPORTED && !KIND_FIELDS.has(kind)) rest[kind] = records;
  const values = { sessions: data.sessions, events: data.events, externalApplications: data.externalApplications, materials: rest };
  out.values = { iterable: VALUES.map((id) => ({ id, raw: bytes(values[id]) })) };
  return out;
}

/** The JSON a byte list holds (strict UTF-8), or a 400 naming the field. */
function decoded(value: unknown, path: string): unknown {
  if (!Array.isArray(value) || value.some((b) => !Number.isInteger(b) || b < 0 || b > 255))
    throw badRequest(`${path} must be a list of bytes (integers from 0 to 255).`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(value as number[]));
  } catch {
    throw badRequest(`${path} is not UTF-8 text.`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`${path} is not the JSON of a section of this service's data format (${clip(text, 60)}).`);
  }
}

/**
 * An ExportedDatabase (as `exportedDatabase` makes) as the data format's seed, or a 400 naming the
 * field: a field of no section, records of a kind this service keeps none of, another version.
 */
export function importedData(body: unknown): PiecesSeed {
  const at = 'exportedDatabase';
  if (!isObject(body)) throw badRequest(`The request body must be an ExportedDatabase (a JSON object).`);
  const kinds = new Map([...KIND_FIELDS].map(([kind, field]) => [field, kind]));
  const known = new Set<string>(['schema', 'version', 'values', ...NONE, ...SECTIONS, ...OTHER_FIELDS, ...OPTIONAL_VALUES]);
  for (const key of Object.keys(body))
    if (!known.has(key)) throw badRequest(`${at}.${clip(key, 60)} is not a field of an ExportedDatabase.`);
  if (body.version !== String(DATA_VERSION))
    throw badRequest(
      `${at}.version must be "${DATA_VERSION}" (the data format's version this service exports); got ${clip(JSON.stringify(body.version), 60)}.`,
    );
  for (const name of [...NONE, ...OPTIONAL_VALUES, ...[...OTHER_FIELDS].filter((field) => !kinds.has(field))]) {
    const value = body[name];
    const empty =
      value === undefined ||
      (Array.isArray(value) && value.length === 0) ||
      (name.endsWith('Values') && isObject(value) && Array.isArray(value.iterable) && value.iterable.length === 0);
    if (!empty) throw badRequest(`${at}.${name} must be empty: this service keeps no ${name} of its own.`);
  }
  // No bytes (or no field): the section is empty.
  const given = (value: unknown) => value !== undefined && !(Array.isArray(value) && value.length === 0);
  const seed: Record<string, unknown> = {};
  for (const name of SECTIONS) if (given(body[name])) seed[name] = decoded(body[name], `${at}.${name}`);
  const materials: Record<string, unknown> = {};
  for (const [field, kind] of kinds) if (given(body[field])) materials[kind] = decoded(body[field], `${at}.${field}`);
  const values = body.values;
  if (!isObject(values) || !Array.isArray(values.iterable))
    throw badRequest(`${at}.values must be an ExportedDatabaseFormats ({ iterable: [...] }).`);
  values.iterable.forEach((entry, i) => {
    const path = `${at}.values.iterable[${i}]`;
    if (!isObject(entry) || typeof entry.id !== 'string') throw badRequest(`${path} must be an ExportedDatabaseFormat with an id.`);
    if (!(VALUES as readonly string[]).includes(entry.id))
      throw badRequest(`${path}.id must name a section (${VALUES.join(', ')}); got ${clip(JSON.stringify(entry.id), 60)}.`);
    if (!given(entry.raw)) return;
    const value = decoded(entry.raw, `${path}.raw`);
    if (entry.id !== 'materials') seed[entry.id] = value;
    else if (!isObject(value)) throw badRequest(`${path}.raw must hold materials by kind (a JSON object).`);
    else
      for (const [kind, records] of Object.entries(value)) {
        if (kind === UNEXPORTED || KIND_FIELDS.has(kind as GenericKind))
          throw badRequest(`${path}.raw.${clip(kind, 60)} is not exported in values.`);
        materials[kind] = records;
      }
  });
  return { ...seed, version: DATA_VERSION, materials } as PiecesSeed;
}
