/**
 * A fake OpenAI-compatible chat-completions server on 127.0.0.1 for tests and
 * the benchmark. The requested `model` picks the behaviour:
 *   - any name: streams `Answer to: <question>` one word per chunk, then [DONE];
 *   - `slow`: the same, 40 ms between chunks (to stop it halfway);
 *   - `cut`: three chunks, then the connection is destroyed;
 *   - `error-event`: two chunks, then an error event `{"error":{"message":"model overloaded"}}`;
 *   - `missing`: 404 `{"error":{"message":"model \"missing\" not found, try pulling it first"}}`;
 *   - `count`: `max_tokens` chunks of `max_tokens` characters ("x"), each its own write, for throughput;
 *     `count-paced`: the same, 5 ms between chunks (a fast local model's pace);
 *   - `numbered`: `max_tokens` chunks `<i>:é€😀;` (i from 0), written in bursts of 1 to 7 events per
 *     write (so that one read holds many); `numbered-slow`: the same, 5 ms between bursts.
 * CORS is open, so a page on another origin can call it directly.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from './free-port.js';

export interface FakeOpenAi {
  /** The base URL to configure, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Every chat-completions request received: body and headers. */
  requests: Array<{
    body: { model: string; messages: Array<{ role: string; content: string }>; max_tokens?: number };
    headers: IncomingMessage['headers'];
  }>;
  close(): Promise<void>;
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'content-type, authorization, accept',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function chunk(content: string, finish: string | null = null) {
  return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: finish ? {} : { content }, finish_reason: finish }] })}\n\n`;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: FakeOpenAi['requests'] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { ...CORS, 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    let raw = '';
    for await (const part of req) raw += part;
    const body = JSON.parse(raw) as FakeOpenAi['requests'][number]['body'];
    requests.push({ body, headers: req.headers });
    if (body.model === 'missing') {
      res.writeHead(404, { ...CORS, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'model "missing" not found, try pulling it first' } }));
      return;
    }
    res.writeHead(200, { ...CORS, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    res.flushHeaders();
    if (body.model === 'numbered' || body.model === 'numbered-slow') {
      const n = body.max_tokens ?? 100;
      for (let i = 0, burst = 1; i < n; burst = (burst % 7) + 1) {
        let write = '';
        for (const end = Math.min(n, i + burst); i < end; i++) write += chunk(`${i}:é€😀;`);
        if (res.destroyed) return;
        res.write(write);
        if (body.model === 'numbered-slow') await sleep(5);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
      return;
    }
    if (body.model === 'count' || body.model === 'count-paced') {
      const n = body.max_tokens ?? 100;
      const piece = 'x'.repeat(n);
      // One network write per chunk, as a model streams them.
      for (let i = 0; i < n; i++) {
        res.write(chunk(piece));
        if (body.model === 'count-paced') await sleep(5);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
      return;
    }
    const question = body.messages.at(-1)?.content ?? '';
    const words = `Answer to: ${question}`.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
    for (const [i, word] of words.entries()) {
      if (body.model === 'cut' && i === 3) {
        await sleep(20);
        res.destroy();
        return;
      }
      if (body.model === 'error-event' && i === 2) {
        res.end(`data: ${JSON.stringify({ error: { message: 'model overloaded' } })}\n\n`);
        return;
      }
      if (res.destroyed) return;
      res.write(chunk(word));
      if (body.model === 'slow') await sleep(40);
    }
    res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listenOn = await freePort();
  await new Promise<void>((resolve) => server.listen(listenOn, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
