/**
 * Conversations and their messages: from a SeededConversation to stored
 * records, and from records to the wire Conversation.
 */
import { ConversationTypeEnum, MessageRoleEnum, MessageSentimentEnum } from '../enums.js';
import type { ConversationRecord, MessageRecord } from '../../storage/schema.js';
import {
  array,
  boolean,
  isObject,
  noServerKeys,
  object,
  oneOf,
  optional,
  required,
  string,
  timestamp,
  type Json,
  type JsonObject,
} from '../validate.js';
import { parseApplication } from './application.js';
import { HttpError } from '../http.js';

export interface Seeded {
  record: Omit<ConversationRecord, 'seq'>;
  messages: MessageRecord[];
  /** The wire Conversation, every message with its reference. */
  wire: JsonObject;
}

interface Clock {
  now: string;
  id: () => string;
}

const SERVER_KEYS = ['id', 'created', 'updated'] as const;

/**
 * Most messages one create may carry. The create is one transaction (all or
 * nothing), so its size bounds how long it holds the database; past this a
 * create is refused with 413.
 */
export const MAX_MESSAGES_PER_CREATE = 10_000;

/** `{iterable: [...]}` with an array iterable, e.g. FlattenedAssets or FlattenedWebsites. */
function flattened(value: unknown, path: string): JsonObject {
  const record = object(value, path);
  required(record, 'iterable', path, array).forEach((item, i) => object(item, `${path}.iterable[${i}]`));
  return record;
}

function parseFragment(value: unknown, path: string): JsonObject {
  const fragment = object(value, path);
  const str = optional(fragment, 'string', path, object);
  if (str) optional(str, 'raw', `${path}.string`, string);
  return fragment;
}

/** A seeded item ({type, text} annotation, {type, fullpath} anchor) becomes a referenced record. */
function referenced(items: Json[], path: string, requiredKeys: string[], clock: Clock, conversationId: string) {
  const iterable = items.map((item, i) => {
    const seeded = object(item, `${path}[${i}]`);
    for (const key of requiredKeys) required(seeded, key, `${path}[${i}]`, string);
    const id = clock.id();
    const reference = {
      ...seeded,
      id,
      created: { value: clock.now },
      updated: { value: clock.now },
      conversation: { id: conversationId },
    };
    return { id, reference };
  });
  return { iterable };
}

/** Validates a SeededConversation (or none) into a conversation and its messages. */
export function seedConversation(body: unknown, clock: Clock): Seeded {
  const path = 'conversation';
  const seeded: JsonObject = body === undefined ? { type: 'COPILOT' } : object(body, path);
  noServerKeys(seeded, SERVER_KEYS, path);
  const id = clock.id();
  const type = required(seeded, 'type', path, (v, p) => oneOf(v, ConversationTypeEnum, p));
  optional(seeded, 'name', path, string);
  optional(seeded, 'favorited', path, boolean);
  optional(seeded, 'demo', path, boolean);
  optional(seeded, 'schema', path, object);
  optional(seeded, 'pipeline', path, object);
  const application = optional(seeded, 'application', path, parseApplication);
  const model = optional(seeded, 'model', path, object);
  if (model) required(model, 'id', `${path}.model`, string);
  const assets = optional(seeded, 'assets', path, flattened);
  const websites = optional(seeded, 'websites', path, flattened);
  const annotations = optional(seeded, 'annotations', path, array);
  const anchors = optional(seeded, 'anchors', path, array);
  const seededMessages = optional(seeded, 'messages', path, array) ?? [];
  if (seededMessages.length > MAX_MESSAGES_PER_CREATE) {
    throw new HttpError(
      413,
      `${path}.messages has ${seededMessages.length} messages; a create takes at most ${MAX_MESSAGES_PER_CREATE}. Create the conversation with fewer messages.`,
    );
  }

  const messages = seededMessages.map((item, i): JsonObject => {
    const p = `${path}.messages[${i}]`;
    const message = object(item, p);
    noServerKeys(message, ['id', 'updated', 'conversation'], p);
    const fragment = required(message, 'fragment', p, parseFragment);
    const role = required(message, 'role', p, (v, q) => oneOf(v, MessageRoleEnum, q));
    const created = optional(message, 'created', p, timestamp) ?? { value: clock.now };
    optional(message, 'sentiment', p, (v, q) => oneOf(v, MessageSentimentEnum, q));
    const messageModel = optional(message, 'model', p, object);
    return {
      ...message,
      id: clock.id(),
      created,
      updated: created,
      conversation: { id },
      role,
      fragment,
      ...(messageModel ? { model: modelOf(messageModel) } : {}),
    };
  });

  const { messages: _messages, ...rest } = seeded;
  const conversation: JsonObject = {
    ...rest,
    id,
    type,
    created: { value: clock.now },
    updated: { value: clock.now },
    ...(application ? { application } : {}),
    ...(model ? { model: modelOf(model) } : {}),
    ...(assets ? { assets } : {}),
    ...(websites ? { websites } : {}),
    ...(annotations ? { annotations: referenced(annotations, `${path}.annotations`, ['type', 'text'], clock, id) } : {}),
    ...(anchors ? { anchors: referenced(anchors, `${path}.anchors`, ['type', 'fullpath'], clock, id) } : {}),
  };
  const messageIds = messages.map((m) => m.id as string);
  return {
    record: { id, json: JSON.stringify(conversation), messageIds },
    messages: messages.map((message, i) => ({ id: messageIds[i]!, conversation: id, json: JSON.stringify(message) })),
    wire: { ...conversation, messages: { iterable: messages.map((reference, i) => ({ id: messageIds[i]!, reference })) } },
  };
}

/** A ReferencedModel `{id, reference?}` becomes the Model the Conversation carries, keeping the reference's fields. */
function modelOf(model: JsonObject): JsonObject {
  const reference = isObject(model.reference) ? model.reference : {};
  return { ...reference, id: model.id! };
}

/**
 * The wire Conversation as JSON text, composed from the stored text. With
 * `messages`, each message id carries its `reference` (transferables).
 * Ids are service-generated UUIDs: they need no escaping.
 */
export function conversationJson(record: ConversationRecord, messages?: Map<string, MessageRecord>): string {
  const iterable = record.messageIds
    .map((id) => {
      const reference = messages?.get(id)?.json;
      return reference ? `{"id":"${id}","reference":${reference}}` : `{"id":"${id}"}`;
    })
    .join(',');
  return `${record.json.slice(0, -1)},"messages":{"iterable":[${iterable}]}}`;
}

/** Size of the chunks a streamed Conversations body is written in (UTF-16 code units, about bytes). */
export const SNAPSHOT_CHUNK = 256 * 1024;

/**
 * A Conversations body (stored conversations, in their order) as a stream of UTF-8 chunks of about SNAPSHOT_CHUNK,
 * composed as the reader pulls: the body is never held as one string, so it
 * has no size limit of its own.
 */
export function conversationsStream(records: ConversationRecord[], messages?: Map<string, MessageRecord>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        let chunk = next === 0 ? '{"iterable":[' : '';
        while (next < records.length && chunk.length < SNAPSHOT_CHUNK) {
          chunk += (next > 0 ? ',' : '') + conversationJson(records[next]!, messages);
          next++;
        }
        if (next === records.length) chunk += ']}';
        controller.enqueue(encoder.encode(chunk));
        if (next === records.length) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}
