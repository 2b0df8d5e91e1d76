// @vitest-environment node
/** The loopback server: the same answers as the in-process core, over a real port, HTTP and WebSocket. */
import { Configuration, ConversationsApi } from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';
import { createNodeHost } from '../../../src/node/host.js';
import { formatEntry } from '../../../src/core/log.js';

/** Deterministic ids and times, so that two services answer byte for byte alike. */
const clock = () => {
  let n = 0;
  return {
    newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    now: () => new Date(Date.UTC(2025, 0, 1, 0, 0, n)),
  };
};

describe('startLoopbackServer', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0, ...clock() });
  });
  afterAll(() => server.close());

  it('answers each request with the bytes the in-process service gives', async () => {
    const reference = createNodeHost({ bases: [server.url], ...clock() });
    const requests: Array<[string, RequestInit?]> = [
      [
        '/conversations/create',
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"COPILOT","name":"a","messages":[{"role":"USER","fragment":{"string":{"raw":"hi"}}}]}',
        },
      ],
      ['/conversations'],
      ['/conversations?transferables=false'],
      ['/conversations/identifiers'],
      ['/assets/identifiers'],
      ['/conversations/create/from_asset/6c1b5a3e-0f4c-4c39-9f63-1d2a8b7e0a01', { method: 'POST' }],
      ['/conversations/create', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"type":"CHAT"}' }],
      ['/conversations/stream/identifiers'],
      ['/applications', { method: 'DELETE' }],
      ['/nowhere'],
    ];
    for (const [path, init] of requests) {
      const [real, expected] = await Promise.all([fetch(server.url + path, init), reference.fetch(server.url + path, init)]);
      expect([real.status, real.headers.get('content-type'), await real.text()], path).toEqual([
        expected.status,
        expected.headers.get('content-type'),
        await expected.text(),
      ]);
    }
  });

  it('serves the official SDK unchanged', async () => {
    const api = new ConversationsApi(new Configuration({ basePath: server.url }));
    const created = await api.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'from the SDK' } });
    const all = await api.conversationsSnapshot({});
    expect(all.iterable.map((c) => c.id)).toContain(created.id);
  });

  it('serves the identifier stream over a real WebSocket, live', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/conversations/stream/identifiers`);
    const messages: string[] = [];
    const next = () => new Promise<unknown>((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
    socket.on('message', (data) => messages.push(String(data)));
    const first = (await next()) as { iterable: unknown[] };
    expect(first.iterable.length).toBeGreaterThan(0);
    const live = next();
    const created = (await (await fetch(`${server.url}/conversations/create`, { method: 'POST' })).json()) as { id: string };
    expect(await live).toEqual({ iterable: [{ conversation: { id: created.id } }] });
    socket.close();
  });

  it('carries the copilot socket both ways', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/qgpt/stream`);
    const frames: Array<{ request?: string; status: string }> = [];
    socket.on('message', (data) => frames.push(JSON.parse(String(data))));
    await new Promise((open) => socket.once('open', open));
    const completed = new Promise<void>((done) => socket.on('message', () => frames.some((f) => f.status === 'COMPLETED') && done()));
    socket.send(JSON.stringify({ request: 'q1', question: { query: 'retry with backoff', relevant: { iterable: [] } } }));
    await completed;
    expect(frames.map((f) => f.status)[0]).toBe('IN-PROGRESS');
    expect(frames.every((f) => f.request === 'q1')).toBe(true);
    socket.close();
  });

  it('refuses a WebSocket on another path with 404', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/applications`);
    const status = await new Promise((resolve) => socket.on('unexpected-response', (_request, response) => resolve(response.statusCode)));
    expect(status).toBe(404);
  });

  it('drops the connection for a network-error override, and answers after it', async () => {
    await server.use({ operation: 'applicationsSnapshot', networkError: true, once: true });
    await expect(fetch(`${server.url}/applications`)).rejects.toThrow(TypeError);
    expect((await fetch(`${server.url}/applications`)).status).toBe(200);
  });

  it('offers the controls over HTTP under /__pieces/, outside the API', async () => {
    const post = (path: string, body?: unknown) =>
      fetch(`${server.url}/__pieces/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Pieces-Control': '1' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await post('reset')).status).toBe(204);
    expect(
      (await post('seed', { conversations: [{ id: '55555555-5555-4555-8555-555555555555', type: 'COPILOT', name: 'over HTTP' }] })).status,
    ).toBe(204);
    const exported = (await (await fetch(`${server.url}/__pieces/export`, { headers: { 'X-Pieces-Control': '1' } })).json()) as {
      conversations: Array<{ name: string }>;
    };
    expect(exported.conversations.map((c) => c.name)).toEqual(['over HTTP']);
    expect((await post('use', { operation: 'conversationsSnapshot', status: 418, body: 'teapot', once: true })).status).toBe(204);
    expect((await fetch(`${server.url}/conversations`)).status).toBe(418);
    expect((await post('use', [{ path: '/applications', status: 503 }])).status).toBe(204);
    expect((await post('reset-overrides')).status).toBe(204);
    expect((await fetch(`${server.url}/applications`)).status).toBe(200);
    const bad = await post('seed', { conversations: [{ type: 'CHAT' }] });
    expect([bad.status, await bad.text()]).toEqual([400, 'data.conversations[0].type must be one of UNKNOWN, COPILOT; got "CHAT".']);
    expect((await post('use', { operation: 'nope', status: 500 })).status).toBe(400);
    expect((await post('nothing')).status).toBe(404);
    expect((await fetch(`${server.url}/__pieces/reset`, { headers: { 'X-Pieces-Control': '1' } })).status).toBe(405);
    await post('reset');
  });
});

describe('startLoopbackServer with log (serve --log)', () => {
  let server: LoopbackServer;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0, log: (entry) => lines.push(formatEntry(entry)) });
  });
  afterAll(() => server.close());

  /** The lines logged while `action` ran, without their time. */
  async function logged(action: () => Promise<unknown>) {
    const from = lines.length;
    await action();
    return lines.slice(from).map((line) => line.replace(/^\[pieces-os-worker\] \d\d:\d\d:\d\d /, '').replace(/\(\d+ ms\)/, '(N ms)'));
  }
  const ws = (path: string) => new WebSocket(`${server.url.replace('http', 'ws')}${path}`);

  it('prints a WebSocket connection as one, with its operation: WS … 101 Switching Protocols, not GET … 200', async () => {
    expect(
      await logged(async () => {
        const socket = ws('/conversations/stream/identifiers');
        await new Promise((first) => socket.once('message', first));
        socket.close();
      }),
    ).toEqual(['conversationsStreamIdentifiers WS /conversations/stream/identifiers 101 Switching Protocols (N ms)']);
  });

  it('prints the copilot socket: its connection, then each question sent on it as a message', async () => {
    const socket = ws('/qgpt/stream');
    expect(await logged(() => new Promise((open) => socket.once('open', open)))).toEqual([
      'qgptStream WS /qgpt/stream 101 Switching Protocols (N ms)',
    ]);
    expect(
      await logged(async () => {
        const completed = new Promise<void>((done) =>
          socket.on('message', (data) => JSON.parse(String(data)).status === 'COMPLETED' && done()),
        );
        socket.send(JSON.stringify({ request: 'q1', question: { query: 'retry with backoff', relevant: { iterable: [] } } }));
        await completed;
      }),
    ).toEqual(['qgptStream WS /qgpt/stream message 200 OK (N ms)']);
    socket.close();
  });

  it('prints a refused WebSocket with its status, and plain requests as before', async () => {
    expect(
      await logged(async () => {
        const socket = ws('/applications');
        await new Promise((refused) => socket.on('unexpected-response', refused));
        await fetch(`${server.url}/conversations/stream/identifiers`);
        await fetch(`${server.url}/applications`);
      }),
    ).toEqual([
      'WS /applications 404 Not Found (N ms)',
      'conversationsStreamIdentifiers GET /conversations/stream/identifiers 426 Upgrade Required (N ms)',
      'applicationsSnapshot GET /applications 200 OK (N ms)',
    ]);
  });
});
