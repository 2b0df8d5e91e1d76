/** Handlers of ConversationsApi: create, create from asset, delete, snapshots and search. */
import type { OperationContext } from '../context.js';
import { notFound, readJson, reply } from '../http.js';
import { summarizeAsset } from '../models/asset-summary.js';
import { activity, summaryInput } from '../models/asset.js';
import { conversationJson, seedConversation, type Seeded } from '../models/conversation.js';
import { searchConversations as search } from '../models/search.js';
import { uuid } from '../validate.js';
import { clock, publish, recordActivity, transferables } from './common.js';

/**
 * Stores a new conversation with the activity that records its creation, in one transaction;
 * the answer (`answer`: its wire text) is encoded while the database writes, and returned once
 * the write committed.
 */
async function store(context: OperationContext, seeded: Seeded, answer: (seeded: Seeded) => string): Promise<Response> {
  const created = activity(clock(context), {
    conversation: seeded.record.id,
    pair: 'conversationCreated',
    value: 'a_conversation_was_created',
  });
  const written = context.service.storage.createConversation(seeded.record, seeded.messages, seeded.anchors, created);
  const response = reply(answer(seeded));
  publish(context, await written);
  return response;
}

const messageMap = (seeded: Seeded) => new Map(seeded.messages.map((m) => [m.id, m]));

export async function conversationsCreateSpecificConversation(context: OperationContext) {
  const withReferences = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  return store(context, seedConversation(body, clock(context)), (seeded) =>
    conversationJson(seeded.record, withReferences ? messageMap(seeded) : undefined),
  );
}

export async function conversationsCreateFromAsset(context: OperationContext) {
  const assetId = uuid(context.params.asset, 'The asset id');
  const whole = await context.service.storage.getAsset(assetId);
  if (!whole) throw notFound(`No asset with id ${assetId}.`);
  const asset = summaryInput(whole);
  return store(
    context,
    seedConversation(
      {
        type: 'COPILOT',
        name: asset.name,
        assets: { iterable: [{ id: assetId }] },
        messages: [{ role: 'SYSTEM', fragment: { string: { raw: summarizeAsset(asset) } } }],
      },
      clock(context),
    ),
    (seeded) => `{"conversation":{"id":"${seeded.record.id}","reference":${conversationJson(seeded.record, messageMap(seeded))}}}`,
  );
}

export async function conversationsDeleteSpecificConversation(context: OperationContext) {
  const id = uuid(context.params.conversation, 'The conversation id');
  const changes = await context.service.storage.deleteConversation(id);
  if (!changes) throw notFound(`No conversation with id ${id}.`);
  publish(context, changes);
  await recordActivity(
    context,
    activity(clock(context), { conversation: id, pair: 'conversationDeleted', value: 'a_conversation_was_deleted' }),
  );
  return reply();
}

export async function conversationsSnapshot(context: OperationContext) {
  const withReferences = transferables(context.url);
  return reply(await context.service.storage.conversationsSnapshot(withReferences, conversationJson));
}

export async function conversationsIdentifiersSnapshot({ service }: OperationContext) {
  const { ids } = await service.storage.listIds('conversation');
  return reply({ iterable: ids.map((id) => ({ id })) });
}

export async function searchConversations(context: OperationContext) {
  const withReferences = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const list = await context.service.storage.listConversations({ messages: true });
  return reply(search(body, list, withReferences));
}
