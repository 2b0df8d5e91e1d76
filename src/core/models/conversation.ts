/**
 * Conversations and their messages: from what clients send (SeededConversation,
 * Conversation, SeededConversationMessage, ConversationMessage) to stored
 * records, and from records to the wire.
 */
import {
  AnchorTypeEnum,
  AnnotationTypeEnum,
  ConversationTypeEnum,
  MechanismEnum,
  MessageRoleEnum,
  MessageSentimentEnum,
  ModelTypeEnum,
  ModelUsageEnum,
  ModelFoundationEnum,
  ExternalMLProviderEnum,
  PlatformEnum,
} from '../enums.js';
import type { AnchorRecord, ConversationRecord, MessageRecord } from '../../storage/schema.js';
import type { ConversationEdit, ConversationState } from '../../storage/storage.js';
import { withList } from '../../storage/anchor-links.js';
import { badRequest } from '../http.js';
import {
  array,
  boolean,
  embeddedSchema,
  knownKeys,
  noServerKeys,
  storedJson,
  object,
  oneOf,
  optional,
  required,
  string,
  timestamp,
  uuid,
  type Json,
  type JsonObject,
} from '../validate.js';
import { parseApplication } from './application.js';
import { HttpError } from '../http.js';
import type { Clock } from '../clock.js';

export interface Seeded {
  record: Omit<ConversationRecord, 'seq'>;
  messages: MessageRecord[];
  /** The anchors it was created with: records of their own, the same as those its JSON holds. */
  anchors: AnchorRecord[];
}

export type { Clock };

const SERVER_KEYS = ['id', 'created', 'updated'] as const;

/**
 * Most messages one create may carry. The create is one transaction (all or
 * nothing), so its size bounds how long it holds the database (about 0.6 s
 * in Chromium at the limit); and it logs a change per message, so at half
 * the change log a socket one create behind can still catch up. Past this a
 * create is refused with 413.
 */
export const MAX_MESSAGES_PER_CREATE = 5_000;

/**
 * The fields of the SDK models clients send: any other key is refused (400)
 * rather than stored and served back where the SDK's models have no such field.
 */
export const CONVERSATION_FIELDS = [
  'schema',
  'id',
  'name',
  'created',
  'updated',
  'deleted',
  'favorited',
  'application',
  'annotations',
  'messages',
  'model',
  'assets',
  'websites',
  'anchors',
  'type',
  'grounding',
  'score',
  'pipeline',
  'demo',
  'summaries',
] as const;

export const MESSAGE_FIELDS = [
  'schema',
  'id',
  'created',
  'updated',
  'deleted',
  'model',
  'fragment',
  'conversation',
  'sentiment',
  'role',
  'score',
  'annotations',
  'websites',
  'persons',
  'anchors',
  'assets',
  'ranges',
  'summaries',
  'tags',
  'messages',
  'workstreamEvents',
  'sources',
] as const;

const FIELDS = {
  SeededConversation: [
    'schema',
    'name',
    'favorited',
    'application',
    'annotations',
    'messages',
    'model',
    'assets',
    'websites',
    'anchors',
    'type',
    'pipeline',
    'demo',
  ],
  Conversation: CONVERSATION_FIELDS,
  SeededConversationMessage: [
    'schema',
    'created',
    'model',
    'fragment',
    'conversation',
    'sentiment',
    'role',
    'assets',
    'ranges',
    'summaries',
    'tags',
    'messages',
    'workstreamEvents',
    'sources',
    'anchors',
  ],
  ConversationMessage: MESSAGE_FIELDS,
  SeededAnnotation: [
    'schema',
    'mechanism',
    'asset',
    'person',
    'type',
    'text',
    'model',
    'pseudo',
    'favorited',
    'anchor',
    'conversation',
    'workstreamSummary',
    'messages',
    'assets',
    'persons',
    'anchors',
    'conversations',
    'websites',
    'tags',
    'summaries',
    'workstreamEvents',
  ],
  SeededAnchor: ['schema', 'type', 'watch', 'fullpath', 'asset', 'platform', 'name', 'annotations', 'conversation', 'persons'],
  ReferencedModel: ['schema', 'id'],
} as const;

/** `{iterable: [{id, …}]}`, e.g. FlattenedAssets, FlattenedWebsites, FlattenedAnnotations. */
function flattened(value: unknown, path: string): JsonObject {
  const record = object(value, path);
  for (const [i, item] of required(record, 'iterable', path, array).entries()) {
    required(object(item, `${path}.iterable[${i}]`), 'id', `${path}.iterable[${i}]`, string);
  }
  return record;
}

/** Wire keys of TransferableString and TransferableBytes (strings, or arrays of byte values). */
const TRANSFERABLE_KEYS = ['schema', 'raw', 'base64', 'base64_url', 'data_url'] as const;

/** A FragmentFormat: `string` (TransferableString), `bytes` (TransferableBytes), `metadata` ({ext}). */
function parseFragment(value: unknown, path: string): JsonObject {
  const fragment = object(value, path);
  knownKeys(fragment, ['schema', 'string', 'bytes', 'metadata'], path, 'FragmentFormat');
  optional(fragment, 'schema', path, embeddedSchema);
  const transferable = (key: 'string' | 'bytes', model: string, check: (v: unknown, p: string) => unknown) => {
    const part = optional(fragment, key, path, object);
    if (!part) return;
    knownKeys(part, TRANSFERABLE_KEYS, `${path}.${key}`, model);
    optional(part, 'schema', `${path}.${key}`, embeddedSchema);
    for (const field of TRANSFERABLE_KEYS.slice(1)) optional(part, field, `${path}.${key}`, check);
  };
  transferable('string', 'TransferableString', string);
  transferable('bytes', 'TransferableBytes', byteArray);
  const metadata = optional(fragment, 'metadata', path, object);
  if (metadata) {
    knownKeys(metadata, ['schema', 'ext'], `${path}.metadata`, 'FragmentMetadata');
    optional(metadata, 'schema', `${path}.metadata`, embeddedSchema);
    optional(metadata, 'ext', `${path}.metadata`, (v, p) => {
      if (typeof v !== 'string' || !/^[a-z0-9_+#.-]{1,16}$/.test(v))
        throw badRequest(`${p} must be a file extension such as "ts" or "py".`);
      return v;
    });
  }
  return fragment;
}

function byteArray(value: unknown, path: string): number[] {
  return array(value, path).map((item, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 0 || item > 255)
      throw badRequest(`${path}[${i}] must be a byte (0 to 255).`);
    return item;
  });
}

/** A whole Model (a message's `model`): every field the SDK requires. */
export function parseModel(value: unknown, path: string): JsonObject {
  const model = object(value, path);
  required(model, 'id', path, string);
  required(model, 'version', path, string);
  required(model, 'created', path, timestamp);
  required(model, 'name', path, string);
  required(model, 'cloud', path, boolean);
  required(model, 'type', path, (v, p) => oneOf(v, ModelTypeEnum, p));
  required(model, 'usage', path, (v, p) => oneOf(v, ModelUsageEnum, p));
  optional(model, 'foundation', path, (v, p) => oneOf(v, ModelFoundationEnum, p));
  optional(model, 'provider', path, (v, p) => oneOf(v, ExternalMLProviderEnum, p));
  return model;
}

/** A ReferencedModel (a conversation's `model`): `{schema?, id}`. */
function parseReferencedModel(value: unknown, path: string): JsonObject {
  const model = object(value, path);
  knownKeys(model, FIELDS.ReferencedModel, path, 'ReferencedModel');
  optional(model, 'schema', path, embeddedSchema);
  required(model, 'id', path, string);
  return model;
}

/** Keys of a SeededAnnotation that name another record by id; on the wire they are references `{id}`. */
const ANNOTATION_LINKS: Array<[seeded: string, wire: string]> = [
  ['asset', 'asset'],
  ['person', 'person'],
  ['model', 'model'],
  ['anchor', 'anchor'],
  ['workstreamSummary', 'summary'],
  ['conversation', 'conversation'],
];

/** A SeededAnnotation becomes a FlattenedAnnotation (links as references). */
function seedAnnotation(item: Json, path: string, clock: Clock, owner: JsonObject): JsonObject {
  const seeded = object(item, path);
  knownKeys(seeded, FIELDS.SeededAnnotation, path, 'SeededAnnotation');
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, AnnotationTypeEnum, p));
  const text = required(seeded, 'text', path, string);
  optional(seeded, 'mechanism', path, (v, p) => oneOf(v, MechanismEnum, p));
  const annotation: JsonObject = { ...seeded };
  for (const [from, to] of ANNOTATION_LINKS) {
    const id = optional(seeded, from, path, string);
    delete annotation[from];
    if (id !== undefined) annotation[to] = { id };
  }
  return {
    ...annotation,
    id: clock.newId(),
    type,
    text,
    created: { value: clock.now().toISOString() },
    updated: { value: clock.now().toISOString() },
    ...owner,
  };
}

/** A SeededAnchor becomes a whole Anchor with its one point (listing the conversation it is created with, if any). */
export function seedAnchor(item: Json, path: string, clock: Clock, conversationId?: string): JsonObject {
  const seeded = object(item, path);
  knownKeys(seeded, FIELDS.SeededAnchor, path, 'SeededAnchor');
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, AnchorTypeEnum, p));
  const fullpath = required(seeded, 'fullpath', path, string);
  optional(seeded, 'watch', path, boolean);
  optional(seeded, 'name', path, string);
  const platform = optional(seeded, 'platform', path, (v, p) => oneOf(v, PlatformEnum, p));
  const asset = optional(seeded, 'asset', path, string);
  const annotations = optional(seeded, 'annotations', path, array);
  // `fullpath` and `platform` belong to the anchor's point; `asset` and `annotations` become references.
  const {
    asset: _asset,
    annotations: _annotations,
    conversation: _conversation,
    fullpath: _fullpath,
    platform: _platform,
    ...rest
  } = seeded;
  const id = clock.newId();
  const stamp = { created: { value: clock.now().toISOString() }, updated: { value: clock.now().toISOString() } };
  const point = { id: clock.newId(), fullpath, ...stamp, anchor: { id }, ...(platform ? { platform } : {}) };
  return {
    ...rest,
    id,
    type,
    ...stamp,
    points: { iterable: [{ id: point.id, reference: point }] },
    ...(conversationId ? withList({}, 'conversations', [conversationId]) : {}),
    ...(asset ? withList({}, 'assets', [asset]) : {}),
    ...(annotations
      ? { annotations: references(annotations.map((a, i) => seedAnnotation(a, `${path}.annotations[${i}]`, clock, { anchor: { id } }))) }
      : {}),
  };
}

/**
 * An anchor as a record that lists it holds it (a conversation's `anchors` reference): its own
 * fields, without its associations (`conversations`, `assets`), which change without it and are
 * read from the anchor itself.
 */
export function listedAnchor(anchor: JsonObject): JsonObject {
  const { conversations: _conversations, assets: _assets, ...own } = anchor;
  return own;
}

const references = (items: JsonObject[]) => ({ iterable: items.map((reference) => ({ id: reference.id!, reference })) });

/** The stored record of a whole Anchor; `position` orders anchors created together (one conversation's). */
export const anchorRecord = (anchor: JsonObject, position = 0): AnchorRecord => ({
  id: anchor.id as string,
  created: `${(anchor.created as { value: string }).value}#${String(position).padStart(5, '0')}`,
  json: storedJson(anchor),
});

/**
 * A SeededConversationMessage becomes a stored message of `conversation`.
 * `withConversation`: the body names the conversation (messagesCreate), else
 * it is the conversation being created and any `conversation` sent is replaced.
 */
export function seedMessage(value: unknown, path: string, clock: Clock, conversation?: string): JsonObject {
  const message = object(value, path);
  noServerKeys(message, ['id', 'updated'], path);
  knownKeys(message, FIELDS.SeededConversationMessage, path, 'SeededConversationMessage');
  const fragment = required(message, 'fragment', path, parseFragment);
  const role = required(message, 'role', path, (v, q) => oneOf(v, MessageRoleEnum, q));
  const created = optional(message, 'created', path, timestamp) ?? { value: clock.now().toISOString() };
  optional(message, 'sentiment', path, (v, q) => oneOf(v, MessageSentimentEnum, q));
  optional(message, 'model', path, parseModel);
  const owner = optional(message, 'conversation', path, object);
  if (!conversation && !owner) throw badRequest(`${path}.conversation is required: the conversation the message is added to.`);
  const id = conversation ?? required(owner!, 'id', `${path}.conversation`, uuid);
  return { ...message, id: clock.newId(), created, updated: created, conversation: { id }, role, fragment };
}

/** Validates a SeededConversation (or none) into a conversation (with `id`, or a new one) and its messages. */
export function seedConversation(body: unknown, clock: Clock, id?: string): Seeded {
  const path = 'conversation';
  const seeded: JsonObject = body === undefined ? { type: 'COPILOT' } : object(body, path);
  noServerKeys(seeded, SERVER_KEYS, path);
  knownKeys(seeded, FIELDS.SeededConversation, path, 'SeededConversation');
  id ??= clock.newId();
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, ConversationTypeEnum, p));
  optional(seeded, 'name', path, string);
  optional(seeded, 'favorited', path, boolean);
  optional(seeded, 'demo', path, boolean);
  optional(seeded, 'schema', path, embeddedSchema);
  optional(seeded, 'pipeline', path, object);
  const application = optional(seeded, 'application', path, parseApplication);
  optional(seeded, 'model', path, parseReferencedModel);
  optional(seeded, 'assets', path, flattened);
  optional(seeded, 'websites', path, flattened);
  const annotations = optional(seeded, 'annotations', path, array);
  const anchors = optional(seeded, 'anchors', path, array);
  const seededMessages = optional(seeded, 'messages', path, array) ?? [];
  if (seededMessages.length > MAX_MESSAGES_PER_CREATE) {
    throw new HttpError(
      413,
      `${path}.messages has ${seededMessages.length} messages; a create takes at most ${MAX_MESSAGES_PER_CREATE}. Create the conversation with fewer messages.`,
    );
  }

  const messages = seededMessages.map((item, i) => seedMessage(item, `${path}.messages[${i}]`, clock, id));
  const wholeAnchors = anchors?.map((a, i) => seedAnchor(a, `${path}.anchors[${i}]`, clock, id));

  const { messages: _messages, ...rest } = seeded;
  const conversation: JsonObject = {
    ...rest,
    id,
    type,
    created: { value: clock.now().toISOString() },
    updated: { value: clock.now().toISOString() },
    ...(application ? { application } : {}),
    ...(annotations
      ? {
          annotations: references(
            annotations.map((a, i) => seedAnnotation(a, `${path}.annotations[${i}]`, clock, { conversation: { id } })),
          ),
        }
      : {}),
    ...(wholeAnchors ? { anchors: references(wholeAnchors.map(listedAnchor)) } : {}),
  };
  return {
    record: { id, json: storedJson(conversation), messageIds: messages.map((m) => m.id as string) },
    messages: messages.map((message) => messageRecord(message)),
    anchors: (wholeAnchors ?? []).map((anchor, i) => anchorRecord(anchor, i)),
  };
}

export const messageRecord = (message: JsonObject): MessageRecord => ({
  id: message.id as string,
  conversation: (message.conversation as JsonObject).id as string,
  json: storedJson(message),
});

/** The fields of a Conversation a client may change with conversationUpdate. */
const UPDATABLE: Record<string, (v: unknown, p: string) => unknown> = {
  name: string,
  favorited: boolean,
  annotations: flattened,
  model: parseReferencedModel,
  pipeline: object,
  grounding: object,
  websites: flattened,
  anchors: flattened,
  assets: flattened,
  type: (v, p) => oneOf(v, ConversationTypeEnum, p),
  demo: boolean,
  application: parseApplication,
};

/** The id a conversationUpdate body names (validated before the stored conversation is read). */
export function updatedConversationId(body: unknown): string {
  return required(object(body, 'conversation'), 'id', 'conversation', uuid);
}

/**
 * conversationUpdate: the body is the whole Conversation. The changeable
 * fields are taken as sent (absent ones are removed); `id` and `created` stay
 * the service's, `updated` is now, and `messages` change only through the
 * message operations.
 */
export function updateConversation(body: unknown, current: ConversationState, clock: Clock): ConversationEdit {
  const path = 'conversation';
  const sent = object(body, path);
  knownKeys(sent, FIELDS.Conversation, path, 'Conversation');
  const stored = JSON.parse(current.record.json) as JsonObject;
  const next: JsonObject = { id: stored.id!, type: stored.type!, created: stored.created! };
  for (const [key, value] of Object.entries(sent)) {
    if (key === 'id' || key === 'created' || key === 'updated' || key === 'messages') continue;
    const check = UPDATABLE[key];
    // Fields the service keeps (schema, deleted, score, summaries) stay as stored.
    if (!check) continue;
    if (value !== null && value !== undefined) next[key] = check(value, `${path}.${key}`) as Json;
  }
  for (const key of ['schema', 'deleted', 'score', 'summaries']) if (stored[key] !== undefined) next[key] = stored[key]!;
  next.created = stored.created!;
  next.updated = { value: clock.now().toISOString() };
  return { record: { ...current.record, json: storedJson(next) } };
}

/** The conversation JSON with `updated` set to now and `edit` applied. */
export function touched(record: Omit<ConversationRecord, 'seq'>, clock: Clock, edit: (conversation: JsonObject) => void = () => {}) {
  const conversation = JSON.parse(record.json) as JsonObject;
  edit(conversation);
  conversation.updated = { value: clock.now().toISOString() };
  return storedJson(conversation);
}

/** A name from the first USER message's text: its first non-empty line, at most 60 characters. */
export function derivedName(messages: MessageRecord[]): string | undefined {
  for (const record of messages) {
    const message = JSON.parse(record.json) as { role?: string; fragment?: { string?: { raw?: string } } };
    if (message.role !== 'USER') continue;
    const line = (message.fragment?.string?.raw ?? '')
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
      .find(Boolean);
    if (!line) continue;
    if (line.length <= 60) return line;
    const cut = line.slice(0, 59);
    const space = cut.lastIndexOf(' ');
    return `${(space > 30 ? cut.slice(0, space) : cut).trimEnd()}…`;
  }
  return undefined;
}

/** Message fields the client may not change with an update. */
const MESSAGE_FIXED = ['id', 'created', 'updated', 'conversation'] as const;

/**
 * messageSpecificMessageUpdate (every field as sent) and messageUpdateValue
 * (the value only: fragment, and role, sentiment and model when sent).
 */
export function updateMessage(body: JsonObject, stored: MessageRecord, clock: Clock, valueOnly: boolean): MessageRecord {
  const path = 'message';
  const current = JSON.parse(stored.json) as JsonObject;
  knownKeys(body, FIELDS.ConversationMessage, path, 'ConversationMessage');
  const owner = optional(body, 'conversation', path, object);
  if (owner && owner.id !== stored.conversation) {
    throw badRequest(`message.conversation must stay ${stored.conversation}: a message cannot move to another conversation.`);
  }
  const fragment = required(body, 'fragment', path, parseFragment);
  const role = optional(body, 'role', path, (v, q) => oneOf(v, MessageRoleEnum, q));
  const sentiment = optional(body, 'sentiment', path, (v, q) => oneOf(v, MessageSentimentEnum, q));
  const model = optional(body, 'model', path, parseModel);
  let next: JsonObject;
  if (valueOnly) {
    next = { ...current, fragment, ...(role ? { role } : {}), ...(sentiment ? { sentiment } : {}), ...(model ? { model } : {}) };
  } else {
    if (!role) throw badRequest('message.role is required.');
    next = {};
    for (const [key, value] of Object.entries(body)) if (value !== null && value !== undefined) next[key] = value;
  }
  for (const key of MESSAGE_FIXED) next[key] = current[key]!;
  next.updated = { value: clock.now().toISOString() };
  return { ...stored, json: storedJson(next) };
}

/** `"indices":{…}`: each message id → its position, each deleted message id → -1. */
function indicesJson(record: Pick<ConversationRecord, 'messageIds' | 'deletedMessageIds'>): string {
  const entries = record.messageIds.map((id, i) => `"${id}":${i}`);
  for (const id of record.deletedMessageIds ?? []) entries.push(`"${id}":-1`);
  return `{${entries.join(',')}}`;
}

/**
 * The wire Conversation as JSON text, composed from the stored text. With
 * `messages`, each message id carries its `reference` (transferables).
 * Ids are service-generated UUIDs: they need no escaping.
 */
export function conversationJson(record: Omit<ConversationRecord, 'seq'>, messages?: Map<string, MessageRecord>): string {
  const iterable = record.messageIds
    .map((id) => {
      const reference = messages?.get(id)?.json;
      return reference ? `{"id":"${id}","reference":${reference}}` : `{"id":"${id}"}`;
    })
    .join(',');
  return `${record.json.slice(0, -1)},"messages":{"iterable":[${iterable}],"indices":${indicesJson(record)}}}`;
}

/** A ConversationMessages body: the messages, and each one's position in its conversation. */
export function conversationMessagesJson(groups: Array<{ record: Omit<ConversationRecord, 'seq'>; messages: MessageRecord[] }>): string {
  const iterable: string[] = [];
  const indices: string[] = [];
  for (const { record, messages } of groups) {
    for (const message of messages) iterable.push(message.json);
    indices.push(indicesJson(record).slice(1, -1));
  }
  return `{"iterable":[${iterable.join(',')}],"indices":{${indices.filter(Boolean).join(',')}}}`;
}

/** The plain text of a message, for search and naming. */
export function messageText(record: MessageRecord): string {
  const message = JSON.parse(record.json) as { fragment?: { string?: { raw?: string } } };
  return message.fragment?.string?.raw ?? '';
}
