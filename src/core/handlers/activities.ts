/** ActivitiesApi: what happened to assets and conversations, oldest first, each with its asset while it exists. */
import type { OperationContext } from '../context.js';
import { json } from '../http.js';
import { activityWire } from '../models/asset.js';
import { transferables } from './common.js';

export async function activitiesSnapshot(context: OperationContext) {
  transferables(context.url);
  const { storage } = context.service;
  const [activities, assets] = await Promise.all([storage.listActivities(), storage.listAssets()]);
  const byId = new Map(assets.map((asset) => [asset.record.id, asset]));
  return json({ iterable: activities.map((record) => activityWire(record, record.asset ? byId.get(record.asset) : undefined)) });
}
