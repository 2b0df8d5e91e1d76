/** `seed(data)`: the data format validated into stored records, every problem a 400 naming its place. */
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import { parseApplication } from '../models/application.js';
import type { TagRecord, WebsiteRecord } from '../../storage/schema.js';
import type { StoredData } from '../../storage/storage.js';
import { object, optional } from '../validate.js';
import { parseAnnotation, parseAsset, parseLinked } from './assets.js';
import { parseConversation } from './conversation.js';
import { list, unique } from './fields.js';
import { DATA_VERSION } from './format.js';
import { parseActivity, parseAnchor, parseEvent, parseExternal, parseMaterials, parseModelState, parseSession } from './records.js';

const KEYS = [
  'version',
  'conversations',
  'applications',
  'sessions',
  'events',
  'assets',
  'annotations',
  'tags',
  'websites',
  'activities',
  'externalApplications',
  'anchors',
  'models',
  'materials',
];

/** Validates seed data into stored records; a message names the first problem. */
export function parseData(value: unknown, clock: Clock): StoredData {
  const data = object(value, 'data');
  for (const key of Object.keys(data)) {
    if (!KEYS.includes(key)) throw badRequest(`data has an unknown key "${key}"; the keys are ${KEYS.join(', ')}.`);
  }
  if (data.version !== undefined && data.version !== DATA_VERSION) {
    throw badRequest(`data.version must be ${DATA_VERSION}; got ${JSON.stringify(data.version)}.`);
  }
  const each = <T>(key: string, parse: (item: unknown, path: string) => T) =>
    list(data, key).map((item, i) => parse(item, `data.${key}[${i}]`));
  const conversations = unique(
    each('conversations', (v, p) => parseConversation(v, p, clock)),
    (c) => c.conversation.id,
    'conversations',
  );
  unique(
    conversations.flatMap((c) => c.messages),
    (m) => m.id,
    'messages',
  );
  const assets = unique(
    each('assets', (v, p) => parseAsset(v, p, clock)),
    (a) => a.record.id,
    'assets',
  );
  const annotations = [...assets.flatMap((a) => a.annotations), ...each('annotations', (v, p) => parseAnnotation(v, p))];
  const assetIds = new Set(assets.map((a) => a.record.id));
  const onAssets = <T extends { assets: string[] }>(items: T[], what: string) => {
    items.forEach((item, i) => {
      for (const id of item.assets)
        if (!assetIds.has(id)) throw badRequest(`data.${what}[${i}].assets lists ${id}, which is not an asset of the data.`);
    });
    return items;
  };
  return {
    conversations,
    applications: unique(
      each('applications', (v, p) => parseApplication(v, p)),
      (a) => a.id,
      'applications',
    ),
    sessions: unique(
      each('sessions', (v, p) => parseSession(v, p, clock)),
      (s) => s.id,
      'sessions',
    ),
    events: unique(
      each('events', (v, p) => parseEvent(v, p, clock)),
      (e) => e.id,
      'events',
    ),
    assets: assets.map((a) => a.record),
    formats: unique(
      assets.flatMap((a) => a.formats),
      (f) => f.id,
      'assets[].formats',
    ),
    annotations: unique(annotations, (a) => a.id, 'annotations'),
    tags: onAssets(
      unique(each('tags', parseLinked<TagRecord>('tag')), (t) => t.id, 'tags'),
      'tags',
    ),
    websites: onAssets(
      unique(each('websites', parseLinked<WebsiteRecord>('website')), (w) => w.id, 'websites'),
      'websites',
    ),
    activities: unique(each('activities', parseActivity), (a) => a.id, 'activities'),
    external: unique(each('externalApplications', parseExternal), (a) => a.name, 'externalApplications'),
    anchors: unique(
      each('anchors', (v, p) => parseAnchor(v, p, clock)),
      (a) => a.id,
      'anchors',
    ),
    models: unique(each('models', parseModelState), (m) => m.id, 'models'),
    materials: optional(data, 'materials', 'data', (v) => parseMaterials(v, clock)) ?? [],
  };
}
