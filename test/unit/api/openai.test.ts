// @vitest-environment node
/** The OpenAI-compatible adapter against a fake chat-completions server on 127.0.0.1. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError, type AnswerRequest } from '../../../src/core/copilot/model.js';
import { openAiModel } from '../../../src/core/copilot/openai.js';
import { startFakeOpenAi, type FakeOpenAi } from '../../fake-openai.js';
import { freePort } from '../../free-port.js';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(() => fake.close());

const request = (overrides: Partial<AnswerRequest> = {}): AnswerRequest => ({
  query: 'how do I retry?',
  relevant: [{ name: 'retry.py', language: 'py', text: 'def retry(): pass' }],
  messages: [
    { role: 'USER', text: 'hello' },
    { role: 'ASSISTANT', text: 'hi' },
  ],
  signal: new AbortController().signal,
  ...overrides,
});

async function collect(iterable: AsyncIterable<string>) {
  const chunks: string[] = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return chunks;
}

async function failure(iterable: AsyncIterable<string>) {
  const chunks: string[] = [];
  try {
    for await (const chunk of iterable) chunks.push(chunk);
  } catch (error) {
    return { chunks, error: error as Error };
  }
  throw new Error('expected a failure');
}

describe('openAiModel', () => {
  it('streams the answer chunk by chunk and sends material, history and question', async () => {
    const model = openAiModel({
      type: 'openai',
      baseUrl: fake.baseUrl,
      model: 'llama3.2',
      apiKey: 'sk-test',
      temperature: 0.2,
      maxTokens: 64,
    });
    expect(model.description).toBe(`llama3.2 at ${fake.baseUrl}`);
    const chunks = await collect(model.answer(request()));
    expect(chunks).toEqual(['Answer', ' to:', ' how', ' do', ' I', ' retry?']);
    const sent = fake.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'llama3.2', stream: true, temperature: 0.2, max_tokens: 64 });
    expect(sent.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(sent.body.messages[0]!.content).toContain('### retry.py (py)\n```py\ndef retry(): pass\n```');
    expect(sent.body.messages.at(-1)!.content).toBe('how do I retry?');
  });

  it("fails with the endpoint's own message: an error status, an error event, a cut stream", async () => {
    const url = `${fake.baseUrl}/chat/completions`;
    const missing = await failure(openAiModel({ type: 'openai', baseUrl: fake.baseUrl, model: 'missing' }).answer(request()));
    expect(missing.error).toBeInstanceOf(ModelError);
    expect(missing.error.message).toBe(`The model endpoint ${url} answered 404: model "missing" not found, try pulling it first`);

    const event = await failure(openAiModel({ type: 'openai', baseUrl: fake.baseUrl, model: 'error-event' }).answer(request()));
    expect(event.chunks).toEqual(['Answer', ' to:']);
    expect(event.error.message).toBe(`The model endpoint ${url} failed mid-answer: model overloaded`);

    const cut = await failure(openAiModel({ type: 'openai', baseUrl: fake.baseUrl, model: 'cut' }).answer(request()));
    expect(cut.chunks).toEqual(['Answer', ' to:', ' how']);
    expect(cut.error).toBeInstanceOf(ModelError);
    expect(cut.error.message).toMatch(/^The model endpoint .* (failed mid-answer|closed the stream before the answer was finished)/);
  });

  it('fails when the endpoint cannot be reached', async () => {
    const port = await freePort();
    const unreachable = await failure(
      openAiModel({ type: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' }).answer(request()),
    );
    expect(unreachable.error).toBeInstanceOf(ModelError);
    expect(unreachable.error.message).toMatch(
      new RegExp(`^The model endpoint http://127.0.0.1:${port}/v1/chat/completions could not be reached: `),
    );
  });

  it('stops reading when its signal is aborted', async () => {
    const controller = new AbortController();
    const model = openAiModel({ type: 'openai', baseUrl: fake.baseUrl, model: 'slow' });
    const chunks: string[] = [];
    const stopped = (async () => {
      for await (const chunk of model.answer(request({ signal: controller.signal }))) {
        chunks.push(chunk);
        if (chunks.length === 2) controller.abort('STOPPED');
      }
    })();
    await expect(stopped).rejects.toBe('STOPPED');
    expect(chunks).toHaveLength(2);
  });
});
