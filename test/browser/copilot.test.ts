/**
 * The copilot in a real page: the copilot SDK's flows (askQuestion,
 * promptConversation) through the official SDK 4.1.0, whose every request
 * the page makes (so the worker answers it), and the /qgpt/stream socket,
 * with the default model and with a fake OpenAI-compatible endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApplicationNameEnum,
  Configuration,
  ConversationApi,
  ConversationMessageApi,
  ConversationMessagesApi,
  ConversationsApi,
  PlatformEnum,
  PrivacyEnum,
  QGPTApi,
  QGPTConversationMessageRoleEnum,
  SeedTypeEnum,
  type RelevantQGPTSeed,
} from '@pieces.app/pieces-os-client';
import { startFakeOpenAi, type FakeOpenAi } from '../fake-openai.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { openDemo } from './pages.js';

const BASE = 'http://localhost:1000';

/** A fetch for the SDK that makes each request in the page, through its service worker. */
function pageFetch(page: Page): typeof fetch {
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const result = await page.evaluate(
      async ([u, i]) => {
        const response = await fetch(u, i);
        return { status: response.status, headers: [...response.headers], body: await response.text() };
      },
      [url, { method: init?.method ?? 'GET', headers: (init?.headers ?? {}) as Record<string, string>, body: (init?.body as string | undefined) ?? null }] as const,
    );
    return new Response(result.status === 204 ? null : result.body, { status: result.status, headers: result.headers });
  };
}

/** The copilot SDK's client, its calls as in pieces-copilot-sdk, over the page. */
function copilotClient(page: Page) {
  const config = new Configuration({ basePath: BASE, fetchApi: pageFetch(page) });
  const trackedApplication = { id: 'DEFAULT', name: ApplicationNameEnum.OpenSource, version: '0.0.1', platform: PlatformEnum.Macos, onboarded: false, privacy: PrivacyEnum.Anonymous };
  const qgptApi = new QGPTApi(config);
  const conversationsApi = new ConversationsApi(config);
  const conversationApi = new ConversationApi(config);
  const conversationMessagesApi = new ConversationMessagesApi(config);
  const conversationMessageApi = new ConversationMessageApi(config);
  return {
    async askQuestion(question: string) {
      const answer = await qgptApi.question({
        qGPTQuestionInput: { query: question, pipeline: { conversation: { generalizedCodeDialog: {} } }, relevant: { iterable: [] } },
      });
      return answer.answers.iterable[0]!.text;
    },
    async createConversation(name: string) {
      return conversationsApi.conversationsCreateSpecificConversation({
        seededConversation: { name, pipeline: { conversation: { contextualizedCodeDialog: {} } }, type: 'COPILOT' },
      });
    },
    async promptConversation(message: string, conversationId: string) {
      const conversation = await conversationApi.conversationGetSpecificConversation({ conversation: conversationId });
      const rawMessages: string[] = [];
      for (const messageId of Object.keys(conversation.messages.indices ?? {})) {
        const stored = await conversationMessageApi.messageSpecificMessageSnapshot({ message: messageId });
        if (stored.fragment?.string?.raw) rawMessages.push(stored.fragment.string.raw);
      }
      const userMessage = await conversationMessagesApi.messagesCreateSpecificMessage({
        seededConversationMessage: { role: QGPTConversationMessageRoleEnum.User, fragment: { string: { raw: message } }, conversation: { id: conversationId } },
      });
      const relevant: RelevantQGPTSeed[] = rawMessages.map((raw) => ({
        seed: { type: SeedTypeEnum.SeededAsset, asset: { application: { ...trackedApplication }, format: { fragment: { string: { raw } } } } },
      }));
      const answer = await qgptApi.question({
        qGPTQuestionInput: { query: message, pipeline: { conversation: { contextualizedCodeDialog: {} } }, relevant: { iterable: relevant } },
      });
      const botMessage = await conversationMessagesApi.messagesCreateSpecificMessage({
        seededConversationMessage: {
          role: QGPTConversationMessageRoleEnum.Assistant,
          fragment: { string: { raw: answer.answers.iterable[0]!.text } },
          conversation: { id: conversationId },
        },
      });
      return { text: answer.answers.iterable[0]!.text, userMessageId: userMessage.id, botMessageId: botMessage.id };
    },
    conversationApi,
  };
}

interface Frame {
  request?: string;
  conversation: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  errorMessage?: string;
  statusCode?: number;
}

declare global {
  interface Window {
    copilotFrames: Frame[];
    copilotSocket?: WebSocket;
  }
}

/** Opens a /qgpt/stream socket in the page that records every frame. */
const openCopilot = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        window.copilotFrames = [];
        const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
        window.copilotSocket = socket;
        socket.onmessage = (event) => window.copilotFrames.push(JSON.parse(event.data));
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new Error('the copilot socket failed'));
      }),
  );

const send = (page: Page, input: unknown) => page.evaluate((i) => window.copilotSocket!.send(JSON.stringify(i)), input);
const framesOf = (page: Page, request: string) => page.evaluate((r) => window.copilotFrames.filter((f) => f.request === r), request);
const ended = (page: Page, request: string) =>
  page.waitForFunction((r) => window.copilotFrames.some((f) => f.request === r && !['INITIALIZED', 'IN-PROGRESS'].includes(f.status)), request);
const chunks = (frames: Frame[]) => frames.filter((f) => f.status === 'IN-PROGRESS').map((f) => f.question!.answers.iterable[0]!.text);
const setModel = (page: Page, model: unknown) =>
  page.evaluate(async (m) => {
    const { port1, port2 } = new MessageChannel();
    const reply = new Promise((resolve) => (port1.onmessage = (event) => resolve(event.data)));
    navigator.serviceWorker.controller!.postMessage({ type: 'pieces:set-model', ...(m ? { model: m } : {}) }, [port2]);
    return reply;
  }, model);

describe(`the copilot in ${engine.name}`, () => {
  let context: BrowserContext;
  let page: Page;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    ({ context } = await launch());
    page = await openDemo(context);
  });

  afterAll(async () => {
    await context?.close();
    await fake?.close();
  });

  it('askQuestion and promptConversation of the copilot SDK, with no model configured', async () => {
    await setModel(page, null);
    const client = copilotClient(page);
    const answer = await client.askQuestion('How do I retry with exponential backoff?');
    expect(answer).toMatch(/^No model is configured/);
    expect(answer).toContain('retry.py');

    const conversation = await client.createConversation('Ports');
    await client.promptConversation('The server listens on port 8080.', conversation.id);
    const second = await client.promptConversation('Which port does the server listen on?', conversation.id);
    expect(second.text).toContain('The server listens on port 8080.');
    const stored = await client.conversationApi.conversationGetSpecificConversation({ conversation: conversation.id });
    expect(Object.values(stored.messages.indices ?? {})).toEqual([0, 1, 2, 3]);
    expect(stored.messages.indices?.[second.botMessageId!]).toBe(3);
  });

  it('answers through an OpenAI-compatible endpoint, and 502 with its message when it fails', async () => {
    expect(await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'llama3.2' })).toEqual({ ok: true, model: `llama3.2 at ${fake.baseUrl}` });
    const client = copilotClient(page);
    expect(await client.askQuestion('what is a debounce?')).toBe('Answer to: what is a debounce?');
    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'missing' });
    await expect(client.askQuestion('what is a debounce?')).rejects.toMatchObject({ response: { status: 502 } });
    const raw = await page.evaluate(async () => {
      const response = await fetch('http://localhost:1000/qgpt/question', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"query":"q","relevant":{"iterable":[]}}' });
      return { status: response.status, text: await response.text() };
    });
    expect(raw).toEqual({ status: 502, text: `The model endpoint ${fake.baseUrl}/chat/completions answered 404: model "missing" not found, try pulling it first` });
  });

  it('streams answers on /qgpt/stream: chunks, a mid-stream failure, a stop; the conversation keeps what was answered', async () => {
    const client = copilotClient(page);
    const conversation = await client.createConversation('Streamed');
    await openCopilot(page);

    await setModel(page, null);
    await send(page, { request: 'default', question: { query: 'debounce a function', relevant: { iterable: [] } } });
    await ended(page, 'default');
    const extractive = await framesOf(page, 'default');
    expect(extractive.at(-1)!.status).toBe('COMPLETED');
    expect(chunks(extractive).join('')).toMatch(/^No model is configured[^]*Best match: \*\*debounce\.ts\*\*/);

    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'llama3.2' });
    await send(page, { request: 'ok', conversation: conversation.id, question: { query: 'hello there', relevant: { iterable: [] } } });
    await ended(page, 'ok');
    const ok = await framesOf(page, 'ok');
    expect(ok.map((f) => f.status)).toEqual(['IN-PROGRESS', 'IN-PROGRESS', 'IN-PROGRESS', 'IN-PROGRESS', 'COMPLETED']);
    expect(chunks(ok)).toEqual(['Answer', ' to:', ' hello', ' there']);

    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'error-event' });
    await send(page, { request: 'broken', conversation: conversation.id, question: { query: 'fail please', relevant: { iterable: [] } } });
    await ended(page, 'broken');
    const broken = await framesOf(page, 'broken');
    expect(broken.at(-1)).toMatchObject({ status: 'FAILED', statusCode: 502, errorMessage: `The model endpoint ${fake.baseUrl}/chat/completions failed mid-answer: model overloaded` });

    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'slow' });
    await send(page, { request: 'long', conversation: conversation.id, question: { query: 'one two three four five six seven eight', relevant: { iterable: [] } } });
    await page.waitForFunction(() => window.copilotFrames.filter((f) => f.request === 'long' && f.status === 'IN-PROGRESS').length >= 2);
    await send(page, { request: 'long', stop: true });
    await ended(page, 'long');
    const long = await framesOf(page, 'long');
    expect(long.at(-1)!.status).toBe('STOPPED');
    const partial = chunks(long).join('');
    expect(partial.length).toBeLessThan('Answer to: one two three four five six seven eight'.length);

    // Stored: the completed exchange, nothing of the failed one, the stopped question and its partial answer.
    const stored = await client.conversationApi.conversationSpecificConversationMessages({ conversation: conversation.id });
    expect(stored.iterable.map((m) => [m.role, m.fragment?.string?.raw])).toEqual([
      ['USER', 'hello there'],
      ['ASSISTANT', 'Answer to: hello there'],
      ['USER', 'one two three four five six seven eight'],
      ['ASSISTANT', partial],
    ]);
    await setModel(page, null);
  });

  it("the demo's chat pane: ask, watch the answer stream in, switch the model, stop an answer", async () => {
    await page.reload();
    await page.waitForSelector('#status[data-state="ready"]');
    await setModel(page, null);
    await page.reload();
    await page.waitForSelector('#status[data-state="ready"]');
    await page.waitForFunction(() => document.querySelector('#model-current')?.textContent === 'no model (extractive answers)');

    await page.fill('#chat-question', 'How do I retry with exponential backoff?');
    await page.click('#chat-ask');
    await page.waitForSelector('#chat-state[data-state="done"]');
    expect(await page.textContent('#chat-log .bubble.user p')).toBe('How do I retry with exponential backoff?');
    expect(await page.textContent('#chat-log .bubble.assistant p')).toMatch(/^No model is configured[^]*retry\.py/);

    await page.selectOption('#model-kind', 'openai');
    await page.fill('#model-base-url', fake.baseUrl);
    await page.fill('#model-name', 'slow');
    await page.click('#model-save');
    await page.waitForFunction((text) => document.querySelector('#model-current')?.textContent === text, `slow at ${fake.baseUrl}`);

    await page.fill('#chat-question', 'one two three four five six seven eight nine ten');
    await page.click('#chat-ask');
    await page.waitForFunction(() => (document.querySelectorAll('#chat-log .bubble.assistant p')[1]?.textContent ?? '').includes(' to:'));
    await page.click('#chat-stop');
    await page.waitForSelector('#chat-state[data-state="stopped"]');
    const partial = await page.evaluate(() => document.querySelectorAll('#chat-log .bubble.assistant p')[1]!.textContent);
    expect('Answer to: one two three four five six seven eight nine ten'.startsWith(partial!)).toBe(true);
    expect(partial!.length).toBeLessThan('Answer to: one two three four five six seven eight nine ten'.length);
    await setModel(page, null);
  });
});
