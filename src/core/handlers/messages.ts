/** Handlers of ConversationMessagesApi and ConversationMessageApi: the messages of conversations. */
import type { OperationContext } from '../context.js';
import { notFound, readJson, reply } from '../http.js';
import { conversationMessagesJson, messageRecord, seedMessage, touched, updateMessage } from '../models/conversation.js';
import type { ConversationRecord, MessageRecord } from '../../storage/schema.js';
import type { ConversationTarget } from '../../storage/storage.js';
import { object, required, uuid } from '../validate.js';
import { clock, publish, transferables } from './common.js';

/** Runs a message write in one transaction with its conversation (whose `updated` it bumps) and announces it. */
async function write(
  context: OperationContext,
  target: ConversationTarget,
  what: string,
  change: (record: ConversationRecord, messages: MessageRecord[]) => { message?: MessageRecord; messageIds: string[]; deleted?: string },
) {
  const time = clock(context);
  let written: MessageRecord | undefined;
  const result = await context.service.storage.editConversation(target, (current) => {
    const next = change(current.record, current.messages);
    written = next.message;
    const deletedMessageIds = next.deleted ? [...(current.record.deletedMessageIds ?? []), next.deleted] : current.record.deletedMessageIds;
    return {
      record: {
        ...current.record,
        json: touched(current.record, time),
        messageIds: next.messageIds,
        ...(deletedMessageIds ? { deletedMessageIds } : {}),
      },
      putMessages: written ? [written] : [],
      deleteMessages: next.deleted ? [next.deleted] : [],
    };
  });
  if (!result) throw notFound(`No ${what}.`);
  publish(context, result.changes);
  return written;
}

export async function messagesCreateSpecificMessage(context: OperationContext) {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const message = seedMessage(body, 'message', clock(context));
  const record = messageRecord(message);
  const written = await write(context, { conversation: record.conversation }, `conversation with id ${record.conversation}`, (current) => ({
    message: record,
    messageIds: [...current.messageIds, record.id],
  }));
  return reply(written!.json);
}

export async function messageSpecificMessageSnapshot(context: OperationContext) {
  transferables(context.url);
  const id = uuid(context.params.message, 'The message id');
  const message = await context.service.storage.getMessage(id);
  if (!message) throw notFound(`No message with id ${id}.`);
  return reply(message.json);
}

async function update(context: OperationContext, valueOnly: boolean) {
  transferables(context.url);
  const body = object(await readJson(context.request, context.service.maxBodyBytes), 'message');
  const id = required(body, 'id', 'message', uuid);
  const time = clock(context);
  const written = await write(context, { message: id }, `message with id ${id}`, (current, messages) => ({
    message: updateMessage(body, messages.find((m) => m.id === id)!, time, valueOnly),
    messageIds: current.messageIds,
  }));
  return reply(written!.json);
}

export const messageSpecificMessageUpdate = (context: OperationContext) => update(context, false);
export const messageUpdateValue = (context: OperationContext) => update(context, true);

export async function messagesDeleteSpecificMessage(context: OperationContext) {
  const id = uuid(context.params.message, 'The message id');
  await write(context, { message: id }, `message with id ${id}`, (current) => ({
    messageIds: current.messageIds.filter((m) => m !== id),
    deleted: id,
  }));
  return reply();
}

export async function messagesSnapshot(context: OperationContext) {
  transferables(context.url);
  const { conversations, messages } = await context.service.storage.listConversations({ messages: true });
  return reply(
    conversationMessagesJson(
      conversations.map((record) => ({ record, messages: record.messageIds.map((id) => messages!.get(id)!).filter(Boolean) })),
    ),
  );
}
