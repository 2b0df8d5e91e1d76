/** Conversations on the wire, composed as JSON text from the stored text. */
import type { ConversationRecord, MessageRecord } from '../../storage/schema.js';

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
