/** A conversation of the data format, its messages inline, into its stored records. */
import { ConversationTypeEnum, MessageRoleEnum, MessageSentimentEnum } from '../enums.js';
import type { Clock } from '../clock.js';
import { badRequest } from '../http.js';
import type { StoredData } from '../../storage/storage.js';
import { array, object, oneOf, optional, required, string, uuid } from '../validate.js';
import { dense, grouped } from './fields.js';

export function parseConversation(value: unknown, path: string, clock: Clock): StoredData['conversations'][number] {
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
