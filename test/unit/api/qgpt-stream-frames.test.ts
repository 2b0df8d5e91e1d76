/**
 * The copilot stream's frames under batching: the service sends the frames one task makes in one
 * piece of its body, the socket splits them again, the model adapter reads many events per read.
 * Whatever the pieces, each chunk of the answer is one frame, once, in order, and a stopped answer
 * keeps exactly what was streamed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ModelError, type ModelAdapter } from '../../../src/core/copilot/model.js';
import { openAiModel } from '../../../src/core/copilot/openai.js';
import { createModel } from '../../../src/core/copilot/create-model.js';
import { STREAM_HEADER } from '../../../src/core/stream-wire.js';
import { installStreamShim } from '../../../src/stream/shim.js';
import { BASE, setup } from '../support/harness.js';

const STREAM = 'ws://localhost:1000/qgpt/stream';

class NativeWebSocket {
  constructor(readonly url: string) {}
}

interface Frame {
  request?: string;
  conversation: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
  vi.unstubAllGlobals();
});

/** Chunk i of an answer: its number, and characters of 1 to 4 UTF-8 bytes (so that byte pieces cut through them). */
const chunk = (i: number) => `${i}:é€😀;`;
const CHUNKS = 300;

/** Yields the chunks in bursts: many in one task (no wait between them), then a wait, as a model read does. */
function burstingModel(count: number, burst: number, stall = false): ModelAdapter {
  return {
    description: 'bursting',
    async *answer({ signal }) {
      for (let i = 0; i < count; i++) {
        yield chunk(i);
        if (i % burst === burst - 1) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      if (!stall) return;
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  };
}

/**
 * The socket of a page over the service, whose stream bodies reach the socket in pieces of
 * `piece` bytes (cut anywhere: inside a frame, inside a character); every piece is counted.
 */
async function world(model: ModelAdapter, piece?: number) {
  const t = await setup({ model });
  const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
  const pieces: number[] = [];
  const fetch = async (input: string, init?: RequestInit) => {
    const response = await t.service.handle(new Request(input, init));
    if (!response.body || !piece) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        for (let at = 0; at < value.byteLength; at += piece) controller.enqueue(value.slice(at, at + piece));
        pieces.push(value.byteLength);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  cleanups.push(installStreamShim({ target, fetch, isServiceAvailable: () => true }));
  const socket = new target.WebSocket(STREAM);
  const frames: Frame[] = [];
  socket.addEventListener('message', (event) => frames.push(JSON.parse((event as MessageEvent).data as string) as Frame));
  await new Promise((resolve) => socket.addEventListener('open', resolve, { once: true }));
  // A guard against a hang, not a measure: pieces of 5 bytes go slowly on a loaded machine.
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(done()).toBe(true);
  };
  const ended = (request: string) => () => frames.some((f) => f.request === request && f.status !== 'IN-PROGRESS');
  const texts = (request: string) =>
    frames.filter((f) => f.request === request && f.status === 'IN-PROGRESS').map((f) => f.question!.answers.iterable[0]!.text);
  const messages = async (id: string) => {
    const json = await (await t.fetch(`${BASE}/conversations`)).json();
    const found = json.iterable.find((c: { id: string }) => c.id === id);
    return found.messages.iterable.map((m: { reference: { role: string; fragment: { string: { raw: string } } } }) => [
      m.reference.role,
      m.reference.fragment.string.raw,
    ]);
  };
  return { t, socket, frames, until, ended, texts, messages, pieces };
}

const expected = (count: number) => Array.from({ length: count }, (_, i) => chunk(i));

describe('/qgpt/stream frames under batching', () => {
  it('sends the frames one task makes in one piece of the body, each still its own event', async () => {
    const t = await setup({ model: burstingModel(CHUNKS, 50) });
    const response = await t.service.handle(
      new Request(`${BASE}/qgpt/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [STREAM_HEADER]: 'qgpt' },
        body: JSON.stringify({ request: 'whole', question: { query: 'count', relevant: { iterable: [] } } }),
      }),
    );
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let body = '';
    let reads = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads++;
      body += decoder.decode(value, { stream: true });
    }
    const events = body.split('\n\n');
    expect(events.pop()).toBe('');
    const frames = events.map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice('data: '.length)) as Frame;
    });
    expect(frames.map((f) => f.status)).toEqual([...expected(CHUNKS).map(() => 'IN-PROGRESS'), 'COMPLETED']);
    expect(frames.slice(0, -1).map((f) => f.question!.answers.iterable[0]!.text)).toEqual(expected(CHUNKS));
    // Batched: six bursts of 50 chunks, each its first frame alone and the rest together (and the end).
    expect(reads).toBeLessThan(CHUNKS / 10);
  });

  it('a model that says when it waits for more: what it yielded since goes out then, one piece per wait', async () => {
    // 6 bursts of 50 chunks, `waiting` called before each wait (as the OpenAI-compatible adapter does
    // before each network read); then a model that says so once only still gets every frame out.
    const model = (tellEachTime: boolean): ModelAdapter => ({
      description: 'waiting',
      async *answer({ waiting }) {
        waiting?.();
        for (let i = 0; i < CHUNKS; i++) {
          yield chunk(i);
          if (i % 50 === 49) {
            if (tellEachTime) waiting?.();
            // Told: a wait shorter than a task (only `waiting` can part the bursts); else a timer's.
            await (tellEachTime ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, 2)));
          }
        }
      },
    });
    for (const tellEachTime of [true, false]) {
      const t = await setup({ model: model(tellEachTime) });
      const response = await t.service.handle(
        new Request(`${BASE}/qgpt/stream`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', [STREAM_HEADER]: 'qgpt' },
          body: JSON.stringify({ request: 'told', question: { query: 'count', relevant: { iterable: [] } } }),
        }),
      );
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      const pieces: Frame[][] = [];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const events = decoder.decode(value).split('\n\n');
        expect(events.pop()).toBe('');
        pieces.push(events.map((event) => JSON.parse(event.slice('data: '.length)) as Frame));
      }
      const frames = pieces.flat();
      expect(frames.map((f) => f.status)).toEqual([...expected(CHUNKS).map(() => 'IN-PROGRESS'), 'COMPLETED']);
      expect(frames.slice(0, -1).map((f) => f.question!.answers.iterable[0]!.text)).toEqual(expected(CHUNKS));
      if (tellEachTime) {
        // One piece per burst (the last one's frames may share their piece with COMPLETED).
        expect(pieces.slice(0, 6).map((piece) => piece.length)).toEqual([50, 50, 50, 50, 50, pieces.length === 6 ? 51 : 50]);
      } else expect(pieces.length).toBeLessThan(CHUNKS / 10);
    }
  });

  it('delivers every chunk once, in order, one message each, whatever pieces the body arrives in', async () => {
    for (const piece of [undefined, 1, 7, 4096]) {
      const w = await world(burstingModel(CHUNKS, 37), piece);
      const id = (
        await w.t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'count' } })
      ).id;
      w.socket.send(JSON.stringify({ request: 'count', conversation: id, question: { query: 'count', relevant: { iterable: [] } } }));
      await w.until(w.ended('count'));
      expect(w.frames.at(-1)!.status).toBe('COMPLETED');
      expect(w.texts('count')).toEqual(expected(CHUNKS));
      expect(await w.messages(id)).toEqual([
        ['USER', 'count'],
        ['ASSISTANT', expected(CHUNKS).join('')],
      ]);
      w.socket.close();
    }
  });

  it('keeps the frames of answers running at once apart and each in order', async () => {
    const w = await world(burstingModel(CHUNKS, 23), 11);
    for (const request of ['a', 'b', 'c'])
      w.socket.send(JSON.stringify({ request, question: { query: request, relevant: { iterable: [] } } }));
    await w.until(() => ['a', 'b', 'c'].every((r) => w.ended(r)()));
    for (const request of ['a', 'b', 'c']) expect(w.texts(request)).toEqual(expected(CHUNKS));
  });

  it('a stopped answer: STOPPED after every frame streamed, and the conversation keeps exactly what was streamed', async () => {
    const w = await world(burstingModel(120, 40, true), 5);
    const id = (await w.t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'stop' } }))
      .id;
    w.socket.send(
      JSON.stringify({ request: 'long', conversation: id, question: { query: 'tell me everything', relevant: { iterable: [] } } }),
    );
    await w.until(() => w.texts('long').length === 120);
    w.socket.send(JSON.stringify({ request: 'long', conversation: id, stop: true }));
    await w.until(w.ended('long'));
    const frames = w.frames.filter((f) => f.request === 'long');
    expect(frames.map((f) => f.status)).toEqual([...expected(120).map(() => 'IN-PROGRESS'), 'STOPPED']);
    expect(w.texts('long')).toEqual(expected(120));
    expect(await w.messages(id)).toEqual([
      ['USER', 'tell me everything'],
      ['ASSISTANT', expected(120).join('')],
    ]);
  });

  it('a stop ends an answer at once even when the model does not heed its signal, keeping what was streamed', async () => {
    let late = () => {};
    const deaf: ModelAdapter = {
      description: 'deaf to its signal',
      async *answer() {
        for (let i = 0; i < 3; i++) yield chunk(i);
        // Waits on something of its own: the signal's abort never reaches it.
        await new Promise<void>((resolve) => (late = resolve));
        yield chunk(3);
      },
    };
    const w = await world(deaf);
    const id = (await w.t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'deaf' } }))
      .id;
    w.socket.send(JSON.stringify({ request: 'deaf', conversation: id, question: { query: 'q', relevant: { iterable: [] } } }));
    await w.until(() => w.texts('deaf').length === 3);
    w.socket.send(JSON.stringify({ request: 'deaf', conversation: id, stop: true }));
    await w.until(w.ended('deaf'));
    expect(w.frames.filter((f) => f.request === 'deaf').at(-1)!.status).toBe('STOPPED');
    expect(await w.messages(id)).toEqual([
      ['USER', 'q'],
      ['ASSISTANT', expected(3).join('')],
    ]);
    // What the model yields after the stop goes nowhere.
    late();
    await new Promise((r) => setTimeout(r, 20));
    expect(w.texts('deaf')).toEqual(expected(3));
    expect(await w.messages(id)).toEqual([
      ['USER', 'q'],
      ['ASSISTANT', expected(3).join('')],
    ]);
  });

  it('a model that fails right after a burst: every frame of the burst, then FAILED, and nothing stored', async () => {
    const model: ModelAdapter = {
      description: 'fails after a burst',
      async *answer() {
        for (let i = 0; i < 40; i++) yield chunk(i);
        throw new ModelError('The model endpoint failed mid-answer: model overloaded');
      },
    };
    const w = await world(model, 9);
    const id = (await w.t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'fail' } }))
      .id;
    w.socket.send(JSON.stringify({ request: 'fail', conversation: id, question: { query: 'fail', relevant: { iterable: [] } } }));
    await w.until(w.ended('fail'));
    const frames = w.frames.filter((f) => f.request === 'fail');
    expect(frames.map((f) => f.status)).toEqual([...expected(40).map(() => 'IN-PROGRESS'), 'FAILED']);
    expect(w.texts('fail')).toEqual(expected(40));
    expect(await w.messages(id)).toEqual([]);
  });

  it('a stop that comes while a burst is still to be sent: the burst is sent before STOPPED, and is what is stored', async () => {
    // The stop arrives in the same task as a burst of frames not yet sent: none of them is lost.
    let stop = () => {};
    const model: ModelAdapter = {
      description: 'stopped mid-burst',
      async *answer({ signal }) {
        for (let i = 0; i < 30; i++) {
          yield chunk(i);
          if (i === 20) stop();
        }
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    };
    const w = await world(model, 3);
    const id = (await w.t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'stop' } }))
      .id;
    stop = () =>
      void w.t.service.handle(
        new Request(`${BASE}/qgpt/stream`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', [STREAM_HEADER]: 'qgpt' },
          body: JSON.stringify({ request: 'burst', conversation: id, stop: true }),
        }),
      );
    w.socket.send(JSON.stringify({ request: 'burst', conversation: id, question: { query: 'burst', relevant: { iterable: [] } } }));
    await w.until(w.ended('burst'));
    const frames = w.frames.filter((f) => f.request === 'burst');
    expect(frames.at(-1)!.status).toBe('STOPPED');
    const streamed = w.texts('burst');
    expect(streamed).toEqual(expected(streamed.length));
    expect(streamed.length).toBeGreaterThan(20);
    expect(await w.messages(id)).toEqual([
      ['USER', 'burst'],
      ['ASSISTANT', streamed.join('')],
    ]);
  });
});

describe('the OpenAI-compatible adapter reading many events per read', () => {
  /** An endpoint whose event stream arrives in pieces of `piece` bytes (many events in one, or an event over many). */
  function endpoint(events: string[], piece: number) {
    const bytes = new TextEncoder().encode(events.join(''));
    vi.stubGlobal('fetch', async () => {
      let at = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.byteLength) return controller.close();
          controller.enqueue(bytes.slice(at, (at += piece)));
        },
      });
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
    });
  }
  const event = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const done = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

  it('yields each content once, in order, whether an event spans reads or a read holds many events', async () => {
    for (const piece of [1, 3, 64, 1 << 20]) {
      endpoint([...expected(CHUNKS).map(event), done], piece);
      const model = openAiModel({ type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
      const chunks: string[] = [];
      for await (const part of model.answer({ query: 'q', relevant: [], messages: [], signal: new AbortController().signal }))
        chunks.push(part);
      expect(chunks).toEqual(expected(CHUNKS));
    }
  });

  it("made from a configuration: the same chunks, and leaving the answer early cancels the endpoint's body", async () => {
    let cancelled = false;
    const bytes = new TextEncoder().encode([...expected(50).map(event), done].join(''));
    vi.stubGlobal('fetch', async () => {
      let at = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.byteLength) return controller.close();
          controller.enqueue(bytes.slice(at, (at += 100)));
        },
        cancel() {
          cancelled = true;
        },
      });
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
    });
    const model = createModel({ type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
    expect(model.description).toBe('m at http://127.0.0.1:9/v1');
    expect('pull' in model).toBe(false);
    expect(createModel({ type: 'ollama', baseUrl: 'http://127.0.0.1:9/', model: 'm' })).toMatchObject({
      description: 'm at http://127.0.0.1:9 (Ollama)',
      pull: expect.any(Function),
      remove: expect.any(Function),
    });
    const whole: string[] = [];
    for await (const part of model.answer({ query: 'q', relevant: [], messages: [], signal: new AbortController().signal }))
      whole.push(part);
    expect(whole).toEqual(expected(50));
    expect(cancelled).toBe(false);
    const some: string[] = [];
    for await (const part of model.answer({ query: 'q', relevant: [], messages: [], signal: new AbortController().signal })) {
      some.push(part);
      if (some.length === 3) break;
    }
    expect(some).toEqual(expected(3));
    expect(cancelled).toBe(true);
  });

  it('fails when the stream ends before the answer is finished, after yielding what came', async () => {
    endpoint(expected(5).map(event), 1 << 20);
    const model = openAiModel({ type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
    const chunks: string[] = [];
    await expect(
      (async () => {
        for await (const part of model.answer({ query: 'q', relevant: [], messages: [], signal: new AbortController().signal }))
          chunks.push(part);
      })(),
    ).rejects.toThrow('closed the stream before the answer was finished');
    expect(chunks).toEqual(expected(5));
  });
});
