/**
 * Handlers of TagsApi and TagApi, WebsitesApi and WebsiteApi: tags and websites on their own, in
 * their stores (the same records the assets' own path makes and lists). A create with an `asset`
 * puts the record on it; a record of a stored text (URL) is that record. A delete takes the record
 * off its assets in the same transaction, and their stream hears of it. (The associations with the
 * other kinds are their own operations.)
 */
import type { LinkedKind, LinkedRecords } from '../../storage/storage.js';
import type { OperationContext } from '../context.js';
import { HttpError, badRequest, notFound, readJson, reply } from '../http.js';
import { tagWire, websiteWire } from '../models/asset.js';
import { incrementedScore } from '../models/material.js';
import { searchQuery } from '../models/search.js';
import { checked, linkedRow, searchLinked, seededRecord, updatedRecord, updateTarget } from '../models/tags-websites.js';
import { isObject, uuid, type JsonObject } from '../validate.js';
import { clock, publish, transferables } from './common.js';
import { identifierStream } from './streams.js';

const wireOf = <K extends LinkedKind>(kind: K, record: LinkedRecords[K]): JsonObject =>
  kind === 'tag' ? tagWire(record as LinkedRecords['tag']) : websiteWire(record as LinkedRecords['website']);

const idOf = (context: OperationContext, kind: LinkedKind) => uuid(context.params[kind], `The ${kind} id`);

const noSuch = (kind: LinkedKind, id: string) => notFound(`No ${kind} with id ${id}.`);

const body = (context: OperationContext) => readJson(context.request, context.service.maxBodyBytes);

/** The collection, oldest first. */
const snapshot = (kind: LinkedKind) => async (context: OperationContext) => {
  transferables(context.url);
  const records = await context.service.storage.listLinked(kind);
  return reply({ iterable: records.map((record) => wireOf(kind, record)) });
};

const item = (kind: LinkedKind) => async (context: OperationContext) => {
  transferables(context.url);
  const id = idOf(context, kind);
  const record = await (kind === 'tag' ? context.service.storage.getTag(id) : context.service.storage.getWebsite(id));
  if (!record) throw noSuch(kind, id);
  return reply(wireOf(kind, record));
};

/**
 * A new tag (website) from its seed; one of the same text (URL) is that one. With an `asset` (which
 * must exist), the record is put on it, and the asset's `updated` and stream follow.
 */
const create = (kind: LinkedKind) => async (context: OperationContext) => {
  transferables(context.url);
  const time = clock(context);
  const seeded = seededRecord(kind, await body(context), time);
  const { asset } = seeded;
  let answer = seeded.record;
  const changes = await context.service.storage.editLinked(kind, { key: seeded.key, assets: asset ? [asset] : [] }, (current, assets) => {
    const listing = asset === undefined ? undefined : assets.get(asset);
    if (asset !== undefined && !listing)
      throw notFound(`No asset with id ${asset} (${kind === 'tag' ? 'seededTag' : 'seededWebsite'}.asset).`);
    answer = current ?? seeded.record;
    if (!listing || current?.assets.includes(listing.id)) return current ? undefined : { record: answer };
    if (current) answer = { ...current, assets: [...current.assets, listing.id], updated: time.now().toISOString() };
    return { record: answer, assets: [{ ...listing, updated: time.now().toISOString() }] };
  });
  publish(context, changes);
  return reply(wireOf(kind, answer));
};

/** The whole model: its own fields and the others (score, …) as sent; another record's text (URL) is a 409. */
const update = (kind: LinkedKind) => async (context: OperationContext) => {
  transferables(context.url);
  const { id, key, sent } = updateTarget(kind, await body(context));
  const time = clock(context);
  const { storage } = context.service;
  const other = await storage.findLinked(kind, key);
  if (other && other.id !== id)
    throw new HttpError(409, `The ${kind} ${other.id} has the ${kind === 'tag' ? 'text' : 'URL'} ${JSON.stringify(key)} already.`);
  let answer: LinkedRecords[typeof kind] | undefined;
  const changes = await storage.editLinked(kind, { id }, (current, assets) => {
    if (!current) throw noSuch(kind, id);
    answer = updatedRecord(current, sent, time);
    return { record: answer, assets: [...assets.values()].map((asset) => ({ ...asset, updated: time.now().toISOString() })) };
  });
  publish(context, changes);
  return reply(wireOf(kind, answer!));
};

/** The record goes, and the assets it was on no longer list it (their `updated` and stream follow). */
const remove = (kind: LinkedKind) => async (context: OperationContext) => {
  const id = idOf(context, kind);
  const time = clock(context);
  const changes = await context.service.storage.editLinked(kind, { id }, (current, assets) => {
    if (!current) throw noSuch(kind, id);
    return { record: null, assets: [...assets.values()].map((asset) => ({ ...asset, updated: time.now().toISOString() })) };
  });
  publish(context, changes);
  return reply();
};

/** ExistentMetadata's `value` is a tag's text (a website's URL): ExistingMetadata names it, or is empty. */
const exists = (kind: LinkedKind) => async (context: OperationContext) => {
  const sent = checked('ExistentMetadata', await body(context));
  const record = await context.service.storage.findLinked(kind, sent.value as string);
  return reply(record ? { [kind]: { id: record.id, reference: wireOf(kind, record) } } : {});
};

const search = (kind: LinkedKind) => async (context: OperationContext) => {
  const withRecords = transferables(context.url);
  const query = searchQuery(await body(context));
  const records = await context.service.storage.listLinked(kind);
  return reply(searchLinked(kind, query, records, (record) => wireOf(kind, record), withRecords));
};

/** A SeededScoreIncrement's part for the kind: the Score's counts it names go up by one. */
const scores = (kind: LinkedKind) => async (context: OperationContext) => {
  const id = idOf(context, kind);
  const sent = await body(context);
  if (!isObject(sent)) throw badRequest('The request body must be a SeededScoreIncrement (a JSON object).');
  const time = clock(context);
  const changes = await context.service.storage.editLinked(kind, { id }, (current) => {
    if (!current) throw noSuch(kind, id);
    const { score } = incrementedScore(linkedRow(kind), sent, { score: current.fields?.score ?? null });
    const fields: JsonObject = { ...current.fields, score: score ?? null };
    return { record: { ...current, fields, updated: time.now().toISOString() } };
  });
  publish(context, changes);
  return reply();
};

export const tagsSnapshot = snapshot('tag');
export const tagsSpecificTagSnapshot = item('tag');
export const tagsCreateNewTag = create('tag');
export const tagUpdate = update('tag');
export const tagsDeleteSpecificTag = remove('tag');
export const tagsExists = exists('tag');
export const searchTags = search('tag');
export const tagScoresIncrement = scores('tag');
export const tagsStreamIdentifiers = identifierStream('tag');

export const websitesSnapshot = snapshot('website');
export const websitesSpecificWebsiteSnapshot = item('website');
export const websitesCreateNewWebsite = create('website');
export const websiteUpdate = update('website');
export const websitesDeleteSpecificWebsite = remove('website');
export const websitesExists = exists('website');
export const searchWebsites = search('website');
export const websiteScoresIncrement = scores('website');
export const websitesStreamIdentifiers = identifierStream('website');
