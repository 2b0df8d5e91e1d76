/**
 * The copilot's wire models: QGPTRelevanceInput, QGPTQuestionInput and
 * QGPTStreamInput in, RelevantQGPTSeeds, QGPTQuestionOutput and
 * QGPTStreamOutput out (SDK 4.1.0 shapes).
 */
import type { ChatMessage, RelevantMaterial, Role } from '../copilot/model.js';
import type { Ranked } from '../copilot/corpus.js';
import { badRequest } from '../http.js';
import { bestPassage } from '../relevance.js';
import { MessageRoleEnum } from '../enums.js';
import { array, boolean, isObject, object, oneOf, optional, required, string, uuid, type JsonObject } from '../validate.js';

/** A seed's text: `asset.format.fragment.string.raw` (or the format's file), as the SDK documents. */
function seedText(seed: JsonObject | undefined): { text?: string; name?: string } {
  const asset = isObject(seed?.asset) ? seed.asset : undefined;
  const format = isObject(asset?.format) ? asset.format : undefined;
  const raw = (part: unknown) =>
    isObject(part) && isObject(part.string) && typeof part.string.raw === 'string' ? part.string.raw : undefined;
  const text = raw(format?.fragment) ?? raw(format?.file);
  const name = isObject(asset?.metadata) && typeof asset.metadata.name === 'string' ? asset.metadata.name : undefined;
  return { ...(text === undefined ? {} : { text }), ...(name === undefined ? {} : { name }) };
}

/** `{iterable: [{id}, …]}` (FlattenedAssets, FlattenedConversationMessages): the ids, validated. */
function referencedIds(value: unknown, path: string): Array<{ id: string; reference?: JsonObject }> {
  const flattened = object(value, path);
  return (optional(flattened, 'iterable', path, array) ?? []).map((item, i) => {
    const p = `${path}.iterable[${i}]`;
    const entry = object(item, p);
    const reference = optional(entry, 'reference', p, object);
    return { id: required(entry, 'id', p, uuid), ...(reference ? { reference } : {}) };
  });
}

/**
 * Long-term memory asked for: the workstream pipeline (`pipeline.conversation.contextualizedCodeWorkstreamDialog`)
 * or a temporal grounding (`temporal.workstreams`: the ranges whose workstream to answer from).
 */
export interface WorkstreamQuery {
  /** The ranges the request grounds on (none: the conversation's, else all time). */
  ranges: string[];
}

/** The workstream a relevance or question input asks for, if any (its pipeline and its temporal grounding). */
function workstreamOf(input: JsonObject, pipeline: JsonObject | undefined, path: string): WorkstreamQuery | undefined {
  const temporal = optional(input, 'temporal', path, object);
  const workstreams =
    temporal?.workstreams == null ? [] : referencedIds(temporal.workstreams, `${path}.temporal.workstreams`).map((r) => r.id);
  const conversation = isObject(pipeline?.conversation) ? pipeline.conversation : undefined;
  const dialog = isObject(conversation?.contextualized_code_workstream_dialog);
  return dialog || temporal ? { ranges: workstreams } : undefined;
}

export interface RelevanceQuery {
  query: string;
  /** Long-term memory asked for (then the answer is made from the workstream, not the assets). */
  workstream?: WorkstreamQuery;
  /** Seeds sent with the query, ranked with the stored material. */
  seeds: Array<{ seed: JsonObject; text: string; name?: string }>;
  /** Stored assets to rank (all of them when `database`). */
  assets: string[];
  /** Stored messages to rank. */
  messages: string[];
  database: boolean;
  /** Answer the question too (`options.question`). */
  question: boolean;
  /** The model asked for (a catalogue id), if any. */
  model?: string;
}

export function parseRelevanceInput(value: unknown, path = 'relevance'): RelevanceQuery {
  const input = object(value, path);
  const query = required(input, 'query', path, string);
  for (const [i, item] of (optional(input, 'paths', path, array) ?? []).entries()) string(item, `${path}.paths[${i}]`);
  optional(input, 'application', path, string);
  const model = optional(input, 'model', path, string);
  const seedsValue = optional(input, 'seeds', path, object);
  const seeds = seedsValue
    ? required(seedsValue, 'iterable', `${path}.seeds`, array).flatMap((item, i) => {
        const seed = object(item, `${path}.seeds.iterable[${i}]`);
        const { text, name } = seedText(seed);
        // Only fragment and file strings are compared; other seeds are ignored, as the API documents.
        return text === undefined ? [] : [{ seed, text, ...(name ? { name } : {}) }];
      })
    : [];
  const assets = input.assets == null ? [] : referencedIds(input.assets, `${path}.assets`).map((a) => a.id);
  const messages = input.messages == null ? [] : referencedIds(input.messages, `${path}.messages`).map((m) => m.id);
  const options = optional(input, 'options', path, object) ?? {};
  const database = optional(options, 'database', `${path}.options`, boolean);
  const question = optional(options, 'question', `${path}.options`, boolean) ?? false;
  const pipeline = optional(options, 'pipeline', `${path}.options`, object);
  const workstream = workstreamOf(input, pipeline, path);
  const nothingGiven = seeds.length === 0 && assets.length === 0 && messages.length === 0 && !seedsValue;
  return {
    query,
    seeds,
    assets,
    messages,
    database: database ?? nothingGiven,
    question,
    ...(model ? { model } : {}),
    ...(workstream ? { workstream } : {}),
  };
}

export interface QuestionQuery {
  query: string;
  /** The relevant seeds as sent; `asset` names a stored asset whose text is used when the seed has none. */
  relevant: Array<{ text?: string; name?: string; asset?: string; score?: number }>;
  /** History: messages sent with their text, or ids of stored messages. */
  messages: Array<{ id: string; message?: ChatMessage }>;
  /** The model asked for (a catalogue id), if any. */
  model?: string;
  /** Long-term memory asked for (then the answer is made from the workstream when no relevant seed is sent). */
  workstream?: WorkstreamQuery;
}

export function parseQuestionInput(value: unknown, path = 'question'): QuestionQuery {
  const input = object(value, path);
  const query = required(input, 'query', path, string);
  optional(input, 'application', path, string);
  const model = optional(input, 'model', path, string);
  const workstream = workstreamOf(input, optional(input, 'pipeline', path, object), path);
  const relevantValue = required(input, 'relevant', path, object);
  const relevant = required(relevantValue, 'iterable', `${path}.relevant`, array).map((item, i) => {
    const p = `${path}.relevant.iterable[${i}]`;
    const entry = object(item, p);
    const seed = optional(entry, 'seed', p, object);
    const assetRef = optional(entry, 'asset', p, object);
    const asset = assetRef ? required(assetRef, 'id', `${p}.asset`, uuid) : undefined;
    const { text, name } = seedText(seed);
    if (text === undefined && !asset) {
      throw badRequest(`${p} must carry text (seed.asset.format.fragment.string.raw) or name a stored asset (asset.id).`);
    }
    const score = typeof entry.score === 'number' ? entry.score : undefined;
    return {
      ...(text === undefined ? {} : { text }),
      ...(name ? { name } : {}),
      ...(asset ? { asset } : {}),
      ...(score === undefined ? {} : { score }),
    };
  });
  const messages =
    input.messages == null
      ? []
      : referencedIds(input.messages, `${path}.messages`).map(({ id, reference }) => {
          const text =
            reference && isObject(reference.fragment) && isObject(reference.fragment.string) ? reference.fragment.string.raw : undefined;
          if (typeof text !== 'string') return { id };
          const role = optional(reference!, 'role', `${path}.messages`, (v, p) => oneOf(v, MessageRoleEnum, p)) ?? 'UNKNOWN';
          return { id, message: { role: role as Role, text } };
        });
  return { query, relevant, messages, ...(model ? { model } : {}), ...(workstream ? { workstream } : {}) };
}

export interface StreamInput {
  request?: string;
  conversation?: string;
  relevance?: RelevanceQuery;
  question?: QuestionQuery;
  stop: boolean;
  reset: boolean;
}

export function parseStreamInput(value: unknown): StreamInput {
  const path = 'input';
  const input = object(value, path);
  const request = optional(input, 'request', path, string);
  const conversation = optional(input, 'conversation', path, uuid);
  const stop = optional(input, 'stop', path, boolean) ?? false;
  const reset = optional(input, 'reset', path, boolean) ?? false;
  optional(input, 'agent', path, boolean);
  const relevance = input.relevance == null ? undefined : parseRelevanceInput(input.relevance, `${path}.relevance`);
  const question = input.question == null ? undefined : parseQuestionInput(input.question, `${path}.question`);
  if (!stop && !reset && !relevance && !question) {
    throw badRequest(`${path} must carry a question, a relevance (with options.question), stop: true or reset: true.`);
  }
  return {
    ...(request ? { request } : {}),
    ...(conversation ? { conversation } : {}),
    ...(relevance ? { relevance } : {}),
    ...(question ? { question } : {}),
    stop,
    reset,
  };
}

/** A RelevantQGPTSeed for ranked material (best first: RelevantQGPTSeed has no score), with its best-matching passage. */
export function relevantSeed(
  material: Ranked | (RelevantMaterial & { kind: 'seed'; seed: JsonObject }),
  query: string,
  application: JsonObject,
): JsonObject {
  const passage = bestPassage(material.text, query);
  const location = { text: passage.text, start: passage.start, end: passage.end };
  // Every seed comes back as a whole SeededAsset of its text (a seed sent by the client included:
  // echoed as sent, a partial one would not decode with the SDK).
  const asset: JsonObject = {
    application,
    format: { fragment: { string: { raw: material.text } } },
    ...(material.name ? { metadata: { name: material.name } } : {}),
  };
  return {
    ...(material.kind === 'seed' ? {} : { id: material.id }),
    seed: { type: 'SEEDED_ASSET', asset },
    ...(material.kind === 'asset' ? { asset: { id: material.id } } : {}),
    location,
  };
}

export function questionOutput(text: string, score = 1): JsonObject {
  return { answers: { iterable: [{ score, text }] } };
}
