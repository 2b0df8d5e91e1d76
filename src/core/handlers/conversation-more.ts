/**
 * ConversationsApi.conversationsCreateFromWorkstreamSummary: a copilot conversation grounded on a
 * workstream summary (a material of the generic path): named after it, listing it in its
 * `summaries`, its first message (SYSTEM) the summary's name and its annotations' text; the
 * summary lists the conversation in its `conversations` in turn.
 *
 * ConversationApi.conversationSummarize: a SUMMARY annotation of the conversation (or of the
 * messages given), made from its messages without a model (what was asked, what was answered),
 * stored and listed in the conversation's `annotations`.
 */
import type { OperationContext } from '../context.js';
import { badRequest, notFound, readJson, reply } from '../http.js';
import { activity, parseNewAnnotation } from '../models/asset.js';
import { conversationJson, messageText, seedConversation, touched } from '../models/conversation.js';
import { listed, relinked } from '../models/material-links.js';
import { materialKey } from '../../storage/storage.js';
import { array, knownKeys, object, optional, storedJson, uuid, type JsonObject } from '../validate.js';
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

/** At most this many characters of one message go into a summary. */
const SUMMARY_LINE = 280;

const firstLine = (text: string) => {
  const line =
    text
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  return line.length > SUMMARY_LINE ? `${line.slice(0, SUMMARY_LINE - 1)}…` : line;
};

export async function conversationSummarize(context: OperationContext) {
  const id = uuid(context.params.conversation, 'The conversation id');
  const path = 'conversationSummarizeInput';
  const body = (await readJson(context.request, context.service.maxBodyBytes)) ?? {};
  const input = object(body, path);
  knownKeys(input, ['schema', 'messages'], path, 'ConversationSummarizeInput');
  const given = optional(input, 'messages', path, object);
  const picked = given
    ? array(given.iterable, `${path}.messages.iterable`).map((item, i) =>
        uuid(object(item, `${path}.messages.iterable[${i}]`).id, `${path}.messages.iterable[${i}].id`),
      )
    : undefined;
  const { storage } = context.service;
  const state = await storage.getConversation(id);
  if (!state) throw notFound(`No conversation with id ${id}.`);
  const messages = picked
    ? picked.map((m) => {
        const found = state.messages.find((message) => message.id === m);
        if (!found) throw badRequest(`${path}.messages: message ${m} is not a message of conversation ${id}.`);
        return found;
      })
    : state.messages;
  const roles = messages.map((m) => ({ role: (JSON.parse(m.json) as { role?: string }).role, text: messageText(m) }));
  const asked = roles.filter((m) => m.role === 'USER' && m.text.trim());
  const answered = roles.filter((m) => m.role === 'ASSISTANT' && m.text.trim());
  const name = (JSON.parse(state.record.json) as { name?: string }).name;
  const text = [
    `${name ? `${name}: ` : ''}${messages.length} message${messages.length === 1 ? '' : 's'}.`,
    ...asked.slice(0, 3).map((m) => `Asked: ${firstLine(m.text)}`),
    ...(answered.length ? [`Answered: ${firstLine(answered.at(-1)!.text)}`] : []),
  ].join('\n');
  const time = clock(context);
  const annotation = parseNewAnnotation({ type: 'SUMMARY', text }, time);
  const record = { ...annotation, conversation: { id } } as typeof annotation;
  publish(context, await storage.putAnnotation(record));
  // The conversation lists it (a conversation deleted meanwhile: the annotation goes again, and this is its 404).
  const result = await storage.editConversation({ conversation: id }, (current) => ({
    record: {
      ...current.record,
      json: touched(current.record, time, (conversation) => {
        Object.assign(conversation, relinked(conversation, 'annotations', true, record.id, true));
      }),
    },
  }));
  if (!result) {
    publish(context, (await storage.deleteAnnotation(record.id)) ?? []);
    throw notFound(`No conversation with id ${id}.`);
  }
  publish(context, result.changes);
  return reply({ conversation: { id }, annotation: { id: record.id, reference: record } });
}
