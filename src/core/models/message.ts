/** Conversation messages: a SeededConversationMessage into a stored message, updates of one, its text. */
import {
  ExternalMLProviderEnum,
  MessageRoleEnum,
  MessageSentimentEnum,
  ModelFoundationEnum,
  ModelTypeEnum,
  ModelUsageEnum,
} from '../enums.js';
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import type { MessageRecord } from '../../storage/schema.js';
import {
  array,
  boolean,
  embeddedSchema,
  knownKeys,
  noServerKeys,
  object,
  oneOf,
  optional,
  required,
  storedJson,
  string,
  timestamp,
  uuid,
  type JsonObject,
} from '../validate.js';
import { FIELDS } from './conversation-fields.js';

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

export const messageRecord = (message: JsonObject): MessageRecord => ({
  id: message.id as string,
  conversation: (message.conversation as JsonObject).id as string,
  json: storedJson(message),
});

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

/** The plain text of a message, for search and naming. */
export function messageText(record: MessageRecord): string {
  const message = JSON.parse(record.json) as { fragment?: { string?: { raw?: string } } };
  return message.fragment?.string?.raw ?? '';
}
