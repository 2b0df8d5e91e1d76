import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ApplicationNameEnum,
  ConversationTypeEnum,
  instanceOfQGPTQuestionOutput,
  instanceOfQGPTRelevanceOutput,
  PlatformEnum,
  PrivacyEnum,
  QGPTApi,
  QGPTQuestionOutputFromJSON,
  QGPTRelevanceOutputFromJSON,
  SeedTypeEnum,
  type RelevantQGPTSeed,
} from '@pieces.app/pieces-os-client';
import type { ModelAdapter } from '../../../src/core/copilot/model.js';
import { ModelError } from '../../../src/core/copilot/model.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { startFakeOpenAi } from '../../fake-openai.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';

const RETRY = SAMPLE_ASSETS.find((a) => a.name === 'retry.py')!;

async function post(t: Awaited<ReturnType<typeof setup>>, path: string, body: unknown) {
  const response = await t.fetch(`${BASE}${path}`, jsonPost(body));
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text(),
  };
}

/** A model that answers with what it was given, in two chunks. */
const echoModel: ModelAdapter = {
  description: 'echo',
  async *answer({ query, relevant, messages }) {
    yield `Q=${query};`;
    yield `R=${relevant.map((r) => r.name ?? r.text.slice(0, 10)).join(',')};M=${messages.map((m) => `${m.role}:${m.text}`).join('|')}`;
  },
};

describe('relevance', () => {
  it('ranks the stored assets with BM25, best first, with passages; decodes with the SDK, strictly (no score: RelevantQGPTSeed has none)', async () => {
    const t = await setup();
    const qgpt = new QGPTApi(t.configuration);
    const output = await qgpt.relevance({
      qGPTRelevanceInput: { query: 'retry a call with exponential backoff', options: { database: true } },
    });
    const seeds = output.relevant.iterable;
    expect(seeds[0]!.id).toBe(RETRY.id);
    expect(seeds[0]!.asset?.id).toBe(RETRY.id);
    expect(seeds[0]!.seed?.type).toBe(SeedTypeEnum.SeededAsset);
    expect(seeds[0]!.seed?.asset?.format.fragment?.string?.raw).toBe(RETRY.text);
    expect(seeds[0]!.seed?.asset?.metadata?.name).toBe('retry.py');
    expect(seeds[0]!.seed?.asset?.application.platform).toBe(PlatformEnum.Web);
    expect(seeds[0]!.location?.text).toContain('def ');

    const raw = await post(t, '/qgpt/relevance', { query: 'retry a call with exponential backoff' });
    expect(raw.status).toBe(200);
    expect(instanceOfQGPTRelevanceOutput(raw.body)).toBe(true);
    expect(QGPTRelevanceOutputFromJSON(raw.body).relevant.iterable.map((s) => s.id)).toEqual(seeds.map((s) => s.id));
    expect(raw.body.relevant.iterable.every((s: object) => !('score' in s))).toBe(true);
    // Deterministic: the same store and query give the same answer, byte for byte.
    expect(await post(t, '/qgpt/relevance', { query: 'retry a call with exponential backoff' })).toEqual(raw);
  });

  it('finds an asset as soon as it is added (the warm index follows writes)', async () => {
    const t = await setup();
    await post(t, '/qgpt/relevance', { query: 'warm the index' });
    const id = crypto.randomUUID();
    await t.service.addAssets([{ id, name: 'zebra.go', text: 'func stripes() { /* zebra zebra */ }' }]);
    const found = await post(t, '/qgpt/relevance', { query: 'zebra stripes' });
    expect(found.body.relevant.iterable.map((s: RelevantQGPTSeed) => s.id)).toEqual([id]);
    // Replacing it replaces what is found.
    await t.service.addAssets([{ id, name: 'horse.go', text: 'func gallop() {}' }]);
    expect((await post(t, '/qgpt/relevance', { query: 'zebra stripes' })).body.relevant.iterable).toEqual([]);
  });

  it('forgets what reset and seed replaced: a deleted asset is never found', async () => {
    const t = await setup();
    const id = crypto.randomUUID();
    await t.service.seed({ assets: [{ id, name: 'zebra.go', text: 'func stripes() { /* zebra zebra */ }' }] });
    const ask = async () =>
      (await post(t, '/qgpt/relevance', { query: 'zebra', options: { database: true } })).body.relevant.iterable.length;
    expect(await ask()).toBeGreaterThan(0);
    await t.service.reset();
    expect(await ask()).toBe(0);
    await t.service.seed({ assets: [{ id, name: 'zebra.go', text: 'zebra' }] });
    expect(await ask()).toBe(1);
  });

  it('ranks the seeds, assets and messages it is given; named ones that do not match follow, in the order given', async () => {
    const t = await setup();
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: {
        type: ConversationTypeEnum.Copilot,
        messages: [
          { role: 'USER', fragment: { string: { raw: 'how do I memoize a function?' } } },
          { role: 'ASSISTANT', fragment: { string: { raw: 'Cache results in a Map keyed by the arguments.' } } },
        ],
      },
    });
    const [user, assistant] = conversation.messages.iterable.map((m) => m.id);
    const debounce = SAMPLE_ASSETS.find((a) => a.name === 'debounce.ts')!;
    const output = await post(t, '/qgpt/relevance', {
      query: 'cache results in a map',
      seeds: {
        iterable: [{ type: 'SEEDED_ASSET', asset: { application: {}, format: { fragment: { string: { raw: 'a map of results' } } } } }],
      },
      assets: { iterable: [{ id: debounce.id }] },
      messages: { iterable: [{ id: assistant }, { id: user }] },
    });
    expect(output.status).toBe(200);
    const iterable = output.body.relevant.iterable as RelevantQGPTSeed[];
    expect(iterable[0]!.id).toBe(assistant);
    expect(iterable[1]!.seed?.asset?.format.fragment?.string?.raw).toBe('a map of results');
    // Not matching: the user message and the asset, in the order given.
    expect(iterable.slice(2).map((s) => s.id)).toEqual([debounce.id, user]);
    // Only what was named: no other stored asset.
    expect(iterable).toHaveLength(4);
  });

  it('answers too with options.question', async () => {
    const t = await setup({ model: echoModel });
    const output = await post(t, '/qgpt/relevance', { query: 'exponential backoff', options: { question: true, database: true } });
    expect(output.body.answer.answers.iterable[0].text).toBe('Q=exponential backoff;R=retry.py;M=');
  });

  it('refuses bad input with a 400 and unknown ids with a 404, changing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    expect(await post(t, '/qgpt/relevance', {})).toMatchObject({ status: 400, body: 'relevance.query is required.' });
    expect(await post(t, '/qgpt/relevance', { query: 3 })).toMatchObject({
      status: 400,
      body: 'relevance.query must be a string, not a number.',
    });
    expect(await post(t, '/qgpt/relevance', { query: 'x', options: { database: 'yes' } })).toMatchObject({ status: 400 });
    expect(await post(t, '/qgpt/relevance', { query: 'x', assets: { iterable: [{ id: 'nope' }] } })).toMatchObject({ status: 400 });
    const unknown = crypto.randomUUID();
    expect(await post(t, '/qgpt/relevance', { query: 'x', assets: { iterable: [{ id: unknown }] } })).toMatchObject({
      status: 404,
      body: `No asset with id ${unknown}.`,
    });
    expect(await post(t, '/qgpt/relevance', { query: 'x', messages: { iterable: [{ id: unknown }] } })).toMatchObject({
      status: 404,
      body: `No message with id ${unknown}.`,
    });
    const empty = await t.fetch(`${BASE}/qgpt/relevance`, { method: 'POST', headers: { 'Content-Type': 'application/json' } });
    expect(empty.status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('question', () => {
  const trackedApplication = {
    id: 'DEFAULT',
    name: ApplicationNameEnum.OpenSource,
    version: '0.0.1',
    platform: PlatformEnum.Macos,
    onboarded: false,
    privacy: PrivacyEnum.Anonymous,
  };

  it("answers the copilot SDK's askQuestion without a model: an extractive answer that says so", async () => {
    const t = await setup();
    const qgpt = new QGPTApi(t.configuration);
    const output = await qgpt.question({
      qGPTQuestionInput: {
        query: 'How do I retry with exponential backoff?',
        pipeline: { conversation: { generalizedCodeDialog: {} } },
        relevant: { iterable: [] },
      },
    });
    const text = output.answers.iterable[0]!.text;
    // No seeds sent: the best-matching stored asset is quoted.
    expect(text).toMatch(/^No model is configured/);
    expect(text).toContain('Best match: **retry.py** (py):');
    expect(text).toContain('def retry');
    const nothing = await qgpt.question({ qGPTQuestionInput: { query: 'zzyzx quux', relevant: { iterable: [] } } });
    expect(nothing.answers.iterable[0]!.text).toContain('Nothing stored matches “zzyzx quux”.');
  });

  it('quotes the best-matching seed, the way promptConversation sends messages as seeds', async () => {
    const t = await setup();
    const seed = (raw: string): RelevantQGPTSeed => ({
      seed: { type: SeedTypeEnum.SeededAsset, asset: { application: trackedApplication, format: { fragment: { string: { raw } } } } },
    });
    const body = {
      query: 'which port does the server listen on?',
      pipeline: { conversation: { contextualizedCodeDialog: {} } },
      relevant: { iterable: [seed('The weather is fine.'), seed('The server listens on port 8080 by default.')] },
    };
    const first = await post(t, '/qgpt/question', body);
    expect(first.status).toBe(200);
    expect(instanceOfQGPTQuestionOutput(first.body)).toBe(true);
    const text = QGPTQuestionOutputFromJSON(first.body).answers.iterable[0]!.text;
    expect(text).toContain('The server listens on port 8080 by default.');
    expect(text).not.toContain('weather');
    expect(text).toMatch(/No model is configured/);
    // Deterministic.
    expect(await post(t, '/qgpt/question', body)).toEqual(first);
  });

  it('passes relevant material (a seed naming a stored asset gets its text) and history to the model', async () => {
    const t = await setup({ model: echoModel });
    const history = [
      { id: crypto.randomUUID(), reference: { role: 'USER', fragment: { string: { raw: 'hi' } } } },
      { id: crypto.randomUUID(), reference: { role: 'ASSISTANT', fragment: { string: { raw: 'hello' } } } },
    ];
    const output = await post(t, '/qgpt/question', {
      query: 'q',
      relevant: { iterable: [{ asset: { id: RETRY.id } }] },
      messages: { iterable: history },
    });
    expect(output.body.answers.iterable[0].text).toBe('Q=q;R=retry.py;M=USER:hi|ASSISTANT:hello');
  });

  it('answers 502 with the model’s own message when the model fails, storing nothing', async () => {
    const failing: ModelAdapter = {
      description: 'failing',
      // biome-ignore lint/correctness/useYield: a model that fails before its first token yields nothing.
      async *answer() {
        throw new ModelError('The model endpoint http://127.0.0.1:9/v1/chat/completions could not be reached: connect ECONNREFUSED.');
      },
    };
    const t = await setup({ model: failing });
    const before = await dump(t.databaseName);
    const output = await post(t, '/qgpt/question', { query: 'q', relevant: { iterable: [] } });
    expect(output).toMatchObject({
      status: 502,
      body: 'The model endpoint http://127.0.0.1:9/v1/chat/completions could not be reached: connect ECONNREFUSED.',
    });
    expect(output.type).toMatch(/^text\/plain/);
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('switches the model at run time, and back to the default', async () => {
    const t = await setup();
    await t.service.setModel(echoModel);
    expect((await post(t, '/qgpt/question', { query: 'q', relevant: { iterable: [] } })).body.answers.iterable[0].text).toBe('Q=q;R=;M=');
    expect((await post(t, '/qgpt/question', { query: 'backoff', relevant: { iterable: [] } })).body.answers.iterable[0].text).toBe(
      'Q=backoff;R=retry.py;M=',
    );
    await t.service.setModel();
    expect((await post(t, '/qgpt/question', { query: 'q', relevant: { iterable: [] } })).body.answers.iterable[0].text).toMatch(
      /^No model/,
    );
    await expect(t.service.setModel({ type: 'openai', baseUrl: 'ftp://x', model: 'm' } as never)).rejects.toThrow(
      'model.baseUrl must be an http(s) URL',
    );
    // A configuration outlives the service: a new one over the same database uses it.
    await t.service.setModel({ type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
    const again = await setup({ databaseName: t.databaseName });
    expect((await again.service.model()).description).toBe('llama3.2 at http://127.0.0.1:11434/v1');
    await again.service.setModel();
    expect((await again.service.model()).description).toBe('no model (extractive answers)');
  });

  it('refuses bad input with a 400', async () => {
    const t = await setup();
    expect(await post(t, '/qgpt/question', { query: 'q' })).toMatchObject({ status: 400, body: 'question.relevant is required.' });
    expect(await post(t, '/qgpt/question', { relevant: { iterable: [] } })).toMatchObject({
      status: 400,
      body: 'question.query is required.',
    });
    expect(await post(t, '/qgpt/question', { query: 'q', relevant: { iterable: [{}] } })).toMatchObject({ status: 400 });
    expect(await post(t, '/qgpt/question', { query: 'q', relevant: { iterable: [{ asset: { id: crypto.randomUUID() } }] } })).toMatchObject(
      { status: 404 },
    );
  });
});

describe('the service with an OpenAI-compatible endpoint', () => {
  it('answers /qgpt/question from the endpoint, and 502 with its message when it fails, storing nothing', async () => {
    const fake = await startFakeOpenAi();
    onTestFinished(() => fake.close());
    const t = await setup({ model: { type: 'openai', baseUrl: fake.baseUrl, model: 'llama3.2' } });
    const body = { query: 'what is a debounce?', relevant: { iterable: [] } };
    const ok = await t.fetch(`${BASE}/qgpt/question`, jsonPost(body));
    expect(((await ok.json()) as { answers: { iterable: Array<{ text: string }> } }).answers.iterable[0]!.text).toBe(
      'Answer to: what is a debounce?',
    );

    await t.service.setModel({ type: 'openai', baseUrl: fake.baseUrl, model: 'missing' });
    const before = await dump(t.databaseName);
    const failed = await t.fetch(`${BASE}/qgpt/question`, jsonPost(body));
    expect(failed.status).toBe(502);
    expect(await failed.text()).toBe(
      `The model endpoint ${fake.baseUrl}/chat/completions answered 404: model "missing" not found, try pulling it first`,
    );
    expect(await dump(t.databaseName)).toBe(before);
  });
});
