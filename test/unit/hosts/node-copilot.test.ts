/** The copilot on the Node hosts: the model option, and /qgpt/stream through interception and the loopback server. */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as WsSocket } from 'ws';
import type { ModelAdapter } from '../../../src/core/copilot/model.js';
import { setupPiecesServer, type PiecesServer } from '../../../src/node/index.js';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';

const echo: ModelAdapter = {
  description: 'echo',
  async *answer({ query }) {
    yield 'echo ';
    yield query;
  },
};

interface Frame {
  request?: string;
  conversation: string;
  status: string;
  question?: { answers: { iterable: Array<{ text: string }> } };
}

const closers: Array<() => unknown> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** Sends one question on a socket-like object and resolves with its frames once it ended. */
function ask(
  socket: { send(data: string): void; addEventListener?: unknown },
  on: (listener: (data: string) => void) => void,
  query: string,
) {
  return new Promise<Frame[]>((resolve) => {
    const frames: Frame[] = [];
    on((data) => {
      const frame = JSON.parse(data) as Frame;
      if (frame.request !== 'node') return;
      frames.push(frame);
      if (frame.status !== 'IN-PROGRESS') resolve(frames);
    });
    socket.send(JSON.stringify({ request: 'node', question: { query, relevant: { iterable: [] } } }));
  });
}

const text = (frames: Frame[]) =>
  frames
    .filter((f) => f.status === 'IN-PROGRESS')
    .map((f) => f.question!.answers.iterable[0]!.text)
    .join('');

describe('the copilot on the Node hosts', () => {
  it('setupPiecesServer takes a model and answers /qgpt/question and /qgpt/stream', async () => {
    const server: PiecesServer = setupPiecesServer({ sampleAssets: false, model: echo });
    server.listen();
    closers.push(() => server.close());
    const answer = await (
      await fetch('http://localhost:1000/qgpt/question', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"query":"hi","relevant":{"iterable":[]}}',
      })
    ).json();
    expect(answer.answers.iterable[0].text).toBe('echo hi');

    const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
    await new Promise((resolve) => (socket.onopen = resolve));
    const frames = await ask(
      socket,
      (listener) => socket.addEventListener('message', (event) => listener(String(event.data))),
      'from node',
    );
    socket.close();
    expect(frames.map((f) => f.status)).toEqual(['IN-PROGRESS', 'IN-PROGRESS', 'COMPLETED']);
    expect(text(frames)).toBe('echo from node');
    const stored = await (await fetch(`http://localhost:1000/conversation/${frames[0]!.conversation}/messages`)).json();
    expect(stored.iterable.map((m: { role: string }) => m.role)).toEqual(['USER', 'ASSISTANT']);
  });

  it('the loopback server carries /qgpt/stream over a real socket', async () => {
    const server: LoopbackServer = await startLoopbackServer({ port: 0, sampleAssets: false, model: echo });
    closers.push(() => server.close());
    const socket = new WsSocket(`${server.url.replace(/^http/, 'ws')}/qgpt/stream`);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    // Sent as soon as the client is open, before the service's side of the socket is: kept, not lost.
    const frames = await ask(socket, (listener) => socket.on('message', (data) => listener(String(data))), 'over the loopback');
    socket.close();
    expect(frames.at(-1)!.status).toBe('COMPLETED');
    expect(text(frames)).toBe('echo over the loopback');
  });
});
