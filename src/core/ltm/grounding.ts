/**
 * The copilot's answers from long-term memory (the workstream pipeline,
 * `pipeline.conversation.contextualized_code_workstream_dialog`, and temporal grounding,
 * `temporal.workstreams`): the ranges a request grounds on (else its conversation's
 * `grounding.temporal.workstreams`, else all time), the summaries and events `recall` finds in
 * them, as the material the model answers from and as the relevant seeds that cite them by id.
 */
import type { ServiceContext } from '../context.js';
import type { RelevantMaterial } from '../copilot/model.js';
import { notFound } from '../http.js';
import type { WorkstreamQuery } from '../models/qgpt.js';
import { bestPassage } from '../relevance.js';
import { isObject, type JsonObject } from '../validate.js';
import { byRecall, RECALL_LIMIT, recall, type RecallHit } from './recall.js';

const stamp = (value: unknown): string | undefined => (isObject(value) && typeof value.value === 'string' ? value.value : undefined);

/** The ranges a stored conversation is grounded on (`grounding.temporal.workstreams`); 404 when there is no such conversation. */
async function groundedRanges(service: ServiceContext, conversation: string): Promise<string[]> {
  const state = await service.storage.getConversation(conversation);
  if (!state) throw notFound(`No conversation with id ${conversation}.`);
  const wire = JSON.parse(state.record.json) as JsonObject;
  const temporal = isObject(wire.grounding) && isObject(wire.grounding.temporal) ? wire.grounding.temporal : undefined;
  const listed = isObject(temporal?.workstreams) && Array.isArray(temporal.workstreams.iterable) ? temporal.workstreams.iterable : [];
  return listed.flatMap((item) => (isObject(item) && typeof item.id === 'string' ? [item.id] : []));
}

/** The stored ranges' spans (ISO ends; an end absent is open); 404 naming a range that is not stored. */
async function spans(service: ServiceContext, ids: readonly string[]): Promise<Array<{ from?: string; to?: string }>> {
  const records = await Promise.all(ids.map((id) => service.storage.getMaterial('range', id)));
  return records.map((record, i) => {
    if (!record) throw notFound(`No range with id ${ids[i]} (temporal.workstreams): create it with POST /ranges/create.`);
    const from = stamp(record.value.from);
    const to = stamp(record.value.to);
    return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
  });
}

/**
 * The summaries and events that answer a question from long-term memory: recalled in each range
 * the request names (else the conversation's grounding, else all time), the best of them all.
 */
export async function workstreamHits(
  service: ServiceContext,
  question: string,
  workstream: WorkstreamQuery,
  conversation?: string,
): Promise<RecallHit[]> {
  const ranges = workstream.ranges.length || !conversation ? workstream.ranges : await groundedRanges(service, conversation);
  const within = ranges.length ? await spans(service, ranges) : [{}];
  const best = new Map<string, RecallHit>();
  for (const range of within) {
    for (const hit of await recall(service, { question, range, limit: RECALL_LIMIT })) {
      const known = best.get(`${hit.kind}/${hit.id}`);
      if (!known || known.score < hit.score) best.set(`${hit.kind}/${hit.id}`, hit);
    }
  }
  return [...best.values()].sort(byRecall).slice(0, RECALL_LIMIT);
}

const what = (hit: RecallHit) => (hit.kind === 'workstreamSummary' ? 'workstream summary' : 'workstream event');

/** A hit as the material a model answers from: named by its title, what it is, its id and time (so that an answer quoting it cites it). */
export function hitMaterial(hit: RecallHit): RelevantMaterial {
  return { id: hit.id, name: `${hit.title} (${what(hit)} ${hit.id}, ${hit.created})`, text: hit.text || hit.title, score: hit.score };
}

/** A hit as a RelevantQGPTSeed: its id, its text as a seed (named by its title), the passage that best matches the question. */
export function hitSeed(hit: RecallHit, question: string, application: JsonObject): JsonObject {
  const text = hit.text || hit.title;
  const passage = bestPassage(text, question);
  return {
    id: hit.id,
    seed: {
      type: 'SEEDED_ASSET',
      asset: { application, format: { fragment: { string: { raw: text } } }, ...(hit.title ? { metadata: { name: hit.title } } : {}) },
    },
    location: { text: passage.text, start: passage.start, end: passage.end },
  };
}
