/**
 * The searches of the kinds with a hand-written store beyond conversations and assets: anchors
 * (AnchorsApi.searchAnchors), annotations (AnnotationsApi.searchAnnotations), messages
 * (ConversationMessagesApi.searchMessages, ConversationApi.searchConversationSpecificMessages).
 * The same search as the generic kinds' (searchMaterials: the records whose text holds the whole
 * query, or some of its words, best first), over the stored records; `transferables` puts each
 * record in its item.
 */
import { KINDS, type MaterialKind } from '../../shared/graph.js';
import type { OperationContext } from '../context.js';
import { notFound, readJson, reply } from '../http.js';
import { searchMaterials } from '../models/material.js';
import { searchQuery } from '../models/search.js';
import type { MessageRecord } from '../../storage/schema.js';
import { uuid, type JsonObject } from '../validate.js';
import { transferables } from './common.js';

/** A search's answer over `values`, each item's record under `key` (the Searched model's field). */
async function searched(
  context: OperationContext,
  kind: MaterialKind,
  key: string,
  values: () => Promise<Array<JsonObject & { id: string }>>,
) {
  const withRecords = transferables(context.url);
  const query = searchQuery(await readJson(context.request, context.service.maxBodyBytes));
  const row = KINDS.find((r) => r.kind === kind)!;
  const found = searchMaterials(
    row,
    query,
    (await values()).map((value) => ({ value })),
    withRecords,
  );
  const items = (found.iterable as JsonObject[]).map(({ [kind]: record, ...item }) => {
    if (record === undefined) return item;
    const { [SEARCHED_TEXT]: _text, ...whole } = record as JsonObject;
    return { [key]: whole, ...item };
  });
  return reply({ iterable: items });
}

const parsed = (json: string) => JSON.parse(json) as JsonObject & { id: string };

/** A key a record is searched by beyond its own text (taken off before it is answered). */
const SEARCHED_TEXT = '\u0000searched';

/** An anchor is found by its name and its points' paths too (its points are references, which the search does not read). */
function anchorValue(json: string): JsonObject & { id: string } {
  const anchor = parsed(json);
  const points = ((anchor.points as { iterable?: Array<{ reference?: { fullpath?: unknown } }> } | undefined)?.iterable ?? [])
    .map((point) => point.reference?.fullpath)
    .filter((path): path is string => typeof path === 'string');
  return { ...anchor, [SEARCHED_TEXT]: points.join('\n') };
}

export const searchAnchors = (context: OperationContext) =>
  searched(context, 'anchor', 'anchor', async () => (await context.service.storage.listAnchors()).map((a) => anchorValue(a.json)));

export const searchAnnotations = (context: OperationContext) =>
  searched(context, 'annotation', 'annotation', () => context.service.storage.listAnnotations());

/** The messages of conversations, in conversation order (deleted ones left out). */
const messageValues = (ids: readonly string[], messages: ReadonlyMap<string, MessageRecord> | undefined) =>
  ids.flatMap((id) => {
    const message = messages?.get(id);
    return message ? [parsed(message.json)] : [];
  });

export const searchMessages = (context: OperationContext) =>
  searched(context, 'conversationMessage', 'message', async () => {
    const list = await context.service.storage.listConversations({ messages: true });
    return list.conversations.flatMap((record) => messageValues(record.messageIds, list.messages));
  });

/** searchConversationSpecificMessages: the messages of one conversation (404 when it is not stored). */
export async function searchConversationSpecificMessages(context: OperationContext) {
  const id = uuid(context.params.conversation, 'The conversation id');
  const state = await context.service.storage.getConversation(id);
  if (!state) throw notFound(`No conversation with id ${id}.`);
  return searched(context, 'conversationMessage', 'message', async () => state.messages.map((m) => parsed(m.json)));
}
