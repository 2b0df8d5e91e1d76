import { afterEach, describe, expect, it } from 'vitest';
import { instanceOfQGPTStreamOutput, QGPTStreamOutputFromJSON, type QGPTStreamInput } from '@pieces.app/pieces-os-client';
import type { ModelAdapter } from '../../../src/core/copilot/model.js';
import { ModelError } from '../../../src/core/copilot/model.js';
import { installStreamShim } from '../../../src/stream/shim.js';
import { BASE, dump, setup } from '../support/harness.js';

const STREAM = 'ws://localhost:1000/qgpt/stream';

class NativeWebSocket {
  constructor(readonly url: string) {}
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

interface Frame {
  request?: string;
  conversation: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
  relevance?: { relevant: { iterable: Array<{ id?: string }> } };
  errorMessage?: string;
  statusCode?: number;
}

/** A model that yields one chunk, then waits until it is stopped. */
const stallingModel: ModelAdapter = {
  description: 'stalling',
  async *answer({ signal }) {
    yield 'partial ';
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    yield 'never';
  },
};

const failingModel: ModelAdapter = {
  description: 'failing',
  async *answer() {
    yield 'half an ';
    throw new ModelError('The model endpoint http://127.0.0.1:9/v1/chat/completions failed mid-answer: model overloaded');
  },
};

async function world(options: Parameters<typeof setup>[0] & { available?: boolean } = {}) {
  const t = await setup(options);
  const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
  cleanups.push(
    installStreamShim({
      target,
      fetch: (input, init) => t.service.handle(new Request(input, init)),
      isServiceAvailable: () => options.available ?? true,
    }),
  );
  const open = async () => {
    const socket = new target.WebSocket(STREAM);
    const frames: Frame[] = [];
    const events: string[] = [];
    socket.addEventListener('message', (event) => {
      const json = JSON.parse((event as MessageEvent).data as string) as Frame;
      expect(instanceOfQGPTStreamOutput(QGPTStreamOutputFromJSON(json))).toBe(true);
      frames.push(json);
    });
    for (const type of ['open', 'error', 'close']) socket.addEventListener(type, () => events.push(type));
    const ask = (input: QGPTStreamInput | string) => socket.send(typeof input === 'string' ? input : JSON.stringify(input));
    const until = async (done: (frames: Frame[]) => boolean) => {
      for (let i = 0; i < 500 && !done(frames); i++) await new Promise((r) => setTimeout(r, 5));
      expect(done(frames)).toBe(true);
    };
    const ended = (request: string) => (all: Frame[]) => all.some((f) => f.request === request && f.status !== 'IN-PROGRESS');
    if (options.available !== false) await until(() => events.includes('open'));
    return { socket, frames, events, ask, until, ended, of: (request: string) => frames.filter((f) => f.request === request) };
  };
  const conversation = async () =>
    (await t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'chat' } })).id;
  const messages = async (id: string) => {
    const json = await (await t.fetch(`${BASE}/conversations`)).json();
    const found = json.iterable.find((c: { id: string }) => c.id === id);
    return found.messages.iterable.map((m: { reference: { role: string; fragment: { string: { raw: string } } } }) => [
      m.reference.role,
      m.reference.fragment.string.raw,
    ]);
  };
  return { t, open, conversation, messages };
}

const statuses = (frames: Frame[]) => frames.map((f) => f.status);
const text = (frames: Frame[]) =>
  frames
    .filter((f) => f.status === 'IN-PROGRESS')
    .map((f) => f.question!.answers.iterable[0]!.text)
    .join('');

describe('/qgpt/stream', () => {
  it('streams IN-PROGRESS chunks → COMPLETED (no INITIALIZED) and stores the question and the answer', async () => {
    const w = await world();
    const id = await w.conversation();
    w.t.changes.length = 0;
    const s = await w.open();
    s.ask({ request: 'r1', conversation: id, question: { query: 'retry with backoff', relevant: { iterable: [] } } });
    await s.until(s.ended('r1'));
    const frames = s.of('r1');
    expect(statuses(frames).at(-1)).toBe('COMPLETED');
    expect(
      statuses(frames)
        .slice(0, -1)
        .every((status) => status === 'IN-PROGRESS'),
    ).toBe(true);
    // Every IN-PROGRESS frame carries text (the Python wrapper's stream_question reads each one's answer).
    expect(frames.slice(0, -1).every((f) => f.question!.answers.iterable[0]!.text.length > 0)).toBe(true);
    expect(frames.filter((f) => f.status === 'IN-PROGRESS').length).toBeGreaterThan(2);
    expect(frames.every((f) => f.conversation === id)).toBe(true);
    const answer = text(frames);
    expect(answer).toMatch(/^No model is configured/);
    expect(await w.messages(id)).toEqual([
      ['USER', 'retry with backoff'],
      ['ASSISTANT', answer],
    ]);
    // The conversations stream hears of it.
    expect(w.t.changes.filter((c) => c.collection === 'conversation').map((c) => c.id)).toEqual([id]);
    expect(w.t.changes.filter((c) => c.collection === 'conversationMessage')).toHaveLength(2);
  });

  it('answers relevance inputs with options.question: relevance on the first IN-PROGRESS frame (with text), and a new conversation when none is named', async () => {
    const w = await world();
    const s = await w.open();
    s.ask({ request: 'r2', relevance: { query: 'exponential backoff', options: { question: true } } });
    await s.until(s.ended('r2'));
    const frames = s.of('r2');
    expect(frames[0]!.status).toBe('IN-PROGRESS');
    expect(frames[0]!.relevance!.relevant.iterable.length).toBeGreaterThan(0);
    expect(frames[0]!.question!.answers.iterable[0]!.text.length).toBeGreaterThan(0);
    expect(frames.slice(1).every((f) => f.relevance === undefined)).toBe(true);
    expect(frames.at(-1)!.status).toBe('COMPLETED');
    const created = frames[0]!.conversation;
    expect(frames.every((f) => f.conversation === created)).toBe(true);
    const conversation = await w.t.conversations.conversationsSnapshot();
    const stored = conversation.iterable.find((c) => c.id === created)!;
    expect(stored.name).toBe('exponential backoff');
    expect(await w.messages(created)).toEqual([
      ['USER', 'exponential backoff'],
      ['ASSISTANT', text(frames)],
    ]);
  });

  it('carries many requests on one socket at once', async () => {
    const w = await world();
    const s = await w.open();
    for (const request of ['a', 'b', 'c']) s.ask({ request, question: { query: `question ${request}`, relevant: { iterable: [] } } });
    await s.until((frames) => ['a', 'b', 'c'].every((r) => s.ended(r)(frames)));
    for (const request of ['a', 'b', 'c']) expect(statuses(s.of(request)).at(-1)).toBe('COMPLETED');
    expect(new Set(['a', 'b', 'c'].map((r) => s.of(r)[0]!.conversation)).size).toBe(3);
  });

  it('stops a request: STOPPED, the question and the answer so far are stored', async () => {
    const w = await world({ model: stallingModel });
    const id = await w.conversation();
    const s = await w.open();
    s.ask({ request: 'long', conversation: id, question: { query: 'tell me everything', relevant: { iterable: [] } } });
    await s.until((frames) => frames.some((f) => f.status === 'IN-PROGRESS'));
    s.ask({ request: 'long', conversation: id, stop: true });
    await s.until(s.ended('long'));
    expect(statuses(s.of('long'))).toEqual(['IN-PROGRESS', 'STOPPED']);
    expect(await w.messages(id)).toEqual([
      ['USER', 'tell me everything'],
      ['ASSISTANT', 'partial '],
    ]);
    // A reset of a conversation with nothing running is acknowledged.
    s.ask({ request: 'again', conversation: id, reset: true });
    await s.until(s.ended('again'));
    expect(statuses(s.of('again'))).toEqual(['RESET']);
  });

  it('abandons the answers in flight when the socket closes, storing nothing of them', async () => {
    let abortedWith: unknown;
    let release = () => {};
    const gated: ModelAdapter = {
      description: 'gated',
      async *answer({ signal }) {
        yield 'partial ';
        await new Promise<void>((resolve, reject) => {
          release = resolve;
          signal.addEventListener('abort', () => reject((abortedWith = signal.reason)), { once: true });
        });
        yield 'rest';
      },
    };
    const w = await world({ model: gated });
    const id = await w.conversation();
    const before = await dump(w.t.databaseName);
    const s = await w.open();
    s.ask({ request: 'gone', conversation: id, question: { query: 'never mind', relevant: { iterable: [] } } });
    await s.until((frames) => frames.some((f) => f.status === 'IN-PROGRESS'));
    s.socket.close();
    await s.until(() => abortedWith !== undefined);
    expect(abortedWith).toBe('DISCONNECTED');
    release();
    await new Promise((r) => setTimeout(r, 50));
    expect(await dump(w.t.databaseName)).toBe(before);
  });

  it('fails with the model’s message and stores nothing', async () => {
    const w = await world({ model: failingModel });
    const id = await w.conversation();
    const before = await dump(w.t.databaseName);
    const s = await w.open();
    s.ask({ request: 'f', conversation: id, question: { query: 'q', relevant: { iterable: [] } } });
    await s.until(s.ended('f'));
    const last = s.of('f').at(-1)!;
    expect(last).toMatchObject({
      status: 'FAILED',
      statusCode: 502,
      errorMessage: 'The model endpoint http://127.0.0.1:9/v1/chat/completions failed mid-answer: model overloaded',
    });
    expect(await dump(w.t.databaseName)).toBe(before);
  });

  it('fails with 507 when the storage is full, storing nothing', async () => {
    const w = await world();
    const id = await w.conversation();
    const before = await dump(w.t.databaseName);
    w.t.storage.editConversation = async () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    const s = await w.open();
    s.ask({ request: 'full', conversation: id, question: { query: 'q', relevant: { iterable: [] } } });
    await s.until(s.ended('full'));
    expect(s.of('full').at(-1)).toMatchObject({ status: 'FAILED', statusCode: 507 });
    expect(await dump(w.t.databaseName)).toBe(before);
  });

  it('fails bad inputs with a FAILED frame and keeps the socket open', async () => {
    const w = await world();
    const s = await w.open();
    s.ask('{not json');
    s.ask({ request: 'no-query', question: { relevant: { iterable: [] } } as never });
    const unknown = crypto.randomUUID();
    s.ask({ request: 'unknown', conversation: unknown, question: { query: 'q', relevant: { iterable: [] } } });
    await s.until((frames) => frames.length >= 3);
    expect(s.frames.find((f) => f.statusCode === 400 && !f.request)!.errorMessage).toMatch(/not valid JSON/);
    expect(s.of('no-query')).toEqual([
      { request: 'no-query', conversation: '', status: 'FAILED', statusCode: 400, errorMessage: 'input.question.query is required.' },
    ]);
    expect(s.of('unknown').at(-1)).toMatchObject({
      status: 'FAILED',
      statusCode: 404,
      errorMessage: `No conversation with id ${unknown}.`,
    });
    expect(s.socket.readyState).toBe(1);
  });

  it('refuses a connection like a refused socket when no worker answers, and plain HTTP with 426', async () => {
    const w = await world({ available: false });
    const s = await w.open();
    await s.until(() => s.events.includes('close'));
    expect(s.events).toEqual(['error', 'close']);
    for (const init of [{}, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } }]) {
      const response = await w.t.fetch(`${BASE}/qgpt/stream`, init);
      expect(response.status).toBe(426);
      expect(await response.text()).toMatch(/WebSocket/);
    }
  });
});
