/** ActivitiesApi: what happened to assets and conversations, oldest first, each with its asset while it exists. */
import type { OperationContext } from '../context.js';
import { reply } from '../http.js';
import { activityWire } from '../models/asset.js';
import type { StoredAsset } from '../../storage/storage.js';
import { transferables } from './common.js';

/** Up to this many assets are read one by one; more, and every asset is read at once. */
const READ_ONE_BY_ONE = 64;

export async function activitiesSnapshot(context: OperationContext) {
  transferables(context.url);
  const { storage } = context.service;
  const activities = await storage.listActivities();
  const ids = [...new Set(activities.flatMap((a) => (a.asset ? [a.asset] : [])))];
  const assets: Array<StoredAsset | undefined> =
    ids.length <= READ_ONE_BY_ONE ? await Promise.all(ids.map((id) => storage.getAsset(id))) : await storage.listAssets();
  const byId = new Map(assets.filter((a) => !!a).map((asset) => [asset!.record.id, asset!]));
  return reply({ iterable: activities.map((record) => activityWire(record, record.asset ? byId.get(record.asset) : undefined)) });
}
