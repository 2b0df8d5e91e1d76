/** Activities: the record of something done to an asset or a conversation, and its SDK Activity. */
import type { Clock } from '../clock.js';
import type { ActivityRecord } from '../../storage/schema.js';
import type { StoredAsset } from '../../storage/storage.js';
import type { JsonObject } from '../validate.js';
import { SERVICE_APPLICATION } from './asset-records.js';
import { flattenedAsset } from './asset-wire.js';

/** Activities recorded by this service so far: orders the activities of one millisecond. */
let recorded = 0;

/** An activity about an asset or a conversation. */
export function activity(
  clock: Clock,
  about: { asset: string; pair: string; value: string; keep?: boolean } | { conversation: string; pair: string; value: string },
  application: JsonObject & { id: string } = { ...SERVICE_APPLICATION },
): ActivityRecord {
  // The wire spells these keys in snake case (`identifier_description_pair`, `asset_created`).
  const pair = { [about.pair.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]: about.value };
  const event: JsonObject =
    'asset' in about
      ? { asset: { asset: { id: about.asset }, identifier_description_pair: pair } }
      : { conversation: { conversation: { id: about.conversation }, identifier_description_pair: pair } };
  const created = clock.now().toISOString();
  return {
    id: clock.newId(),
    created,
    order: `${created}|${String(++recorded).padStart(12, '0')}`,
    event,
    application,
    mechanism: 'MANUAL',
    ...('asset' in about && about.keep !== false ? { asset: about.asset } : {}),
  };
}

/** An Activity: its asset joined as a FlattenedAsset while the asset exists. */
export function activityWire(record: ActivityRecord, asset: StoredAsset | undefined): JsonObject {
  return {
    id: record.id,
    created: { value: record.created },
    updated: { value: record.created },
    event: record.event,
    application: record.application,
    mechanism: record.mechanism,
    ...(asset ? { asset: flattenedAsset(asset) } : {}),
  };
}
