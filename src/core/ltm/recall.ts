/**
 * Long-term memory's retrieval: the workstream summaries and workstream events that best match a
 * question (and its topics), inside a time range and from the applications asked for, ranked by
 * relevance (BM25F over their titles, texts and sources, src/core/relevance.ts) in the index the
 * copilot keeps of them (memory.ts).
 *
 * The range and the application filter: a document counts when its `created` is inside the range
 * (both ends inclusive; an open end reaches as far as it goes). The applications keep the events
 * whose source application (what the event shows, or its Application's name) is one of them, case
 * aside; summaries have no application and are kept.
 */
import type { ServiceContext } from '../context.js';
import { badRequest } from '../http.js';
import type { RelevanceIndex } from '../relevance.js';
import type { MemoryDocument } from './document.js';
import type { DocumentMeta } from './document.js';

export interface RecallQuery {
  question: string;
  /** Extra terms, weighed like the question. */
  topics?: string[];
  /** ISO times, inclusive; absent: all time. */
  range?: { from?: string; to?: string };
  /** Only events whose source application name matches (case-insensitive). */
  applications?: string[];
  /** Default 10. */
  limit?: number;
}

export interface RecallHit {
  kind: 'workstreamSummary' | 'workstreamEvent';
  id: string;
  /** > 0, higher first; ties by newer created, then id. */
  score: number;
  /** ISO. */
  created: string;
  /** Summary name / event's window title or application. */
  title: string;
  /** The summary's text / the event's readable text. */
  text: string;
  /** Event's source application name. */
  application?: string;
  url?: string;
}

export const RECALL_LIMIT = 10;
/** The most hits one recall returns. */
const RECALL_MAX = 1_000;

/** A recall query checked: its terms as one text, the range in ms, the applications lower-cased. */
interface RecallPlan {
  terms: string;
  from: number;
  to: number;
  applications: ReadonlySet<string> | null;
  limit: number;
}

function instant(value: unknown, path: string, otherwise: number): number {
  if (value === undefined) return otherwise;
  const at = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(at)) throw badRequest(`${path} must be an ISO time (e.g. 2026-11-29T09:00:00.000Z), got ${JSON.stringify(value)}.`);
  return at;
}

const strings = (value: unknown, path: string): string[] => {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw badRequest(`${path} must be a list of strings.`);
  return value as string[];
};

/** Checks a query (a 400 HttpError naming what is wrong) into what a recall needs. */
function recallPlan(query: RecallQuery): RecallPlan {
  if (typeof query !== 'object' || query === null) throw badRequest('The recall query must be an object with a question.');
  if (typeof query.question !== 'string') throw badRequest('recall.question must be a string.');
  const topics = strings(query.topics, 'recall.topics');
  const applications = strings(query.applications, 'recall.applications');
  const range = query.range ?? {};
  if (typeof range !== 'object' || range === null) throw badRequest('recall.range must be an object ({from?, to?}).');
  const from = instant(range.from, 'recall.range.from', -Infinity);
  const to = instant(range.to, 'recall.range.to', Infinity);
  if (from > to) throw badRequest(`recall.range.from (${range.from}) is after recall.range.to (${range.to}).`);
  const limit = query.limit ?? RECALL_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > RECALL_MAX)
    throw badRequest(`recall.limit must be a whole number from 1 to ${RECALL_MAX}, got ${JSON.stringify(query.limit)}.`);
  return {
    terms: [query.question, ...topics].join('\n'),
    from,
    to,
    applications: applications.length ? new Set(applications.map((name) => name.toLowerCase())) : null,
    limit,
  };
}

/** Whether a document is inside the plan's range and of its applications. */
function admitted(document: DocumentMeta, plan: RecallPlan): boolean {
  if (plan.from !== -Infinity || plan.to !== Infinity) {
    if (!(document.at >= plan.from && document.at <= plan.to)) return false;
  }
  if (plan.applications && document.kind === 'workstreamEvent') {
    return (document.applications ?? []).some((name) => plan.applications!.has(name));
  }
  return true;
}

/** Higher score first; equal scores: the newer first, then by id. */
export const byRecall = (a: RecallHit, b: RecallHit): number =>
  b.score - a.score || (a.created < b.created ? 1 : a.created > b.created ? -1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A document as a hit with its score. */
function hitOf(document: MemoryDocument, score: number): RecallHit {
  return {
    kind: document.kind,
    id: document.id,
    score,
    created: document.created,
    title: document.title,
    text: document.text,
    ...(document.application !== undefined ? { application: document.application } : {}),
    ...(document.url !== undefined ? { url: document.url } : {}),
  };
}

interface Candidate {
  key: string;
  id: string;
  score: number;
  at: number;
}

/** Higher score first; equal scores: the newer first (a document without a time last), then by id. */
const byCandidate = (a: Candidate, b: Candidate): number =>
  b.score - a.score ||
  (Number.isNaN(b.at) ? -Infinity : b.at) - (Number.isNaN(a.at) ? -Infinity : a.at) ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The best `limit` candidates, in order: a bounded insertion (one pass; most matches lose to the worst kept on their score alone). */
class Best {
  readonly list: Candidate[] = [];
  constructor(readonly limit: number) {}
  /** Whether a match of this score could enter (cheap: checked before its candidate is made). */
  could(score: number): boolean {
    return this.list.length < this.limit || score >= this.list[this.limit - 1]!.score;
  }
  add(candidate: Candidate): void {
    const { list, limit } = this;
    if (list.length === limit && byCandidate(candidate, list[limit - 1]!) >= 0) return;
    let at = Math.min(list.length, limit - 1);
    while (at > 0 && byCandidate(candidate, list[at - 1]!) < 0) {
      list[at] = list[at - 1]!;
      at--;
    }
    list[at] = candidate;
  }
}

const candidateOf = (key: string, score: number, at: number): Candidate => ({ key, id: key.slice(key.indexOf('/') + 1), score, at });

/**
 * Ranks the documents of an index against a plan: every match inside the range and of the
 * applications, best first, the first `limit` of them read whole. One deleted meanwhile is passed
 * over (then the matches are ranked again, leaving out those already read). The scores of a term
 * depend on how many of every summary and event hold it, not only those in the range.
 */
async function rank(
  index: RelevanceIndex,
  meta: (key: string) => DocumentMeta | undefined,
  documents: (keys: readonly string[]) => Promise<Array<MemoryDocument | undefined>>,
  plan: RecallPlan,
): Promise<RecallHit[]> {
  const matches = index.search(plan.terms, { unordered: true });
  const hits: RecallHit[] = [];
  const passed = new Set<string>();
  while (hits.length < plan.limit) {
    const best = new Best(plan.limit - hits.length);
    for (const hit of matches) {
      if (hit.score <= 0 || !best.could(hit.score) || passed.has(hit.id)) continue;
      const known = meta(hit.id);
      if (known && admitted(known, plan)) best.add(candidateOf(hit.id, hit.score, known.at));
    }
    if (best.list.length === 0) break;
    const read = await documents(best.list.map((candidate) => candidate.key));
    best.list.forEach((candidate, i) => {
      passed.add(candidate.key);
      const document = read[i];
      if (document) hits.push(hitOf(document, candidate.score));
    });
  }
  return hits;
}

/**
 * The workstream summaries and events that best match the question and topics, inside the range
 * and of the applications asked for: at most `limit` (default 10), best first. A bad query is a
 * 400 HttpError.
 */
export async function recall(service: ServiceContext, query: RecallQuery): Promise<RecallHit[]> {
  const plan = recallPlan(query);
  const { memory } = service.copilot;
  const { index, meta } = await memory.current();
  return rank(index, meta, (keys) => memory.documents(keys), plan);
}
