/**
 * /qgpt/stream in a real page, through the service worker (fast path, or fetch with
 * PIECES_FAST_PATH=off), answered by an OpenAI-compatible endpoint that writes many events at
 * once: the service batches the frames one task makes, and the socket must still deliver each
 * chunk once, in order, one message each; a stopped answer keeps exactly what was streamed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../fake-openai.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { openDemo } from './pages.js';
import { chunks, ended, framesOf, openCopilot, send } from './copilot-socket.js';

const chunk = (i: number) => `${i}:é€😀;`;
const expected = (count: number) => Array.from({ length: count }, (_, i) => chunk(i));

const setModel = (page: Page, model: unknown) =>
  page.evaluate(async (m) => {
    const { port1, port2 } = new MessageChannel();
    const reply = new Promise((resolve) => (port1.onmessage = (event) => resolve(event.data)));
    navigator.serviceWorker.controller!.postMessage({ type: 'pieces:set-model', ...(m ? { model: m } : {}) }, [port2]);
    return reply;
  }, model);
const createConversation = (page: Page, name: string) =>
  page.evaluate(async (n) => {
    const response = await fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'COPILOT', name: n }),
    });
    return ((await response.json()) as { id: string }).id;
  }, name);
const storedMessages = (page: Page, id: string) =>
  page.evaluate(async (c) => {
    const response = await fetch(`http://localhost:1000/conversation/${c}/messages`);
    const json = (await response.json()) as { iterable: Array<{ role: string; fragment?: { string?: { raw?: string } } }> };
    return json.iterable.map((m) => [m.role, m.fragment?.string?.raw]);
  }, id);

describe(`/qgpt/stream frames in ${engine.name}`, () => {
  let context: BrowserContext;
  let page: Page;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    ({ context } = await launch());
    page = await openDemo(context);
    await openCopilot(page);
  });
  afterAll(async () => {
    await page?.evaluate(() => window.copilotSocket?.close()).catch(() => {});
    await context?.close();
    await fake?.close();
  });

  it('delivers every chunk once, in order, one message each, for answers running at once; stores each whole', async () => {
    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'numbered', maxTokens: 400 });
    const ids = { a: await createConversation(page, 'a'), b: await createConversation(page, 'b') };
    for (const [request, conversation] of Object.entries(ids))
      await send(page, { request, conversation, question: { query: `count ${request}`, relevant: { iterable: [] } } });
    for (const request of Object.keys(ids)) await ended(page, request);
    for (const [request, conversation] of Object.entries(ids)) {
      const frames = await framesOf(page, request);
      expect(frames.map((f) => f.status)).toEqual([...expected(400).map(() => 'IN-PROGRESS'), 'COMPLETED']);
      expect(chunks(frames)).toEqual(expected(400));
      expect(await storedMessages(page, conversation)).toEqual([
        ['USER', `count ${request}`],
        ['ASSISTANT', expected(400).join('')],
      ]);
    }
    await setModel(page, null);
  });

  it('a stopped answer: STOPPED after every frame streamed, and the conversation keeps exactly what was streamed', async () => {
    await setModel(page, { type: 'openai', baseUrl: fake.baseUrl, model: 'numbered-slow', maxTokens: 2000 });
    const conversation = await createConversation(page, 'stopped');
    await send(page, { request: 'stop-me', conversation, question: { query: 'count slowly', relevant: { iterable: [] } } });
    await page.waitForFunction(() => window.copilotFrames.filter((f) => f.request === 'stop-me').length >= 50);
    await send(page, { request: 'stop-me', stop: true });
    await ended(page, 'stop-me');
    const frames = await framesOf(page, 'stop-me');
    expect(frames.at(-1)!.status).toBe('STOPPED');
    const streamed = chunks(frames);
    expect(frames.length).toBe(streamed.length + 1);
    expect(streamed).toEqual(expected(streamed.length));
    expect(streamed.length).toBeLessThan(2000);
    expect(await storedMessages(page, conversation)).toEqual([
      ['USER', 'count slowly'],
      ['ASSISTANT', streamed.join('')],
    ]);
    await setModel(page, null);
  });
});
