/**
 * Handlers of ClassificationApi (a format's classification, and its text as highlight.js HTML),
 * MachineLearningApi (technical language split into code and text; starter snippets for a
 * persona, from the store) and DiscoveryApi (code found in fragments, files and HTML pages,
 * secrets in texts, tags related to a tag), all answered deterministically by
 * src/core/models/ml.ts and the classifier (src/core/models/classify.ts). With `automatic`,
 * discovery stores what it found, as Pieces OS does: assets (discovered, AUTOMATIC), sensitives,
 * tags put on the asset.
 */
import type { OperationContext } from '../context.js';
import {
  ClassificationGenericEnum,
  ClassificationRenderingEnum,
  ClassificationSpecificEnum,
  MechanismEnum,
  TagCategoryEnum,
} from '../enums.js';
import { badRequest, HttpError, notFound, readJson, reply } from '../http.js';
import { seededValue } from '../models/asset-seed.js';
import type { Content } from '../models/asset-records.js';
import { detectSpecific, genericOf, specificOf } from '../models/classify.js';
import { findSecrets, hljsHtml, pageCode, segment } from '../models/ml.js';
import { KINDS } from '../../shared/graph.js';
import { array, embeddedSchema, knownKeys, object, oneOf, optional, required, string, type JsonObject } from '../validate.js';
import { associateAsset, createAssetFromSeed } from './assets.js';
import { createMaterial } from './materials.js';
import { serviceApplication } from './qgpt.js';

/** A JSON body, required. */
async function bodyOf(context: OperationContext, model: string, example: string): Promise<JsonObject> {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send a ${model} (${example}).`);
  return object(body, model[0]!.toLowerCase() + model.slice(1));
}

/** A boolean query parameter (`automatic`, `classify`): absent is false; only true and false are accepted. */
export function flag(url: URL, name: string): boolean {
  const values = url.searchParams.getAll(name);
  if (values.length === 0) return false;
  if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
  throw badRequest(`The ${name} query parameter must be true or false; got ${JSON.stringify(values.join(',').slice(0, 200))}.`);
}

/** A format's classification: what the client said, else its names, else detected from its text. */
function classified(content: Content, sent: { generic?: string; specific?: string } = {}) {
  const given = sent.specific && sent.specific !== 'UNKNOWN' ? sent.specific : undefined;
  const specific =
    given ??
    content.hints.map(specificOf).find((s) => s !== undefined) ??
    (content.text === undefined ? 'bin' : detectSpecific(content.text));
  return { generic: genericOf(specific), specific };
}

/**
 * convertGenericClassification: a SeededFormat, classified (generic and specific, from what it
 * says or its text); when its classification asks for a rendering (HIGHLIGHT_JS_HTML or HTML)
 * and it is text, its fragment becomes that rendering: the text escaped in a highlight.js
 * block of its language (no token spans: no highlighter runs here).
 */
export async function convertGenericClassification(context: OperationContext) {
  const path = 'seededFormat';
  const format = await bodyOf(context, 'SeededFormat', '{"fragment":{"string":{"raw":"const a = 1;"}}}');
  knownKeys(format, ['schema', 'file', 'fragment', 'classification'], path, 'SeededFormat');
  optional(format, 'schema', path, embeddedSchema);
  const fragment = optional(format, 'fragment', path, (v, p) => seededValue(v, p, 'fragment'));
  const file = optional(format, 'file', path, (v, p) => seededValue(v, p, 'file'));
  const sent = optional(format, 'classification', path, (v, p) => {
    const c = object(v, p);
    knownKeys(c, ['schema', 'generic', 'specific', 'rendering'], p, 'SeededClassification');
    optional(c, 'schema', p, embeddedSchema);
    return {
      generic: optional(c, 'generic', p, (x, q) => oneOf(x, ClassificationGenericEnum, q)),
      specific: optional(c, 'specific', p, (x, q) => oneOf(x, ClassificationSpecificEnum, q)),
      rendering: optional(c, 'rendering', p, (x, q) => oneOf(x, ClassificationRenderingEnum, q)),
    };
  });
  const content = [fragment, file].find((c) => c && (c.text !== undefined || c.bytes !== undefined));
  if (!content) throw badRequest(`${path} has no content: send the text as ${path}.fragment.string.raw, or a file as ${path}.file.`);
  const { generic, specific } = classified(content, sent);
  const rendering = sent?.rendering === 'HIGHLIGHT_JS_HTML' || sent?.rendering === 'HTML' ? sent.rendering : undefined;
  const classification = { generic, specific, ...(rendering && content.text !== undefined ? { rendering } : {}) };
  if (rendering && content.text !== undefined) {
    return reply({ fragment: { string: { raw: hljsHtml(content.text, specific) }, metadata: { ext: specific } }, classification });
  }
  const { classification: _sent, schema: _schema, ...value } = format;
  return reply({ ...value, classification });
}

/** segmentTechnicalLanguage: the text's code and text segments, in order (with `classify`, each code segment's language). */
export async function segmentTechnicalLanguage(context: OperationContext) {
  const classify = flag(context.url, 'classify');
  const path = 'unsegmentedTechnicalLanguage';
  const body = await bodyOf(context, 'UnsegmentedTechnicalLanguage', '{"value":"Try this:\\n```ts\\nconst a = 1;\\n```"}');
  knownKeys(body, ['schema', 'value'], path, 'UnsegmentedTechnicalLanguage');
  optional(body, 'schema', path, embeddedSchema);
  const value = required(body, 'value', path, string);
  return reply({
    iterable: segment(value, classify).map((piece) => ({
      generic: piece.generic,
      ...(piece.specific ? { specific: piece.specific } : {}),
      fragment: { string: { raw: piece.text } },
    })),
  });
}

/** Most seeds a personification answers. */
const PERSONA_SEEDS = 10;

/**
 * personificationTechnicalLanguageGeneration: snippets for a persona, as Seeds, from the store
 * (no model writes new ones here): the stored assets in the languages given (all when none
 * is), those that best match the personas first (by the relevance index), then the newest;
 * at most ten. A language that names none of ClassificationSpecificEnum's is refused.
 */
export async function personificationTechnicalLanguageGeneration(context: OperationContext) {
  const path = 'preonboardedPersonaDetails';
  const body = await bodyOf(context, 'PreonboardedPersonaDetails', '{"languages":["ts"],"personas":["web developer"]}');
  knownKeys(body, ['schema', 'languages', 'personas'], path, 'PreonboardedPersonaDetails');
  optional(body, 'schema', path, embeddedSchema);
  const languages = (optional(body, 'languages', path, array) ?? []).map((item, i) => {
    const p = `${path}.languages[${i}]`;
    const specific = specificOf(string(item, p));
    if (!specific) throw badRequest(`${p} names no language Pieces OS knows: ${JSON.stringify(item)}.`);
    return specific;
  });
  const personas = (optional(body, 'personas', path, array) ?? []).map((item, i) => string(item, `${path}.personas[${i}]`));
  const { storage, copilot } = context.service;
  const wanted = new Set(languages);
  const assets = (await storage.listAssets())
    .filter((asset) => asset.formats[0]?.text !== undefined)
    .filter((asset) => wanted.size === 0 || wanted.has(asset.formats[0]!.classification.specific))
    .sort((a, b) => (a.record.created < b.record.created ? 1 : a.record.created > b.record.created ? -1 : 0));
  const query = personas.join(' ').trim();
  const ranked = query
    ? (await copilot.corpus.search(query, { assets: true, ids: new Set(assets.map((asset) => asset.record.id)) })).map((hit) => hit.id)
    : [];
  const order = [...new Set([...ranked, ...assets.map((asset) => asset.record.id)])].slice(0, PERSONA_SEEDS);
  const byId = new Map(assets.map((asset) => [asset.record.id, asset]));
  const application = await serviceApplication(context.service);
  return reply({
    seeds: {
      iterable: order.map((id) => {
        const asset = byId.get(id)!;
        const format = asset.formats[0]!;
        return {
          type: 'SEEDED_ASSET',
          asset: {
            application,
            format: {
              fragment: { string: { raw: format.text! } },
              classification: { generic: format.classification.generic, specific: format.classification.specific },
            },
            metadata: { name: asset.record.name, mechanism: 'RECOMMENDED' },
          },
        };
      }),
    },
  });
}

/** The application a discovery names by id: required to store what it finds (`automatic`). */
async function discoveringApplication(context: OperationContext, id: string, path: string): Promise<JsonObject & { id: string }> {
  const found = await context.service.storage.getApplication(id);
  if (!found) throw notFound(`No application with id ${id} (${path}): connect it first (POST /connect).`);
  return found.application as unknown as JsonObject & { id: string };
}

interface Discovered {
  /** The DiscoveredAsset answered. */
  wire: JsonObject;
  /** Its text and language, to store it. */
  text: string;
  specific: string;
  name?: string;
}

/** Code as a DiscoveredAsset's fragment. */
function discoveredFragment(text: string, specific: string, metadata: JsonObject, filters?: JsonObject): Discovered {
  return {
    wire: { fragment: { string: { raw: text }, metadata: { ext: specific } }, metadata, ...(filters ? { filters } : {}) },
    text,
    specific,
  };
}

/** Stores discovered code as assets (discovered, AUTOMATIC), made by `application`, each with the websites given. */
async function storeDiscovered(
  context: OperationContext,
  application: JsonObject,
  found: readonly Discovered[],
  websites: ReadonlyArray<{ url: string; name: string }> = [],
) {
  for (const item of found) {
    await createAssetFromSeed(context, {
      type: 'SEEDED_ASSET',
      asset: {
        application,
        discovered: true,
        format: { fragment: { string: { raw: item.text } }, classification: { specific: item.specific } },
        metadata: { ...(item.name ? { name: item.name } : {}), mechanism: 'AUTOMATIC', websites },
      },
    });
  }
}

/**
 * discoveryDiscoverAssets: the code in what is sent. A fragment is kept when it holds code (each
 * of its code segments a discovered fragment; text is left out); a file in a programming
 * language is discovered whole, a text file (Markdown…) by the code blocks in it. A folder
 * (`directory`) is refused 501: it names a path of the machine, which no host here reads. With
 * `automatic`, each is stored as an asset of the application named.
 */
export async function discoveryDiscoverAssets(context: OperationContext) {
  const automatic = flag(context.url, 'automatic');
  const path = 'seededDiscoverableAssets';
  const body = await bodyOf(context, 'SeededDiscoverableAssets', '{"application":"<id>","iterable":[{"fragment":{"string":{"raw":"…"}}}]}');
  knownKeys(body, ['schema', 'application', 'iterable', 'filters'], path, 'SeededDiscoverableAssets');
  optional(body, 'schema', path, embeddedSchema);
  optional(body, 'filters', path, object);
  const applicationId = required(body, 'application', path, string);
  const found: Discovered[] = [];
  required(body, 'iterable', path, array).forEach((value, i) => {
    const p = `${path}.iterable[${i}]`;
    const item = object(value, p);
    knownKeys(item, ['schema', 'file', 'fragment', 'directory', 'filters'], p, 'SeededDiscoverableAsset');
    optional(item, 'schema', p, embeddedSchema);
    const filters = optional(item, 'filters', p, object);
    if (optional(item, 'directory', p, string) !== undefined) {
      throw new HttpError(
        501,
        `${p}.directory names a folder of the machine to read: no host of this service reads the machine's files by path (send its files' contents as ${p}.file instead).`,
      );
    }
    const fragment = optional(item, 'fragment', p, (v, q) => seededValue(v, q, 'fragment'));
    const file = optional(item, 'file', p, (v, q) => seededValue(v, q, 'file'));
    if (!fragment && !file) throw badRequest(`${p} has nothing to discover: send a fragment or a file.`);
    for (const content of [fragment, file]) {
      if (content?.text === undefined) continue;
      const { generic, specific } = classified(content);
      const name = content.hints.find((hint) => hint?.includes('.'));
      if (content.kind === 'file' && generic === 'CODE') {
        found.push({ ...discoveredFragment(content.text, specific, { ...(name ? { name } : {}), mechanism: 'AUTOMATIC' }, filters), name });
        continue;
      }
      for (const piece of segment(content.text, true)) {
        if (piece.generic !== 'CODE') continue;
        const language =
          content.kind === 'fragment' && generic === 'CODE' && segment(content.text, false).length === 1 ? specific : piece.specific!;
        found.push(discoveredFragment(piece.text, language, { mechanism: 'AUTOMATIC' }, filters));
      }
    }
  });
  if (automatic) await storeDiscovered(context, await discoveringApplication(context, applicationId, `${path}.application`), found);
  return reply({ application: applicationId, iterable: found.map((item) => item.wire) });
}

/**
 * discoveryDiscoverAssetsHtml: the code blocks of each page sent (`<pre>`, and `<code>` of more
 * than one line), each a discovered fragment in the language its class names or its text is
 * detected as. With `automatic`, each is stored as an asset with the page as its website.
 */
export async function discoveryDiscoverAssetsHtml(context: OperationContext) {
  const automatic = flag(context.url, 'automatic');
  const path = 'seededDiscoverableHtmlWebpages';
  const body = await bodyOf(
    context,
    'SeededDiscoverableHtmlWebpages',
    '{"application":"<id>","iterable":[{"url":"…","page":"<pre>…</pre>"}]}',
  );
  knownKeys(body, ['schema', 'application', 'iterable'], path, 'SeededDiscoverableHtmlWebpages');
  optional(body, 'schema', path, embeddedSchema);
  const applicationId = required(body, 'application', path, string);
  const pages = required(body, 'iterable', path, array).map((value, i) => {
    const p = `${path}.iterable[${i}]`;
    const item = object(value, p);
    knownKeys(item, ['schema', 'url', 'page'], p, 'SeededDiscoverableHtmlWebpage');
    optional(item, 'schema', p, embeddedSchema);
    const url = required(item, 'url', p, string);
    const found = pageCode(required(item, 'page', p, string)).map((block) =>
      discoveredFragment(block.text, block.specific ?? detectSpecific(block.text), { mechanism: 'AUTOMATIC' }),
    );
    return { url, found };
  });
  if (automatic) {
    const application = await discoveringApplication(context, applicationId, `${path}.application`);
    for (const { url, found } of pages) await storeDiscovered(context, application, found, [{ url, name: siteName(url) }]);
  }
  return reply({
    application: applicationId,
    iterable: pages.map(({ url, found }) => ({ url, assets: { application: applicationId, iterable: found.map((item) => item.wire) } })),
  });
}

/** A website's name: its host, else the URL. */
function siteName(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

const SENSITIVE = KINDS.find((row) => row.kind === 'sensitive')!;

/**
 * discoveryDiscoverSensitives: the secrets in each text sent (keys and tokens by their known
 * forms, private keys, passwords in URLs, credentials assigned in code), each a SeededSensitive
 * on the asset the item names, with where it was found and its entropy. With `automatic`, each
 * is stored as a sensitive of that asset (which must exist).
 */
export async function discoveryDiscoverSensitives(context: OperationContext) {
  const automatic = flag(context.url, 'automatic');
  const path = 'seededDiscoverableSensitives';
  const body = await bodyOf(context, 'SeededDiscoverableSensitives', '{"application":"<id>","iterable":[{"asset":"<id>","text":"…"}]}');
  knownKeys(body, ['schema', 'application', 'iterable'], path, 'SeededDiscoverableSensitives');
  optional(body, 'schema', path, embeddedSchema);
  const application = required(body, 'application', path, string);
  const found = required(body, 'iterable', path, array).flatMap((value, i) => {
    const p = `${path}.iterable[${i}]`;
    const item = object(value, p);
    knownKeys(
      item,
      ['schema', 'asset', 'text', 'mechanism', 'category', 'severity', 'name', 'description', 'metadata'],
      p,
      'SeededDiscoverableSensitive',
    );
    optional(item, 'schema', p, embeddedSchema);
    for (const key of ['category', 'severity', 'name', 'description']) optional(item, key, p, string);
    optional(item, 'metadata', p, object);
    const mechanism = optional(item, 'mechanism', p, (v, q) => oneOf(v, MechanismEnum, q));
    const asset = required(item, 'asset', p, string);
    const text = required(item, 'text', p, string);
    return findSecrets(text).map((secret) => ({
      seed: {
        asset,
        text: secret.text,
        mechanism: mechanism ?? 'AUTOMATIC',
        category: secret.category,
        severity: secret.severity,
        name: secret.name,
        description: secret.description,
        metadata: { match: { group: { text: secret.text, start: secret.start, end: secret.end } }, entropy: secret.entropy },
      },
      text,
    }));
  });
  if (automatic) {
    for (const { seed } of found) {
      if (!(await context.service.storage.getAsset(seed.asset)))
        throw notFound(`No asset with id ${seed.asset} (${path}.iterable[].asset).`);
    }
    for (const { seed } of found) await createMaterial(context, SENSITIVE, seed);
  }
  return reply({ application, iterable: found });
}

/**
 * discoveryDiscoverTagsRelated: for each tag sent (its text, on an asset), the tags of the store
 * that are on the assets it is on, most shared first (ties by text), without itself and those
 * the asset has already. With `automatic`, the asset is put on them.
 */
export async function discoveryDiscoverTagsRelated(context: OperationContext) {
  const automatic = flag(context.url, 'automatic');
  const path = 'seededDiscoverableRelatedTags';
  const body = await bodyOf(
    context,
    'SeededDiscoverableRelatedTags',
    '{"application":"<id>","iterable":[{"asset":"<id>","text":"react"}]}',
  );
  knownKeys(body, ['schema', 'application', 'iterable'], path, 'SeededDiscoverableRelatedTags');
  optional(body, 'schema', path, embeddedSchema);
  const application = required(body, 'application', path, string);
  const asked = required(body, 'iterable', path, array).map((value, i) => {
    const p = `${path}.iterable[${i}]`;
    const item = object(value, p);
    knownKeys(item, ['schema', 'text', 'asset', 'mechanism', 'format', 'category'], p, 'SeededDiscoverableRelatedTag');
    optional(item, 'schema', p, embeddedSchema);
    optional(item, 'format', p, string);
    return {
      text: required(item, 'text', p, string),
      asset: required(item, 'asset', p, string),
      mechanism: optional(item, 'mechanism', p, (v, q) => oneOf(v, MechanismEnum, q)),
      category: optional(item, 'category', p, (v, q) => oneOf(v, TagCategoryEnum, q)),
      path: `${p}.asset`,
    };
  });
  const { storage } = context.service;
  const assets = await storage.listAssets();
  const byId = new Map(assets.map((asset) => [asset.record.id, asset]));
  const seeds: JsonObject[] = [];
  const toAdd: Array<{ asset: string; tag: string }> = [];
  for (const tag of asked) {
    const own = byId.get(tag.asset);
    if (!own) throw notFound(`No asset with id ${tag.asset} (${tag.path}).`);
    const wanted = tag.text.trim().toLowerCase();
    const has = new Set(own.tags.map((t) => t.text.toLowerCase()));
    const counts = new Map<string, { text: string; id: string; count: number }>();
    for (const asset of assets) {
      if (!asset.tags.some((t) => t.text.toLowerCase() === wanted)) continue;
      for (const other of asset.tags) {
        const key = other.text.toLowerCase();
        if (key === wanted || has.has(key)) continue;
        const entry = counts.get(key) ?? { text: other.text, id: other.id, count: 0 };
        entry.count++;
        counts.set(key, entry);
      }
    }
    const related = [...counts.values()].sort((a, b) => b.count - a.count || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
    for (const other of related) {
      seeds.push({
        seed: {
          text: other.text,
          asset: tag.asset,
          mechanism: tag.mechanism ?? 'AUTOMATIC',
          ...(tag.category ? { category: tag.category } : {}),
        },
      });
      toAdd.push({ asset: tag.asset, tag: other.id });
    }
  }
  if (automatic) {
    for (const { asset, tag } of toAdd) {
      await associateAsset(context, asset, 'tag', tag, true);
    }
  }
  return reply({ application, iterable: seeds });
}
