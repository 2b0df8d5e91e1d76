/** Handlers of ConversationApi: one conversation, read and changed. */
import type { OperationContext } from '../context.js';
import { notFound, readJson, reply } from '../http.js';
import {
  conversationJson,
  conversationMessagesJson,
  derivedName,
  touched,
  updateConversation,
  updatedConversationId,
} from '../models/conversation.js';
import type { ConversationEdit, ConversationState } from '../../storage/storage.js';
import { uuid, type JsonObject } from '../validate.js';
import { clock, publish, recordActivity, transferables } from './common.js';
import { activity } from '../models/asset.js';

const conversationId = (context: OperationContext) => uuid(context.params.conversation, 'The conversation id');

function wire(state: ConversationState, withReferences: boolean) {
  return reply(conversationJson(state.record, withReferences ? new Map(state.messages.map((m) => [m.id, m])) : undefined));
}

/** Edits a conversation in one transaction and announces the changes; 404 when it is unknown. */
async function edit(context: OperationContext, id: string, change: (current: ConversationState) => ConversationEdit) {
  const result = await context.service.storage.editConversation({ conversation: id }, change);
  if (!result) throw notFound(`No conversation with id ${id}.`);
  publish(context, result.changes);
  return result.state;
}

export async function conversationGetSpecificConversation(context: OperationContext) {
  const withReferences = transferables(context.url);
  const id = conversationId(context);
  const state = await context.service.storage.getConversation(id);
  if (!state) throw notFound(`No conversation with id ${id}.`);
  return wire(state, withReferences);
}

export async function conversationUpdate(context: OperationContext) {
  const withReferences = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const id = updatedConversationId(body);
  const time = clock(context);
  let renamed = false;
  const state = await edit(context, id, (current) => {
    const result = updateConversation(body, current, time);
    renamed = (JSON.parse(current.record.json) as { name?: string }).name !== (JSON.parse(result.record.json) as { name?: string }).name;
    return result;
  });
  if (renamed) {
    await recordActivity(
      context,
      activity(time, { conversation: id, pair: 'conversationNameUpdatedByTheUser', value: 'a_conversation_was_renamed_by_the_user' }),
    );
  }
  return wire(state, withReferences);
}

export async function conversationSpecificConversationMessages(context: OperationContext) {
  const id = conversationId(context);
  const state = await context.service.storage.getConversation(id);
  if (!state) throw notFound(`No conversation with id ${id}.`);
  return reply(conversationMessagesJson([state]));
}

export async function conversationSpecificConversationRename(context: OperationContext) {
  const id = conversationId(context);
  const time = clock(context);
  const state = await edit(context, id, (current) => {
    const name = derivedName(current.messages);
    return { record: { ...current.record, json: touched(current.record, time, (c) => name !== undefined && (c.name = name)) } };
  });
  await recordActivity(
    context,
    activity(time, { conversation: id, pair: 'conversationNameUpdatedByTheSystem', value: 'a_conversation_was_renamed_by_the_system' }),
  );
  return wire(state, true);
}

/** Adds or removes an asset reference of a conversation's `assets`. */
async function associate(context: OperationContext, add: boolean) {
  const id = conversationId(context);
  const assetId = uuid(context.params.asset, 'The asset id');
  if (add && !(await context.service.storage.getAsset(assetId))) throw notFound(`No asset with id ${assetId}.`);
  const time = clock(context);
  await edit(context, id, (current) => ({
    record: {
      ...current.record,
      json: touched(current.record, time, (conversation) => {
        const assets = (conversation.assets as { iterable: JsonObject[] } | undefined) ?? { iterable: [] };
        const others = assets.iterable.filter((item) => item.id !== assetId);
        conversation.assets = { ...assets, iterable: add ? [...others, { id: assetId }] : others };
      }),
    },
  }));
  return reply();
}

export const conversationAssociateAsset = (context: OperationContext) => associate(context, true);
export const conversationDisassociateAsset = (context: OperationContext) => associate(context, false);
