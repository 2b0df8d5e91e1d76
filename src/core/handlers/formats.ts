/**
 * Formats as a collection (FormatsApi), their classification changed by the user (FormatApi's
 * formatReclassify, AssetApi's assetReclassify), what the classifier made of them (the analyses:
 * FormatApi's formatAnalysis, AnalysesApi, CodeAnalysesApi, ImageAnalysesApi, OCRAnalysesApi) and
 * the counts of their classifications (MetricsApi). Formats are the assets' own records: every
 * read is over the stored assets, every write an edit of the asset a format belongs to.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { ClassificationSpecificEnum } from '../enums.js';
import { activity, assetWire, formatWire } from '../models/asset.js';
import { genericOf } from '../models/classify.js';
import type { FormatRecord, StoredAsset } from '../../storage/storage.js';
import { VERSION } from '../../shared/version.js';
import { object, oneOf, required, uuid, type JsonObject } from '../validate.js';
import { clock, publish, transferables } from './common.js';

/** `transferable` (FormatApi's and FormatsApi's spelling): absent means true; only "true" and "false". */
function transferable(url: URL): boolean {
  const values = url.searchParams.getAll('transferable');
  if (values.length === 0) return true;
  if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
  throw badRequest(`The transferable query parameter must be true or false; got ${JSON.stringify(values.join(',')).slice(0, 200)}.`);
}

/** Every stored format with its asset, in the assets' order and each asset's order of formats. */
async function everyFormat(context: OperationContext): Promise<Array<{ format: FormatRecord; asset: StoredAsset }>> {
  const assets = await context.service.storage.listAssets();
  return assets.flatMap((asset) => asset.formats.map((format) => ({ format, asset })));
}

async function oneFormat(context: OperationContext): Promise<{ format: FormatRecord; asset: StoredAsset }> {
  const id = uuid(context.params.format, 'The format id');
  const asset = await context.service.storage.findAsset({ format: id });
  const format = asset?.formats.find((f) => f.id === id);
  if (!asset || !format) throw notFound(`No format with id ${id}.`);
  return { format, asset };
}

/** formatsSnapshot: every format of every asset (their values with `transferables`). */
export async function formatsSnapshot(context: OperationContext) {
  const withValues = transferables(context.url);
  return reply({ iterable: (await everyFormat(context)).map(({ format, asset }) => formatWire(format, asset, withValues)) });
}

/** formatsSpecificFormatSnapshot (GET /formats/{format}): one format, as FormatApi's formatSnapshot answers it. */
export async function formatsSpecificFormatSnapshot(context: OperationContext) {
  const withValue = transferable(context.url);
  const { format, asset } = await oneFormat(context);
  return reply(formatWire(format, asset, withValue));
}

/**
 * The model that classified every format here: the service's own classifier (the client's
 * language, name or extension, else signs in the text: src/core/models/classify.ts), local.
 */
const CLASSIFIER: JsonObject = {
  id: 'pieces-os-worker-classifier',
  version: VERSION,
  created: { value: '2025-01-01T00:00:00.000Z' },
  name: 'pieces-os-worker classifier (names, extensions and signs in the text)',
  cloud: false,
  type: 'SPEED',
  usage: 'CODE_CLASSIFICATION',
  cpu: true,
  downloaded: true,
  loaded: true,
};

/**
 * What the classifier made of a format: for code or text its language (a CodeAnalysis), for an
 * image an ImageAnalysis (no OCR is run here: it has none); none for what it does not look at. The
 * analysis is the format's (one each, under the format's id: it is derived, never stored apart).
 */
function analysisOf(format: FormatRecord): JsonObject | undefined {
  const { generic, specific } = format.classification;
  const base = { id: format.id, format: format.id };
  if (generic === 'CODE' || generic === 'TEXT')
    return { ...base, code: { id: format.id, analysis: format.id, type: generic, language: specific, model: CLASSIFIER } };
  if (generic === 'IMAGE') return { ...base, image: { id: format.id, analysis: format.id } };
  return undefined;
}

/** formatAnalysis: what the classifier made of one format; 404 for a format it does not analyse (a video, a file of another kind). */
export async function formatAnalysis(context: OperationContext) {
  const { format } = await oneFormat(context);
  const analysis = analysisOf(format);
  if (!analysis)
    throw notFound(`Format ${format.id} (${format.classification.generic}) has no analysis: only code, text and images are analysed.`);
  return reply(analysis);
}

async function analyses(context: OperationContext): Promise<JsonObject[]> {
  return (await everyFormat(context)).flatMap(({ format }) => {
    const analysis = analysisOf(format);
    return analysis ? [analysis] : [];
  });
}

export async function analysesSnapshot(context: OperationContext) {
  transferables(context.url);
  return reply({ iterable: await analyses(context) });
}

export async function codeAnalysesSnapshot(context: OperationContext) {
  return reply({ iterable: (await analyses(context)).flatMap((a) => (a.code ? [a.code] : [])) });
}

export async function imageAnalysesSnapshot(context: OperationContext) {
  transferables(context.url);
  return reply({ iterable: (await analyses(context)).flatMap((a) => (a.image ? [a.image] : [])) });
}

/** ocrAnalysesSnapshot: none, and truly so: no host of this service runs OCR, so nothing here makes one. */
export async function ocrAnalysesSnapshot(context: OperationContext) {
  transferables(context.url);
  return reply({ iterable: [] });
}

/** getMetricsFormats: each classification the stored formats have, with the ids of the formats that have it (most first). */
export async function getMetricsFormats(context: OperationContext) {
  const groups = new Map<string, { generic: string; specific: string; identifiers: string[] }>();
  for (const { format } of await everyFormat(context)) {
    const { generic, specific } = format.classification;
    const key = `${generic}/${specific}`;
    const group = groups.get(key) ?? { generic, specific, identifiers: [] };
    group.identifiers.push(format.id);
    groups.set(key, group);
  }
  return reply({ iterable: [...groups.values()].sort((a, b) => b.identifiers.length - a.identifiers.length) });
}

/** metricsFormatsOrdered: the languages of the code formats, from most formats to least (ties in first-seen order). */
export async function metricsFormatsOrdered(context: OperationContext) {
  const counts = new Map<string, number>();
  for (const { format } of await everyFormat(context))
    if (format.classification.generic === 'CODE')
      counts.set(format.classification.specific, (counts.get(format.classification.specific) ?? 0) + 1);
  return reply({ ordered: [...counts].sort((a, b) => b[1] - a[1]).map(([specific]) => specific) });
}

/** A format classified as `ext`: refused (400) where the value cannot be that (text as an image, bytes as code). */
function reclassified(format: FormatRecord, ext: string, path: string, now: string): FormatRecord {
  const generic = genericOf(ext);
  const holdsText = format.text !== undefined;
  if (holdsText !== (generic === 'CODE' || generic === 'TEXT'))
    throw badRequest(
      `${path}: format ${format.id} holds ${holdsText ? 'text' : 'bytes'}, which cannot be classified as ${ext} (${generic}).`,
    );
  return { ...format, classification: { ...format.classification, generic, specific: ext }, updated: now };
}

/** The `ext` and the record id of a reclassification body ({ext, asset: Asset} or {ext, format: Format}). */
async function reclassification(context: OperationContext, key: 'asset' | 'format') {
  const path = `${key}Reclassification`;
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  for (const name of Object.keys(body))
    if (!['schema', 'ext', key].includes(name)) throw badRequest(`${path}.${name}: unknown key (${path} has schema, ext and ${key}).`);
  const ext = required(body, 'ext', path, (v, p) => oneOf(v, ClassificationSpecificEnum, p));
  if (ext === 'UNKNOWN') throw badRequest(`${path}.ext must name a classification, not UNKNOWN.`);
  const id = required(required(body, key, path, object), 'id', `${path}.${key}`, uuid);
  return { ext, id, path };
}

/** assetReclassify: the asset's original format (and its preview, when another) classified as `ext`; answers the Asset. */
export async function assetReclassify(context: OperationContext) {
  const withText = transferables(context.url);
  const { ext, id, path } = await reclassification(context, 'asset');
  const time = clock(context);
  const now = time.now().toISOString();
  const result = await context.service.storage.editAsset({ asset: id }, (current) => {
    const targets = new Set([current.record.original, current.record.preview]);
    return {
      record: { ...current.record, updated: now },
      putFormats: current.formats.filter((f) => targets.has(f.id)).map((f) => reclassified(f, ext, `${path}.ext`, now)),
      activities: [activity(time, { asset: id, pair: 'assetUpdated', value: 'an_asset_was_updated' })],
    };
  });
  if (!result) throw notFound(`No asset with id ${id}.`);
  publish(context, result.changes);
  return reply(assetWire(result.state, withText));
}

/** formatReclassify: one format classified as `ext` (its asset updated with it); answers the Format. */
export async function formatReclassify(context: OperationContext) {
  const withValue = transferable(context.url);
  const { ext, id, path } = await reclassification(context, 'format');
  const time = clock(context);
  const now = time.now().toISOString();
  const result = await context.service.storage.editAsset({ format: id }, (current) => ({
    record: { ...current.record, updated: now },
    putFormats: [reclassified(current.formats.find((f) => f.id === id)!, ext, `${path}.ext`, now)],
    activities: [activity(time, { asset: current.record.id, pair: 'assetUpdated', value: 'an_asset_was_updated' })],
  }));
  if (!result) throw notFound(`No format with id ${id}.`);
  publish(context, result.changes);
  return reply(formatWire(result.state.formats.find((f) => f.id === id)!, result.state, withValue));
}
