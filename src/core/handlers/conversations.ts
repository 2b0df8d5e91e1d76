/** Handlers of the Conversations operations and of the asset identifiers. */
import type { OperationContext } from '../context.js';
import { badRequest, clip, HttpError, json, jsonText, noContent, notFound, readJson } from '../http.js';
import { summarizeAsset } from '../models/asset-summary.js';
import { conversationsStream, seedConversation, type Seeded } from '../models/conversation.js';
import type { JsonObject } from '../validate.js';
import { uuid } from '../validate.js';

/** `transferables`: absent means true; only "true" and "false" are accepted. */
function transferables(url: URL): boolean {
  const values = url.searchParams.getAll('transferables');
  if (values.length === 0) return true;
  if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
  throw badRequest(`The transferables query parameter must be true or false; got ${clip(JSON.stringify(values.join(',')))}.`);
}

function clock({ service }: OperationContext) {
  return { now: service.now().toISOString(), id: () => service.newId() };
}

async function store(context: OperationContext, seeded: Seeded) {
  const change = await context.service.storage.createConversation(seeded.record, seeded.messages);
  context.service.notify(change);
  return seeded.wire;
}

export async function conversationsCreateSpecificConversation(context: OperationContext) {
  const withReferences = transferables(context.url);
  const body = await readJson(context.request, context.service.maxBodyBytes);
  const conversation = await store(context, seedConversation(body, clock(context)));
  return json(withReferences ? conversation : stripReferences(conversation));
}

function stripReferences(conversation: JsonObject) {
  const messages = conversation.messages as { iterable: Array<{ id: string }> };
  return { ...conversation, messages: { iterable: messages.iterable.map(({ id }) => ({ id })) } };
}

export async function conversationsCreateFromAsset(context: OperationContext) {
  const assetId = uuid(context.params.asset, 'The asset id');
  const asset = await context.service.storage.getAsset(assetId);
  if (!asset) throw notFound(`No asset with id ${assetId}.`);
  const seeded = seedConversation(
    {
      type: 'COPILOT',
      name: asset.name,
      assets: { iterable: [{ id: asset.id }] },
      messages: [{ role: 'SYSTEM', fragment: { string: { raw: summarizeAsset(asset) } } }],
    },
    clock(context),
  );
  const conversation = await store(context, seeded);
  return json({ conversation: { id: conversation.id!, reference: conversation } });
}

export async function conversationsDeleteSpecificConversation(context: OperationContext) {
  const id = uuid(context.params.conversation, 'The conversation id');
  const change = await context.service.storage.deleteConversation(id);
  if (!change) throw notFound(`No conversation with id ${id}.`);
  context.service.notify(change);
  return noContent();
}

export async function conversationsSnapshot(context: OperationContext) {
  const withReferences = transferables(context.url);
  const { conversations, messages } = await context.service.storage.listConversations({ messages: withReferences });
  // A copy of the list: conversations created while the body is written are not half in it.
  return jsonText(conversationsStream(conversations.slice(), messages));
}

export async function conversationsIdentifiersSnapshot({ service }: OperationContext) {
  const { ids } = await service.storage.listConversationIds();
  return json({ iterable: ids.map((id) => ({ id })) });
}

/**
 * The stream path. A plain HTTP GET is refused with 426; the page's WebSocket
 * shim sends `X-Pieces-Stream: handshake` and gets the first message (every
 * current id) with the change sequence it reflects, plus, with `?after=N`,
 * the changes since N for catch-up.
 */
export async function conversationsStreamIdentifiers({ request, url, service }: OperationContext) {
  if (request.headers.get('x-pieces-stream') !== 'handshake') {
    throw new HttpError(
      426,
      'The conversation identifier stream is a WebSocket: connect with new WebSocket("ws://…/conversations/stream/identifiers").',
      { Upgrade: 'websocket' },
    );
  }
  const after = url.searchParams.get('after');
  if (after !== null) {
    if (!/^\d+$/.test(after)) throw badRequest(`after must be a change sequence number, not ${clip(JSON.stringify(after))}.`);
    const { changes, complete } = await service.storage.changesSince(Number(after));
    return json({ changes, complete });
  }
  const { ids, seq } = await service.storage.listConversationIds();
  return json({ seq, identifiers: { iterable: ids.map((id) => ({ conversation: { id } })) } });
}

export async function assetsIdentifiersSnapshot({ service }: OperationContext) {
  const ids = await service.storage.listAssetIds();
  return json({ iterable: ids.map((id) => ({ id })) });
}
