/**
 * Asset search (SearchApi.fullTextSearch, SearchApi.neuralCodeSearch, AssetsApi.searchAssets),
 * ranked by the copilot's relevance index (BM25F over name, language, description and text),
 * best first, ties by id; a write is seen by the next search.
 *
 * - full text: every word of the query must occur in the asset (name, language, description or text);
 * - neural code and fuzzy (`searchAssets` with `query`): any word may; the best matches first;
 * - `searchAssets` with `searchable_tags` (comma-separated tag texts), and `tagBasedSearch` (the
 *   tags in its body): assets with any of the tags, those with more of them first (and, with a
 *   query too, only those that match it).
 *
 * `exact` says the whole query occurs as written (case aside) in the name, the description or the
 * text; `match` says where the query's words were found: TITLE (the name), ANNOTATION (the
 * description), else CONTENT.
 */
import type { OperationContext } from '../context.js';
import type { Ranked } from '../copilot/corpus.js';
import { MechanismEnum, TagCategoryEnum } from '../enums.js';
import { badRequest, readJson, reply } from '../http.js';
import { assetWire } from '../models/asset.js';
import { byScore, tokenize } from '../relevance.js';
import { array, embeddedSchema, knownKeys, object, oneOf, optional, required, string, type JsonObject } from '../validate.js';
import { transferables } from './common.js';

/** The query parameter: required, and with at least one word. */
function queryOf(url: URL, required: boolean): string | undefined {
  const query = url.searchParams.get('query');
  if (query === null || query.trim() === '') {
    if (required) throw badRequest('The query parameter is required: the text to search for (?query=…).');
    return undefined;
  }
  return query;
}

function pseudo(url: URL): void {
  const value = url.searchParams.get('pseudo');
  if (value !== null && value !== 'true' && value !== 'false')
    throw badRequest(`The pseudo query parameter must be true or false; got ${JSON.stringify(value.slice(0, 200))}.`);
}

/** The words of a query, each as its own search (a word may stand for several terms: `retryCount`). */
const words = (query: string) => [...new Set(query.match(/[\p{L}\p{N}_]+/gu) ?? [])].filter((word) => tokenize(word).length > 0);

/**
 * Ranked hits of `query`; with `all`, only those in which every word of the query occurs.
 * A query's score is the sum of its terms' (BM25F), so when no two words share a term the
 * searches of its words, each kept to the assets the words before it found, give the same
 * ranking as the whole query's search, in one pass over the postings instead of two.
 */
async function ranked(context: OperationContext, query: string, all: boolean): Promise<Ranked[]> {
  const { corpus } = context.service.copilot;
  const each = words(query);
  const terms = each.map((word) => new Set(tokenize(word)));
  const disjoint = terms.every((set, i) => terms.slice(0, i).every((other) => [...set].every((term) => !other.has(term))));
  if (!all || each.length <= 1 || !disjoint) {
    const hits = await corpus.search(query, { assets: true });
    if (!all || each.length <= 1 || hits.length === 0) return hits;
    return filterAll(context, hits, each);
  }
  // Bare hits word by word (no material, no ordering); the material of those kept at the end.
  let scores: Map<string, number> | undefined;
  for (const word of each) {
    const found = await corpus.hits(word, { assets: true, ...(scores ? { ids: new Set(scores.keys()) } : {}) });
    const next = new Map<string, number>();
    for (const hit of found) next.set(hit.id, (scores?.get(hit.id) ?? 0) + hit.score);
    scores = next;
    if (scores.size === 0) break;
  }
  const hits = [...(scores ?? [])].map(([id, score]) => ({ id, kind: 'asset', score }));
  return await corpus.material(hits.sort(byScore));
}

/** The hits in which every word occurs (each word searched among the hits the words before it left). */
async function filterAll(context: OperationContext, hits: Ranked[], each: string[]): Promise<Ranked[]> {
  let keep = new Set(hits.map((hit) => hit.id));
  for (const word of each) {
    keep = new Set((await context.service.copilot.corpus.hits(word, { assets: true, ids: keep })).map((hit) => hit.id));
    if (keep.size === 0) break;
  }
  return hits.filter((hit) => keep.has(hit.id));
}

function matchOf(hit: Ranked, terms: Set<string>): string {
  const has = (text: string | undefined) => !!text && tokenize(text).some((term) => terms.has(term));
  if (has(hit.name)) return 'TITLE';
  if (has(hit.description)) return 'ANNOTATION';
  return 'CONTENT';
}

/** SearchedAssets from ranked hits; each with its whole Asset when `assets` is given. */
export function searched(hits: Ranked[], query: string | undefined, assets?: Map<string, JsonObject>) {
  const phrase = query?.trim().toLowerCase();
  const terms = new Set(query ? tokenize(query) : []);
  const items = hits.map((hit) => {
    const exact = !!phrase && [hit.name, hit.description, hit.text].some((text) => !!text && text.toLowerCase().includes(phrase));
    const asset = assets?.get(hit.id);
    return {
      ...(asset ? { asset } : {}),
      exact,
      score: hit.score,
      match: query ? matchOf(hit, terms) : 'TITLE',
      identifier: hit.id,
    };
  });
  const exact = items.filter((item) => item.exact).length;
  return { iterable: items, suggested: items.length - exact, exact };
}

export async function fullTextSearch(context: OperationContext) {
  pseudo(context.url);
  const query = queryOf(context.url, true)!;
  return reply(searched(await ranked(context, query, true), query));
}

export async function neuralCodeSearch(context: OperationContext) {
  pseudo(context.url);
  const query = queryOf(context.url, true)!;
  return reply(searched(await ranked(context, query, false), query));
}

export async function searchAssets(context: OperationContext) {
  pseudo(context.url);
  const withAssets = transferables(context.url);
  const query = queryOf(context.url, false);
  const tagList = (context.url.searchParams.get('searchable_tags') ?? '')
    .split(',')
    .map((tag) => tag.trim().toLowerCase())
    .filter(Boolean);
  if (query === undefined && tagList.length === 0) {
    throw badRequest('Give a query (?query=…) or tags (?searchable_tags=a,b): there is nothing to search for.');
  }
  const { storage } = context.service;
  const hits = tagList.length ? await taggedHits(context, tagList, query) : await ranked(context, query!, false);
  let assets: Map<string, JsonObject> | undefined;
  if (withAssets && hits.length) {
    const found = await Promise.all(hits.map((hit) => storage.getAsset(hit.id)));
    assets = new Map(found.filter((a) => !!a).map((a) => [a!.record.id, assetWire(a!, true)]));
  }
  return reply(searched(hits, query, assets));
}

/**
 * The assets with any of the tags (texts, lower case), those with more of them first (ties by
 * id); with a query too, only those that match it, ranked by it.
 */
async function taggedHits(context: OperationContext, tagList: readonly string[], query: string | undefined): Promise<Ranked[]> {
  const { storage, copilot } = context.service;
  const wanted = new Set(tagList);
  const all = await storage.listAssets();
  const tagged = new Map(
    all
      .map((asset) => [asset.record.id, asset.tags.filter((tag) => wanted.has(tag.text.toLowerCase())).length] as const)
      .filter(([, count]) => count > 0),
  );
  let base: Ranked[];
  if (query !== undefined) base = await ranked(context, query, false);
  else {
    await copilot.corpus.load({ assets: true });
    base = [...tagged.keys()].map((id) => ({ ...copilot.corpus.get(id)!, score: 0 }));
  }
  return base
    .filter((hit) => tagged.has(hit.id))
    .map((hit) => ({ ...hit, score: query !== undefined ? hit.score : tagged.get(hit.id)! }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * tagBasedSearch: the assets on the tags sent (a SeededAssetTags; texts compared without case),
 * those on more of them first, as identifiers (SearchedAssets without the assets, as the SDK
 * documents). A body with no tag is refused.
 */
export async function tagBasedSearch(context: OperationContext) {
  pseudo(context.url);
  const path = 'seededAssetTags';
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest('The request body is required: send a SeededAssetTags ({"iterable":[{"text":"react"}]}).');
  const tags = object(body, path);
  knownKeys(tags, ['iterable'], path, 'SeededAssetTags');
  const texts = required(tags, 'iterable', path, array).map((item, i) => {
    const p = `${path}.iterable[${i}]`;
    const tag = object(item, p);
    knownKeys(tag, ['schema', 'text', 'mechanism', 'category'], p, 'SeededAssetTag');
    optional(tag, 'schema', p, embeddedSchema);
    optional(tag, 'mechanism', p, (v, q) => oneOf(v, MechanismEnum, q));
    optional(tag, 'category', p, (v, q) => oneOf(v, TagCategoryEnum, q));
    return required(tag, 'text', p, string).trim().toLowerCase();
  });
  if (!texts.some(Boolean)) throw badRequest(`${path}.iterable names no tag: send at least one tag's text.`);
  return reply(searched(await taggedHits(context, texts.filter(Boolean), undefined), undefined));
}
