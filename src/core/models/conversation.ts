/**
 * Conversations: from what clients send (SeededConversation, Conversation) to stored records.
 * Their messages (`message.ts`), the anchors and annotations they are created with
 * (`anchor-seed.ts`), their wire JSON (`conversation-wire.ts`) and the SDK's field lists
 * (`conversation-fields.ts`) are modules of their own, re-exported here.
 */
import { ConversationTypeEnum } from '../enums.js';
import type { AnchorRecord, ConversationRecord, MessageRecord } from '../../storage/schema.js';
import type { ConversationEdit, ConversationState } from '../../storage/storage.js';
import { HttpError } from '../http.js';
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
  uuid,
  type Json,
  type JsonObject,
} from '../validate.js';
import type { Clock } from '../clock.js';
import { anchorRecord, listedAnchor, references, seedAnchor, seedAnnotation } from './anchor-seed.js';
import { parseApplication } from './application.js';
import { FIELDS } from './conversation-fields.js';
import { messageRecord, seedMessage } from './message.js';

export { anchorRecord, listedAnchor, seedAnchor } from './anchor-seed.js';
export { conversationJson, conversationMessagesJson } from './conversation-wire.js';
export { messageRecord, messageText, seedMessage, updateMessage } from './message.js';

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

/** `{iterable: [{id, …}]}`, e.g. FlattenedAssets, FlattenedWebsites, FlattenedAnnotations. */
function flattened(value: unknown, path: string): JsonObject {
  const record = object(value, path);
  for (const [i, item] of required(record, 'iterable', path, array).entries()) {
    required(object(item, `${path}.iterable[${i}]`), 'id', `${path}.iterable[${i}]`, string);
  }
  return record;
}

/** A ReferencedModel (a conversation's `model`): `{schema?, id}`. */
function parseReferencedModel(value: unknown, path: string): JsonObject {
  const model = object(value, path);
  knownKeys(model, FIELDS.ReferencedModel, path, 'ReferencedModel');
  optional(model, 'schema', path, embeddedSchema);
  required(model, 'id', path, string);
  return model;
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
