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
      output: /index_1\.(\w+)FromJSON\)\(jsonValue\)/.exec(body)?.[1] ?? (/new runtime\.TextApiResponse/.test(body) ? 'text' : undefined),
      query: [...body.matchAll(/queryParameters\['(\w+)'\] =/g)].map((m) => m[1]),
      params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
    });
  }
}
const op = ({ name, method, path, api, input, output, query }) => ({
  name,
  method,
  path,
  api,
  body: input ?? '',
  answer: output ?? '',
  query,
});

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

/** A type in SHAPES' notation: `s` string, `n` number, `b` boolean, `d` date-time, `o` any object, a model or enum name, `T[]` array, `T{}` map. */
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
/** kind → its key in a StreamedIdentifier on the wire ('workstream_summary'). */
const streamedKey = new Map();
for (const f of model('StreamedIdentifier').fields) {
  if (f.key === 'deleted' || f.key === 'schema') continue;
  referencedOf.set(f.prop, f.type);
  streamedKey.set(f.prop, f.key);
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

/** The create of `m`'s collection: `${collection}/create`, answering the record or the collection ({ iterable: [record] }). */
const createOf = (m, snapshot) =>
  snapshot &&
  operations.find((o) => o.method === 'POST' && o.path === `${snapshot.path}/create` && (o.output === m || o.output === snapshot.output));
/** The GET of one `m` by its id: `/person/{person}`. */
const itemsOf = (m) =>
  operations.filter((o) => o.method === 'GET' && o.params.length === 1 && o.output === m && o.path.endsWith(`{${o.params[0]}}`));

const candidates = new Map([...referencedOf].map(([kind, referenced]) => [kind, modelOfReferenced(referenced)]));
for (const m of associationModels) if (![...candidates.values()].includes(m)) candidates.set(lowerFirst(m), m);
// A collection API whose create takes the Seeded model, with an item snapshot, keeps records of a kind too
// (Backup, Share, Distribution; not AllocationCloud, whose create takes the cloud's record whole).
for (const o of operations) {
  const m =
    o.method === 'GET' &&
    !o.params.length &&
    o.output &&
    isModel(o.output) &&
    /^(\w+)\[\]$/.exec(field(o.output, 'iterable')?.type ?? '')?.[1];
  if (!m || !isModel(m) || [...candidates.values()].includes(m)) continue;
  if (createOf(m, collectionOf(m))?.input === `Seeded${m}` && itemsOf(m).length) candidates.set(lowerFirst(m), m);
}

const kinds = [];
for (const [kind, m] of [...candidates].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const snapshot = collectionOf(m);
  const c = snapshot?.path;
  const find = (method, path, check = () => true) => operations.find((o) => o.method === method && o.path === path && check(o));
  const create = createOf(m, snapshot);
  if (!OWN.has(kind) && !associationModels.has(m) && !create) continue;
  const update = operations.find((o) => o.method === 'POST' && /\/update$/.test(o.path) && o.input === m && o.output === m);
  const items = itemsOf(m);
  const item =
    (update && items.find((o) => o.path.startsWith(`${dirname(update.path)}/{`))) ?? items.find((o) => o.api !== snapshot?.api) ?? items[0];
  const ops = {
    snapshot,
    item,
    create,
    update,
    delete: c && operations.find((o) => o.method === 'POST' && o.params.length === 1 && o.path === `${c}/{${o.params[0]}}/delete`),
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
    streamed: streamedKey.get(kind),
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

/**
 * The fields of a generic kind's Seeded model that name records of other kinds: a reference or list
 * (as in references), or a bare id, a string field named as the SDK names the kind in a
 * StreamedIdentifier (SeededPerson.asset, SeededAnnotation.workstream_summary); `into`, the
 * model's top-level field of that kind (the same key, else the only one).
 */
function seedsOf(k) {
  const out = {};
  for (const f of model(k.seeded).fields) {
    const named = f.type === 's' && kinds.find((o) => o.streamed === f.key);
    const ref = referenceOf(f.type) ?? (named && { kind: named.kind, many: false, id: true });
    if (!ref) continue;
    const fields = Object.entries(k.references).filter(([key, r]) => r.kind === ref.kind && !key.includes('.'));
    const into = fields.find(([key]) => key === f.key) ?? (fields.length === 1 ? fields[0] : undefined);
    out[f.key] = { ...ref, ...(into ? { into: into[0] } : {}) };
  }
  return out;
}
for (const k of kinds) if (!k.own && k.seeded) k.seeds = seedsOf(k);

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
  if (disassociate?.api !== associate.api || disassociate.name !== associate.name.replace('Associate', 'Disassociate')) {
    throw new Error(`${associate.name}: no disassociation of the same name in the same API (PAIRS in graph.ts derives it)`);
  }
  if (associate.params.length !== 2) throw new Error(`${associate.name}: ${associate.params.length} path parameters`);
  const fromPath = itemPathOf(associate.path);
  const from = kinds.find((k) => k.ops.item?.path === fromPath);
  if (from?.ops.item.api !== associate.api)
    throw new Error(`${associate.name}: not in the API of a kind's item snapshot (PAIRS in graph.ts derives it)`);
  const segments = associate.path.slice(fromPath.length + 1).split('/');
  const middle = segments.slice(0, segments.indexOf('associate'));
  // Either `<to's collection>[/<field path in to>]` (persons, conversations/grounding/sources), or a
  // field path in `from` ending on a list of `to` (grounding/messages, grounding/temporal_range/workstreams).
  const lead = middle
    .map((_, i) => ({ to: kindOfCollection(middle.slice(0, middle.length - i)), rest: middle.slice(middle.length - i) }))
    .find((split) => split.to);
  let to;
  let fromKey;
  let toKey;
  if (lead) {
    to = lead.to;
    fromKey = listing(from, to.kind);
    toKey = lead.rest.length ? walk(to, lead.rest, from.kind) : listing(to, from.kind);
  } else {
    const named = from.references[middle.map((s) => ALIASES[s] ?? s).join('.')];
    const tail = middle.findIndex((_, i) => kindOfCollection(middle.slice(i)));
    to = named ? kinds.find((k) => k.kind === named.kind) : tail >= 0 ? kindOfCollection(middle.slice(tail)) : undefined;
    if (!to) throw new Error(`${associate.name}: no kind at ${middle.join('/')}`);
    fromKey = walk(from, middle, to.kind);
    toKey = listing(to, from.kind);
  }
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

/**
 * The shapes the generic path validates bodies with: the models and Seeded models of the kinds no
 * hand-written store serves, and every model nested in them, except what a Referenced… model's
 * `reference` holds (the other record, flattened: any object, `o`), which would bring in most of the
 * SDK; the generic path keeps a reference's id.
 */
const shapes = new Map();
function collect(type) {
  const name = type.replace(/(\[\]|\{\})+$/, '');
  if (name.length === 1 || shapes.has(name)) return;
  let found = model(name);
  if (found.kind === 'model' && kinds.some((k) => k.referenced === name)) {
    found = { ...found, fields: found.fields.map((f) => (f.key === 'reference' ? { ...f, type: 'o' } : f)) };
  }
  shapes.set(name, found);
  if (found.kind === 'model') for (const f of found.fields) collect(f.type);
}
// The own kinds whose handlers validate with them too (tags and websites), and what their `exists` takes.
const VALIDATED = new Set(['tag', 'website']);
for (const k of kinds.filter((k) => !k.own || VALIDATED.has(k.kind))) {
  collect(k.model);
  if (k.seeded) collect(k.seeded);
}
collect('ExistentMetadata');
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
const q = (text) => `'${text}'`;
const opText = (o) => `op(${[o.name, o.method, o.path, o.api, o.body, o.answer, ...o.query].map(q).join(', ')})`;
const rowLine = ({ referenced, collection, ops, references, seeds, ...row }) =>
  `  {${Object.entries(row)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${JSON.stringify(value).replace(/"/g, "'")}`)
    .join(', ')}, ops: {${Object.entries(ops)
    .map(([role, o]) => `${role}: ${opText(o)}`)
    .join(
      ', ',
    )}}, references: ${JSON.stringify(references).replace(/"/g, "'")}${seeds ? `, seeds: ${JSON.stringify(seeds).replace(/"/g, "'")}` : ''}},`;
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
  /** The request body's model, where it takes one ('SearchInput'). */
  body?: string;
  /** The answer's model ('SearchedPersons'), or 'text' where the SDK reads the answer as text; absent for no answer. */
  answer?: string;
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
  /** Its key in a StreamedIdentifier on the wire ('workstream_summary'), where StreamedIdentifier has one. */
  streamed?: string;
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
  /**
   * For a generic kind, the fields of its Seeded model that name records of other kinds: a reference
   * or a list as in \`references\`, or (\`id\`) a bare id string (SeededPerson.asset); \`into\`, the model's
   * top-level field of that kind the created record lists it in (Person.assets), where there is one.
   */
  seeds?: Readonly<Record<string, { kind: MaterialKind; many: boolean; model?: string; id?: true; into?: string }>>;
}

const op = (name: string, method: 'GET' | 'POST', path: string, api: string, body: string, answer: string, ...query: string[]): Operation => ({
  name,
  method,
  path,
  api,
  ...(body ? { body } : {}),
  ...(answer ? { answer } : {}),
  ...(query.length ? { query } : {}),
});

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

/**
 * One a line: [associate name, its path after the \`from\` kind's item path, from, to, fromKey, toKey]
 * ('' for no key). The association is in the API class of \`from\`'s item snapshot; the disassociation
 * is its name and path with Disassociate and /disassociate/.
 */
const PAIRS: ReadonlyArray<readonly [string, string, MaterialKind, MaterialKind, string, string]> = [
${relations.map((r) => `  ${JSON.stringify([r.associate.name, r.associate.path.slice(kinds.find((k) => k.kind === r.from).ops.item.path.length + 1), r.from, r.to, r.fromKey ?? '', r.toKey ?? ''])},`).join('\n')}
];

const items = new Map(KINDS.map((k) => [k.kind, k.ops.item]));

export const RELATIONS: readonly RelationRow[] = PAIRS.map(([name, tail, from, to, fromKey, toKey]) => {
  const item = items.get(from)!;
  const path = \`\${item.path}/\${tail}\`;
  return {
    associate: { name, path, api: item.api },
    disassociate: { name: name.replace('Associate', 'Disassociate'), path: path.replace('/associate/', '/disassociate/'), api: item.api },
    from,
    to,
    ...(fromKey ? { fromKey } : {}),
    ...(toKey ? { toKey } : {}),
    params: [/\\{(\\w+)\\}/.exec(path)![1]!, /\\{(\\w+)\\}$/.exec(path)![1]!],
  };
});

/**
 * The shapes of the models and Seeded models of the generic kinds and of every model nested in them,
 * one a line: a model \`Name key:type,key?:type\` (\`?\` optional; \`|null\` after a type: null allowed),
 * an enum \`Name=value|value\`. A type is \`s\` string, \`n\` number, \`b\` boolean, \`d\` ISO-8601
 * date-time, \`o\` any object (a Referenced… model's \`reference\`: the generic path keeps a reference's
 * id), a model or enum name, \`T[]\` an array, \`T{}\` a map of string keys. src/shared/shapes.ts reads them.
 */
export const SHAPES = ${JSON.stringify(shapeLines.join('\n'))};
`;
writeGenerated(new URL('../src/shared/graph.ts', import.meta.url), out, 'scripts/graph.mjs');
if (!process.argv.includes('--check')) {
  console.log(`${kinds.length} kinds, ${relations.length} relations, ${shapes.size} shapes written to src/shared/graph.ts`);
}
