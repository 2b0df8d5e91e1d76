/**
 * The data format of `seed(data)` and `exportData()`: the whole store as one JSON document in wire
 * shapes, ids and times kept as given (docs/testing.md, "Data format").
 */
import {
  AnchorTypeEnum,
  AnnotationTypeEnum,
  ClassificationGenericEnum,
  ClassificationSpecificEnum,
  ConversationTypeEnum,
  MechanismEnum,
  MessageRoleEnum,
  MessageSentimentEnum,
  RoleEnum,
  TagCategoryEnum,
} from './enums.js';
import { catalogueModel } from './copilot/catalogue.js';
import { assetFromInput, type AssetInput } from './models/asset.js';
import type { CONVERSATION_FIELDS, MESSAGE_FIELDS } from './models/conversation.js';
import { badRequest } from './http.js';
import type { Clock } from './clock.js';
import { parseApplication } from './models/application.js';
import type {
  ActivityRecord,
  AnchorRecord,
  AnnotationRecord,
  AssetRecord,
  EventKind,
  EventRecord,
  ExternalApplicationRecord,
  FormatRecord,
  ModelStateRecord,
  SessionRecord,
  TagRecord,
  WebsiteRecord,
} from '../storage/schema.js';
import type { StoredData } from '../storage/storage.js';
import { array, boolean, number, object, oneOf, optional, required, string, uuid, type JsonObject } from './validate.js';

export const DATA_VERSION = 1;

/** A conversation with its messages inline, as exported (every id and time set). */
export type ConversationData = SeedConversation & {
  id: string;
  type: string;
  created: GroupedTimestamp;
  updated: GroupedTimestamp;
  messages: Array<SeedMessage & { id: string; created: GroupedTimestamp; updated: GroupedTimestamp }>;
};

export interface PiecesData {
  version: typeof DATA_VERSION;
  conversations: ConversationData[];
  applications: Array<JsonObject & { id: string; name: string; version: string; platform: string }>;
  sessions: SessionRecord[];
  events: EventRecord[];
  assets: AssetData[];
  annotations: AnnotationRecord[];
  tags: TagRecord[];
  websites: WebsiteRecord[];
  activities: ActivityRecord[];
  externalApplications: ExternalApplicationRecord[];
  /** Anchors as `GET /anchor/{id}` answers them. */
  anchors: Array<Record<string, unknown> & { id: string; type: string; points: { iterable: unknown[] } }>;
  /** The catalogue models downloaded here. */
  models: ModelStateRecord[];
}

/** A format as exported: bytes (a value that is not text) in base64. */
export type FormatData = Omit<FormatRecord, 'asset' | 'bytes'> & { bytes?: string };

/** An asset as exported: its record, its formats and its annotations. */
export type AssetData = Omit<AssetRecord, 'formats'> & { formats: FormatData[]; annotations: AnnotationRecord[] };

/** A time as the wire writes it: `{ value: '<ISO-8601>' }`. */
export interface GroupedTimestamp {
  value: string;
  readable?: string;
}

type ConversationField = (typeof CONVERSATION_FIELDS)[number];
type MessageField = (typeof MESSAGE_FIELDS)[number];

/** A message to seed: a ConversationMessage's fields; `role` and `fragment` required, id and times optional. */
export type SeedMessage = { [K in Exclude<MessageField, 'role' | 'fragment' | 'id' | 'created' | 'updated' | 'sentiment'>]?: unknown } & {
  id?: string;
  /** `USER`, `ASSISTANT`, `SYSTEM` or `UNKNOWN`. */
  role: string;
  fragment: { string?: { raw?: string } } & Record<string, unknown>;
  /** `LIKE`, `DISLIKE`, `REPORT` or `UNKNOWN`. */
  sentiment?: string;
  created?: GroupedTimestamp;
  updated?: GroupedTimestamp;
};

/** A conversation to seed: a Conversation's fields, its messages inline, id and times optional. */
export type SeedConversation = {
  [K in Exclude<ConversationField, 'id' | 'name' | 'type' | 'created' | 'updated' | 'messages'>]?: unknown;
} & {
  id?: string;
  name?: string;
  /** `COPILOT` (the default) or `UNKNOWN`. */
  type?: string;
  created?: GroupedTimestamp;
  updated?: GroupedTimestamp;
  messages?: SeedMessage[];
  /** Ids of messages deleted from the conversation (listed as -1 in its `indices`). */
  deletedMessages?: string[];
};

/** What `seed` accepts: any part of the format, ids and times optional. */
export interface PiecesSeed {
  version?: typeof DATA_VERSION;
  conversations?: SeedConversation[];
  /** Applications, as the SDK's Application model (every field it has, and no other). */
  applications?: Array<Record<string, unknown> & { id?: string; name: string; version: string; platform: string }>;
  sessions?: Array<Omit<SessionRecord, 'id' | 'opened'> & { id?: string; opened?: GroupedTimestamp }>;
  events?: Array<Omit<EventRecord, 'id' | 'at'> & { id?: string; at?: string }>;
  /** Assets in short (AssetInput, as `addAssets` takes) or whole (as exported). */
  assets?: Array<AssetInput | AssetData>;
  annotations?: AnnotationRecord[];
  tags?: TagRecord[];
  websites?: WebsiteRecord[];
  activities?: ActivityRecord[];
  externalApplications?: ExternalApplicationRecord[];
  /** Anchors (the SDK's Anchor, with its `points`); id and times optional. */
  anchors?: Array<Record<string, unknown> & { type: string; points: { iterable: unknown[] } }>;
  /** Catalogue models' local state: `{ id, downloaded: true }` for a model downloaded here. */
  models?: Array<{ id: string; downloaded: boolean }>;
}

const EVENT_KINDS: readonly EventKind[] = ['interaction', 'keyboard', 'installation', 'update'];
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
];

/** An ISO-8601 time, kept as written. */
function iso(value: unknown, path: string): string {
  const text = string(value, path);
  if (Number.isNaN(Date.parse(text))) throw badRequest(`${path} must be an ISO-8601 date, not ${JSON.stringify(text)}.`);
  return text;
}

/** A GroupedTimestamp, kept as written. */
function grouped(value: unknown, path: string): JsonObject {
  const record = object(value, path);
  required(record, 'value', path, iso);
  optional(record, 'readable', path, string);
  return record;
}

/** A list's items, holes of a sparse array (possible from JavaScript callers) read as missing items. */
const dense = (items: unknown[]): unknown[] => Array.from(items);

function list(data: JsonObject, key: string): unknown[] {
  return dense(optional(data, key, 'data', array) ?? []);
}

function conversation(value: unknown, path: string, clock: Clock): StoredData['conversations'][number] {
  const input = object(value, path);
  const { messages: messageList, deletedMessages: deletedList, ...rest } = input;
  const id = optional(input, 'id', path, uuid) ?? clock.newId();
  const created = optional(input, 'created', path, grouped) ?? { value: clock.now().toISOString() };
  const updated = optional(input, 'updated', path, grouped) ?? created;
  const type = optional(input, 'type', path, (v, p) => oneOf(v, ConversationTypeEnum, p)) ?? 'COPILOT';
  optional(input, 'name', path, string);
  const messages = dense(messageList === undefined || messageList === null ? [] : array(messageList, `${path}.messages`)).map((item, i) => {
    const p = `${path}.messages[${i}]`;
    const message = object(item, p);
    const owner = optional(message, 'conversation', p, object);
    if (owner && owner.id !== id) throw badRequest(`${p}.conversation.id must be the conversation's id ${id}.`);
    required(message, 'role', p, (v, q) => oneOf(v, MessageRoleEnum, q));
    required(message, 'fragment', p, object);
    optional(message, 'sentiment', p, (v, q) => oneOf(v, MessageSentimentEnum, q));
    const messageCreated = optional(message, 'created', p, grouped) ?? created;
    const record = {
      ...message,
      id: optional(message, 'id', p, uuid) ?? clock.newId(),
      created: messageCreated,
      updated: optional(message, 'updated', p, grouped) ?? messageCreated,
      conversation: { id },
    };
    return { id: record.id, conversation: id, json: JSON.stringify(record) };
  });
  const seen = new Set<string>();
  for (const message of messages) {
    if (seen.has(message.id)) throw badRequest(`${path} lists the message ${message.id} twice.`);
    seen.add(message.id);
  }
  const deletedMessageIds =
    deletedList === undefined || deletedList === null
      ? undefined
      : dense(array(deletedList, `${path}.deletedMessages`)).map((item, i) => uuid(item, `${path}.deletedMessages[${i}]`));
  const record = { ...rest, id, type, created, updated };
  return {
    conversation: {
      id,
      json: JSON.stringify(record),
      messageIds: messages.map((m) => m.id),
      ...(deletedMessageIds ? { deletedMessageIds } : {}),
    },
    messages,
  };
}

function session(value: unknown, path: string, clock: Clock): SessionRecord {
  const input = object(value, path);
  optional(input, 'closed', path, grouped);
  optional(input, 'application', path, uuid);
  return {
    ...input,
    id: optional(input, 'id', path, uuid) ?? clock.newId(),
    opened: (optional(input, 'opened', path, grouped) ?? { value: clock.now().toISOString() }) as SessionRecord['opened'],
  } as SessionRecord;
}

function event(value: unknown, path: string, clock: Clock): EventRecord {
  const input = object(value, path);
  optional(input, 'application', path, uuid);
  return {
    ...input,
    id: optional(input, 'id', path, uuid) ?? clock.newId(),
    kind: required(input, 'kind', path, (v, p) => oneOf(v, EVENT_KINDS, p)),
    at: optional(input, 'at', path, iso) ?? clock.now().toISOString(),
    payload: required(input, 'payload', path, object),
  } as EventRecord;
}

const toBase64 = (bytes: Uint8Array) => {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};

function fromBase64(value: unknown, path: string): Uint8Array {
  try {
    return Uint8Array.from(atob(string(value, path)), (c) => c.charCodeAt(0));
  } catch {
    throw badRequest(`${path} must be base64.`);
  }
}

/** An Annotation as stored: id, type, text, times; links as references. */
function annotation(value: unknown, path: string, asset?: string): AnnotationRecord {
  const input = object(value, path);
  required(input, 'id', path, uuid);
  required(input, 'type', path, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  required(input, 'text', path, string);
  required(input, 'created', path, grouped);
  required(input, 'updated', path, grouped);
  const owner = optional(input, 'asset', path, (v, p) => required(object(v, p), 'id', p, uuid));
  if (asset !== undefined && owner !== asset) throw badRequest(`${path}.asset.id must be its asset's id ${asset}.`);
  if (asset === undefined && owner !== undefined)
    throw badRequest(`${path} belongs to asset ${owner}: list it in that asset's annotations.`);
  return input as AnnotationRecord;
}

function format(value: unknown, path: string, asset: string): FormatRecord {
  const input = object(value, path);
  const classification = required(input, 'classification', path, object);
  required(classification, 'generic', `${path}.classification`, (v, p) => oneOf(v, ClassificationGenericEnum, p));
  required(classification, 'specific', `${path}.classification`, (v, p) => oneOf(v, ClassificationSpecificEnum, p));
  const text = optional(input, 'text', path, string);
  const bytes = optional(input, 'bytes', path, fromBase64);
  if ((text === undefined) === (bytes === undefined)) throw badRequest(`${path} must have either text or bytes (base64).`);
  return {
    id: required(input, 'id', path, uuid),
    asset,
    role: required(input, 'role', path, (v, p) => oneOf(v, RoleEnum, p)),
    classification: classification as FormatRecord['classification'],
    application: parseApplication(required(input, 'application', path, object), `${path}.application`) as FormatRecord['application'],
    created: required(input, 'created', path, iso),
    updated: required(input, 'updated', path, iso),
    kind: required(input, 'kind', path, (v, p) => oneOf(v, ['fragment', 'file'] as const, p)),
    ...(text !== undefined ? { text } : { bytes: bytes! }),
    size: required(input, 'size', path, number),
  };
}

/** An asset: in short (`text`), or whole as exported (`formats`). */
function asset(
  value: unknown,
  path: string,
  clock: Clock,
): { record: AssetRecord; formats: FormatRecord[]; annotations: AnnotationRecord[] } {
  const input = object(value, path);
  if (!('formats' in input)) {
    const { record, formats, annotations } = assetFromInput(input, path, clock);
    return { record, formats, annotations };
  }
  const { formats: formatList, annotations: annotationList, ...rest } = input;
  const id = required(rest, 'id', path, uuid);
  const formats = array(formatList, `${path}.formats`).map((f, i) => format(f, `${path}.formats[${i}]`, id));
  if (formats.length === 0) throw badRequest(`${path}.formats must list at least one format.`);
  const ids = formats.map((f) => f.id);
  const inFormats = (v: unknown, p: string) => {
    const formatId = uuid(v, p);
    if (!ids.includes(formatId)) throw badRequest(`${p} must be the id of one of its formats.`);
    return formatId;
  };
  const flag = (key: 'favorited' | 'discovered' | 'pseudo' | 'demo') => {
    const v = optional(rest, key, path, boolean);
    return v === undefined ? {} : { [key]: v };
  };
  const record: AssetRecord = {
    id,
    name: required(rest, 'name', path, string),
    created: required(rest, 'created', path, iso),
    updated: required(rest, 'updated', path, iso),
    creator: required(rest, 'creator', path, string),
    mechanism: required(rest, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)),
    formats: ids,
    original: required(rest, 'original', path, inFormats),
    preview: required(rest, 'preview', path, inFormats),
    ...flag('favorited'),
    ...flag('discovered'),
    ...flag('pseudo'),
    ...flag('demo'),
  };
  const anchors = optional(rest, 'anchors', path, array)?.map((a, i) => uuid(a, `${path}.anchors[${i}]`));
  if (anchors?.length) record.anchors = anchors;
  const annotations = (annotationList === undefined || annotationList === null ? [] : array(annotationList, `${path}.annotations`)).map(
    (a, i) => annotation(a, `${path}.annotations[${i}]`, id),
  );
  return { record, formats, annotations };
}

/** A tag or website: its fields, and the ids of its assets. */
function linked<T extends TagRecord | WebsiteRecord>(kind: 'tag' | 'website') {
  return (value: unknown, path: string): T => {
    const input = object(value, path);
    const base = {
      id: required(input, 'id', path, uuid),
      created: required(input, 'created', path, iso),
      updated: required(input, 'updated', path, iso),
      ...(optional(input, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)) ? { mechanism: input.mechanism as string } : {}),
      assets: array(required(input, 'assets', path, array), `${path}.assets`).map((a, i) => uuid(a, `${path}.assets[${i}]`)),
    };
    return (
      kind === 'tag'
        ? {
            ...base,
            text: required(input, 'text', path, string),
            category: required(input, 'category', path, (v, p) => oneOf(v, TagCategoryEnum, p)),
          }
        : { ...base, url: required(input, 'url', path, string), name: required(input, 'name', path, string) }
    ) as T;
  };
}

function activityRecord(value: unknown, path: string): ActivityRecord {
  const input = object(value, path);
  const asset = optional(input, 'asset', path, uuid);
  return {
    id: required(input, 'id', path, uuid),
    created: required(input, 'created', path, iso),
    order: required(input, 'order', path, string),
    event: required(input, 'event', path, object),
    application: parseApplication(required(input, 'application', path, object), `${path}.application`) as ActivityRecord['application'],
    mechanism: required(input, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p)),
    ...(asset ? { asset } : {}),
  };
}

function external(value: unknown, path: string): ExternalApplicationRecord {
  const input = object(value, path);
  const version = optional(input, 'version', path, string);
  return { name: required(input, 'name', path, string), ...(version === undefined ? {} : { version }) };
}

function anchor(value: unknown, path: string, clock: Clock): AnchorRecord {
  const input = object(value, path);
  required(input, 'type', path, (v, p) => oneOf(v, AnchorTypeEnum, p));
  required(object(required(input, 'points', path, object), `${path}.points`), 'iterable', `${path}.points`, array);
  const id = optional(input, 'id', path, uuid) ?? clock.newId();
  const created = optional(input, 'created', path, grouped) ?? { value: clock.now().toISOString() };
  const updated = optional(input, 'updated', path, grouped) ?? created;
  return { id, created: created.value as string, json: JSON.stringify({ ...input, id, created, updated }) };
}

function model(value: unknown, path: string): ModelStateRecord {
  const input = object(value, path);
  const id = required(input, 'id', path, string);
  if (!catalogueModel(id)) throw badRequest(`${path}.id ${JSON.stringify(id)} is not a model of the catalogue (GET /models lists them).`);
  return { id, downloaded: required(input, 'downloaded', path, boolean) };
}

function unique<T>(items: T[], key: (item: T) => string, what: string): T[] {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) throw badRequest(`data.${what} lists ${k} twice.`);
    seen.add(k);
  }
  return items;
}

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
    each('conversations', (v, p) => conversation(v, p, clock)),
    (c) => c.conversation.id,
    'conversations',
  );
  unique(
    conversations.flatMap((c) => c.messages),
    (m) => m.id,
    'messages',
  );
  const assets = unique(
    each('assets', (v, p) => asset(v, p, clock)),
    (a) => a.record.id,
    'assets',
  );
  const annotations = [...assets.flatMap((a) => a.annotations), ...each('annotations', (v, p) => annotation(v, p))];
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
      each('sessions', (v, p) => session(v, p, clock)),
      (s) => s.id,
      'sessions',
    ),
    events: unique(
      each('events', (v, p) => event(v, p, clock)),
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
      unique(each('tags', linked<TagRecord>('tag')), (t) => t.id, 'tags'),
      'tags',
    ),
    websites: onAssets(
      unique(each('websites', linked<WebsiteRecord>('website')), (w) => w.id, 'websites'),
      'websites',
    ),
    activities: unique(each('activities', activityRecord), (a) => a.id, 'activities'),
    external: unique(each('externalApplications', external), (a) => a.name, 'externalApplications'),
    anchors: unique(
      each('anchors', (v, p) => anchor(v, p, clock)),
      (a) => a.id,
      'anchors',
    ),
    models: unique(each('models', model), (m) => m.id, 'models'),
  };
}

/** Stored records as the data format. */
export function toData(stored: StoredData): PiecesData {
  const formatsById = new Map(stored.formats.map((f) => [f.id, f]));
  const annotationsOf = new Map<string, AnnotationRecord[]>();
  for (const a of [...stored.annotations].sort((x, y) => (x.id < y.id ? -1 : 1))) {
    if (a.asset) annotationsOf.set(a.asset.id, [...(annotationsOf.get(a.asset.id) ?? []), a]);
  }
  return {
    version: DATA_VERSION,
    // Stored records are what parseData and the handlers made: the shapes of the data format.
    conversations: stored.conversations.map(({ conversation, messages }) => ({
      ...(JSON.parse(conversation.json) as Omit<ConversationData, 'messages'>),
      messages: messages.map((m) => JSON.parse(m.json) as ConversationData['messages'][number]),
      ...(conversation.deletedMessageIds?.length ? { deletedMessages: conversation.deletedMessageIds } : {}),
    })),
    applications: stored.applications as PiecesData['applications'],
    sessions: stored.sessions,
    events: stored.events,
    assets: stored.assets.map((record) => ({
      ...record,
      formats: record.formats
        .map((id) => formatsById.get(id))
        .filter((f): f is FormatRecord => !!f)
        .map(({ asset: _asset, bytes, ...rest }) => ({ ...rest, ...(bytes ? { bytes: toBase64(bytes) } : {}) })),
      annotations: annotationsOf.get(record.id) ?? [],
    })),
    annotations: stored.annotations.filter((a) => !a.asset),
    tags: stored.tags,
    websites: stored.websites,
    activities: stored.activities,
    externalApplications: stored.external,
    anchors: stored.anchors.map((a) => JSON.parse(a.json) as PiecesData['anchors'][number]),
    models: stored.models,
  };
}
