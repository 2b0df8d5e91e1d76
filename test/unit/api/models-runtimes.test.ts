// @vitest-environment node
/**
 * Custom models (create, update, scores, delete), load and unload, the model runtimes (Ollama
 * asked for real through a fake Ollama in this test, Foundry as this host has it), the OpenAI
 * models list and a user's OpenAI key: state read back, streamed, kept across a restart; bad
 * input a 400 that changes nothing.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExternalProviderApi, FoundryApi, OllamaApi, OpenAIApi, type Model, type SeededModel } from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../../src/core/copilot/catalogue.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

/** A fake Ollama: its version, its OpenAI-compatible model list and its pull API; every request recorded. */
interface Fake {
  baseUrl: string;
  requests: Array<{ method: string; path: string; body: string; authorization?: string }>;
}
let ollama: Fake;
let server: Server;
/** An address where nothing answers. */
let nothing: string;

beforeAll(async () => {
  const requests: Fake['requests'] = [];
  server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const part of req) body += part;
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      body,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const json = (value: unknown) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
    if (req.url === '/api/version') return json({ version: '0.5.7' });
    if (req.url === '/v1/models')
      return json({ object: 'list', data: [{ id: 'qwen2.5:0.5b', object: 'model', created: 1_700_000_000, owned_by: 'library' }] });
    if (req.url === '/api/pull') {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ status: 'pulling', digest: 'sha256:1', total: 10, completed: 5 })}\n`);
      return res.end(`${JSON.stringify({ status: 'success' })}\n`);
    }
    if (req.url === '/api/delete') return res.writeHead(200).end();
    res.writeHead(404).end('404 page not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ollama = { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  nothing = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const SEED: SeededModel = {
  version: '1',
  created: { value: new Date('2025-01-02T03:04:05.000Z') },
  name: 'My Qwen',
  cloud: false,
  type: 'BALANCED',
  usage: 'CODE_CONVERSATION',
  unique: 'qwen2.5:0.5b',
  foundation: 'QWEN_LATEST',
};

const LOCAL = MODELS.find((model) => !model.cloud)!;
const CLOUD = MODELS.find((model) => model.cloud)!;
const ollamaConfig = (baseUrl: string) => ({ model: { type: 'ollama' as const, baseUrl, model: 'llama3.2' } });

const text = async (response: Response) => [response.status, await response.text()] as const;

describe('custom models', () => {
  it('are created, listed after the catalogue and streamed, updated, scored and deleted; kept across a restart', async () => {
    const t = await setup();
    const stream = sockets(t).open('ws://localhost:1000/models/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the models on open');
    const created = await t.models.modelsCreateNewModel({ seededModel: SEED });
    expect(created).toMatchObject({ name: 'My Qwen', custom: true, cloud: false, downloaded: false, loaded: false, downloading: false });
    const { iterable } = await t.models.modelsSnapshot();
    expect(iterable.map((model) => model.id)).toEqual([...MODELS.map((model) => model.id), created.id]);
    await until(() => stream.frames.length === 2, 'the created model');
    expect(JSON.parse(stream.frames[1]!)).toEqual({ iterable: [{ model: { id: created.id } }] });

    const updated = await t.model.modelUpdate({ model: { ...created, name: 'Renamed', description: 'mine' } });
    expect([updated.name, updated.description]).toEqual(['Renamed', 'mine']);
    await t.model.modelScoresIncrement({ model: created.id, seededScoreIncrement: { model: { reuse: true, searched: true } } });
    await t.model.modelScoresIncrement({ model: created.id, seededScoreIncrement: { models: { reuse: true } } });
    expect((await t.model.modelsSpecificModelSnapshot({ model: created.id })).score).toEqual({
      manual: 0,
      automatic: 0,
      reuse: 2,
      searched: 1,
    });

    const restarted = await setup({ databaseName: t.databaseName });
    const kept = await restarted.model.modelsSpecificModelSnapshot({ model: created.id });
    expect(kept).toEqual(await t.model.modelsSpecificModelSnapshot({ model: created.id }));
    expect(kept.name).toBe('Renamed');

    await restarted.models.modelsDeleteSpecificModel({ model: created.id });
    expect((await restarted.fetch(`${BASE}/model/${created.id}`)).status).toBe(404);
    expect((await restarted.models.modelsSnapshot()).iterable).toHaveLength(MODELS.length);
    expect(restarted.changes.at(-1)).toMatchObject({ collection: 'model', id: created.id, deleted: true });
  });

  it('refuse bad input with a 400 naming it, and change nothing', async () => {
    const t = await setup();
    const created = await t.models.modelsCreateNewModel({ seededModel: SEED });
    const before = await dump(t.databaseName);
    const raw = { ...JSON.parse(JSON.stringify(created)) } as Record<string, unknown>;
    const cases: Array<[string, unknown, string]> = [
      ['/models/create', { ...SEED, created: { value: '2025-01-02T03:04:05.000Z' }, colour: 'red' }, 'seededModel.colour'],
      ['/models/create', { name: 'x' }, 'seededModel.version'],
      ['/models/create', { ...raw, id: undefined, loaded: true }, 'seededModel.loaded'],
      ['/model/update', { ...raw, downloaded: true }, 'model.downloaded is the model'],
      ['/model/update', { ...raw, type: 'FAST' }, 'model.type'],
      ['/model/update', { ...raw, custom: false }, 'model.custom'],
      [
        '/model/update',
        { ...JSON.parse(JSON.stringify(await t.model.modelsSpecificModelSnapshot({ model: CLOUD.id }))), cloud: false },
        'model.cloud',
      ],
      [`/model/${created.id}/scores/increment`, { model: { reuse: 1 } }, 'seededScoreIncrement.model.reuse'],
      [`/model/${created.id}/scores/increment`, { asset: { reuse: true } }, 'seededScoreIncrement.model is required'],
    ];
    for (const [path, body, names] of cases) {
      const [status, message] = await text(await t.fetch(`${BASE}${path}`, jsonPost(body)));
      expect([path, status], message).toEqual([path, 400]);
      expect(message).toContain(names);
    }
    const [status, message] = await text(await t.fetch(`${BASE}/models/${CLOUD.id}/delete`, { method: 'POST' }));
    expect([status, message]).toEqual([400, expect.stringContaining('catalogue model, which cannot be deleted')]);
    expect((await t.fetch(`${BASE}/model/update`, jsonPost({ ...raw, id: 'nope' }))).status).toBe(404);
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('download through the configured Ollama, pulling their unique', async () => {
    const t = await setup(ollamaConfig(ollama.baseUrl));
    const created = await t.models.modelsCreateNewModel({ seededModel: SEED });
    await t.model.modelSpecificModelDownload({ model: created.id });
    await until(() => t.changes.filter((change) => change.id === created.id).length === 2, 'the download kept');
    expect((await t.model.modelsSpecificModelSnapshot({ model: created.id })).downloaded).toBe(true);
    expect(ollama.requests.filter((request) => request.path === '/api/pull').map((request) => JSON.parse(request.body).model)).toContain(
      'qwen2.5:0.5b',
    );
  });
});

describe('load and unload', () => {
  it('load a downloaded local model, kept across a restart; unload one or all', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    for (const [id, names] of [
      [LOCAL.id, 'is not downloaded'],
      [CLOUD.id, 'is a cloud model'],
    ] as const) {
      const [status, message] = await text(await t.fetch(`${BASE}/model/${id}/load`, { method: 'POST' }));
      expect([status, message]).toEqual([400, expect.stringContaining(names)]);
    }
    expect(await dump(t.databaseName)).toBe(before);
    await t.model.modelSpecificModelDownload({ model: LOCAL.id });
    const loaded: Model = await t.model.modelSpecificModelLoad({ model: LOCAL.id });
    expect([loaded.downloaded, loaded.loaded]).toEqual([true, true]);
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await restarted.model.modelsSpecificModelSnapshot({ model: LOCAL.id })).loaded).toBe(true);
    expect((await restarted.model.modelSpecificModelUnload({ model: LOCAL.id })).loaded).toBe(false);
    await restarted.model.modelSpecificModelLoad({ model: LOCAL.id });
    await restarted.models.unloadModels();
    const all = (await restarted.models.modelsSnapshot()).iterable;
    expect(all.filter((model) => model.loaded)).toEqual([]);
    expect(all.find((model) => model.id === LOCAL.id)?.downloaded).toBe(true);
    // Deleting the download unloads it too.
    await restarted.model.modelSpecificModelLoad({ model: LOCAL.id });
    await restarted.models.modelsDeleteSpecificModelCache({ model: LOCAL.id });
    expect(await restarted.model.modelsSpecificModelSnapshot({ model: LOCAL.id })).toMatchObject({ downloaded: false, loaded: false });
  });
});

describe('Ollama', () => {
  it('with none configured: not installed, and an install, update or uninstall is 501 naming why', async () => {
    const t = await setup();
    const api = new OllamaApi(t.configuration);
    expect(await api.ollamaStatusCheck()).toEqual({});
    expect(await api.ollamaInstallsSnapshot()).toEqual({ iterable: [] });
    expect(await api.ollamaUpdatesSnapshot()).toEqual({ iterable: [] });
    for (const path of ['install', 'update', 'uninstall']) {
      const [status, message] = await text(await t.fetch(`${BASE}/ollama/${path}`, { method: 'POST' }));
      expect([status, message]).toEqual([501, expect.stringContaining('no Ollama is configured')]);
      expect(message).toContain('can install, update or remove a program');
    }
    expect((await t.fetch(`${BASE}/ollama/install/x`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/ollama/update/x/cancel`, { method: 'POST' })).status).toBe(404);
    expect((await t.fetch(`${BASE}/ollama/update`, jsonPost({ version: 3 }))).status).toBe(400);
  });

  it('configured: its real version, an install complete at once (kept, listed), its status socket', async () => {
    const t = await setup(ollamaConfig(ollama.baseUrl));
    const api = new OllamaApi(t.configuration);
    const status = await api.ollamaStatusCheck();
    expect(status.installation).toMatchObject({ status: 'COMPLETED', version: '0.5.7', userManaged: true });
    const install = await api.ollamaInstall();
    expect(install).toMatchObject({ status: 'COMPLETED', version: '0.5.7', percentage: 100 });
    expect(await api.ollamaInstallSnapshot({ identifier: install.id! })).toEqual(install);
    expect(await api.ollamaInstallCancel({ identifier: install.id! })).toEqual(install);
    const restarted = await setup({ databaseName: t.databaseName, ...ollamaConfig(ollama.baseUrl) });
    expect(await new OllamaApi(restarted.configuration).ollamaInstallsSnapshot()).toEqual({ iterable: [install] });
    const [code, message] = await text(await t.fetch(`${BASE}/ollama/update`, { method: 'POST' }));
    expect([code, message]).toEqual([501, expect.stringContaining(`the Ollama at ${ollama.baseUrl} is its user's to update`)]);
    const socket = sockets(t).open('ws://localhost:1000/ollama/status/stream');
    await until(() => socket.frames.length === 1, 'the status on open');
    expect(JSON.parse(socket.frames[0]!).installation.version).toBe('0.5.7');
  });

  it('configured but not answering: not installed, and an install is 502 naming it', async () => {
    const t = await setup(ollamaConfig(nothing));
    expect(await new OllamaApi(t.configuration).ollamaStatusCheck()).toEqual({});
    const [status, message] = await text(await t.fetch(`${BASE}/ollama/install`, { method: 'POST' }));
    expect([status, message]).toEqual([502, expect.stringContaining(`the Ollama configured at ${nothing} does not answer`)]);
    expect(await new OllamaApi(t.configuration).ollamaInstallsSnapshot()).toEqual({ iterable: [] });
  });
});

describe('Foundry', () => {
  it('is not installed on this host, and cannot be installed, updated or removed here', async () => {
    const t = await setup(ollamaConfig(ollama.baseUrl));
    const api = new FoundryApi(t.configuration);
    expect(await api.foundryStatusCheck()).toEqual({});
    expect(await api.foundryInstallsSnapshot()).toEqual({ iterable: [] });
    expect(await api.foundryUpdatesSnapshot()).toEqual({ iterable: [] });
    for (const path of ['install', 'update', 'uninstall']) {
      const [status, message] = await text(await t.fetch(`${BASE}/foundry/${path}`, { method: 'POST' }));
      expect([status, message]).toEqual([501, expect.stringContaining('this host has no Foundry Local')]);
    }
    expect((await t.fetch(`${BASE}/foundry/install/x/cancel`, { method: 'POST' })).status).toBe(404);
  });
});

describe('the OpenAI models list and a user’s OpenAI key', () => {
  it('keeps a key without ever answering it, and lists the configured endpoint’s models with it', async () => {
    const t = await setup({ model: { type: 'openai', baseUrl: `${ollama.baseUrl}/v1`, model: 'qwen2.5:0.5b' } });
    const keys = new ExternalProviderApi(t.configuration);
    const created = await keys.externalProviderApiKeyCreate({
      precreatedExternalProviderApiKey: { user: 'u1', openAI: { apiKey: 'sk-secret', apiKeyName: 'work' } },
    });
    expect(created.metadata).toEqual({ globalId: 'u1', openAI: { apiKeyName: 'work' } });
    const updated = await keys.externalProviderApiKeyUpdate({
      preupdatedExternalProviderApiKey: { user: 'u1', openAI: { organizationKey: 'org-1' } },
    });
    expect(updated.metadata.openAI).toEqual({ apiKeyName: 'work', organizationKey: 'org-1' });

    const list = await new OpenAIApi(t.configuration).openAiModelsList({ openAIModelsListInput: { user: 'u1' } });
    expect(list.models.iterable.map((model) => [model.name, model.cloud, model.created.value.toISOString()])).toEqual([
      ['qwen2.5:0.5b', false, '2023-11-14T22:13:20.000Z'],
    ]);
    expect(ollama.requests.at(-1)).toMatchObject({ path: '/v1/models', authorization: 'Bearer sk-secret' });

    const before = await dump(t.databaseName);
    for (const [path, body] of [
      ['create', { user: 'u1', open_AI: { api_key: 'k', colour: 1 } }],
      ['create', { user: '', open_AI: { api_key: 'k' } }],
      ['create', { user: 'u2' }],
      ['update', { user: 'nobody', open_AI: { api_key: 'k' } }],
      ['delete', { user: 'u1', open_AI: 'yes' }],
    ] as const) {
      const status = (await t.fetch(`${BASE}/external_provider/api_key/${path}`, jsonPost(body))).status;
      expect([path, body, status]).toEqual([path, body, path === 'update' ? 404 : 400]);
    }
    expect(await dump(t.databaseName)).toBe(before);

    const deleted = await keys.externalProviderApiKeyDelete({ predeletedExternalProviderApiKey: { user: 'u1' } });
    expect(deleted.metadata).toEqual({ globalId: 'u1' });
    await new OpenAIApi(t.configuration).openAiModelsList({ openAIModelsListInput: { user: 'u1' } });
    expect(ollama.requests.at(-1)?.authorization).toBeUndefined();
  });

  it('asks a configured Ollama’s /v1, and with no endpoint configured is 501 naming what is missing', async () => {
    const withOllama = await setup(ollamaConfig(ollama.baseUrl));
    const list = await new OpenAIApi(withOllama.configuration).openAiModelsList({ openAIModelsListInput: { user: 'u' } });
    expect(list.models.iterable.map((model) => model.unique)).toEqual(['qwen2.5:0.5b']);
    const t = await setup();
    const [status, message] = await text(await t.fetch(`${BASE}/open_ai/models/list`, jsonPost({ user: 'u' })));
    expect([status, message]).toEqual([501, expect.stringContaining('no OpenAI-compatible endpoint is configured')]);
    expect((await t.fetch(`${BASE}/open_ai/models/list`, jsonPost({}))).status).toBe(400);
  });
});
