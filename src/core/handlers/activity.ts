/**
 * ActivityApi's reads and AssetApi's assetSpecificAssetActivities: the activities recorded about
 * assets and conversations (handlers/activities.ts lists them all), one by id, their identifiers
 * (by what they record: a creation, an update, a deletion, a reference), an asset's own.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, reply } from '../http.js';
import { activityWire } from '../models/asset.js';
import type { ActivityRecord } from '../../storage/storage.js';
import { oneOf, uuid, type JsonObject } from '../validate.js';
import { transferables } from './common.js';

/** The kinds of activity `activity_filter_enum` picks (ActivityIdentifiersSnapshotActivityFilterEnumEnum). */
const FILTERS = ['UNKNOWN', 'CREATED', 'UPDATED', 'DELETED', 'REFERENCED'] as const;
type Filter = (typeof FILTERS)[number];

/** The identifier-description pair's key an activity records (`asset_created`, `conversation_name_updated`, …). */
function pairOf(record: ActivityRecord): string {
  const event = record.event as Record<string, { identifier_description_pair?: JsonObject } | undefined>;
  for (const about of Object.values(event)) {
    const key = about?.identifier_description_pair && Object.keys(about.identifier_description_pair)[0];
    if (key) return key;
  }
  return '';
}

/**
 * Which filter an activity falls under, from what its pair says was done: the asset's or the
 * conversation's own creation or deletion; a use of it (referenced, copied, viewed, shared); any
 * other change of it (renamed, a tag added, a value edited) is an update.
 */
function kindOf(record: ActivityRecord): Filter {
  const pair = pairOf(record);
  if (/^[a-z]+_created$/.test(pair)) return 'CREATED';
  if (/^[a-z]+_deleted$/.test(pair)) return 'DELETED';
  if (/_(referenced|copied|viewed|opened|shared|accessed)/.test(pair)) return 'REFERENCED';
  return pair ? 'UPDATED' : 'UNKNOWN';
}

/** `pseudo`: only "true" or "false". */
function pseudo(url: URL): boolean | undefined {
  const value = url.searchParams.get('pseudo');
  if (value === null) return undefined;
  if (value !== 'true' && value !== 'false')
    throw badRequest(`The pseudo query parameter must be true or false; got ${JSON.stringify(value)}.`);
  return value === 'true';
}

/** activityIdentifiersSnapshot: the ids of the activities, oldest first, of one kind with `activity_filter_enum`. */
export async function activityIdentifiersSnapshot(context: OperationContext) {
  // Every activity here is a real one (none is pseudo): asking for pseudo activities finds none.
  const onlyPseudo = pseudo(context.url) === true;
  const given = context.url.searchParams.get('activity_filter_enum');
  const filter = given === null ? undefined : oneOf(given, FILTERS, 'activity_filter_enum');
  const activities = onlyPseudo ? [] : await context.service.storage.listActivities();
  return reply({ iterable: activities.filter((a) => !filter || kindOf(a) === filter).map(({ id }) => ({ id })) });
}

/** activitiesSpecificActivitySnapshot: one activity, its asset joined while it exists. */
export async function activitiesSpecificActivitySnapshot(context: OperationContext) {
  transferables(context.url);
  const id = uuid(context.params.activity, 'The activity id');
  const { storage } = context.service;
  const record = (await storage.listActivities()).find((a) => a.id === id);
  if (!record) throw notFound(`No activity with id ${id}.`);
  return reply(activityWire(record, record.asset ? await storage.getAsset(record.asset) : undefined));
}

/** assetSpecificAssetActivities: the activities of one asset, oldest first. */
export async function assetSpecificAssetActivities(context: OperationContext) {
  transferables(context.url);
  const id = uuid(context.params.asset, 'The asset id');
  const { storage } = context.service;
  const asset = await storage.getAsset(id);
  if (!asset) throw notFound(`No asset with id ${id}.`);
  const activities = (await storage.listActivities()).filter((a) => a.asset === id);
  return reply({ iterable: activities.map((record) => activityWire(record, asset)) });
}
