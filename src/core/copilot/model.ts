/**
 * The copilot's pluggable model: an adapter turns a question, the material relevant to it and the
 * conversation into answer text, in chunks. The default needs no model (extractive answers).
 */
import { number, object, oneOf, optional, required, string } from '../validate.js';
import { badRequest } from '../http.js';
import { bestPassage, RelevanceIndex } from '../relevance.js';

export type Role = 'USER' | 'ASSISTANT' | 'SYSTEM' | 'UNKNOWN';

export interface ChatMessage {
  role: Role;
  text: string;
}

/** A piece of material to answer from: a stored asset, a seed the client sent, a message. */
export interface RelevantMaterial {
  id?: string;
  /** A file name, e.g. `debounce.ts`. */
  name?: string;
  /** A language or file extension, e.g. `ts`. */
  language?: string;
  text: string;
  /** Its relevance score, when it was ranked. */
  score?: number;
}

export interface AnswerRequest {
  query: string;
  /** Material found relevant to the query, best first. */
  relevant: readonly RelevantMaterial[];
  /** The conversation so far, oldest first (without the query itself). */
  messages: readonly ChatMessage[];
  /** Aborted when the answer is stopped: the adapter stops reading and throws. */
  signal: AbortSignal;
  /**
   * Optional: the adapter calls it when it has yielded every chunk it has and is about to wait
   * for its model (e.g. before each network read), so that the chunks yielded since can be sent
   * on together at once. An adapter that never calls it is answered just the same.
   */
  waiting?: () => void;
}

/** Where an adapter's model is served: what asks that server itself (Ollama's status, the OpenAI models list) reads it. */
export interface ModelEndpoint {
  type: 'openai' | 'ollama';
  /** The API base (OpenAI-compatible, e.g. `https://api.openai.com/v1`) or Ollama's address (`http://127.0.0.1:11434`). */
  baseUrl: string;
  model: string;
  apiKey?: string;
}

export interface ModelAdapter {
  /** A short description for messages and the demo, e.g. `llama3.2 at http://127.0.0.1:11434/v1`. */
  readonly description: string;
  /** The server it asks, for an adapter made from a configuration. */
  readonly endpoint?: ModelEndpoint;
  /** Yields the answer's text in chunks; throws a ModelError when the model fails. */
  answer(request: AnswerRequest): AsyncIterable<string>;
  /**
   * Fetches the model where it runs (a local model's download), reporting its progress as a
   * fraction from 0 to 1; throws a ModelError when it fails, the signal's reason when it is
   * stopped. Absent: there is nothing to fetch (a download completes at once).
   */
  pull?(signal: AbortSignal, progress: (fraction: number) => void): Promise<void>;
  /** Removes what `pull` fetched (a downloaded model's files); throws a ModelError when it fails. */
  remove?(): Promise<void>;
}

/** A pull that reports its progress (see ModelAdapter.pull). */
export type Pull = NonNullable<ModelAdapter['pull']>;

/** A model that failed: its message (the endpoint's own, when it gave one) is what clients see. */
export class ModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface OpenAiModelConfig {
  type: 'openai';
  /** The API base, e.g. `http://127.0.0.1:11434/v1` (Ollama) or `https://api.openai.com/v1`. */
  baseUrl: string;
  /** The model name the endpoint knows, e.g. `llama3.2`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string;
  temperature?: number;
  /** Most tokens to generate (`max_tokens`). */
  maxTokens?: number;
}

/**
 * A model served by Ollama: answers through its OpenAI-compatible endpoint
 * (`<baseUrl>/v1`), downloads through its pull API (`POST <baseUrl>/api/pull`)
 * with real progress, and a deleted download is removed there (`DELETE <baseUrl>/api/delete`).
 */
export interface OllamaModelConfig extends Omit<OpenAiModelConfig, 'type' | 'apiKey'> {
  type: 'ollama';
  /** Ollama's address, e.g. `http://127.0.0.1:11434`. */
  baseUrl: string;
}

/** A model as plain data, so that a page can send it to the worker. */
export type ModelConfig = { type: 'extractive' } | OpenAiModelConfig | OllamaModelConfig;

/** Validates a model configuration (from a page message or a host option). */
export function parseModelConfig(value: unknown, path = 'model'): ModelConfig {
  const config = object(value, path);
  const type = required(config, 'type', path, (v, p) => oneOf(v, ['extractive', 'openai', 'ollama'] as const, p));
  if (type === 'extractive') return { type };
  const baseUrl = required(config, 'baseUrl', path, string);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw badRequest(`${path}.baseUrl must be an http(s) URL, not ${JSON.stringify(baseUrl)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badRequest(`${path}.baseUrl must be an http(s) URL, not ${JSON.stringify(baseUrl)}.`);
  }
  const model = required(config, 'model', path, string);
  if (!model.trim()) throw badRequest(`${path}.model must name a model.`);
  const apiKey = type === 'openai' ? optional(config, 'apiKey', path, string) : undefined;
  const temperature = optional(config, 'temperature', path, number);
  const maxTokens = optional(config, 'maxTokens', path, number);
  return {
    type,
    baseUrl,
    model,
    ...(apiKey ? { apiKey } : {}),
    ...(temperature === undefined ? {} : { temperature }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
  } as ModelConfig;
}

const QUOTED = 3;

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The answer was stopped.', 'AbortError');
}

/** The extractive answer's text, one chunk per line. */
export function extractiveAnswer(request: Omit<AnswerRequest, 'signal'>): string[] {
  const candidates = [
    ...request.relevant.map((material, i) => ({ key: `r${String(i).padStart(6, '0')}`, material, message: undefined })),
    ...request.messages
      .filter((message) => message.text.trim() && message.role !== 'USER')
      .map((message, i) => ({ key: `m${String(i).padStart(6, '0')}`, material: { text: message.text } as RelevantMaterial, message })),
  ];
  const index = new RelevanceIndex();
  for (const { key, material, message } of candidates) {
    index.set({
      id: key,
      kind: message ? 'message' : 'material',
      fields: {
        text: material.text,
        ...(material.name ? { name: material.name } : {}),
        ...(material.language ? { language: material.language } : {}),
      },
    });
  }
  const byKey = new Map(candidates.map((c) => [c.key, c]));
  const best = index.search(request.query, { limit: QUOTED }).map((hit) => byKey.get(hit.id)!);
  const lines = [
    'No model is configured, so this answer quotes the stored material that best matches your question instead of generating one.',
    '',
  ];
  if (best.length === 0) {
    lines.push(`Nothing stored matches “${request.query.trim()}”.`);
  }
  for (const [i, { material, message }] of best.entries()) {
    const passage = bestPassage(material.text, request.query).text.replace(/\s+$/, '');
    if (message) {
      lines.push(`${i === 0 ? 'Best match' : 'Also relevant'}: an earlier ${message.role.toLowerCase()} message in this conversation:`, '');
      lines.push(...passage.split('\n').map((line) => `> ${line}`), '');
    } else {
      const label = material.name ? `**${material.name}**` : 'a seed you sent';
      lines.push(`${i === 0 ? 'Best match' : 'Also relevant'}: ${label}${material.language ? ` (${material.language})` : ''}:`, '');
      lines.push(`\`\`\`${material.language ?? ''}`, ...passage.split('\n'), '```', '');
    }
  }
  lines.push('To get generated answers, configure an OpenAI-compatible model endpoint (for example a local Ollama).');
  return lines.map((line, i) => (i < lines.length - 1 ? `${line}\n` : line));
}

/** The default adapter: deterministic, no model; quotes the best-matching material. */
export const extractiveModel: ModelAdapter = {
  description: 'no model (extractive answers)',
  async *answer(request) {
    for (const chunk of extractiveAnswer(request)) {
      if (request.signal.aborted) throw abortError(request.signal);
      yield chunk;
      // Let a stop or other requests in between chunks.
      await Promise.resolve();
    }
  },
};
