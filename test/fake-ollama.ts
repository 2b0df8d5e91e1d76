/**
 * A fake Ollama server on 127.0.0.1 for tests and the benchmark: its pull API
 * (`POST /api/pull`, one JSON object per line, as Ollama streams it), its delete
 * API (`DELETE /api/delete`) and its OpenAI-compatible chat endpoint
 * (`POST /v1/chat/completions`, streamed). The model name picks the pull's behaviour:
 *   - any name: a manifest line, then two layers of 1 MB in 10 steps each, then verifying, success;
 *   - `slow:…`: the same, 30 ms between lines (to cancel it halfway);
 *   - `broken:…`: two layers' lines, then an `{"error": …}` line (as Ollama reports a failed pull);
 *   - `missing:…`: only `{"error":"pull model manifest: file does not exist"}`;
 *   - `cut:…`: a few lines, then the connection is destroyed;
 *   - `many:<n>`: n progress lines of one layer, each its own write, as fast as possible.
 * Pulled models are remembered: a delete of one that was never pulled is a 404.
 * CORS is open, so a page on another origin can call it directly.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { freePort } from './free-port.js';

export interface FakeOllama {
  /** Ollama's address, e.g. `http://127.0.0.1:PORT` (the `baseUrl` of an `ollama` model configuration). */
  baseUrl: string;
  /** Every request received: method, path and JSON body. */
  requests: Array<{ method: string; path: string; body: Record<string, unknown> }>;
  /** Models pulled to the end (and not deleted since). */
  pulled: Set<string>;
  close(): Promise<void>;
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'content-type, authorization, accept',
  'Access-Control-Allow-Methods': 'POST, DELETE, OPTIONS',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => setImmediate(resolve));

export async function startFakeOllama(): Promise<FakeOllama> {
  const requests: FakeOllama['requests'] = [];
  const pulled = new Set<string>();
  const sockets = new Set<Socket>();

  async function pull(model: string, res: ServerResponse) {
    res.writeHead(200, { ...CORS, 'Content-Type': 'application/x-ndjson' });
    const line = (value: object) => res.write(`${JSON.stringify(value)}\n`);
    if (model.startsWith('missing:')) {
      res.end(`${JSON.stringify({ error: 'pull model manifest: file does not exist' })}\n`);
      return;
    }
    if (model.startsWith('many:')) {
      const n = Number(model.slice(5)) || 1000;
      line({ status: 'pulling manifest' });
      for (let i = 1; i <= n && !res.destroyed; i++) {
        line({ status: 'pulling aaaa', digest: 'sha256:aaaa', total: n, completed: i });
        await tick();
      }
      line({ status: 'success' });
      pulled.add(model);
      res.end();
      return;
    }
    const wait = model.startsWith('slow:') ? 30 : 0;
    line({ status: 'pulling manifest' });
    const layers = ['sha256:1111', 'sha256:2222'];
    const total = 1_000_000;
    let lines = 0;
    for (const digest of layers) {
      for (let step = 0; step <= 10; step++) {
        if (res.destroyed) return;
        if (model.startsWith('cut:') && ++lines === 5) {
          res.destroy();
          return;
        }
        line({ status: `pulling ${digest.slice(7)}`, digest, total, completed: (total / 10) * step });
        if (wait) await sleep(wait);
        else await tick();
      }
      if (model.startsWith('broken:')) {
        res.end(`${JSON.stringify({ error: 'max retries exceeded: connection reset by peer' })}\n`);
        return;
      }
    }
    line({ status: 'verifying sha256 digest' });
    line({ status: 'writing manifest' });
    line({ status: 'success' });
    pulled.add(model);
    res.end();
  }

  async function chat(body: { model: string; messages: Array<{ content: string }> }, res: ServerResponse) {
    res.writeHead(200, { ...CORS, 'Content-Type': 'text/event-stream' });
    const question = body.messages.at(-1)?.content ?? '';
    for (const word of `Ollama ${body.model} says: ${question}`.split(' ')) {
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `${word} ` }, finish_reason: null }] })}\n\n`);
      await tick();
    }
    res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
  }

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    let raw = '';
    for await (const part of req) raw += part;
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      res.writeHead(400, { ...CORS, 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid JSON' }));
      return;
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', body });
    const model = String(body.model ?? body.name ?? '');
    if (req.method === 'POST' && req.url === '/api/pull') return pull(model, res);
    if (req.method === 'POST' && req.url === '/v1/chat/completions') return chat(body as never, res);
    if (req.method === 'DELETE' && req.url === '/api/delete') {
      if (!pulled.delete(model)) {
        res.writeHead(404, { ...CORS, 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `model '${model}' not found` }));
        return;
      }
      res.writeHead(200, CORS).end();
      return;
    }
    res.writeHead(404, { ...CORS, 'Content-Type': 'text/plain' }).end('404 page not found');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listenOn = await freePort();
  await new Promise<void>((resolve) => server.listen(listenOn, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    pulled,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
