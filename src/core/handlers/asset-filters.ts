/**
 * AssetsApi.assetsSearchWithFilters: the assets (of `space`, else all) that pass the filters,
 * ranked by the relevance index against `query` when there is one (as searchAssets ranks), else
 * oldest first. A filter holds when every condition it gives holds (and its nested
 * `operations`); the filters of a list combine by their `type` (AND unless OR):
 *
 * - `classification`: the specific classification of the asset's original format;
 * - `tags`, `websites`: the asset is on one of the tags (by text) or websites (by URL) named;
 * - `persons`: one of the persons named (by id) lists the asset;
 * - `phrase`: its `value` occurs in the asset's name (`title`), text (`content`) or annotations
 *   (`annotation`, of the type `options.annotation` when given), in all three when no flag is set;
 *   case-insensitively unless `casing`;
 * - `created`, `updated`: from `from` and/or up to `to` (inclusive); with both and `between`
 *   false, outside that range.
 */
import type { OperationContext } from '../context.js';
import type { Ranked } from '../copilot/corpus.js';
import { badRequest, readJson, reply } from '../http.js';
import { AnnotationTypeEnum, ClassificationSpecificEnum } from '../enums.js';
import { assetWire } from '../models/asset.js';
import { assetMaterialOf } from '../models/asset-material.js';
import { listed } from '../models/material-links.js';
import type { StoredAsset } from '../../storage/storage.js';
import { array, boolean, knownKeys, object, oneOf, optional, string, timestamp, uuid, type JsonObject } from '../validate.js';
import { transferables } from './common.js';
import { searched } from './search.js';

type Test = (asset: StoredAsset) => boolean;

interface Context {
  casing: boolean;
  /** The assets each person named lists. */
  persons: Map<string, Set<string>>;
}

/** The text of a phrase filter's places, as its flags pick them. */
function phraseTest(phrase: JsonObject, path: string, context: Context): Test {
  knownKeys(phrase, ['schema', 'value', 'annotation', 'title', 'content', 'options'], path, 'AssetFilterPhrase');
  const value = optional(phrase, 'value', path, string) ?? '';
  const flags = {
    title: optional(phrase, 'title', path, boolean),
    content: optional(phrase, 'content', path, boolean),
    annotation: optional(phrase, 'annotation', path, boolean),
  };
  const options = optional(phrase, 'options', path, object);
  if (options) knownKeys(options, ['schema', 'annotation'], `${path}.options`, 'AssetFilterPhraseOptions');
  const type = options && optional(options, 'annotation', `${path}.options`, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const any = !flags.title && !flags.content && !flags.annotation;
  const fold = (text: string) => (context.casing ? text : text.toLowerCase());
  const wanted = fold(value);
  return (asset) => {
    const places: string[] = [];
    if (any || flags.title) places.push(asset.record.name);
    if (any || flags.content) places.push(assetMaterialOf(asset).text);
    if (any || flags.annotation) places.push(...asset.annotations.filter((a) => !type || a.type === type).map((a) => a.text));
    return places.some((text) => fold(text).includes(wanted));
  };
}

function timeTest(range: JsonObject, path: string, field: 'created' | 'updated'): Test {
  knownKeys(range, ['schema', 'from', 'to', 'between'], path, 'AssetFilterTimestamp');
  const from = optional(range, 'from', path, timestamp)?.value;
  const to = optional(range, 'to', path, timestamp)?.value;
  const between = optional(range, 'between', path, boolean) ?? true;
  const ms = (iso: string) => Date.parse(iso);
  return (asset) => {
    const at = ms(asset.record[field]);
    const inside = (from === undefined || at >= ms(from)) && (to === undefined || at <= ms(to));
    return from !== undefined && to !== undefined && !between ? !inside : inside;
  };
}

const strings = (value: unknown, path: string) => array(value, path).map((item, i) => string(item, `${path}[${i}]`));

function filterTest(value: unknown, path: string, context: Context): Test {
  const filter = object(value, path);
  knownKeys(
    filter,
    ['schema', 'classification', 'tags', 'websites', 'persons', 'phrase', 'created', 'updated', 'operations'],
    path,
    'AssetFilter',
  );
  const tests: Test[] = [];
  const classification = optional(filter, 'classification', path, (v, p) => oneOf(v, ClassificationSpecificEnum, p));
  if (classification)
    tests.push((asset) => asset.formats.find((f) => f.id === asset.record.original)?.classification.specific === classification);
  const tags = optional(filter, 'tags', path, strings)?.map((t) => t.toLowerCase());
  if (tags) tests.push((asset) => asset.tags.some((tag) => tags.includes(tag.text.toLowerCase())));
  const websites = optional(filter, 'websites', path, strings);
  if (websites) tests.push((asset) => asset.websites.some((site) => websites.includes(site.url)));
  const persons = optional(filter, 'persons', path, strings);
  if (persons) tests.push((asset) => persons.some((person) => context.persons.get(person)?.has(asset.record.id)));
  const phrase = optional(filter, 'phrase', path, object);
  if (phrase) tests.push(phraseTest(phrase, `${path}.phrase`, context));
  for (const field of ['created', 'updated'] as const) {
    const range = optional(filter, field, path, object);
    if (range) tests.push(timeTest(range, `${path}.${field}`, field));
  }
  const operations = optional(filter, 'operations', path, object);
  if (operations) tests.push(filtersTest(operations, `${path}.operations`, context));
  return (asset) => tests.every((test) => test(asset));
}

function filtersTest(filters: JsonObject, path: string, context: Context): Test {
  knownKeys(filters, ['schema', 'iterable', 'type'], path, 'AssetFilters');
  const items = array(filters.iterable, `${path}.iterable`).map((item, i) => filterTest(item, `${path}.iterable[${i}]`, context));
  const type = optional(filters, 'type', path, (v, p) => oneOf(v, ['UNKNOWN', 'AND', 'OR'] as const, p));
  return type === 'OR' ? (asset) => items.some((test) => test(asset)) : (asset) => items.every((test) => test(asset));
}

export async function assetsSearchWithFilters(context: OperationContext) {
  const withAssets = transferables(context.url);
  // Every asset here is a real one: `pseudo` is checked, and changes nothing.
  const pseudoParam = context.url.searchParams.get('pseudo');
  if (pseudoParam !== null && pseudoParam !== 'true' && pseudoParam !== 'false')
    throw badRequest(`The pseudo query parameter must be true or false; got ${JSON.stringify(pseudoParam.slice(0, 200))}.`);
  const path = 'assetsSearchWithFiltersInput';
  const input = object((await readJson(context.request, context.service.maxBodyBytes)) ?? {}, path);
  knownKeys(input, ['schema', 'query', 'space', 'filters', 'casing'], path, 'AssetsSearchWithFiltersInput');
  const query = optional(input, 'query', path, string)?.trim() || undefined;
  const casing = optional(input, 'casing', path, boolean) ?? false;
  const space = optional(input, 'space', path, object);
  let inSpace: Set<string> | undefined;
  if (space) {
    knownKeys(space, ['schema', 'identifers'], `${path}.space`, 'AssetSearchSpace');
    const identifers = object(space.identifers, `${path}.space.identifers`);
    inSpace = new Set(
      array(identifers.iterable ?? [], `${path}.space.identifers.iterable`).map((item, i) =>
        uuid(object(item, `${path}.space.identifers.iterable[${i}]`).id, `${path}.space.identifers.iterable[${i}].id`),
      ),
    );
  }
  const { storage, copilot } = context.service;
  const filters = optional(input, 'filters', path, object);
  const persons = new Map<string, Set<string>>();
  if (filters && JSON.stringify(filters).includes('"persons"'))
    for (const person of await storage.listMaterials('person')) persons.set(person.id, new Set(listed(person.value, 'assets', true)));
  const test = filters ? filtersTest(filters, `${path}.filters`, { casing, persons }) : () => true;
  const kept = (await storage.listAssets()).filter((asset) => (!inSpace || inSpace.has(asset.record.id)) && test(asset));
  const byId = new Map(kept.map((asset) => [asset.record.id, asset]));
  let hits: Ranked[];
  if (query !== undefined) hits = byId.size ? await copilot.corpus.search(query, { assets: true, ids: new Set(byId.keys()) }) : [];
  else {
    await copilot.corpus.load({ assets: true });
    // Oldest first (the store lists them by id, which is random).
    const oldest = [...kept].sort((a, b) =>
      a.record.created < b.record.created
        ? -1
        : a.record.created > b.record.created
          ? 1
          : a.record.name < b.record.name
            ? -1
            : a.record.name > b.record.name
              ? 1
              : 0,
    );
    hits = oldest.flatMap((asset) => {
      const material = copilot.corpus.get(asset.record.id);
      return material ? [{ ...material, score: 0 }] : [];
    });
  }
  const assets = withAssets ? new Map(hits.map((hit) => [hit.id, assetWire(byId.get(hit.id)!, true)])) : undefined;
  return reply({ results: searched(hits, query, assets) });
}
