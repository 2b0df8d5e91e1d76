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
import { freePort } from '../free-port.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { openDemo, storeIds } from './pages.js';
import { chunks, ended, framesOf, openCopilot, send } from './copilot-socket.js';

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
      [
        url,
        {
          method: init?.method ?? 'GET',
          headers: (init?.headers ?? {}) as Record<string, string>,
          body: (init?.body as string | undefined) ?? null,
        },
      ] as const,
    );
    return new Response(result.status === 204 ? null : result.body, { status: result.status, headers: result.headers });
  };
}

/** The copilot SDK's client, its calls as in pieces-copilot-sdk, over the page. */
function copilotClient(page: Page) {
  const config = new Configuration({ basePath: BASE, fetchApi: pageFetch(page) });
  const trackedApplication = {
    id: 'DEFAULT',
    name: ApplicationNameEnum.OpenSource,
    version: '0.0.1',
    platform: PlatformEnum.Macos,
    onboarded: false,
    privacy: PrivacyEnum.Anonymous,
  };
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
        seededConversationMessage: {
          role: QGPTConversationMessageRoleEnum.User,
          fragment: { string: { raw: message } },
          conversation: { id: conversationId },
        },
      });
      const relevant: RelevantQGPTSeed[] = rawMessages.map((raw) => ({
        seed: {
          type: SeedTypeEnum.SeededAsset,
          asset: { application: { ...trackedApplication }, format: { fragment: { string: { raw } } } },
        },
      }));
      const answer = await qgptApi.question({
        qGPTQuestionInput: {
          query: message,
          pipeline: { conversation: { contextualizedCodeDialog: {} } },
          relevant: { iterable: relevant },
        },
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

const setModel = (page: Page, model: unknown) =>
  page.evaluate(async (m) => {
    const { port1, port2 } = new MessageChannel();
    const reply = new Promise((resolve) => (port1.onmessage = (event) => resolve(event.data)));
    navigator.serviceWorker.controller!.postMessage({ type: 'pieces:set-model', ...(m ? { model: m } : {}) }, [port2]);
    return reply;
  }, model);

/** Asks in the demo's chat pane; resolves with the pane's state once the answer ended (`done`, `failed`, `stopped`). */
async function askInPane(page: Page, question: string): Promise<string | null> {
  const answers = await page.evaluate(() => document.querySelectorAll('#chat-log .bubble.assistant').length);
  await page.fill('#chat-question', question);
  await page.click('#chat-ask');
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('#chat-log .bubble.assistant').length > n &&
      document.querySelector<HTMLElement>('#chat-state')!.dataset.state !== 'streaming',
    answers,
  );
  return page.getAttribute('#chat-state', 'data-state');
}

/** Chooses the model in the pane's model form: an OpenAI-compatible endpoint, or none. */
async function chooseModelInPane(page: Page, endpoint: { baseUrl: string; model: string } | null) {
  await page.selectOption('#model-kind', endpoint ? 'openai' : 'extractive');
  if (endpoint) {
    await page.fill('#model-base-url', endpoint.baseUrl);
    await page.fill('#model-name', endpoint.model);
  }
  await page.click('#model-save');
  const described = endpoint ? `${endpoint.model} at ${endpoint.baseUrl}` : 'no model (extractive answers)';
  await page.waitForFunction((text) => document.querySelector('#model-current')?.textContent === text, described);
}

/** Reloads the demo on no model, the chat pane on a new conversation. */
async function freshPane(page: Page) {
  await page.reload();
  await page.waitForSelector('body[data-loaded="true"]');
  await chooseModelInPane(page, null);
}

/** The newest message of the chat log: entirely in view in the log, the log scrolled to its end. */
const newestInView = (page: Page) =>
  page.evaluate(() => {
    const log = document.querySelector('#chat-log')!;
    const box = log.getBoundingClientRect();
    const newest = log.lastElementChild!.getBoundingClientRect();
    return {
      top: newest.top >= box.top - 1 || newest.height > box.height,
      bottom: newest.bottom <= box.bottom + 1,
      atEnd: log.scrollHeight - log.scrollTop - log.clientHeight <= 1,
    };
  });

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
    expect(await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'llama3.2' })).toEqual({
      ok: true,
      model: `llama3.2 at ${fake.baseUrl}`,
    });
    const client = copilotClient(page);
    expect(await client.askQuestion('what is a debounce?')).toBe('Answer to: what is a debounce?');
    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'missing' });
    await expect(client.askQuestion('what is a debounce?')).rejects.toMatchObject({ response: { status: 502 } });
    const raw = await page.evaluate(async () => {
      const response = await fetch('http://localhost:1000/qgpt/question', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"query":"q","relevant":{"iterable":[]}}',
      });
      return { status: response.status, text: await response.text() };
    });
    expect(raw).toEqual({
      status: 502,
      text: `The model endpoint ${fake.baseUrl}/chat/completions answered 404: model "missing" not found, try pulling it first`,
    });
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
    expect(chunks(extractive).join('')).toMatch(/^No model is configured[\s\S]*Best match: \*\*debounce\.ts\*\*/);

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
    expect(broken.at(-1)).toMatchObject({
      status: 'FAILED',
      statusCode: 502,
      errorMessage: `The model endpoint ${fake.baseUrl}/chat/completions failed mid-answer: model overloaded`,
    });

    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'slow' });
    await send(page, {
      request: 'long',
      conversation: conversation.id,
      question: { query: 'one two three four five six seven eight', relevant: { iterable: [] } },
    });
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
    expect(await page.textContent('#chat-log .bubble.user .text')).toBe('How do I retry with exponential backoff?');
    expect(await page.textContent('#chat-log .bubble.assistant .text')).toMatch(/^No model is configured[\s\S]*retry\.py/);

    await page.selectOption('#model-kind', 'openai');
    await page.fill('#model-base-url', fake.baseUrl);
    await page.fill('#model-name', 'slow');
    await page.click('#model-save');
    await page.waitForFunction((text) => document.querySelector('#model-current')?.textContent === text, `slow at ${fake.baseUrl}`);

    await page.fill('#chat-question', 'one two three four five six seven eight nine ten');
    await page.click('#chat-ask');
    await page.waitForFunction(() =>
      (document.querySelectorAll('#chat-log .bubble.assistant .text')[1]?.textContent ?? '').includes(' to:'),
    );
    await page.click('#chat-stop');
    await page.waitForSelector('#chat-state[data-state="stopped"]');
    const partial = await page.evaluate(() => document.querySelectorAll('#chat-log .bubble.assistant .text')[1]!.textContent);
    expect('Answer to: one two three four five six seven eight nine ten'.startsWith(partial!)).toBe(true);
    expect(partial!.length).toBeLessThan('Answer to: one two three four five six seven eight nine ten'.length);
    await setModel(page, null);
  });

  it('after an answer failed (model endpoint unreachable), the next question on no model is answered: the pane never keeps a conversation that was not stored', async () => {
    await freshPane(page);
    const unreachable = `http://127.0.0.1:${await freePort()}/v1`;
    await chooseModelInPane(page, { baseUrl: unreachable, model: 'llama3.2' });
    const before = await storeIds(page);
    expect(await askInPane(page, 'a first question, never answered')).toBe('failed');
    expect(await page.textContent('#chat-log .bubble.fail')).toContain(unreachable);
    expect(await storeIds(page)).toEqual(before);

    await chooseModelInPane(page, null);
    expect(await askInPane(page, 'How do I retry with exponential backoff?')).toBe('done');
    expect(await page.textContent('#chat-log .bubble.assistant:last-child .text')).toMatch(/^No model is configured/);
    const after = await storeIds(page);
    const created = after.filter((id) => !before.includes(id));
    expect(created).toHaveLength(1);
    // The pane is on that stored conversation: the next question goes to it.
    expect(await askInPane(page, 'debounce a function')).toBe('done');
    expect(await storeIds(page)).toEqual(after);
    const stored = await page.evaluate(
      async (c) =>
        (await (await fetch(`http://localhost:1000/conversation/${c}/messages`)).json()).iterable.map((m: { role: string }) => m.role),
      created[0],
    );
    expect(stored).toEqual(['USER', 'ASSISTANT', 'USER', 'ASSISTANT']);
  });

  it('"New chat" leaves the conversation: the log empties and the next question starts another one', async () => {
    await freshPane(page);
    expect(await askInPane(page, 'How do I retry with exponential backoff?')).toBe('done');
    const first = await storeIds(page);
    await page.click('#chat-new');
    expect(await page.evaluate(() => document.querySelectorAll('#chat-log .bubble').length)).toBe(0);
    expect(await page.textContent('#chat-title')).toBe('new conversation');
    expect(await askInPane(page, 'debounce a function')).toBe('done');
    const second = await storeIds(page);
    expect(second.filter((id) => !first.includes(id))).toHaveLength(1);
    expect(
      await page.evaluate(() => [...document.querySelectorAll('#chat-log .bubble')].map((b) => (b as HTMLElement).dataset.role)),
    ).toEqual(['USER', 'ASSISTANT']);
  });

  it("follows its conversation in the store: another tab's rename shows, another tab's delete leaves it for a new chat", async () => {
    await freshPane(page);
    const before = await storeIds(page);
    expect(await askInPane(page, 'How do I retry with exponential backoff?')).toBe('done');
    const [id] = (await storeIds(page)).filter((c) => !before.includes(c));
    // The stored name (derived from the question) replaces "New conversation".
    await expect.poll(() => page.textContent('#chat-title')).toBe('How do I retry with exponential backoff?');
    const other = await openDemo(context);
    try {
      await other.evaluate(async (c) => {
        const { messages: _messages, ...conversation } = await (await fetch(`http://localhost:1000/conversation/${c}`)).json();
        await fetch('http://localhost:1000/conversation/update', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...conversation, name: 'Renamed in another tab' }),
        });
      }, id);
      await expect.poll(() => page.textContent('#chat-title')).toBe('Renamed in another tab');
      await other.evaluate((c) => fetch(`http://localhost:1000/conversations/${c}/delete`, { method: 'POST' }), id);
      await expect.poll(() => page.textContent('#chat-title')).toBe('new conversation');
      expect(await page.evaluate(() => document.querySelectorAll('#chat-log .bubble').length)).toBe(0);
      expect(await page.textContent('#chat-state')).toContain('deleted');
      // The next question starts a new conversation (it does not name the deleted one).
      expect(await askInPane(page, 'debounce a function')).toBe('done');
    } finally {
      await other.close();
    }
  });

  it('renders answers as Markdown (code fences as code blocks), and never the HTML an answer holds', async () => {
    await freshPane(page);
    const newest = '#chat-log .bubble.assistant:last-child';
    expect(await askInPane(page, 'How do I retry with exponential backoff?')).toBe('done');
    expect(await page.textContent(`${newest} strong`)).toBe('retry.py');
    expect(await page.textContent(`${newest} pre > code`)).toContain('class RetryError(Exception):');
    expect(await page.textContent(newest)).not.toMatch(/```|\*\*retry\.py\*\*/);

    // The fake model answers "Answer to: <question>": an answer with HTML and a javascript: link in it.
    const hostile =
      'hi <script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> [link](javascript:window.pwned=3) **bold**';
    await chooseModelInPane(page, { baseUrl: fake.baseUrl, model: 'llama3.2' });
    expect(await askInPane(page, hostile)).toBe('done');
    const shown = async () =>
      page.evaluate(() => {
        const answer = [...document.querySelectorAll('#chat-log .bubble.assistant')].at(-1)!;
        return {
          text: answer.querySelector('.text')!.textContent,
          bold: answer.querySelector('strong')?.textContent,
          inserted: document.querySelectorAll('#chat-log script, #chat-log img, #chat-log [onerror], #chat-log a[href^="javascript"]')
            .length,
          pwned: (window as { pwned?: number }).pwned,
        };
      });
    const expected = {
      text: expect.stringContaining('<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2">'),
      bold: 'bold',
      inserted: 0,
      pwned: undefined,
    };
    expect(await shown()).toEqual(expected);
    // Read back from the store, the same.
    await page.reload();
    await page.waitForSelector('body[data-loaded="true"]');
    const id = await page.evaluate(async () => {
      const { iterable } = await (await fetch('http://localhost:1000/conversations')).json();
      return (iterable as Array<{ id: string; updated: { value: string } }>).sort((a, b) =>
        b.updated.value.localeCompare(a.updated.value),
      )[0]!.id;
    });
    await page.click(`#conversation-list li[data-id="${id}"] .link`);
    await page.waitForFunction(() => document.querySelectorAll('#chat-log .bubble.assistant').length === 2);
    expect(await shown()).toEqual(expected);
    await chooseModelInPane(page, null);
  });

  it('keeps the newest message in view: the log scrolls to each answer, and to an error', async () => {
    await freshPane(page);
    for (const question of [
      'How do I retry with exponential backoff?',
      'debounce a function',
      'How do I retry with exponential backoff?',
    ]) {
      expect(await askInPane(page, question)).toBe('done');
      expect(await newestInView(page)).toEqual({ top: true, bottom: true, atEnd: true });
    }
    await chooseModelInPane(page, { baseUrl: `http://127.0.0.1:${await freePort()}/v1`, model: 'llama3.2' });
    expect(await askInPane(page, 'this one fails')).toBe('failed');
    expect(await page.getAttribute('#chat-log > :last-child', 'class')).toContain('fail');
    expect(await newestInView(page)).toEqual({ top: true, bottom: true, atEnd: true });
    await chooseModelInPane(page, null);
  });
});
