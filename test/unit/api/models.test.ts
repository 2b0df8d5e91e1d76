// @vitest-environment node
/**
 * ModelsApi and ModelApi: the catalogue clients hard-code, which adapter answers
 * which model, and downloads (with a fake Ollama for real progress) with their
 * progress socket, kept across restarts; bad input changes nothing.
 */
import { createHash } from 'node:crypto';
import { ModelDownloadProgressFromJSON, ModelFoundationEnum, type Model } from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_NAMESPACE, MODELS } from '../../../src/core/copilot/catalogue.js';
import { startFakeOllama, type FakeOllama } from '../../fake-ollama.js';
import { startFakeOpenAi, type FakeOpenAi } from '../../fake-openai.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

let ollama: FakeOllama;
let openai: FakeOpenAi;
beforeAll(async () => {
  [ollama, openai] = await Promise.all([startFakeOllama(), startFakeOpenAi()]);
});
afterAll(() => Promise.all([ollama.close(), openai.close()]));

/** UUID v5 (RFC 4122) of `name` in `namespace`. */
function uuid5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const byName = (models: Model[], name: string) => models.find((m) => m.name === name)!;
const byUnique = (models: Model[], unique: string) => models.find((m) => m.unique === unique)!;
const LLAMA_GPU = MODELS.find((m) => m.foundation === 'LLAMA_2_7B' && !m.cpu)!;
const PHI_CPU = MODELS.find((m) => m.foundation === 'PHI_2' && m.cpu)!;
const GPT4O = MODELS.find((m) => m.unique === 'gpt-4o')!;

/** The frames of a progress socket, decoded. */
const progress = (frames: string[]) => frames.map((f) => ModelDownloadProgressFromJSON(JSON.parse(f)));

describe('the catalogue (GET /models, GET /model/{model})', () => {
  it('lists every model the public clients look up, with exact names, uniques, foundations and flags', async () => {
    const t = await setup();
    const { iterable: models } = await t.models.modelsSnapshot();
    // The Python wrapper sets this name at start-up and raises if it is not among the cloud or downloaded models.
    const gpt35 = byName(models, 'GPT-3.5-turbo Chat Model');
    expect([gpt35.foundation, gpt35.cloud]).toEqual([ModelFoundationEnum.Gpt35, true]);
    expect(models.filter((m) => m.cloud || m.downloaded).map((m) => m.name)).toContain('GPT-3.5-turbo Chat Model');
    // The Neovim plugin's default, the CLI's first-run unique, the Sublime plugin's uniques, a cloud model for C#.
    expect(byName(models, 'GPT-4o Chat Model').cloud).toBe(true);
    for (const unique of ['gemini-2.0-flash-lite-001', 'o4-mini-2025-04-16', 'gpt-4o'])
      expect(byUnique(models, unique)?.cloud, unique).toBe(true);
    expect(models.find((m) => m.cloud)).toBeDefined();
    // The vanilla example: local models by foundation, in CPU and GPU variants, not downloaded.
    for (const foundation of [ModelFoundationEnum.Llama27B, ModelFoundationEnum.Mistral7B, ModelFoundationEnum.Phi2]) {
      const local = models.filter((m) => m.foundation === foundation);
      expect(local.map((m) => m.cpu).sort(), foundation).toEqual([false, true]);
      expect(local.every((m) => m.cloud === false && m.downloaded === false && m.downloading === false)).toBe(true);
    }
    // Ids are fixed: UUID v5 of the unique, the same in every store.
    for (const model of models) expect(model.id, model.name).toBe(uuid5(MODEL_NAMESPACE, model.unique!));
    expect(new Set(models.map((m) => m.id)).size).toBe(models.length);
  });

  it('answers one model by id, and 404 naming an unknown one', async () => {
    const t = await setup();
    const one = await t.model.modelsSpecificModelSnapshot({ model: GPT4O.id });
    expect([one.id, one.name, one.unique]).toEqual([GPT4O.id, 'GPT-4o Chat Model', 'gpt-4o']);
    for (const id of ['gpt-4o', crypto.randomUUID(), 'nope']) {
      const response = await t.fetch(`${BASE}/model/${id}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toBe(`No model with id "${id}": GET /models lists the models.`);
    }
  });

  it('streams the models ids at once, and a change when a download is kept or deleted', async () => {
    const t = await setup();
    const s = sockets(t).open('ws://localhost:1000/models/stream/identifiers');
    await until(() => s.frames.length === 1, 'the snapshot');
    expect(JSON.parse(s.frames[0]!).iterable.map((i: { model: { id: string } }) => i.model.id)).toEqual(MODELS.map((m) => m.id));
    await t.model.modelSpecificModelDownload({ model: PHI_CPU.id });
    await t.models.modelsDeleteSpecificModelCache({ model: PHI_CPU.id, modelDeleteCacheInput: {} });
    await until(() => s.frames.length === 3, 'two changes');
    expect(s.frames.slice(1).map((f) => JSON.parse(f))).toEqual([
      { iterable: [{ model: { id: PHI_CPU.id } }] },
      { iterable: [{ model: { id: PHI_CPU.id } }] },
    ]);
  });
});

describe('the catalogue → adapter mapping', () => {
  it('answers a model id with the adapter mapped to it, every other id (and none) with the default', async () => {
    const t = await setup({ models: { 'gpt-4o': { type: 'openai', baseUrl: openai.baseUrl, model: 'mapped-gpt-4o' } } });
    const ask = async (model?: string) =>
      (await (
        await t.fetch(`${BASE}/qgpt/question`, jsonPost({ query: 'hello there', relevant: { iterable: [] }, ...(model ? { model } : {}) }))
      ).json()) as {
        answers: { iterable: Array<{ text: string }> };
      };
    const before = openai.requests.length;
    expect((await ask(GPT4O.id)).answers.iterable[0]!.text).toBe('Answer to: hello there');
    expect(openai.requests.slice(before).map((r) => r.body.model)).toEqual(['mapped-gpt-4o']);
    for (const other of [MODELS[0]!.id, 'not-a-catalogue-id', undefined]) {
      expect((await ask(other)).answers.iterable[0]!.text, String(other)).toMatch(/^No model is configured/);
    }
    expect(openai.requests.length).toBe(before + 1);
    expect(Object.fromEntries([...(await t.service.modelMapping())].map(([id, a]) => [id, a.description]))).toEqual({
      [GPT4O.id]: `mapped-gpt-4o at ${openai.baseUrl}`,
    });
  });

  it('maps the stream and relevance inputs too, by their model', async () => {
    const t = await setup({ models: { [GPT4O.name]: { type: 'ollama', baseUrl: ollama.baseUrl, model: 'llama3.2:3b' } } });
    const relevance = await (
      await t.fetch(`${BASE}/qgpt/relevance`, jsonPost({ query: 'backoff', model: GPT4O.id, options: { question: true } }))
    ).json();
    expect(relevance.answer.answers.iterable[0].text.trim()).toBe('Ollama llama3.2:3b says: backoff');
  });

  it('switches a model at run time, keeps a configuration across restarts, refuses an unknown model', async () => {
    const t = await setup();
    await t.service.setModel({ type: 'openai', baseUrl: openai.baseUrl, model: 'chosen' }, 'GPT-4o Chat Model');
    expect((await t.service.model(GPT4O.id)).description).toBe(`chosen at ${openai.baseUrl}`);
    expect((await t.service.model()).description).toBe('no model (extractive answers)');
    const again = await setup({ databaseName: t.databaseName });
    expect((await again.service.model(GPT4O.id)).description).toBe(`chosen at ${openai.baseUrl}`);
    await again.service.setModel(undefined, GPT4O.id);
    expect((await again.service.model(GPT4O.id)).description).toBe('no model (extractive answers)');
    await expect(again.service.setModel({ type: 'extractive' }, 'GPT-9')).rejects.toThrow(
      'model "GPT-9" is not a model of the catalogue (GET /models lists them).',
    );
    await expect(setup({ models: { 'GPT-9': { type: 'extractive' } } })).rejects.toThrow(/"GPT-9" is not a model of the catalogue/);
  });
});

describe('downloads', () => {
  it('completes at once where nothing is to be fetched: INITIALIZED, COMPLETED, then downloaded, kept across restarts', async () => {
    const t = await setup();
    const socket = sockets(t).open(`ws://localhost:1000/model/${PHI_CPU.id}/download/progress`);
    await until(() => socket.events.includes('open'), 'the socket');
    const model = await t.model.modelSpecificModelDownload({ model: PHI_CPU.id });
    expect([model.downloaded, model.downloading]).toEqual([true, false]);
    await until(() => socket.frames.length === 2, 'the frames');
    expect(progress(socket.frames)).toEqual([
      { status: 'INITIALIZED', percentage: 0 },
      { status: 'COMPLETED', percentage: 100 },
    ]);
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await restarted.model.modelsSpecificModelSnapshot({ model: PHI_CPU.id })).downloaded).toBe(true);
    expect((await restarted.models.modelsSnapshot()).iterable.filter((m) => m.downloaded).map((m) => m.id)).toEqual([PHI_CPU.id]);
  });

  it('downloads again as a no-op 200, and delete-cache makes it not downloaded', async () => {
    const t = await setup();
    await t.model.modelSpecificModelDownload({ model: PHI_CPU.id });
    const socket = sockets(t).open(`ws://localhost:1000/model/${PHI_CPU.id}/download/progress`);
    await until(() => socket.events.includes('open'), 'the socket');
    const before = await dump(t.databaseName);
    const again = await t.fetch(`${BASE}/model/${PHI_CPU.id}/download`, { method: 'POST' });
    expect(again.status).toBe(200);
    expect((await again.json()).downloaded).toBe(true);
    expect(await dump(t.databaseName)).toBe(before);
    expect(socket.frames).toEqual([]);
    expect(await t.models.modelsDeleteSpecificModelCache({ model: PHI_CPU.id, modelDeleteCacheInput: {} })).toEqual({
      model: { id: PHI_CPU.id },
    });
    expect((await t.model.modelsSpecificModelSnapshot({ model: PHI_CPU.id })).downloaded).toBe(false);
    // Deleting what is not downloaded changes nothing.
    const after = await dump(t.databaseName);
    await t.models.modelsDeleteSpecificModelCache({ model: PHI_CPU.id, modelDeleteCacheInput: {} });
    expect(await dump(t.databaseName)).toBe(after);
  });

  it('pulls a model mapped to Ollama with its real progress, and delete-cache deletes it there', async () => {
    const t = await setup({ models: { [LLAMA_GPU.id]: { type: 'ollama', baseUrl: ollama.baseUrl, model: 'llama2:7b' } } });
    const socket = sockets(t).open(`ws://localhost:1000/model/${LLAMA_GPU.id}/download/progress`);
    await until(() => socket.events.includes('open'), 'the socket');
    const started = await t.model.modelSpecificModelDownload({ model: LLAMA_GPU.id });
    expect(started.downloading || started.downloaded).toBe(true);
    await until(() => progress(socket.frames).some((f) => f.status === 'COMPLETED'), 'the completion');
    const frames = progress(socket.frames);
    expect(frames[0]).toEqual({ status: 'INITIALIZED', percentage: 0 });
    expect(frames.at(-1)).toEqual({ status: 'COMPLETED', percentage: 100 });
    const middle = frames.slice(1, -1);
    expect(middle.length).toBeGreaterThan(0);
    expect(middle.every((f) => f.status === 'IN-PROGRESS' && f.percentage! >= 0 && f.percentage! <= 100)).toBe(true);
    expect(middle.map((f) => f.percentage)).toEqual([...middle.map((f) => f.percentage!)].sort((a, b) => a - b));
    expect(ollama.requests.filter((r) => r.path === '/api/pull').at(-1)!.body).toEqual({ model: 'llama2:7b', stream: true });
    expect(ollama.pulled.has('llama2:7b')).toBe(true);
    expect((await t.model.modelsSpecificModelSnapshot({ model: LLAMA_GPU.id })).downloaded).toBe(true);
    await t.models.modelsDeleteSpecificModelCache({ model: LLAMA_GPU.id, modelDeleteCacheInput: {} });
    expect(ollama.pulled.has('llama2:7b')).toBe(false);
    expect((await t.model.modelsSpecificModelSnapshot({ model: LLAMA_GPU.id })).downloaded).toBe(false);
  });

  it('a socket opened mid-download gets the running download’s last frame first', async () => {
    const t = await setup({ models: { [LLAMA_GPU.id]: { type: 'ollama', baseUrl: ollama.baseUrl, model: 'slow:llama2' } } });
    await t.model.modelSpecificModelDownload({ model: LLAMA_GPU.id });
    const first = sockets(t).open(`ws://localhost:1000/model/${LLAMA_GPU.id}/download/progress`);
    await until(() => first.frames.length > 0, 'a frame');
    const late = sockets(t).open(`ws://localhost:1000/model/${LLAMA_GPU.id}/download/progress`);
    await until(() => late.frames.length > 0, 'the late socket’s first frame');
    expect(['INITIALIZED', 'IN-PROGRESS']).toContain(progress(late.frames)[0]!.status);
    expect((await t.model.modelsSpecificModelSnapshot({ model: LLAMA_GPU.id })).downloading).toBe(true);
    await t.model.modelSpecificModelDownloadCancel({ model: LLAMA_GPU.id });
    await until(() => progress(late.frames).at(-1)!.status === 'CANCELED', 'the cancel');
  });

  it('cancel stops a running pull (CANCELED, not downloaded); a failed pull ends FAILED and keeps nothing', async () => {
    for (const [name, end] of [
      ['slow:llama2', 'CANCELED'],
      ['broken:llama2', 'FAILED'],
      ['missing:llama2', 'FAILED'],
      ['cut:llama2', 'FAILED'],
    ] as const) {
      const t = await setup({ models: { [LLAMA_GPU.id]: { type: 'ollama', baseUrl: ollama.baseUrl, model: name } } });
      const socket = sockets(t).open(`ws://localhost:1000/model/${LLAMA_GPU.id}/download/progress`);
      await until(() => socket.events.includes('open'), 'the socket');
      const before = await dump(t.databaseName);
      await t.model.modelSpecificModelDownload({ model: LLAMA_GPU.id });
      if (end === 'CANCELED') {
        await until(() => progress(socket.frames).some((f) => f.status === 'IN-PROGRESS'), 'some progress');
        const canceled = await t.model.modelSpecificModelDownloadCancel({ model: LLAMA_GPU.id });
        expect(canceled.downloaded).toBe(false);
      }
      await until(() => ['CANCELED', 'FAILED', 'COMPLETED'].includes(progress(socket.frames).at(-1)?.status ?? ''), `the end of ${name}`);
      expect(progress(socket.frames).at(-1), name).toEqual({ status: end });
      const model = await t.model.modelsSpecificModelSnapshot({ model: LLAMA_GPU.id });
      expect([model.downloaded, model.downloading], name).toEqual([false, false]);
      expect(await dump(t.databaseName), name).toBe(before);
    }
  });

  it('refuses bad input and changes nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const cases: Array<[string, RequestInit, number, RegExp]> = [
      [
        `/model/${crypto.randomUUID()}/download`,
        { method: 'POST' },
        404,
        /^No model with id "[0-9a-f-]+": GET \/models lists the models\.$/,
      ],
      [`/model/gpt-4o/download`, { method: 'POST' }, 404, /^No model with id "gpt-4o"/],
      [
        `/model/${GPT4O.id}/download`,
        { method: 'POST' },
        400,
        /^GPT-4o Chat Model \(.*\) is a cloud model: it is answered remotely and has nothing to download\.$/,
      ],
      [`/model/${crypto.randomUUID()}/download/cancel`, { method: 'POST' }, 404, /^No model with id/],
      [`/models/${crypto.randomUUID()}/delete/cache`, jsonPost({}), 404, /^No model with id/],
      [
        `/models/${PHI_CPU.id}/delete/cache`,
        jsonPost({ force: true }),
        400,
        /modelDeleteCacheInput\.force is not a field of ModelDeleteCacheInput/,
      ],
      [`/models/${PHI_CPU.id}/delete/cache`, jsonPost([1]), 400, /modelDeleteCacheInput must be a JSON object/],
      [`/models/${PHI_CPU.id}/delete/cache`, jsonPost('{"schema":'), 400, /not valid JSON/],
      [`/models/${GPT4O.id}/delete/cache`, jsonPost({}), 400, /is a cloud model: it has no downloaded files to delete/],
      [`/model/${PHI_CPU.id}/download/progress`, {}, 426, /is a WebSocket/],
      [`/model/update`, jsonPost({}), 400, /^model\.id is required/],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect(response.status, path).toBe(status);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text(), path).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('refuses a progress socket for an unknown model as a refused connection', async () => {
    const t = await setup();
    const socket = sockets(t).open(`ws://localhost:1000/model/${crypto.randomUUID()}/download/progress`);
    await until(() => socket.events.includes('close'), 'the close');
    expect(socket.events).toEqual(['error', 'close']);
  });
});
