/**
 * The data format of `seed(data)` and `exportData()`: the whole store as one
 * JSON document, in wire shapes, with ids and times kept as given.
 *
 *   {
 *     "version": 1,
 *     "conversations": [ Conversation minus `messages`, plus "messages": [FlattenedConversationMessage, …]
 *                        and "deletedMessages": [id, …] (ids listed as -1 in `indices`) ],
 *     "applications": [ Application ],
 *     "sessions": [ { id, opened, closed?, application? } ],
 *     "events": [ { id, kind, at, application?, payload } ],
 *     "assets": [ { id, name, language, text, created, description?, formatId } ],
 *     "externalApplications": [ { name, version? } ],
 *     "anchors": [ Anchor (with its `points`) ],
 *     "models": [ { id, downloaded } ]   (catalogue models' local state: the downloaded ones)
 *   }
 *
 * Every key is optional when seeding; missing ids and times are assigned.
 */
import { AnchorTypeEnum, ConversationTypeEnum, MessageRoleEnum, MessageSentimentEnum } from './enums.js';
import { catalogueModel } from './copilot/catalogue.js';
import type { AssetInput } from './models/asset.js';
import { CONVERSATION_FIELDS, MESSAGE_FIELDS } from './models/conversation.js';
import { badRequest } from './http.js';
import type { Clock } from './clock.js';
import { parseApplication } from './models/application.js';
import type { AnchorRecord, AssetRecord, EventKind, EventRecord, ExternalApplicationRecord, ModelStateRecord, SessionRecord } from '../storage/schema.js';
import type { StoredData } from '../storage/storage.js';
import { array, boolean, object, oneOf, optional, required, string, uuid, type JsonObject } from './validate.js';

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
  assets: AssetRecord[];
  externalApplications: ExternalApplicationRecord[];
  /** Anchors as `GET /anchor/{id}` answers them. */
  anchors: Array<Record<string, unknown> & { id: string; type: string; points: { iterable: unknown[] } }>;
  /** The catalogue models downloaded here. */
  models: ModelStateRecord[];
}

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
export type SeedConversation = { [K in Exclude<ConversationField, 'id' | 'name' | 'type' | 'created' | 'updated' | 'messages'>]?: unknown } & {
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
  assets?: AssetInput[];
  externalApplications?: ExternalApplicationRecord[];
  /** Anchors (the SDK's Anchor, with its `points`); id and times optional. */
  anchors?: Array<Record<string, unknown> & { type: string; points: { iterable: unknown[] } }>;
  /** Catalogue models' local state: `{ id, downloaded: true }` for a model downloaded here. */
  models?: Array<{ id: string; downloaded: boolean }>;
}

const EVENT_KINDS: readonly EventKind[] = ['interaction', 'keyboard', 'installation', 'update'];
const KEYS = ['version', 'conversations', 'applications', 'sessions', 'events', 'assets', 'externalApplications', 'anchors', 'models'];


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
    conversation: { id, json: JSON.stringify(record), messageIds: messages.map((m) => m.id), ...(deletedMessageIds ? { deletedMessageIds } : {}) },
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

function asset(value: unknown, path: string, clock: Clock): AssetRecord {
  const input = object(value, path);
  const name = required(input, 'name', path, string);
  optional(input, 'description', path, string);
  return {
    ...input,
    id: optional(input, 'id', path, uuid) ?? clock.newId(),
    name,
    language: optional(input, 'language', path, string) ?? /\.([A-Za-z0-9+#]+)$/.exec(name)?.[1]?.toLowerCase() ?? 'txt',
    text: required(input, 'text', path, string),
    created: optional(input, 'created', path, iso) ?? clock.now().toISOString(),
    formatId: optional(input, 'formatId', path, uuid) ?? clock.newId(),
  } as AssetRecord;
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
  const each = <T>(key: string, parse: (item: unknown, path: string) => T) => list(data, key).map((item, i) => parse(item, `data.${key}[${i}]`));
  const conversations = unique(each('conversations', (v, p) => conversation(v, p, clock)), (c) => c.conversation.id, 'conversations');
  unique(conversations.flatMap((c) => c.messages), (m) => m.id, 'messages');
  return {
    conversations,
    applications: unique(each('applications', (v, p) => parseApplication(v, p)), (a) => a.id, 'applications'),
    sessions: unique(each('sessions', (v, p) => session(v, p, clock)), (s) => s.id, 'sessions'),
    events: unique(each('events', (v, p) => event(v, p, clock)), (e) => e.id, 'events'),
    assets: unique(each('assets', (v, p) => asset(v, p, clock)), (a) => a.id, 'assets'),
    external: unique(each('externalApplications', external), (a) => a.name, 'externalApplications'),
    anchors: unique(each('anchors', (v, p) => anchor(v, p, clock)), (a) => a.id, 'anchors'),
    models: unique(each('models', model), (m) => m.id, 'models'),
  };
}

/** Stored records as the data format. */
export function toData(stored: StoredData): PiecesData {
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
    assets: stored.assets,
    externalApplications: stored.external,
    anchors: stored.anchors.map((a) => JSON.parse(a.json) as PiecesData['anchors'][number]),
    models: stored.models,
  };
}
