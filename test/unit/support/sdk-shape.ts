/**
 * A strict checker of response bodies against the models of the installed
 * `@pieces.app/pieces-os-client` SDK, read from its generated files at test
 * time (so it cannot drift from the SDK):
 *
 * - `X.d.ts`: the interface (property names, `?` for optional, types) or, for
 *   an enum, its allowed values;
 * - `X.js`: `XFromJSONTyped` maps each property to its key on the wire
 *   (`identifierDescriptionPair` ← `identifier_description_pair`), and
 *   `instanceOfX` names the required properties (cross-checked with the `?`s).
 *
 * `check(model, body)` lists every violation with its JSON path: a missing
 * required field, a wrong type, an enum value not allowed, an unknown key, a
 * date that is not an ISO-8601 string, recursively through nested models,
 * arrays and maps. The only keys allowed beyond the SDK's are EXTRA_FIELDS.
 * The models that SDK 4.1.0 no longer ships are written by hand in
 * HAND_WRITTEN, from the contract's "Wire shapes".
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { KINDS } from '../../../src/shared/graph.js';

export type FieldType =
  | { kind: 'string' | 'number' | 'boolean' | 'date' }
  /** Another model or an enum, by name. */
  | { kind: 'ref'; name: string }
  | { kind: 'array'; of: FieldType }
  /** An object with any keys, each holding `of`. */
  | { kind: 'map'; of: FieldType };

export interface Field {
  /** The key on the wire. */
  key: string;
  required: boolean;
  /** `null` is a value of this field (`T | null` in the SDK). */
  nullable: boolean;
  type: FieldType;
}

export type Shape = { kind: 'model'; name: string; fields: Map<string, Field> } | { kind: 'enum'; name: string; values: Set<string> };

export interface Violation {
  path: string;
  message: string;
}

/**
 * The only fields the service adds to SDK models, each documented in the
 * README: engagement figures (Application, Session).
 */
export const EXTRA_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Application: ['engagement'],
  Session: ['engagement'],
};

const require = createRequire(import.meta.url);
export const SDK_MODELS = join(dirname(require.resolve('@pieces.app/pieces-os-client')), 'models');
export const SDK_VERSION = (JSON.parse(readFileSync(join(SDK_MODELS, '../../package.json'), 'utf8')) as { version: string }).version;

const T = {
  string: { kind: 'string' },
  number: { kind: 'number' },
  boolean: { kind: 'boolean' },
  date: { kind: 'date' },
  ref: (name: string) => ({ kind: 'ref', name }),
  array: (of: FieldType) => ({ kind: 'array', of }),
  map: (of: FieldType) => ({ kind: 'map', of }),
} satisfies Record<string, FieldType | ((arg: never) => FieldType)>;

const field = (type: FieldType, required = true): Field & { key: '' } => ({ key: '', required, nullable: false, type });

/**
 * Models of the deprecated operations that SDK 4.1.0 no longer ships, as the
 * contract's "Wire shapes" fix them (`schema?` is common to every model).
 */
const HAND_WRITTEN: Record<string, Record<string, Field & { key: '' }>> = {
  TrackedInteractionEvent: {
    schema: field(T.ref('EmbeddedModelSchema'), false),
    description: field(T.string),
    element: field(T.string, false),
  },
  TrackedKeyboardEvent: {
    schema: field(T.ref('EmbeddedModelSchema'), false),
    description: field(T.string),
    shortcut: field(T.array(T.number)),
  },
  // The service's own WebSocket handshake (not Pieces models): the socket's first message and the
  // change sequence it reflects, or the changes of a collection after a sequence number; identifier
  // streams also carry the database's identity.
  IdentifierStreamHandshake: { seq: field(T.number), database: field(T.string), message: field(T.ref('StreamedIdentifiers')) },
  // The user socket's first frame: a bare UserProfile while signed in, an empty text frame signed out.
  UserStreamHandshake: { seq: field(T.number), message: field(T.ref('UserStreamMessage')) },
  HealthStreamHandshake: { seq: field(T.number), message: field(T.ref('HealthStreamMessage')) },
  VisionStreamHandshake: { seq: field(T.number), message: field(T.ref('WorkstreamPatternEngineStatus')) },
  OSSettingsStreamHandshake: { seq: field(T.number), message: field(T.ref('OSServerSettings')) },
  OllamaStatusStreamHandshake: { seq: field(T.number), message: field(T.ref('OllamaStatus')) },
  FoundryStatusStreamHandshake: { seq: field(T.number), message: field(T.ref('FoundryStatus')) },
  AppletVersionStreamHandshake: { seq: field(T.number), message: field(T.ref('AppletVersionMessage')) },
  WorkstreamSuggestionsStreamHandshake: { seq: field(T.number), message: field(T.ref('WorkstreamSuggestions')) },
  StreamCatchUp: {
    changes: field(T.array(T.ref('StreamChange'))),
    complete: field(T.boolean),
    seq: field(T.number),
    database: field(T.string),
  },
  // The streams of whole assets: the first frame every Asset; a catch-up also each changed asset now (by id) and its time.
  AssetsStreamHandshake: { seq: field(T.number), database: field(T.string), message: field(T.ref('Assets')) },
  AssetsStreamCatchUp: {
    changes: field(T.array(T.ref('StreamChange'))),
    complete: field(T.boolean),
    seq: field(T.number),
    database: field(T.string),
    records: field(T.map(T.ref('Asset'))),
    at: field(T.date),
  },
  StreamChange: {
    seq: field(T.number),
    collection: field(T.ref('StreamCollection')),
    id: field(T.string),
    deleted: field(T.boolean, false),
  },
};

/** Enums of the hand-written models. */
const HAND_WRITTEN_ENUMS: Record<string, readonly string[]> = {
  StreamCollection: [
    'conversation',
    'conversationMessage',
    'asset',
    'application',
    'activity',
    'anchor',
    'model',
    'tag',
    'website',
    'format',
    'annotation',
    'user',
    // The kinds the generic path stores (range among them), from the graph table.
    ...KINDS.filter((row) => !row.own).map((row) => row.kind),
  ],
};

/**
 * Values that are not SDK models but whose form is fixed: the health socket's `ok:<os id>`
 * text, the user socket's frame (a bare UserProfile, or empty text when signed out).
 * Each gives the violations of a value.
 */
const HAND_CHECKED: Record<string, (value: unknown, path: string) => Violation[]> = {
  HealthStreamMessage: (value, path) =>
    typeof value === 'string' && /^ok:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)
      ? []
      : [{ path, message: `expected the text ok:<os id>, got ${JSON.stringify(value)?.slice(0, 60)}` }],
  UserStreamMessage: (value, path) => (value === '' ? [] : check('UserProfile', value, path)),
  // The applet version socket's text frame: a version (this service's own).
  AppletVersionMessage: (value, path) =>
    typeof value === 'string' && /^\d+\.\d+\.\d+(?:[-+][\w.-]+)?$/.test(value)
      ? []
      : [{ path, message: `expected a version, got ${JSON.stringify(value)?.slice(0, 60)}` }],
};

const shapes = new Map<string, Shape>(
  Object.entries(HAND_WRITTEN_ENUMS).map(([name, values]) => [name, { kind: 'enum', name, values: new Set(values) }]),
);

/** The shape of a model or enum, read from the SDK files (or HAND_WRITTEN). Throws if there is none. */
export function shape(name: string): Shape {
  let found = shapes.get(name);
  if (!found) {
    found = HAND_WRITTEN[name] ? handWritten(name) : readSdkShape(name);
    shapes.set(name, found);
  }
  return found;
}

/** True when the installed SDK ships a model or enum of that name. */
export function sdkHas(name: string): boolean {
  try {
    readFileSync(join(SDK_MODELS, `${name}.d.ts`));
    return true;
  } catch {
    return false;
  }
}

function handWritten(name: string): Shape {
  const fields = new Map<string, Field>();
  for (const [key, value] of Object.entries(HAND_WRITTEN[name]!)) fields.set(key, { ...value, key });
  return { kind: 'model', name, fields };
}

function readSdkShape(name: string): Shape {
  if (!/^\w+$/.test(name)) throw new Error(`Not a model name: ${name}`);
  let declarations: string;
  try {
    declarations = readFileSync(join(SDK_MODELS, `${name}.d.ts`), 'utf8');
  } catch {
    throw new Error(`The SDK ${SDK_VERSION} has no model ${name}.`);
  }
  declarations = declarations.replace(/\/\*[\s\S]*?\*\//g, '');

  // Enums: in their own file, or declared inline in the file of the model that uses them.
  for (const [, enumName, block] of declarations.matchAll(/export declare const (\w+): \{([\s\S]*?)\n\};/g)) {
    const values = [...block!.matchAll(/:\s*("(?:[^"\\]|\\.)*");/g)].map((m) => JSON.parse(m[1]!) as string);
    if (values.length === 0) throw new Error(`Enum ${enumName}: no values found.`);
    if (!shapes.has(enumName!)) shapes.set(enumName!, { kind: 'enum', name: enumName!, values: new Set(values) });
  }
  const declaredEnum = shapes.get(name);
  if (declaredEnum) return declaredEnum;

  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(declarations)?.[1];
  if (body === undefined) throw new Error(`${name}.d.ts declares neither an interface nor an enum ${name}.`);
  const properties = [...body.matchAll(/^\s{4}(\w+)(\?)?: ((?:\{[^}]*\})|[^;\n]+);$/gm)];
  const source = readFileSync(join(SDK_MODELS, `${name}.js`), 'utf8');
  const wireKeys = wireKeysOf(name, source);
  const required = requiredOf(name, source);

  const fields = new Map<string, Field>();
  for (const [, property, optional, typeText] of properties) {
    const key = wireKeys.get(property!);
    if (key === undefined) throw new Error(`${name}.${property}: not decoded by ${name}FromJSONTyped.`);
    if (!optional !== required.has(property!)) {
      throw new Error(`${name}.${property}: the .d.ts and instanceOf${name} disagree on whether it is required.`);
    }
    const { type, nullable } = parseType(typeText!.trim(), `${name}.${property}`);
    fields.set(key, { key, required: !optional, nullable, type });
  }
  if (fields.size !== wireKeys.size) throw new Error(`${name}: ${fields.size} properties in the .d.ts, ${wireKeys.size} decoded.`);
  return { kind: 'model', name, fields };
}

/** Property → wire key, from `XFromJSONTyped`. */
function wireKeysOf(name: string, source: string): Map<string, string> {
  const fn = new RegExp(`function ${name}FromJSONTyped\\(json, ignoreDiscriminator\\) \\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1];
  if (fn === undefined) throw new Error(`${name}.js has no ${name}FromJSONTyped.`);
  const keys = new Map<string, string>();
  for (const [, property, key] of fn.matchAll(/^\s+'(\w+)': .*?json\['([^']+)'\]/gm)) keys.set(property!, key!);
  return keys;
}

/** Required properties, from `instanceOfX`. */
function requiredOf(name: string, source: string): Set<string> {
  const fn = new RegExp(`function instanceOf${name}\\(value\\) \\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1];
  if (fn === undefined) throw new Error(`${name}.js has no instanceOf${name}.`);
  return new Set([...fn.matchAll(/if \(!\('(\w+)' in value\)/g)].map((m) => m[1]!));
}

function parseType(text: string, where: string): { type: FieldType; nullable: boolean } {
  const nullable = text.endsWith(' | null');
  if (nullable) text = text.slice(0, -' | null'.length);
  return { type: parseBareType(text, where), nullable };
}

function parseBareType(text: string, where: string): FieldType {
  if (text === 'string' || text === 'number' || text === 'boolean') return { kind: text };
  if (text === 'Date') return T.date;
  const array = /^Array<(\w+)>$/.exec(text);
  if (array) return T.array(parseBareType(array[1]!, where));
  const map = /^\{\s*\[key: string\]: (\w+);\s*\}$/.exec(text);
  if (map) return { kind: 'map', of: parseBareType(map[1]!, where) };
  if (/^[A-Z]\w*$/.test(text)) return T.ref(text);
  throw new Error(`${where}: type ${JSON.stringify(text)} is not understood by the checker.`);
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** An ISO-8601 date-time whose parts are a real date (no 30 February, no hour 25). */
export function isIsoDateTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = ISO_DATE_TIME.exec(value);
  if (!m || Number.isNaN(Date.parse(value))) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part ?? 0)) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  return date.getUTCMonth() === month! - 1 && date.getUTCDate() === day && hour! < 24 && minute! < 60 && second! < 60;
}

const describe = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'string'
        ? `the string ${JSON.stringify(value).slice(0, 60)}`
        : `${typeof value} ${JSON.stringify(value)?.slice(0, 60)}`;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every violation of `body` against the model (or enum) `name`, with JSON paths from `$`. */
export function check(name: string, body: unknown, path = '$'): Violation[] {
  const violations: Violation[] = [];
  checkRef(name, body, path, violations);
  return violations;
}

function checkRef(name: string, value: unknown, path: string, out: Violation[]) {
  const custom = HAND_CHECKED[name];
  if (custom) {
    out.push(...custom(value, path));
    return;
  }
  const found = shape(name);
  if (found.kind === 'enum') {
    if (typeof value !== 'string' || !found.values.has(value)) {
      out.push({ path, message: `${describe(value)} is not a ${name} (allowed: ${[...found.values].join(', ')})` });
    }
    return;
  }
  if (!isObject(value)) {
    out.push({ path, message: `expected a ${name} object, got ${describe(value)}` });
    return;
  }
  const extra = EXTRA_FIELDS[name] ?? [];
  for (const key of Object.keys(value)) {
    if (!found.fields.has(key) && !extra.includes(key)) out.push({ path: `${path}.${key}`, message: `unknown key: ${name} has no ${key}` });
  }
  for (const f of found.fields.values()) {
    const child = `${path}.${f.key}`;
    const v = value[f.key];
    if (v === undefined) {
      if (f.required) out.push({ path: child, message: `missing required field of ${name}` });
    } else if (v === null) {
      if (!f.nullable)
        out.push({
          path: child,
          message: `null is not a value of ${name}.${f.key}${f.required ? ' (required)' : ' (omit the key instead)'}`,
        });
    } else {
      checkType(f.type, v, child, out);
    }
  }
}

function checkType(type: FieldType, value: unknown, path: string, out: Violation[]) {
  switch (type.kind) {
    case 'string':
    case 'boolean':
      if (typeof value !== type.kind) out.push({ path, message: `expected a ${type.kind}, got ${describe(value)}` });
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) out.push({ path, message: `expected a number, got ${describe(value)}` });
      return;
    case 'date':
      if (!isIsoDateTime(value)) out.push({ path, message: `expected an ISO-8601 date-time string, got ${describe(value)}` });
      return;
    case 'ref':
      checkRef(type.name, value, path, out);
      return;
    case 'array':
      if (!Array.isArray(value)) out.push({ path, message: `expected an array, got ${describe(value)}` });
      else for (const [i, item] of value.entries()) checkType(type.of, item, `${path}[${i}]`, out);
      return;
    case 'map':
      if (!isObject(value)) out.push({ path, message: `expected an object (a map), got ${describe(value)}` });
      else for (const [key, item] of Object.entries(value)) checkType(type.of, item, `${path}[${JSON.stringify(key)}]`, out);
      return;
  }
}

/** Every model name reachable from `name` (itself included), for coverage tests. */
export function reachable(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  // A hand-checked value: the user frame holds a UserProfile; the health frame is text.
  if (HAND_CHECKED[name]) return name === 'UserStreamMessage' ? reachable('UserProfile', seen) : seen;
  const found = shape(name);
  if (found.kind === 'model') {
    const visit = (type: FieldType): void => {
      if (type.kind === 'ref') reachable(type.name, seen);
      else if (type.kind === 'array' || type.kind === 'map') visit(type.of);
    };
    for (const f of found.fields.values()) visit(f.type);
  }
  return seen;
}
