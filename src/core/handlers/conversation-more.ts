/**
 * ConversationsApi.conversationsCreateFromWorkstreamSummary: a copilot conversation grounded on a
 * workstream summary (a material of the generic path): named after it, listing it in its
 * `summaries`, its first message (SYSTEM) the summary's name and its annotations' text; the
 * summary lists the conversation in its `conversations` in turn.
 */
import type { OperationContext } from '../context.js';
import { notFound, reply } from '../http.js';
import { activity } from '../models/asset.js';
import { conversationJson, seedConversation } from '../models/conversation.js';
import { listed, relinked } from '../models/material-links.js';
import { materialKey } from '../../storage/storage.js';
import { storedJson, uuid, type JsonObject } from '../validate.js';
import { clock, publish } from './common.js';

export async function conversationsCreateFromWorkstreamSummary(context: OperationContext) {
  const id = uuid(context.params.workstream_summary, 'The workstream summary id');
  const { storage } = context.service;
  const summary = await storage.getMaterial('workstreamSummary', id);
  if (!summary) throw notFound(`No workstream summary with id ${id}.`);
  const name = typeof summary.value.name === 'string' ? summary.value.name : 'Workstream summary';
  const notes = await Promise.all(listed(summary.value, 'annotations', true).map((a) => storage.getAnnotation(a)));
  const text = [name, ...notes.flatMap((note) => (note?.text ? [note.text] : []))].join('\n\n');
  const time = clock(context);
  const seeded = seedConversation(
    {
      type: 'COPILOT',
      name,
      messages: [{ role: 'SYSTEM', fragment: { string: { raw: `The user's workstream summary to talk about:\n\n${text}` } } }],
    },
    time,
  );
  // A SeededConversation names no summary: the conversation lists it as it is made.
  seeded.record.json = storedJson({ ...(JSON.parse(seeded.record.json) as JsonObject), summaries: { iterable: [{ id }] } });
  const conversation = seeded.record.id;
  const created = activity(time, { conversation, pair: 'conversationCreated', value: 'a_conversation_was_created' });
  publish(context, await storage.createConversation(seeded.record, seeded.messages, seeded.anchors, created));
  // The summary lists it (a summary deleted meanwhile: the conversation goes again, and this is its 404).
  const key = { kind: 'workstreamSummary' as const, id };
  try {
    const { changes } = await storage.editMaterials([key], (found) => {
      const current = found.get(materialKey(key));
      if (!current) throw notFound(`No workstream summary with id ${id}.`);
      const value = relinked(current.value, 'conversations', true, conversation, true) as JsonObject & { id: string };
      return { put: [{ ...current, value: { ...value, updated: { value: time.now().toISOString() } } }] };
    });
    publish(context, changes);
  } catch (error) {
    const undone = await storage.deleteConversation(conversation);
    if (undone) publish(context, undone);
    throw error;
  }
  const messages = new Map(seeded.messages.map((m) => [m.id, m]));
  return reply(`{"conversation":{"id":"${conversation}","reference":${conversationJson(seeded.record, messages)}}}`);
}
