/**
 * ActivityApi and ActivitiesApi beyond the snapshot (handlers/activities.ts lists them all), and
 * AssetApi's assetSpecificAssetActivities: an activity created by a client (a SeededActivity),
 * updated, deleted, read by id, their identifiers (by what they record: a creation, an update, a
 * deletion, a reference), an asset's own. A client's activity is a record of the activities store
 * as the service's own are: listed, streamed, exported.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { MechanismEnum } from '../enums.js';
import { activity, activityWire } from '../models/asset.js';
import { parseApplication } from '../models/application.js';
import type { ActivityRecord } from '../../storage/storage.js';
import { isObject, knownKeys, object, oneOf, optional, required, uuid, type JsonObject } from '../validate.js';
import { clock, publish, transferables } from './common.js';
import { TRACKED } from './connector.js';

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

/** SeededConnectorTracking's keys on the wire: what an activity's event may record. */
const EVENT_KEYS = ['schema', ...TRACKED];

/** An activity's event (a SeededConnectorTracking): its keys known, each an object, at least one event. */
function parseEvent(value: unknown, path: string): JsonObject {
  const event = object(value, path);
  knownKeys(event, EVENT_KEYS, path, 'SeededConnectorTracking');
  for (const [key, part] of Object.entries(event)) if (!isObject(part)) throw badRequest(`${path}.${key} must be a JSON object.`);
  if (!Object.keys(event).some((key) => key !== 'schema'))
    throw badRequest(`${path} must record an event (asset, format, conversation, …).`);
  return event;
}

/** The asset an activity names (`{id}`), which must be stored. */
async function namedAsset(context: OperationContext, value: unknown, path: string): Promise<string | undefined> {
  if (value === undefined || value === null) return undefined;
  const id = required(object(value, path), 'id', path, uuid);
  if (!(await context.service.storage.getAsset(id))) throw notFound(`No asset with id ${id} (${path}.id).`);
  return id;
}

/** activitiesCreateNewActivity: a SeededActivity becomes an Activity (its asset, when named, must be stored); answers it. */
export async function activitiesCreateNewActivity(context: OperationContext) {
  transferables(context.url);
  const path = 'seededActivity';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(body, ['schema', 'event', 'application', 'asset', 'user', 'format', 'mechanism', 'conversation'], path, 'SeededActivity');
  const event = required(body, 'event', path, parseEvent);
  const application = required(body, 'application', path, (v, p) => parseApplication(v, p));
  const mechanism = optional(body, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)) ?? 'MANUAL';
  const asset = await namedAsset(context, body.asset, `${path}.asset`);
  for (const key of ['user', 'format', 'conversation'] as const)
    if (body[key] != null) required(object(body[key], `${path}.${key}`), 'id', `${path}.${key}`, uuid);
  // Made as the service's own activities are (its id, time and place in the order), with what the client recorded.
  const { asset: _none, ...made } = activity(clock(context), { asset: '', pair: 'asset', value: '', keep: false }, application);
  const record: ActivityRecord = { ...made, event, mechanism, ...(asset ? { asset } : {}) };
  publish(context, await context.service.storage.editActivity(record.id, () => record));
  return reply(activityWire(record, asset ? await context.service.storage.getAsset(asset) : undefined));
}

/** activityUpdate: an Activity's event, application and mechanism as sent (its id, times and asset are the store's); answers it. */
export async function activityUpdate(context: OperationContext) {
  transferables(context.url);
  const path = 'activity';
  const body = object(await readJson(context.request, context.service.maxBodyBytes), path);
  knownKeys(
    body,
    ['schema', 'id', 'created', 'updated', 'event', 'application', 'deleted', 'asset', 'user', 'format', 'mechanism', 'rank'],
    path,
    'Activity',
  );
  const id = required(body, 'id', path, uuid);
  const event = required(body, 'event', path, parseEvent);
  const application = required(body, 'application', path, (v, p) => parseApplication(v, p));
  const mechanism = required(body, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p));
  let updated: ActivityRecord | undefined;
  const changes = await context.service.storage.editActivity(id, (current) => {
    if (!current) throw notFound(`No activity with id ${id}.`);
    updated = { ...current, event, application, mechanism };
    return JSON.stringify(updated) === JSON.stringify(current) ? undefined : updated;
  });
  publish(context, changes);
  return reply(activityWire(updated!, updated!.asset ? await context.service.storage.getAsset(updated!.asset) : undefined));
}

/** activitiesDeleteSpecificActivity: the activity goes (announced as deleted on the activities stream). */
export async function activitiesDeleteSpecificActivity(context: OperationContext) {
  const id = uuid(context.params.activity, 'The activity id');
  const changes = await context.service.storage.editActivity(id, (current) => {
    if (!current) throw notFound(`No activity with id ${id}.`);
    return null;
  });
  publish(context, changes);
  return reply();
}
