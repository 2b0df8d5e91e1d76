/**
 * Handlers of OpenAIApi and ExternalProviderApi: the models an OpenAI-compatible endpoint offers,
 * and a user's own OpenAI key.
 *
 * - openAiModelsList asks the configured OpenAI-compatible endpoint (a model option
 *   `{type: 'openai', baseUrl}`, else a configured Ollama's `/v1`) for its `GET /models`, with
 *   the option's key, else the key the user kept here; with none configured, 501 naming what is
 *   missing.
 * - The api key operations keep a user's OpenAI key (its name and organization with it) in the
 *   store; a read never gives the key back (the metadata answered names it, without it).
 */
import type { OperationContext, ServiceContext } from '../context.js';
import type { ModelEndpoint } from '../copilot/model.js';
import { badRequest, clip, HttpError, readJson, reply } from '../http.js';
import { checkShape } from '../../shared/shapes.js';
import { boolean, embeddedSchema, knownKeys, object, optional, required, type JsonObject } from '../validate.js';

/** Where the users' OpenAI metadata is kept: user → Auth0OpenAIUserMetadata (wire keys, without `schema`). */
const KEYS = 'externalProviderApiKeys';

type Kept = Record<string, JsonObject>;

const kept = async (service: ServiceContext) => (await service.storage.getMeta<Kept>(KEYS)) ?? {};

/** A non-empty user id. */
function user(body: JsonObject, path: string): string {
  const id = required(body, 'user', path, (v, p) => {
    if (typeof v !== 'string' || !v.trim()) throw badRequest(`${p} must be a user id (a non-empty string).`);
    return v;
  });
  return id;
}

/** The Auth0UserMetadata answered for a user: their OpenAI key's name and organization, never the key. */
function metadata(id: string, openAi: JsonObject | undefined): JsonObject {
  const { api_key: _key, ...shown } = openAi ?? {};
  return { global_id: id, ...(openAi ? { open_AI: shown } : {}) };
}

/** A body's `open_AI`: strictly an Auth0OpenAIUserMetadata, kept without its schema. */
function openAiMetadata(body: JsonObject, path: string): JsonObject | undefined {
  const value = body.open_AI;
  if (value === undefined) return undefined;
  const problem = checkShape('Auth0OpenAIUserMetadata', value, `${path}.open_AI`);
  if (problem) throw badRequest(`${problem}.`);
  const { schema: _schema, ...fields } = value as JsonObject;
  for (const [key, v] of Object.entries(fields))
    if (typeof v === 'string' && !v.trim()) throw badRequest(`${path}.open_AI.${key} must not be empty.`);
  return fields;
}

async function body(context: OperationContext, path: string, model: string): Promise<JsonObject> {
  const sent = await readJson(context.request, context.service.maxBodyBytes);
  if (sent === undefined) throw badRequest(`The request body is required: send a ${model}.`);
  const input = object(sent, path);
  knownKeys(input, ['schema', 'user', 'open_AI'], path, model);
  optional(input, 'schema', path, embeddedSchema);
  return input;
}

/** externalProviderApiKeyCreate: the user's OpenAI key (with its name, organization) is kept. */
export async function externalProviderApiKeyCreate(context: OperationContext) {
  const path = 'precreatedExternalProviderApiKey';
  const input = await body(context, path, 'PrecreatedExternalProviderApiKey');
  const id = user(input, path);
  const openAi = openAiMetadata(input, path);
  if (!openAi?.api_key) throw badRequest(`${path}.open_AI.api_key is required: the key to keep.`);
  await context.service.storage.updateMeta<Kept>(KEYS, (all) => ({ ...all, [id]: openAi }));
  return reply({ metadata: metadata(id, openAi) });
}

/** externalProviderApiKeyUpdate: the fields sent replace the user's kept ones (a key must be kept already). */
export async function externalProviderApiKeyUpdate(context: OperationContext) {
  const path = 'preupdatedExternalProviderApiKey';
  const input = await body(context, path, 'PreupdatedExternalProviderApiKey');
  const id = user(input, path);
  const openAi = openAiMetadata(input, path) ?? {};
  const updated = await context.service.storage.updateMeta<Kept>(KEYS, (all) => {
    const current = all?.[id];
    if (!current)
      throw new HttpError(
        404,
        `No OpenAI key is kept for user ${clip(JSON.stringify(id))}: POST /external_provider/api_key/create keeps one.`,
      );
    return { ...all, [id]: { ...current, ...openAi } };
  });
  return reply({ metadata: metadata(id, updated[id]) });
}

/** externalProviderApiKeyDelete: the user's OpenAI key is forgotten (unless `open_AI` is false); answered as what is kept then. */
export async function externalProviderApiKeyDelete(context: OperationContext) {
  const path = 'predeletedExternalProviderApiKey';
  const input = await body(context, path, 'PredeletedExternalProviderApiKey');
  const id = user(input, path);
  const openAi = optional(input, 'open_AI', path, boolean) ?? true;
  const all = openAi
    ? await context.service.storage.updateMeta<Kept>(KEYS, (current) => {
        const { [id]: _gone, ...rest } = current ?? {};
        return rest;
      })
    : await kept(context.service);
  return reply({ metadata: metadata(id, all[id]) });
}

/** The OpenAI-compatible endpoint configured: an OpenAI one, else a configured Ollama's. */
async function openAiEndpoint(service: ServiceContext): Promise<ModelEndpoint | undefined> {
  const endpoints = await service.copilot.endpoints();
  const openAi = endpoints.find((endpoint) => endpoint.type === 'openai');
  if (openAi) return { ...openAi, baseUrl: openAi.baseUrl.replace(/\/+$/, '') };
  const ollama = endpoints.find((endpoint) => endpoint.type === 'ollama');
  return ollama && { ...ollama, baseUrl: `${ollama.baseUrl.replace(/\/+$/, '')}/v1` };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** openAiModelsList: the models the configured OpenAI-compatible endpoint lists (`GET <base>/models`), as SeededModels. */
export async function openAiModelsList(context: OperationContext) {
  const { service } = context;
  const path = 'openAIModelsListInput';
  const sent = await readJson(context.request, service.maxBodyBytes);
  if (sent === undefined) throw badRequest('The request body is required: send an OpenAIModelsListInput ({"user": …}).');
  const input = object(sent, path);
  knownKeys(input, ['schema', 'user'], path, 'OpenAIModelsListInput');
  optional(input, 'schema', path, embeddedSchema);
  const id = user(input, path);
  const endpoint = await openAiEndpoint(service);
  if (!endpoint)
    throw new HttpError(
      501,
      'POST /open_ai/models/list is the Pieces OS operation OpenAIApi.openAiModelsList, which this service cannot do as configured: no OpenAI-compatible endpoint is configured (a model option {"type": "openai", "baseUrl": "https://api.openai.com/v1", "model": …, "apiKey": …}, or an Ollama), and the list is that endpoint’s.',
    );
  const apiKey = endpoint.apiKey ?? (await kept(service))[id]?.api_key;
  const url = `${endpoint.baseUrl}/models`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Accept: 'application/json', ...(typeof apiKey === 'string' ? { Authorization: `Bearer ${apiKey}` } : {}) },
    });
  } catch (error) {
    throw new HttpError(502, `The model endpoint ${url} could not be reached: ${(error as Error).message}.`);
  }
  const text = await response.text().catch(() => '');
  if (!response.ok)
    throw new HttpError(502, `The model endpoint ${url} answered ${response.status}: ${clip(text.trim() || 'no message', 500)}`);
  let listed: unknown;
  try {
    listed = JSON.parse(text);
  } catch {
    throw new HttpError(502, `The model endpoint ${url} answered something that is not JSON: ${clip(text, 200)}`);
  }
  const data = (listed as { data?: unknown }).data;
  if (!Array.isArray(data)) throw new HttpError(502, `The model endpoint ${url} answered no list of models (\`data\`).`);
  const cloud = !LOOPBACK.has(new URL(url).hostname);
  const openAi = new URL(url).hostname === 'api.openai.com';
  const now = service.clock.now().toISOString();
  const iterable = data
    .filter((model): model is { id: string; created?: unknown } => typeof (model as { id?: unknown })?.id === 'string')
    .map((model) => ({
      version: model.id,
      created: { value: typeof model.created === 'number' ? new Date(model.created * 1000).toISOString() : now },
      name: model.id,
      cloud,
      type: 'BALANCED',
      usage: 'CODE_CONVERSATION',
      unique: model.id,
      ...(openAi ? { provider: 'OPENAI' } : {}),
    }));
  return reply({ models: { iterable } });
}
