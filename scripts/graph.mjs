#!/usr/bin/env node
/**
 * Generates src/shared/graph.ts: the material graph of the Pieces OS SDK (@pieces.app/pieces-os-client),
 * read from its API classes (dist/apis/*.js) and models (dist/models/*.d.ts and *.js):
 *
 * - KINDS: every material kind the SDK stores (a StreamedIdentifier key whose collection API has a
 *   create, every kind an association hangs on, and the kinds a hand-written store serves today), with
 *   its models, its operations by role and the fields by which it references other kinds;
 * - RELATIONS: every associate/disassociate pair, with the fields that list each side on the other;
 * - SHAPES: the compact shapes of the kind models, their Seeded models and every model nested in
 *   them, for validating request bodies (src/shared/shapes.ts reads them).
 *
 *   node scripts/graph.mjs            (writes the file)
 *   node scripts/graph.mjs --check    (npm run lint: fails when the file is not what this writes)
 *
 * Nothing is listed by hand but OWN (the kinds with a hand-written store today) and ALIASES (a path
 * segment the SDK spells differently from the model field it names).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeGenerated } from './generated.mjs';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('@pieces.app/pieces-os-client/package.json'));
const APIS = join(root, 'dist/apis');
const MODELS = join(root, 'dist/models');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The kinds a hand-written store serves today (their code stays this round; later rounds move them). */
const OWN = new Set([
  'asset',
  'conversation',
  'conversationMessage',
  'annotation',
  'anchor',
  'activity',
  'application',
  'model',
  'tag',
  'website',
  'format',
]);
/**
 * Path segments of association operations that the SDK spells differently from the model field
 * they name: `/conversation/{conversation}/grounding/temporal_range/workstreams/associate/{range}`
 * lists the range in Conversation.grounding.temporal.workstreams (ConversationGrounding has
 * `temporal: TemporalRangeGrounding`, no `temporal_range`).
 */
const ALIASES = { temporal_range: 'temporal' };

// ---- The SDK's operations -------------------------------------------------------------------

/** Every operation: API class, name, method, path (parameters named), body and answer models, query parameters. */
const operations = [];
for (const file of readdirSync(APIS)
  .filter((f) => f.endsWith('Api.js'))
  .sort()) {
  const api = file.replace(/\.js$/, '');
  const source = readFileSync(join(APIS, file), 'utf8');
  for (const [, name, body] of source.matchAll(/async (\w+)Raw\([^)]*\)\s*\{([\s\S]*?)\n {4}\}/g)) {
    const path = /path: `([^`]+)`/.exec(body)?.[1];
    const method = /method: '(\w+)'/.exec(body)?.[1];
    if (!path || !method) throw new Error(`${api}.${name}: no path or method found`);
    operations.push({
      api,
      name,
      method,
      path,
      input: /body: \(0, index_1\.(\w+)ToJSON\)/.exec(body)?.[1],
      output: /index_1\.(\w+)FromJSON\)\(jsonValue\)/.exec(body)?.[1],
      query: [...body.matchAll(/queryParameters\['(\w+)'\] =/g)].map((m) => m[1]),
      params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
    });
  }
}
const op = ({ name, method, path, api, query }) => ({ name, method, path, api, ...(query.length ? { query } : {}) });

// ---- The SDK's models (read as test/unit/support/sdk-shape.ts reads them) --------------------

const models = new Map();

/** A model `{ kind: 'model', fields: [{ prop, key, required, nullable, type }] }` or an enum `{ kind: 'enum', values }`. */
function model(name) {
  let found = models.get(name);
  if (found) return found;
  let declarations = readFileSync(join(MODELS, `${name}.d.ts`), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  for (const [, enumName, block] of declarations.matchAll(/export declare const (\w+): \{([\s\S]*?)\n\};/g)) {
    const values = [...block.matchAll(/:\s*("(?:[^"\\]|\\.)*");/g)].map((m) => JSON.parse(m[1]));
    if (!values.length) throw new Error(`Enum ${enumName}: no values`);
    if (!models.has(enumName)) models.set(enumName, { kind: 'enum', name: enumName, values });
  }
  found = models.get(name);
  if (found) return found;
  declarations = declarations.replace(/\n\s*\n/g, '\n');
  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(declarations)?.[1];
  if (body === undefined) throw new Error(`${name}.d.ts declares neither an interface nor an enum ${name}`);
  const source = readFileSync(join(MODELS, `${name}.js`), 'utf8');
  const decode = new RegExp(`function ${name}FromJSONTyped\\(json, ignoreDiscriminator\\) \\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1];
  const instance = new RegExp(`function instanceOf${name}\\(value\\) \\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1];
  if (decode === undefined || instance === undefined) throw new Error(`${name}.js: no ${name}FromJSONTyped or instanceOf${name}`);
  const keys = new Map([...decode.matchAll(/^\s+'(\w+)': .*?json\['([^']+)'\]/gm)].map((m) => [m[1], m[2]]));
  const required = new Set([...instance.matchAll(/if \(!\('(\w+)' in value\)/g)].map((m) => m[1]));
  const fields = [...body.matchAll(/^\s{4}(\w+)(\?)?: ((?:\{[^}]*\})|[^;\n]+);$/gm)].map(([, prop, optional, text]) => {
    const key = keys.get(prop);
    if (key === undefined) throw new Error(`${name}.${prop}: not decoded by ${name}FromJSONTyped`);
    if (!optional !== required.has(prop)) throw new Error(`${name}.${prop}: the .d.ts and instanceOf${name} disagree on required`);
    let t = text.trim();
    const nullable = t.endsWith(' | null');
    if (nullable) t = t.slice(0, -' | null'.length);
    return { prop, key, required: !optional, nullable, type: parseType(t, `${name}.${prop}`) };
  });
  if (fields.length !== keys.size) throw new Error(`${name}: ${fields.length} properties, ${keys.size} decoded`);
  found = { kind: 'model', name, fields };
  models.set(name, found);
  return found;
}

/** A type in SHAPES' notation: `s` string, `n` number, `b` boolean, `d` date-time, a model or enum name, `T[]` array, `T{}` map. */
function parseType(text, where) {
  const primitive = { string: 's', number: 'n', boolean: 'b', Date: 'd' }[text];
  if (primitive) return primitive;
  const array = /^Array<(\w+)>$/.exec(text);
  if (array) return `${parseType(array[1], where)}[]`;
  const map = /^\{\s*\[key: string\]: (\w+);\s*\}$/.exec(text);
  if (map) return `${parseType(map[1], where)}{}`;
  if (/^[A-Z]\w*$/.test(text)) return text;
  throw new Error(`${where}: type ${JSON.stringify(text)} has no form in SHAPES`);
}

const field = (name, key) => model(name).fields.find((f) => f.key === key);
const isModel = (type) => /^[A-Z]\w*$/.test(type) && model(type).kind === 'model';
const lowerFirst = (s) => s[0].toLowerCase() + s.slice(1);

// ---- Kinds ---------------------------------------------------------------------------------

/** kind → its Referenced… model (one reference) and its model. StreamedIdentifier names the SDK's kinds. */
const referencedOf = new Map();
for (const f of model('StreamedIdentifier').fields) {
  if (f.key === 'deleted') continue;
  referencedOf.set(f.prop, f.type);
}
/** The model a Referenced… model references: ReferencedPerson.reference is a FlattenedPerson → Person (ReferencedModel has no reference: Model). */
const modelOfReferenced = (referenced) =>
  field(referenced, 'reference')?.type.replace(/^Flattened/, '') ?? referenced.replace(/^Referenced/, '');

/** The item path an operation hangs on: `/person/{person}/…` → `/person/{person}`. */
const itemPathOf = (path) => /^(.*?\/\{\w+\})/.exec(path)?.[1];
const associations = operations.filter((o) => /^(\w+?)(Associate|Disassociate)[A-Z]/.test(o.name) && /\/(dis)?associate\//.test(o.path));

/** Models an association hangs on (the answer of the GET on its item path). */
const associationModels = new Set(
  associations.map((o) => {
    const item = operations.find((g) => g.method === 'GET' && g.path === itemPathOf(o.path) && g.output);
    if (!item) throw new Error(`${o.name}: no item snapshot at ${itemPathOf(o.path)}`);
    return item.output;
  }),
);

/** The collection model of `m` ({ iterable: m[] }) with its snapshot (GET, no parameter). */
function collectionOf(m) {
  const snapshots = operations.filter(
    (o) => o.method === 'GET' && !o.params.length && o.output && isModel(o.output) && field(o.output, 'iterable')?.type === `${m}[]`,
  );
  snapshots.sort((a, b) => a.path.length - b.path.length);
  return snapshots[0];
}

const candidates = new Map([...referencedOf].map(([kind, referenced]) => [kind, modelOfReferenced(referenced)]));
for (const m of associationModels) if (![...candidates.values()].includes(m)) candidates.set(lowerFirst(m), m);

const kinds = [];
for (const [kind, m] of [...candidates].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const snapshot = collectionOf(m);
  const c = snapshot?.path;
  const find = (method, path, check = () => true) => operations.find((o) => o.method === method && o.path === path && check(o));
  const withParam = (prefix, suffix = '') =>
    operations.filter(
      (o) =>
        o.path.startsWith(`${prefix}/{`) &&
        o.path.endsWith(`}${suffix}`) &&
        o.params.length === 1 &&
        /^\/\{\w+\}$/.test(o.path.slice(prefix.length, o.path.length - suffix.length)),
    );
  const create = c && find('POST', `${c}/create`, (o) => o.output === m);
  if (!OWN.has(kind) && !associationModels.has(m) && !create) continue;
  const update = operations.find((o) => o.method === 'POST' && /\/update$/.test(o.path) && o.input === m && o.output === m);
  const items = operations.filter(
    (o) => o.method === 'GET' && o.params.length === 1 && o.output === m && o.path.endsWith(`{${o.params[0]}}`),
  );
  const item =
    (update && items.find((o) => o.path.startsWith(`${dirname(update.path)}/{`))) ?? items.find((o) => o.api !== snapshot?.api) ?? items[0];
  const ops = {
    snapshot,
    item,
    create,
    update,
    delete: c && withParam(c, '/delete').find((o) => o.method === 'POST'),
    stream: c && find('GET', `${c}/stream/identifiers`),
    search: c && find('POST', `${c}/search`),
    scores: item && find('POST', `${item.path}/scores/increment`),
    exists: c && find('POST', `${c}/exists`),
  };
  kinds.push({
    kind,
    model: m,
    seeded: create?.input,
    plural: snapshot?.output,
    own: OWN.has(kind),
    referenced: referencedOf.get(kind) ?? `Referenced${m}`,
    collection: c,
    ops: Object.fromEntries(Object.entries(ops).flatMap(([role, o]) => (o ? [[role, op(o)]] : []))),
  });
}
for (const own of OWN) if (!kinds.some((k) => k.kind === own)) throw new Error(`OWN names ${own}, which the SDK does not`);
const kindByModel = new Map(kinds.map((k) => [k.model, k]));

/** The kind a field type references: { kind, many } for a Referenced… model or a Flattened… list of them. */
function referenceOf(type) {
  if (!isModel(type)) return undefined;
  const one = kinds.find((k) => k.referenced === type);
  if (one) return { kind: one.kind, many: false };
  const iterable = field(type, 'iterable')?.type;
  const many = iterable && kinds.find((k) => `${k.referenced}[]` === iterable);
  if (many && type.startsWith('Flattened')) return { kind: many.kind, many: true };
  // The record itself, whole or flattened (Conversation.application, Sensitive.asset: FlattenedAsset).
  const record = kinds.find((k) => type === k.model || type === `Flattened${k.model}`);
  if (record) return { kind: record.kind, many: false, model: type };
  // A collection model of whole records (Asset.tags is a Tags: { iterable: Tag[] }).
  const whole = iterable && kinds.find((k) => `${k.model}[]` === iterable);
  return whole && type === whole.plural ? { kind: whole.kind, many: true, model: type } : undefined;
}

/**
 * Every reference field of a model, by wire path: top-level fields, and fields of the embedded models
 * that are not kinds themselves (Conversation.grounding.temporal.workstreams), dotted.
 */
function referencesOf(m, prefix = '', seen = new Set([m])) {
  const out = {};
  for (const f of model(m).fields) {
    const ref = referenceOf(f.type);
    if (ref) out[prefix + f.key] = ref;
    else if (
      isModel(f.type) &&
      !kindByModel.has(f.type) &&
      !seen.has(f.type) &&
      !f.type.startsWith('Flattened') &&
      !f.type.startsWith('Referenced')
    ) {
      Object.assign(out, referencesOf(f.type, `${prefix}${f.key}.`, new Set([...seen, f.type])));
    }
  }
  return out;
}
for (const k of kinds) k.references = referencesOf(k.model);

// ---- Relations -----------------------------------------------------------------------------

/** The kind whose collection path is `segments` exactly (`['workstream_pattern_engine', 'sources']`). */
const kindOfCollection = (segments) => kinds.find((k) => k.collection === `/${segments.join('/')}`);

/** The wire path (dotted) of the field listing `to` that `segments` names in kind `from`'s model. */
function walk(from, segments, to) {
  const keys = Object.entries(from.references).filter(([, ref]) => ref.kind === to && ref.many);
  const named = keys.filter(([key]) => key === segments.map((s) => ALIASES[s] ?? s).join('.'));
  if (named.length === 1) return named[0][0];
  // The last segments name the other kind's collection: `grounding/workstream_pattern_engine/sources` → grounding.sources
  for (let i = 0; i < segments.length; i++) {
    if (kindOfCollection(segments.slice(i))?.kind !== to) continue;
    const prefix = segments.slice(0, i).map((s) => ALIASES[s] ?? s);
    const under = keys.filter(([key]) => key.split('.').slice(0, -1).join('.') === prefix.join('.'));
    if (under.length === 1) return under[0][0];
  }
  throw new Error(`${from.kind}: no field listing ${to} at ${segments.join('/')}`);
}
/** The top-level field of kind `from` listing kind `to`, if it has one. */
function listing(from, to) {
  const keys = Object.entries(from.references).filter(([key, ref]) => ref.kind === to && ref.many && !key.includes('.'));
  if (keys.length > 1) throw new Error(`${from.kind} lists ${to} in ${keys.map(([k]) => k).join(', ')}`);
  return keys[0]?.[0];
}

const relations = [];
for (const associate of associations.filter((o) => /\/associate\//.test(o.path))) {
  const disassociate = associations.find((o) => o.path === associate.path.replace('/associate/', '/disassociate/'));
  if (!disassociate || disassociate.api !== associate.api) throw new Error(`${associate.name}: no disassociation`);
  const fromPath = itemPathOf(associate.path);
  const from = kinds.find((k) => k.ops.item?.path === fromPath || k.ops.scores?.path.startsWith(`${fromPath}/`));
  const segments = associate.path.slice(fromPath.length + 1).split('/');
  const middle = segments.slice(0, segments.indexOf('associate'));
  let to;
  let fromKey;
  let toKey;
  // `<to's collection>[/<field path in to>]`, else `<field path in from>` naming to's collection or a list of it.
  for (let i = middle.length; i > 0 && !to; i--)
    to = kindOfCollection(middle.slice(0, i)) && { kind: kindOfCollection(middle.slice(0, i)), rest: middle.slice(i) };
  if (to) {
    fromKey = listing(from, to.kind.kind);
    toKey = to.rest.length ? walk(to.kind, to.rest, from.kind) : listing(to.kind, from.kind);
    to = to.kind;
  } else {
    const ref = Object.entries(from.references).find(([key]) => key === middle.map((s) => ALIASES[s] ?? s).join('.'));
    const tail = middle.findIndex((_, i) => kindOfCollection(middle.slice(i)));
    to = ref ? kinds.find((k) => k.kind === ref[1].kind) : kindOfCollection(middle.slice(tail));
    if (!to) throw new Error(`${associate.name}: no kind at ${middle.join('/')}`);
    fromKey = walk(from, middle, to.kind);
    toKey = listing(to, from.kind);
  }
  if (!from || !to) throw new Error(`${associate.name}: sides not found`);
  relations.push({
    associate: { name: associate.name, path: associate.path, api: associate.api },
    disassociate: { name: disassociate.name, path: disassociate.path, api: disassociate.api },
    from: from.kind,
    to: to.kind,
    ...(fromKey ? { fromKey } : {}),
    ...(toKey ? { toKey } : {}),
    params: associate.params,
  });
}
if (relations.length * 2 !== associations.length)
  throw new Error(`${associations.length} association operations, ${relations.length} pairs`);

// ---- Shapes --------------------------------------------------------------------------------

const shapes = new Map();
function collect(type) {
  const name = type.replace(/(\[\]|\{\})+$/, '');
  if (name.length === 1 || shapes.has(name)) return;
  const found = model(name);
  shapes.set(name, found);
  if (found.kind === 'model') for (const f of found.fields) collect(f.type);
}
for (const k of kinds) {
  collect(k.model);
  if (k.seeded) collect(k.seeded);
}
/**
 * One line a model: `Name key:type,key?:type,key:type|null`; an enum: `Name=value|value`.
 * (`?` optional; `|null` null allowed.)
 */
const shapeLines = [...shapes.values()]
  .sort((a, b) => (a.name < b.name ? -1 : 1))
  .map((s) =>
    s.kind === 'enum'
      ? `${s.name}=${s.values.join('|')}`
      : `${s.name} ${s.fields.map((f) => `${f.key}${f.required ? '' : '?'}:${f.type}${f.nullable ? '|null' : ''}`).join(',')}`,
  );
for (const s of shapes.values())
  if (s.kind === 'enum' && s.values.some((v) => /[|\n]/.test(v))) throw new Error(`${s.name}: a value holds | or a newline`);

// ---- The file ------------------------------------------------------------------------------

const union = (names) => names.map((n) => `'${n}'`).join(' | ');
const rowLine = ({ referenced, collection, ...row }) => `  ${JSON.stringify(row)},`;
const out = `/**
 * The material graph of the Pieces OS API (SDK ${version}): ${kinds.length} kinds, ${relations.length} association pairs and
 * ${shapes.size} model shapes, written by scripts/graph.mjs from the SDK's API classes and models. Do not edit.
 */

/** A kind's name: its key in the SDK's StreamedIdentifier (camelCase singular), or its model's name in camelCase. */
export type MaterialKind = ${union(kinds.map((k) => k.kind))};
/** The kinds no hand-written store serves: stored by the generic path. */
export type GenericKind = ${union(kinds.filter((k) => !k.own).map((k) => k.kind))};

export type OpRole = 'snapshot' | 'item' | 'create' | 'update' | 'delete' | 'stream' | 'search' | 'scores' | 'exists';
export interface Operation {
  /** The SDK's method name: 'personsCreateNewPerson'. */
  name: string;
  method: 'GET' | 'POST';
  /** The path, parameters named as the SDK names them: '/persons/{person}/delete'. */
  path: string;
  /** The SDK's API class: 'PersonsApi'. */
  api: string;
  /** The query parameters the SDK sends, where it sends any ('transferables'). */
  query?: readonly string[];
}

export interface KindRow {
  kind: MaterialKind;
  /** The SDK model: 'Person'. */
  model: string;
  /** The create body's model: 'SeededPerson' ('Seed' for an asset). */
  seeded?: string;
  /** The collection model ({ iterable: Person[] }): 'Persons'. */
  plural?: string;
  /** A hand-written store serves it today. */
  own: boolean;
  /** SDK operations by role, where the SDK has the operation. */
  ops: Partial<Record<OpRole, Operation>>;
  /**
   * The model's reference fields to other kinds, by wire key (dotted through embedded models:
   * 'grounding.temporal.workstreams'): many for a Flattened… list ({ iterable: [{ id }] }), not many
   * for one Referenced… value ({ id }). \`model\` names what the field holds where it is not that:
   * the other kind's collection of whole records (Asset.tags: 'Tags', { iterable: Tag[] }), or one
   * record whole or flattened (Conversation.application: 'Application', Sensitive.asset: 'FlattenedAsset').
   */
  references: Readonly<Record<string, { kind: MaterialKind; many: boolean; model?: string }>>;
}

export const KINDS: readonly KindRow[] = [
${kinds.map(rowLine).join('\n')}
];

export interface RelationRow {
  /** The associate operation's SDK name, path and API class. */
  associate: { name: string; path: string; api: string };
  disassociate: { name: string; path: string; api: string };
  /** The kind whose item path it hangs on (the first path parameter) and the other kind. */
  from: MaterialKind;
  to: MaterialKind;
  /**
   * The wire keys that list each side on the other, dotted where the list is nested
   * ('grounding.messages'): \`from\`'s field listing \`to\` ids and \`to\`'s field listing \`from\` ids
   * (absent where that model has no such field).
   */
  fromKey?: string;
  toKey?: string;
  /** Path parameter names, in order: [fromParam, toParam]. */
  params: readonly [string, string];
}

export const RELATIONS: readonly RelationRow[] = [
${relations.map((r) => `  ${JSON.stringify(r)},`).join('\n')}
];

/**
 * The shapes of the kind models, their Seeded models and every model nested in them, one a line:
 * a model \`Name key:type,key?:type\` (\`?\` optional; \`|null\` after a type: null allowed), an enum
 * \`Name=value|value\`. A type is \`s\` string, \`n\` number, \`b\` boolean, \`d\` ISO-8601 date-time, a
 * model or enum name, \`T[]\` an array, \`T{}\` a map of string keys. src/shared/shapes.ts reads them.
 */
export const SHAPES = ${JSON.stringify(shapeLines.join('\n'))};
`;
writeGenerated(new URL('../src/shared/graph.ts', import.meta.url), out, 'scripts/graph.mjs');
if (!process.argv.includes('--check')) {
  console.log(`${kinds.length} kinds, ${relations.length} relations, ${shapes.size} shapes written to src/shared/graph.ts`);
}
