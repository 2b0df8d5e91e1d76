/** Handlers of the copilot operations: relevance, question (the stream is in qgpt-stream.ts). */
import type { OperationContext, ServiceContext } from '../context.js';
import type { Ranked } from '../copilot/corpus.js';
import { ModelError, type ChatMessage, type RelevantMaterial } from '../copilot/model.js';
import { HttpError, notFound, readJson, reply } from '../http.js';
import { browserApplication } from '../models/application.js';
import {
  parseQuestionInput,
  parseRelevanceInput,
  questionOutput,
  relevantSeed,
  type QuestionQuery,
  type RelevanceQuery,
  type WorkstreamQuery,
} from '../models/qgpt.js';
import { hitMaterial, hitSeed, workstreamHits } from '../ltm/grounding.js';
import { byScore, RelevanceIndex } from '../relevance.js';
import type { JsonObject } from '../validate.js';

/** Most stored material a whole-database relevance search returns. */
export const RELEVANT_LIMIT = 10;

type Found = Ranked | (RelevantMaterial & { id: string; kind: 'seed'; seed: JsonObject; score: number });

/**
 * Ranks what a relevance input names: the whole store's assets (`database`),
 * the assets and messages it lists, the seeds it sends. Matches come best
 * first; what was named explicitly but does not match follows with score 0.
 */
export async function findRelevant(service: ServiceContext, input: RelevanceQuery): Promise<Found[]> {
  const { corpus } = service.copilot;
  const named = [...input.assets, ...input.messages];
  // Named material is looked up by id (every text read); the database is searched by its index.
  await corpus.load({ assets: input.assets.length > 0, messages: input.messages.length > 0 });
  for (const id of input.assets) if (corpus.get(id)?.kind !== 'asset') throw notFound(`No asset with id ${id}.`);
  for (const id of input.messages) if (corpus.get(id)?.kind !== 'message') throw notFound(`No message with id ${id}.`);

  const found = new Map<string, Found>();
  const add = (items: Found[]) => {
    for (const item of items) if (!found.has(item.id)) found.set(item.id, item);
  };
  if (input.database) add(await corpus.search(input.query, { assets: true, limit: RELEVANT_LIMIT }));
  if (named.length) {
    add(await corpus.search(input.query, { assets: input.assets.length > 0, messages: input.messages.length > 0, ids: new Set(named) }));
  }
  const seeds = new RelevanceIndex();
  const seedIds = input.seeds.map((_, i) => `~seed-${String(i).padStart(6, '0')}`);
  for (const [i, seed] of input.seeds.entries()) {
    seeds.set({ id: seedIds[i]!, kind: 'seed', fields: { text: seed.text, ...(seed.name ? { name: seed.name } : {}) } });
  }
  const seedOf = (i: number, score: number): Found => ({
    id: seedIds[i]!,
    kind: 'seed',
    seed: input.seeds[i]!.seed,
    text: input.seeds[i]!.text,
    score,
  });
  add(seeds.search(input.query).map((hit) => seedOf(seedIds.indexOf(hit.id), hit.score)));

  const ranked = [...found.values()].sort(byScore);
  for (const id of named) if (!found.has(id)) ranked.push({ ...corpus.get(id)!, score: 0 });
  for (const [i, id] of seedIds.entries()) if (!found.has(id)) ranked.push(seedOf(i, 0));
  return ranked;
}

/** The application named in the seeds the service returns: the browser it runs in. */
export function serviceApplication(service: ServiceContext): Promise<JsonObject> {
  const { copilot } = service;
  copilot.application ??= service.storage.ensureMeta('browserApplicationId', service.clock.newId).then(
    (id) => browserApplication(id, service.userAgent),
    (error: unknown) => {
      copilot.application = null;
      throw error;
    },
  );
  return copilot.application;
}

export async function relevantSeeds(service: ServiceContext, query: string, found: Found[]) {
  const application = await serviceApplication(service);
  return { iterable: found.map((item) => relevantSeed(item, query, application)) };
}

export const asMaterial = (item: Found): RelevantMaterial => ({
  ...(item.kind === 'seed' ? {} : { id: item.id }),
  ...(item.name ? { name: item.name } : {}),
  ...(item.language ? { language: item.language } : {}),
  text: item.text,
  score: item.score,
});

/** The material of a question's relevant seeds; a seed naming a stored asset gets its text. */
export async function questionMaterial(service: ServiceContext, relevant: QuestionQuery['relevant']): Promise<RelevantMaterial[]> {
  const { corpus } = service.copilot;
  if (relevant.some((item) => item.text === undefined)) await corpus.load({ assets: true });
  return relevant.map((item) => {
    if (item.text !== undefined) return { ...item, text: item.text };
    const asset = corpus.get(item.asset!);
    if (asset?.kind !== 'asset') throw notFound(`No asset with id ${item.asset}.`);
    return {
      id: asset.id,
      name: asset.name,
      language: asset.language,
      text: asset.text,
      ...(item.score === undefined ? {} : { score: item.score }),
    };
  });
}

/** A question's history: messages sent with their text, or stored messages by id. */
export async function questionHistory(service: ServiceContext, messages: QuestionQuery['messages']): Promise<ChatMessage[]> {
  const { corpus } = service.copilot;
  if (messages.some((m) => !m.message)) await corpus.load({ messages: true });
  return messages.map(({ id, message }) => {
    if (message) return message;
    const stored = corpus.get(id);
    if (stored?.kind !== 'message') throw notFound(`No message with id ${id}.`);
    return { role: (stored.role ?? 'UNKNOWN') as ChatMessage['role'], text: stored.text };
  });
}

/** Runs the model that answers `model` (a catalogue id; none: the default) to the end and returns the whole answer. */
export async function completeAnswer(
  service: ServiceContext,
  query: string,
  relevant: RelevantMaterial[],
  messages: ChatMessage[],
  model?: string,
) {
  let answer = '';
  const signal = new AbortController().signal;
  for await (const chunk of (await service.copilot.model(model)).answer({ query, relevant, messages, signal })) answer += chunk;
  return answer;
}

/** A failed model is a 502 with the model's own message. */
function modelFailure(error: unknown): never | Response {
  if (error instanceof ModelError) return reply(error.message, { status: 502, type: 'text' });
  throw error;
}

/**
 * Long-term memory's material for a question (the workstream pipeline, temporal grounding): the
 * summaries and events recalled in the ranges (src/core/ltm/grounding.ts), as material and as the
 * relevant seeds that cite them.
 */
export async function workstreamMaterial(service: ServiceContext, query: string, workstream: WorkstreamQuery, conversation?: string) {
  const hits = await workstreamHits(service, query, workstream, conversation);
  const application = await serviceApplication(service);
  return { relevant: hits.map(hitMaterial), seeds: { iterable: hits.map((hit) => hitSeed(hit, query, application)) } };
}

export async function relevance({ request, service }: OperationContext) {
  const input = parseRelevanceInput(await readJsonBody(request, service));
  let material: RelevantMaterial[];
  let relevant: JsonObject;
  if (input.workstream) {
    ({ relevant: material, seeds: relevant } = await workstreamMaterial(service, input.query, input.workstream));
  } else {
    const found = await findRelevant(service, input);
    relevant = await relevantSeeds(service, input.query, found);
    material = found.map(asMaterial);
  }
  if (!input.question) return reply({ relevant });
  try {
    const answer = await completeAnswer(service, input.query, material, [], input.model);
    return reply({ relevant, answer: questionOutput(answer) });
  } catch (error) {
    return modelFailure(error);
  }
}

/**
 * The material of a question: its relevant seeds; when it sends none, the
 * stored assets that best match the query.
 */
export async function questionMaterialOrStore(service: ServiceContext, query: string, relevant: QuestionQuery['relevant']) {
  if (relevant.length) return questionMaterial(service, relevant);
  return (await service.copilot.corpus.search(query, { assets: true, limit: RELEVANT_LIMIT })).map(asMaterial);
}

export async function question({ request, service }: OperationContext) {
  const input = parseQuestionInput(await readJsonBody(request, service));
  const relevant =
    input.workstream && input.relevant.length === 0
      ? (await workstreamMaterial(service, input.query, input.workstream)).relevant
      : await questionMaterialOrStore(service, input.query, input.relevant);
  const messages = await questionHistory(service, input.messages);
  try {
    return reply(questionOutput(await completeAnswer(service, input.query, relevant, messages, input.model)));
  } catch (error) {
    return modelFailure(error);
  }
}

async function readJsonBody(request: Request, service: ServiceContext): Promise<unknown> {
  const body = await readJson(request, service.maxBodyBytes);
  if (body === undefined) throw new HttpError(400, 'The request body is required: send the input as JSON.');
  return body;
}
