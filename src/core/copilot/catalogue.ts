/**
 * The models catalogue: the models `GET /models` lists, as Pieces OS lists
 * them to its clients (names, `unique`s and foundations that public clients
 * look up: the Python wrapper sets `GPT-3.5-turbo Chat Model` at start-up,
 * the Neovim plugin defaults to `GPT-4o Chat Model`, the CLI's first run
 * looks for `gemini-2.0-flash-lite-001`, the Sublime plugin for `o4-mini-2025-04-16`
 * and `gpt-4o`, the vanilla copilot example for local LLAMA_2_7B, MISTRAL_7B and
 * PHI_2 models in CPU and GPU variants).
 *
 * The catalogue describes; it answers nothing. Every model id sent to /qgpt is
 * answered by the model adapter configured for it (see copilot.ts), the
 * default adapter for every model that has none of its own. A local model's
 * `unique` is its usual Ollama tag; what a download pulls is the model its
 * adapter names.
 *
 * Ids are fixed (UUID v5 of the `unique` in the namespace MODEL_NAMESPACE), so
 * that a client that kept a model id finds it again, in every browser and
 * after every reset.
 */
import type { ExternalMLProvider, ModelFoundation } from '../enums.js';
import type { JsonObject } from '../validate.js';

/** The namespace of the catalogue ids (UUID v5 of each model's `unique`). */
export const MODEL_NAMESPACE = '9b1c3f8e-5a2d-4e6f-8c7b-0d1e2f3a4b5c';

export interface CatalogueModel {
  id: string;
  name: string;
  unique: string;
  foundation: ModelFoundation;
  provider: ExternalMLProvider;
  /** A cloud model (answered remotely: never downloaded). */
  cloud: boolean;
  /** Local models: the CPU variant (false: the GPU one). */
  cpu?: boolean;
  /** Context window, in tokens. */
  maxTokens: { total: number; input: number; output: number };
  /** Local models: parameters (billions) and download size (bytes). */
  parameters?: number;
  bytes?: number;
  description: string;
}

const GB = 1024 ** 3;

const cloud = (
  id: string,
  name: string,
  unique: string,
  foundation: ModelFoundation,
  provider: ExternalMLProvider,
  total: number,
  description: string,
): CatalogueModel => ({
  id,
  name,
  unique,
  foundation,
  provider,
  cloud: true,
  maxTokens: { total, input: Math.round(total * 0.75), output: Math.round(total * 0.25) },
  description,
});

const local = (
  id: string,
  name: string,
  unique: string,
  foundation: ModelFoundation,
  provider: ExternalMLProvider,
  cpu: boolean,
  parameters: number,
  gigabytes: number,
  total: number,
  description: string,
): CatalogueModel => ({
  id,
  name,
  unique,
  foundation,
  provider,
  cloud: false,
  cpu,
  parameters,
  bytes: Math.round(gigabytes * GB),
  maxTokens: { total, input: Math.round(total * 0.75), output: Math.round(total * 0.25) },
  description,
});

/** Every catalogue model, in the order `GET /models` lists them. */
export const MODELS: readonly CatalogueModel[] = [
  cloud(
    '74e99e9b-597b-5384-acf4-7890477532f6',
    'GPT-3.5-turbo Chat Model',
    'gpt-3.5-turbo',
    'GPT_3.5',
    'OPENAI',
    16_385,
    "OpenAI's GPT-3.5 Turbo, a fast general chat model.",
  ),
  cloud('9a6cd928-dad9-549c-83d6-0ca8a4a4f4db', 'GPT-4 Chat Model', 'gpt-4', 'GPT_4', 'OPENAI', 8_192, "OpenAI's GPT-4."),
  cloud(
    '87928505-1c85-5ae5-be7f-8057a49b4c15',
    'GPT-4o Chat Model',
    'gpt-4o',
    'GPT_4',
    'OPENAI',
    128_000,
    "OpenAI's GPT-4o, with a 128k-token context window.",
  ),
  cloud(
    'bad06fe1-4d04-5312-a253-850c92bafa15',
    'GPT-4o Mini Chat Model',
    'gpt-4o-mini',
    'GPT_4',
    'OPENAI',
    128_000,
    'A smaller, faster GPT-4o.',
  ),
  cloud(
    'e0023b8e-b6b4-5182-a958-be62a0262074',
    'GPT-4 Turbo Chat Model',
    'gpt-4-turbo',
    'GPT_4',
    'OPENAI',
    128_000,
    'A faster GPT-4 with a 128k-token context window.',
  ),
  cloud(
    '23751e61-a53f-5219-92b3-4d8bdb0cd7cb',
    'GPT-4.1 Chat Model',
    'gpt-4.1-2025-04-14',
    'GPT_LATEST',
    'OPENAI',
    1_047_576,
    "OpenAI's GPT-4.1, with a million-token context window.",
  ),
  cloud(
    '34819a1d-a380-50c2-87b2-9a4d971ee3d3',
    'o4-mini Chat Model',
    'o4-mini-2025-04-16',
    'GPT_LATEST',
    'OPENAI',
    200_000,
    "OpenAI's o4-mini, a compact reasoning model.",
  ),
  cloud(
    'a843a5ae-62a3-5883-a11b-f0318a53416c',
    'Gemini-2.0 Flash Lite Chat Model',
    'gemini-2.0-flash-lite-001',
    'GEMINI_2',
    'GOOGLE',
    1_048_576,
    "Google's Gemini 2.0 Flash Lite, quick and economical.",
  ),
  cloud(
    '69a70b66-d4f6-5ff9-8ca5-1d1ba8118008',
    'Gemini-2.0 Flash Chat Model',
    'gemini-2.0-flash',
    'GEMINI_2',
    'GOOGLE',
    1_048_576,
    "Google's Gemini 2.0 Flash.",
  ),
  cloud(
    '544d714e-d2e9-51ee-819b-9003edd3b000',
    'Gemini-1.5 Pro Chat Model',
    'gemini-1.5-pro',
    'GEMINI_1.5',
    'GOOGLE',
    2_097_152,
    "Google's Gemini 1.5 Pro.",
  ),
  cloud(
    '94d13e52-9235-5ef1-8307-f293168adf84',
    'Claude 3.5 Sonnet Chat Model',
    'claude-3-5-sonnet-20241022',
    'CLAUDE_3.5',
    'ANTHROPIC',
    200_000,
    "Anthropic's Claude 3.5 Sonnet.",
  ),
  cloud(
    'e136ba5a-632c-55be-8cc0-07c79560e784',
    'Claude 3.7 Sonnet Chat Model',
    'claude-3-7-sonnet-20250219',
    'CLAUDE_LATEST',
    'ANTHROPIC',
    200_000,
    "Anthropic's Claude 3.7 Sonnet.",
  ),
  cloud(
    'dbe01674-8e7a-563f-975a-87addd8fe0a0',
    'Claude 4 Sonnet Chat Model',
    'claude-sonnet-4-20250514',
    'CLAUDE_LATEST',
    'ANTHROPIC',
    200_000,
    "Anthropic's Claude 4 Sonnet.",
  ),
  local(
    '597c1f91-0e97-56b2-ac37-77dc67c32c2b',
    'Llama-2 7B CPU Chat Model',
    'llama-2-7b-chat.Q4_K_M.gguf',
    'LLAMA_2_7B',
    'META',
    true,
    7,
    3.8,
    4_096,
    "Meta's Llama 2 7B, quantised to run on a CPU.",
  ),
  local(
    'c2251884-f64f-5301-96cd-197999ed8384',
    'Llama-2 7B GPU Chat Model',
    'llama2:7b-chat-q4_K_S',
    'LLAMA_2_7B',
    'META',
    false,
    7,
    3.9,
    4_096,
    "Meta's Llama 2 7B, for a GPU.",
  ),
  local(
    '53055a70-acf9-5dd4-81c4-cba430f51629',
    'Mistral 7B CPU Chat Model',
    'mistral-7b-instruct-v0.1.Q4_K_M.gguf',
    'MISTRAL_7B',
    'UNKNOWN',
    true,
    7,
    4.1,
    4_096,
    "Mistral AI's Mistral 7B Instruct, quantised to run on a CPU.",
  ),
  local(
    'e30aa50d-2a4b-5d44-afe2-c71d0ba58e81',
    'Mistral 7B GPU Chat Model',
    'mistral:7b-instruct-q4_K_S',
    'MISTRAL_7B',
    'UNKNOWN',
    false,
    7,
    4.1,
    4_096,
    "Mistral AI's Mistral 7B Instruct, for a GPU.",
  ),
  local(
    'a3d8039b-1692-59f8-b0e0-aeb39837af34',
    'Phi-2 CPU Chat Model',
    'phi-2.Q4_K_M.gguf',
    'PHI_2',
    'MICROSOFT',
    true,
    2.7,
    1.7,
    2_048,
    "Microsoft's Phi-2, quantised to run on a CPU.",
  ),
  local(
    '64d955ea-faff-5ae0-8441-b9a89524b577',
    'Phi-2 GPU Chat Model',
    'phi:2.7b-chat-v2-q4_K_S',
    'PHI_2',
    'MICROSOFT',
    false,
    2.7,
    1.6,
    2_048,
    "Microsoft's Phi-2, for a GPU.",
  ),
  local(
    '1520bfe1-9e06-5cac-aaee-9ca90b32d68e',
    'Llama-3.2 3B Chat Model',
    'llama3.2:3b-instruct-q4_K_S',
    'LLAMA_LATEST',
    'META',
    false,
    3,
    1.9,
    131_072,
    "Meta's Llama 3.2 3B Instruct.",
  ),
  local(
    '97213bf9-9d07-5ffe-811e-b7e098dbe09d',
    'Qwen-2.5 Coder 7B Chat Model',
    'qwen2.5-coder:7b-instruct-q4_K_S',
    'QWEN_CODER_LATEST',
    'UNKNOWN',
    false,
    7,
    4.2,
    32_768,
    "Alibaba's Qwen 2.5 Coder 7B Instruct, for code.",
  ),
  local(
    '004cd94c-e3b0-593f-9e8d-ba6727ecc88f',
    'Gemma-2 2B Chat Model',
    'gemma2:2b-instruct-q4_K_S',
    'GEMMA_LATEST',
    'GOOGLE',
    false,
    2,
    1.5,
    8_192,
    "Google's Gemma 2 2B Instruct.",
  ),
];

const BY_ID = new Map(MODELS.map((model) => [model.id, model]));

/** The catalogue model with this id. */
export const catalogueModel = (id: string): CatalogueModel | undefined => BY_ID.get(id);

/** The catalogue model an id, a `unique` or a name designates (ids first, then uniques, then names). */
export function findCatalogueModel(key: string): CatalogueModel | undefined {
  return BY_ID.get(key) ?? MODELS.find((model) => model.unique === key) ?? MODELS.find((model) => model.name === key);
}

/** When the catalogue's models were added: every Model's `created`. */
const CATALOGUED = '2025-06-01T00:00:00.000Z';

const readableBytes = (bytes: number) => `${(bytes / GB).toFixed(1)} GB`;

/** What is known of a model here: downloaded (kept), being downloaded (now). */
export interface ModelState {
  downloaded: boolean;
  downloading: boolean;
}

/** The wire Model of a catalogue model in its local state. */
export function modelWire(model: CatalogueModel, state: ModelState): JsonObject {
  return {
    id: model.id,
    version: model.unique,
    created: { value: CATALOGUED },
    name: model.name,
    description: model.description,
    cloud: model.cloud,
    type: 'BALANCED',
    usage: 'CODE_CONVERSATION',
    foundation: model.foundation,
    unique: model.unique,
    provider: model.provider,
    maxTokens: model.maxTokens,
    capabilities: { assets: true, codebases: true, documents: true, websites: true, temporal: false, images: false, videos: false },
    ...(model.cloud
      ? {}
      : {
          downloaded: state.downloaded,
          downloading: state.downloading,
          loaded: false,
          cpu: model.cpu ?? false,
          parameters: model.parameters ?? null,
          ...(model.bytes ? { bytes: { value: model.bytes, readable: readableBytes(model.bytes) } } : {}),
        }),
  };
}
