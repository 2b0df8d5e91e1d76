// @vitest-environment node
/**
 * The loopback server under hostile clients (issue 33): each attack, scaled down to what proves its
 * mechanism, on loopback only, bounded in count and time. While each runs, health is answered and
 * the store holds what it should; after it, nothing it opened is left behind.
 */
import { request as httpRequest, createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { formatEntry } from '../../../src/core/log.js';
import { setupPiecesServer } from '../../../src/node/index.js';
import { loopbackState, startLoopbackServer, type LoopbackOptions, type LoopbackServer } from '../../../src/node/serve.js';
import { raw } from '../support/raw-http.js';

let servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function start(options: LoopbackOptions = {}) {
  const server = await startLoopbackServer({ port: 0, sampleAssets: false, ...options });
  servers.push(server);
  return server;
}

/** A TCP connection to the server. */
const tcp = (server: LoopbackServer) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });

/** What the server sent on a raw connection until it closed it. */
const untilClosed = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
  });

/** Health is answered (on a connection of its own). */
const healthy = async (server: LoopbackServer) => expect((await raw(server, '/.well-known/health')).status).toBe(200);
const stored = async (server: LoopbackServer) => JSON.stringify(await server.exportData());
const HANDSHAKE = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;
const KEY = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

describe('1. rejected WebSocket handshakes', () => {
  it('leave no stream, timer or subscription behind (300 upgrades without a key)', async () => {
    const server = await start({ data: { conversations: [{ type: 'COPILOT', name: 'kept' }] } });
    const before = await stored(server);
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const socket = await tcp(server);
          socket.write(HANDSHAKE('/conversations/stream/identifiers'));
          return untilClosed(socket);
        }),
      );
      for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      await healthy(server);
    }
    expect(loopbackState(server).streams).toBe(0);
    // An accepted one opens its stream, and closes it when its client leaves.
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/conversations/stream/identifiers`);
    await new Promise((first) => socket.once('message', first));
    expect(loopbackState(server).streams).toBe(1);
    socket.close();
    await expect.poll(() => loopbackState(server).streams).toBe(0);
    expect(await stored(server)).toBe(before);
  });
});

describe('2. a client that does not read', () => {
  it('holds up its own answers only: pipelined requests are answered one at a time, as it reads', async () => {
    const operations: string[] = [];
    const big = 'x'.repeat(256 * 1024);
    const server = await start({
      data: { conversations: Array.from({ length: 4 }, (_, i) => ({ type: 'COPILOT' as const, name: `${i}${big}` })) },
      log: (entry) => operations.push(formatEntry(entry)),
    });
    const before = await stored(server);
    const count = 30;
    const socket = await tcp(server);
    socket.pause();
    socket.write('GET /conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(count));
    // While it reads nothing, others are answered, and its requests wait instead of being answered into memory.
    for (let i = 0; i < 5; i++) await healthy(server);
    const answered = () => operations.filter((line) => line.includes('conversationsSnapshot')).length;
    expect(answered()).toBeLessThan(count);
    expect(loopbackState(server).connections).toBeGreaterThanOrEqual(1);
    // Once it reads, every answer comes, whole and in order.
    let received = 0;
    // Counted as they come: the status line of each answer (the last bytes kept, in case one is split).
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      const seen = tail + chunk.toString('latin1');
      received += seen.split('HTTP/1.1 200 OK').length - 1;
      tail = seen.slice(-14);
    });
    socket.resume();
    await expect.poll(() => received, { timeout: 20_000 }).toBe(count);
    socket.destroy();
    expect(answered()).toBe(count);
    expect(await stored(server)).toBe(before);
  });
});

describe('3. bounds on connections, time and memory', () => {
  it('keeps at most maxConnections open, closing idle ones first, and answers health throughout (60 idle sockets)', async () => {
    const server = await start({ maxConnections: 16 });
    const idle = await Promise.all(Array.from({ length: 60 }, () => tcp(server)));
    await healthy(server);
    expect(loopbackState(server).connections).toBeLessThanOrEqual(16);
    for (const socket of idle) socket.destroy();
  });

  it('answers 503 to a connection over the limit when none is idle, and serves again once one ends', async () => {
    const server = await start({ maxConnections: 4 });
    const busy: Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const socket = await tcp(server);
      socket.write(
        `POST /conversations/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":`,
      );
      busy.push(socket);
    }
    await expect.poll(() => loopbackState(server).bodyBytes).toBe(400);
    const refused = await tcp(server);
    refused.write('GET /.well-known/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await untilClosed(refused)).toMatch(/^HTTP\/1\.1 503 [\s\S]*Too many connections/);
    busy.shift()!.destroy();
    await expect.poll(() => loopbackState(server).connections).toBe(3);
    await healthy(server);
    for (const socket of busy) socket.destroy();
    expect((await server.exportData()).conversations).toEqual([]);
  });

  it('answers 503 to a body over the bytes in flight, and every other client keeps being answered', async () => {
    const server = await start({ maxBodyBytesInFlight: 1024 * 1024 });
    const before = await stored(server);
    const head = `POST /conversations/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${600 * 1024}\r\n\r\n{"type":`;
    const first = await tcp(server);
    first.write(head);
    await expect.poll(() => loopbackState(server).bodyBytes).toBe(600 * 1024);
    const second = await tcp(server);
    second.write(head);
    expect(await untilClosed(second)).toMatch(/^HTTP\/1\.1 503 [\s\S]*Too many request bodies in flight/);
    await healthy(server);
    first.destroy();
    await expect.poll(() => loopbackState(server).bodyBytes).toBe(0);
    expect(await stored(server)).toBe(before);
  });

  it('closes an unfinished body, slow headers and a silent connection with 408 once their time is up', async () => {
    const server = await start({ headersTimeout: 300, requestTimeout: 600 });
    const before = await stored(server);
    const unfinished = await tcp(server);
    unfinished.write(
      `POST /conversations/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":`,
    );
    const slow = await tcp(server);
    slow.write('GET /conversations HTTP/1.1\r\nHost: 127');
    const silent = await tcp(server);
    const closed = Promise.all([unfinished, slow, silent].map(untilClosed));
    await healthy(server);
    const [body, headers, nothing] = await closed;
    expect(body).toMatch(/^HTTP\/1\.1 408 /);
    expect(headers).toMatch(/^HTTP\/1\.1 408 /);
    expect(nothing).toMatch(/^(HTTP\/1\.1 408 )?/);
    await expect.poll(() => loopbackState(server).connections).toBe(0);
    expect(await stored(server)).toBe(before);
  });

  it('closes a WebSocket whose frame is larger than a request body may be (1009)', async () => {
    const server = await start({ maxBodyBytes: 64 * 1024 });
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/qgpt/stream`);
    await new Promise((open) => socket.once('open', open));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send('x'.repeat(64 * 1024 + 1));
    expect(await closed).toBe(1009);
    await healthy(server);
    await expect.poll(() => loopbackState(server).streams).toBe(0);
  });

  it('drops a WebSocket client that does not read once more than a frame limit waits for it, and nothing else', async () => {
    // A model that answers without end, until it is stopped.
    const flood = {
      description: 'a flood',
      async *answer({ signal }: { signal: AbortSignal }) {
        const chunk = 'y'.repeat(16 * 1024);
        while (!signal.aborted) {
          yield chunk;
          await new Promise((next) => setImmediate(next));
        }
      },
    };
    const server = await start({ model: flood, maxBodyBytes: 256 * 1024 });
    const socket = await tcp(server);
    socket.write(HANDSHAKE('/qgpt/stream', KEY));
    await new Promise((open) => socket.once('data', open));
    // One masked text frame (a zero mask: the payload as it is), then nothing is read.
    socket.pause();
    const question = Buffer.from(JSON.stringify({ request: 'q1', question: { query: 'go on', relevant: { iterable: [] } } }));
    socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | 126, question.length >> 8, question.length & 0xff, 0, 0, 0, 0]), question]));
    await expect.poll(() => loopbackState(server).streams).toBe(1);
    await healthy(server);
    await expect.poll(() => loopbackState(server).streams, { timeout: 20_000 }).toBe(0);
    await healthy(server);
    socket.destroy();
  });

  it('answers questions over maxQuestionsInFlight on one copilot socket with FAILED 429, running at most that many', async () => {
    const server = await start({ maxQuestionsInFlight: 4 });
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/qgpt/stream`);
    const frames: Array<{ request: string; status: string; statusCode?: number }> = [];
    const running = new Set<string>();
    let most = 0;
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as (typeof frames)[number];
      frames.push(frame);
      if (frame.status === 'IN-PROGRESS') running.add(frame.request);
      else running.delete(frame.request);
      most = Math.max(most, running.size);
    });
    await new Promise((open) => socket.once('open', open));
    const count = 20;
    for (let i = 0; i < count; i++)
      socket.send(JSON.stringify({ request: `q${i}`, question: { query: `question ${i}`, relevant: { iterable: [] } } }));
    const ended = () => new Set(frames.filter((f) => f.status !== 'IN-PROGRESS').map((f) => f.request)).size;
    await healthy(server);
    await expect.poll(ended, { timeout: 20_000 }).toBe(count);
    const refused = frames.filter((f) => f.status === 'FAILED' && f.statusCode === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({
      status: 'FAILED',
      statusCode: 429,
      errorMessage: expect.stringMatching(/Too many questions in flight/),
    });
    expect(frames.filter((f) => f.status === 'COMPLETED').length).toBe(count - refused.length);
    expect(most).toBeLessThanOrEqual(4);
    // Answered questions are stored; refused ones are not.
    expect((await server.exportData()).conversations).toHaveLength(count - refused.length);
    socket.close();
  });
});

describe('5. web pages of other sites', () => {
  const evil = 'http://evil.example';

  it('cannot delete, rename or read records, by simple requests, preflights or sockets', async () => {
    const server = await start({
      data: { conversations: [{ id: '0f8fad5b-d9cb-469f-a165-70867728950e', type: 'COPILOT', name: 'mine' }] },
    });
    const before = await stored(server);
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const attempts = [
      raw(server, `/conversations/${id}/delete`, { method: 'POST', headers: { Origin: evil } }),
      raw(server, '/conversation/update', {
        method: 'POST',
        headers: { Origin: evil, 'Content-Type': 'text/plain' },
        body: JSON.stringify({ id, type: 'COPILOT', name: 'pwned' }),
      }),
      raw(server, '/conversations', { headers: { Origin: evil } }),
      raw(server, `/conversations/${id}/delete`, { method: 'OPTIONS', headers: { Origin: evil, 'Access-Control-Request-Method': 'POST' } }),
      raw(server, '/conversations', { headers: { Origin: 'null' } }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).toBe(403);
      expect(answer.body).toMatch(/--allowed-origins/);
      expect(answer.body).not.toContain('mine');
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
    for (const path of ['/conversations/stream/identifiers', '/qgpt/stream']) {
      const socket = await tcp(server);
      socket.write(HANDSHAKE(path, `${KEY}Origin: ${evil}\r\n`));
      expect(await untilClosed(socket), path).toMatch(/^HTTP\/1\.1 403 /);
    }
    await healthy(server);
    expect(loopbackState(server).streams).toBe(0);
    expect(await stored(server)).toBe(before);
  });

  it('answers loopback origins and the allowed ones with their own origin (never *), and clients without an Origin', async () => {
    const server = await start({ allowedOrigins: ['https://app.example'] });
    for (const from of ['http://localhost:5173', 'http://127.0.0.1:8080', 'http://[::1]:3000', 'https://app.example']) {
      const answer = await raw(server, '/conversations', { headers: { Origin: from } });
      expect([answer.status, answer.headers['access-control-allow-origin'], answer.headers.vary], from).toEqual([200, from, 'Origin']);
      const preflight = await raw(server, '/conversations/create', {
        method: 'OPTIONS',
        headers: { Origin: from, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
      expect(
        [preflight.status, preflight.headers['access-control-allow-origin'], preflight.headers['access-control-allow-headers']],
        from,
      ).toEqual([204, from, 'content-type']);
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    }
    expect((await raw(server, '/conversations', { headers: { Origin: 'http://localhost.evil.example' } })).status).toBe(403);
    expect((await raw(server, '/conversations')).status).toBe(200);
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/conversations/stream/identifiers`, {
      headers: { Origin: 'http://localhost:5173' },
    });
    await new Promise((first) => socket.once('message', first));
    socket.close();
    // The controls still take only the listed origins.
    expect((await raw(server, '/__pieces/export', { headers: { Origin: 'http://localhost:5173', 'X-Pieces-Control': '1' } })).status).toBe(
      403,
    );
    expect((await raw(server, '/__pieces/export', { headers: { Origin: 'https://app.example', 'X-Pieces-Control': '1' } })).status).toBe(
      200,
    );
  });
});

describe('6. methods and upgrades nothing here serves', () => {
  it('answers TRACE and CONNECT with 501, and a request upgrading to another protocol as a plain one', async () => {
    const server = await start();
    expect((await raw(server, '/conversations', { method: 'TRACE' })).status).toBe(501);
    const connecting = await tcp(server);
    connecting.write('CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
    expect(await untilClosed(connecting)).toMatch(/^HTTP\/1\.1 501 [\s\S]*not a proxy/);
    const h2c = await tcp(server);
    h2c.write(
      'GET /.well-known/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
    );
    expect(await untilClosed(h2c)).toMatch(/^HTTP\/1\.1 200 /);
    await healthy(server);
  });

  it('lets a proxy-style request go out untouched while setupPiecesServer listens', async () => {
    const target = createServer((request, response) => response.end(`got ${request.url}`));
    await new Promise<void>((listening) => target.listen(0, '127.0.0.1', listening));
    const { port } = target.address() as { port: number };
    const pieces = setupPiecesServer();
    pieces.listen();
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const request = httpRequest({ hostname: '127.0.0.1', port, path: 'http://example.test/page' }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve(text));
        });
        request.on('error', reject);
        request.end();
      });
      expect(body).toBe('got http://example.test/page');
    } finally {
      pieces.close();
      target.close();
    }
  });
});
