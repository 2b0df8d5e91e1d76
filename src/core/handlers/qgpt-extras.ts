/**
 * Handlers of the copilot's helpers (QGPTApi): hints (questions to ask next, from the relevant
 * records), reprompt (a follow-up made a standalone question: through the configured model when
 * there is one, else deterministically) and personsRelated (the stored persons whose records
 * match a seed or a conversation, by the relevance index); and the workstream's suggestions
 * (WorkstreamApi), worked out again from the store.
 */
import type { OperationContext, ServiceContext } from '../context.js';
import type { ChatMessage } from '../copilot/model.js';
import { extractiveModel } from '../copilot/model.js';
import { badRequest, readJson, reply } from '../http.js';
import { parseApplication } from '../models/application.js';
import { languageName, topLevelDeclarations } from '../models/asset-summary.js';
import { detectSpecific, specificOf } from '../models/classify.js';
import { parseQuestionInput } from '../models/qgpt.js';
import { MessageRoleEnum } from '../enums.js';
import { RelevanceIndex, tokenize } from '../relevance.js';
import {
  array,
  embeddedSchema,
  isObject,
  knownKeys,
  number,
  object,
  oneOf,
  optional,
  required,
  string,
  timestamp,
  type JsonObject,
} from '../validate.js';
import { questionMaterial } from './qgpt.js';

async function bodyOf(context: OperationContext, model: string, example: string): Promise<JsonObject> {
  const body = await readJson(context.request, context.service.maxBodyBytes);
  if (body === undefined) throw badRequest(`The request body is required: send a ${model} (${example}).`);
  return object(body, model[0]!.toLowerCase() + model.slice(1));
}

/** Most hints answered. */
const HINTS = 5;

/**
 * hints: questions the user could ask next, from the relevant records sent (their text, or the
 * stored asset they name): for each, best first, what its top-level declarations do and how to
 * use them, else what it does; then how it could be improved. The previous query and answer are
 * not asked again. Each is scored by its record's place (1, 1/2, …).
 */
export async function hints(context: OperationContext) {
  const path = 'qGPTHintsInput';
  const body = await bodyOf(context, 'QGPTHintsInput', '{"relevant":{"iterable":[{"seed":{…}}]},"query":"…"}');
  const answer = optional(body, 'answer', path, (v, p) => {
    const given = object(v, p);
    knownKeys(given, ['schema', 'score', 'text'], p, 'QGPTQuestionAnswer');
    required(given, 'score', p, number);
    return required(given, 'text', p, string);
  });
  const { answer: _answer, query: sentQuery, ...rest } = body;
  const input = parseQuestionInput({ ...rest, query: sentQuery === undefined ? '' : sentQuery }, path);
  const material = await questionMaterial(context.service, input.relevant);
  const asked = new Set([input.query, answer ?? ''].map((text) => text.trim().toLowerCase()));
  const out: Array<{ text: string; score: number }> = [];
  const add = (text: string, score: number) => {
    if (out.length < HINTS && !asked.has(text.toLowerCase()) && !out.some((hint) => hint.text === text)) out.push({ text, score });
  };
  for (const [i, item] of material.entries()) {
    const score = Math.round((1 / (i + 1)) * 1000) / 1000;
    const specific = specificOf(item.language) ?? specificOf(item.name) ?? detectSpecific(item.text);
    const named = topLevelDeclarations(item.text, specific)
      .map((line) => line.split(' ')[1])
      .filter((name): name is string => !!name);
    const what = item.name ?? `this ${languageName(specific)} code`;
    if (named.length) {
      add(`What does \`${named[0]}\` in ${what} do?`, score);
      add(`How do I use \`${named[0]}\`?`, score);
    } else {
      add(`What does ${what} do?`, score);
    }
    add(`How could ${what} be improved?`, score);
  }
  return reply({ answers: { iterable: out } });
}

/** A QGPTConversation: its messages, oldest first, validated. */
function conversationOf(value: unknown, path: string): ChatMessage[] {
  const conversation = object(value, path);
  knownKeys(conversation, ['schema', 'iterable'], path, 'QGPTConversation');
  optional(conversation, 'schema', path, embeddedSchema);
  return required(conversation, 'iterable', path, array).map((item, i) => {
    const p = `${path}.iterable[${i}]`;
    const message = object(item, p);
    knownKeys(message, ['schema', 'text', 'role', 'timestamp'], p, 'QGPTConversationMessage');
    optional(message, 'schema', p, embeddedSchema);
    required(message, 'timestamp', p, timestamp);
    return { text: required(message, 'text', p, string), role: required(message, 'role', p, (v, q) => oneOf(v, MessageRoleEnum, q)) };
  });
}

/** Words by which a follow-up refers to what came before. */
const REFERS_BACK = /\b(?:it|its|this|that|these|those|they|them|their|above|same|previous|earlier|again|instead)\b/i;

/**
 * A follow-up as a standalone question, without a model: unchanged when it does not refer back
 * (no `it`, `this`, `that`…) or there is nothing before it; else with the last question the user
 * asked as its context.
 */
export function standalone(query: string, conversation: readonly ChatMessage[]): string {
  const last = [...conversation]
    .reverse()
    .find((message) => message.role === 'USER' && message.text.trim())
    ?.text.trim();
  if (!last || !REFERS_BACK.test(query) || last === query.trim()) return query;
  const context = last.length > 300 ? `${last.slice(0, 299)}…` : last;
  return `${query.trim()} (in the context of the earlier question: ${context})`;
}

/** What the model is asked for a reprompt. */
const REPROMPT =
  'Rewrite the last question as one standalone question that can be understood without the conversation before it. Answer with the question only.';

/**
 * reprompt: the follow-up made a standalone question. With a model configured (an adapter other
 * than the extractive default), the model rewrites it from the conversation; without one, it is
 * made deterministically (see `standalone`).
 */
export async function reprompt(context: OperationContext) {
  const path = 'qGPTRepromptInput';
  const body = await bodyOf(context, 'QGPTRepromptInput', '{"query":"and in Python?","conversation":{"iterable":[…]}}');
  knownKeys(body, ['schema', 'query', 'conversation', 'application', 'model', 'pipeline'], path, 'QGPTRepromptInput');
  optional(body, 'schema', path, embeddedSchema);
  optional(body, 'application', path, string);
  optional(body, 'pipeline', path, object);
  const model = optional(body, 'model', path, string);
  const query = required(body, 'query', path, string);
  const conversation = required(body, 'conversation', path, conversationOf);
  const adapter = await context.service.copilot.model(model);
  if (adapter === extractiveModel || conversation.length === 0) return reply({ query: standalone(query, conversation) });
  let text = '';
  const signal = new AbortController().signal;
  for await (const chunk of adapter.answer({ query: `${REPROMPT}\n\n${query}`, relevant: [], messages: conversation, signal }))
    text += chunk;
  return reply({ query: text.trim() || query });
}

/** The texts of a Seed (its asset's format) for matching, if it has any. */
function seedTexts(value: unknown, path: string): string[] {
  const seed = object(value, path);
  const asset = isObject(seed.asset) ? seed.asset : undefined;
  const format = isObject(asset?.format) ? asset.format : undefined;
  const raw = (part: unknown) =>
    isObject(part) && isObject(part.string) && typeof part.string.raw === 'string' ? part.string.raw : undefined;
  return [raw(format?.fragment), raw(format?.file)].filter((text): text is string => text !== undefined);
}

/** A person's words: its names, username, email, and the texts of the assets it is on. */
function personFields(person: JsonObject, assetTexts: ReadonlyMap<string, string>): { name: string; text: string } {
  const type = isObject(person.type) ? person.type : {};
  const basic = isObject(type.basic) ? type.basic : {};
  const platform = isObject(type.platform) ? type.platform : {};
  const names = [basic.name, basic.username, basic.email, platform.name, platform.username, platform.email].filter(
    (value): value is string => typeof value === 'string',
  );
  const assets = isObject(person.assets) && Array.isArray(person.assets.iterable) ? person.assets.iterable : [];
  const texts = assets.map((item) => (isObject(item) && typeof item.id === 'string' ? (assetTexts.get(item.id) ?? '') : ''));
  return { name: names.join(' '), text: texts.join('\n') };
}

/**
 * personsRelated: the stored persons related to a seed (its fragment) or a conversation: those
 * whose names or assets share words with it, best first (the relevance index over each
 * person's names and the text of the assets it is on), each with the words it shares.
 */
export async function personsRelated(context: OperationContext) {
  const path = 'qGPTPersonsRelatedInput';
  const body = await bodyOf(context, 'QGPTPersonsRelatedInput', '{"seed":{…}} or {"conversation":{"iterable":[…]}}');
  knownKeys(body, ['schema', 'seed', 'conversation', 'application', 'model'], path, 'QGPTPersonsRelatedInput');
  optional(body, 'schema', path, embeddedSchema);
  optional(body, 'application', path, string);
  optional(body, 'model', path, string);
  const texts = [
    ...(optional(body, 'seed', path, seedTexts) ?? []),
    ...(optional(body, 'conversation', path, conversationOf) ?? []).map((message) => message.text),
  ];
  const query = texts.join('\n');
  const { storage } = context.service;
  const persons = await storage.listMaterials('person');
  const listed = new Set(
    persons.flatMap(({ value }) =>
      isObject(value.assets) && Array.isArray(value.assets.iterable)
        ? value.assets.iterable.map((item) => (isObject(item) && typeof item.id === 'string' ? item.id : '')).filter(Boolean)
        : [],
    ),
  );
  const assetTexts = new Map<string, string>();
  for (const id of listed) {
    const asset = await storage.getAsset(id);
    const text = asset?.formats.find((format) => format.text !== undefined)?.text;
    if (asset && text !== undefined) assetTexts.set(id, `${asset.record.name}\n${text}`);
  }
  const index = new RelevanceIndex();
  const fields = new Map<string, { name: string; text: string }>();
  for (const { id, value } of persons) {
    const own = personFields(value, assetTexts);
    fields.set(id, own);
    index.set({ id, kind: 'person', fields: own });
  }
  // Equal scores in the order the persons were made (the index breaks ties by id, which is random).
  const made = new Map(persons.map((person, i) => [person.id, i]));
  const hits = (query.trim() ? index.search(query) : []).sort((a, b) => b.score - a.score || made.get(a.id)! - made.get(b.id)!);
  const byId = new Map(persons.map((person) => [person.id, person.value]));
  const terms = new Set(tokenize(query));
  const explanations: Record<string, string> = {};
  for (const hit of hits) {
    const own = fields.get(hit.id)!;
    const shared = [...new Set(tokenize(`${own.name}\n${own.text}`))].filter((term) => terms.has(term)).slice(0, 8);
    explanations[hit.id] = `Shares ${shared.map((term) => `“${term}”`).join(', ')} with what was sent.`;
  }
  return reply({ persons: { iterable: hits.map((hit) => byId.get(hit.id)!) }, explanations });
}

/** Most suggestions a refresh answers. */
const SUGGESTIONS = 10;

/** WorkstreamSuggestions of these assets, each a suggestion of its asset (a reference), with its type. */
const suggestionsOf = (ids: readonly string[]) => ({
  iterable: ids.map((id) => ({ asset: { id } })),
  types: ids.map(() => ({ asset: true })),
});

/** The workstream's suggestions without a query: the assets updated last (the suggestions socket's frames). */
export async function latestSuggestions(service: ServiceContext) {
  return suggestionsOf(
    (await service.storage.listAssets())
      .sort((a, b) =>
        a.record.updated < b.record.updated ? 1 : a.record.updated > b.record.updated ? -1 : a.record.id < b.record.id ? -1 : 1,
      )
      .slice(0, SUGGESTIONS)
      .map((asset) => asset.record.id),
  );
}

/**
 * workstreamSuggestionsRefresh: the workstream's suggestions worked out again from the store:
 * with a query, the stored assets that best match it (the relevance index); without one, the
 * assets updated last (as the suggestions socket sends them). Nothing is stored.
 */
export async function workstreamSuggestionsRefresh(context: OperationContext) {
  const path = 'seededWorkstreamSuggestionsRefresh';
  const body = await bodyOf(context, 'SeededWorkstreamSuggestionsRefresh', '{"application":{…},"query":"retry"}');
  knownKeys(body, ['schema', 'application', 'context', 'query'], path, 'SeededWorkstreamSuggestionsRefresh');
  optional(body, 'schema', path, embeddedSchema);
  required(body, 'application', path, parseApplication);
  optional(body, 'context', path, object);
  const query = optional(body, 'query', path, string)?.trim();
  const suggestions = query
    ? suggestionsOf((await context.service.copilot.corpus.search(query, { assets: true, limit: SUGGESTIONS })).map((hit) => hit.id))
    : await latestSuggestions(context.service);
  return reply({ suggestions });
}
