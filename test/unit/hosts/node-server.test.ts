/** The Node host: interception for the bases only, restored globals, isolation, overrides, data, log, stream. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { setupPiecesServer, WebSocket as ExportedWebSocket, type PiecesServer } from '../../../src/node/index.js';
import type { LogEntry } from '../../../src/core/log.js';
import { freePort } from '../../free-port.js';

const BASE = 'http://localhost:1000';
const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';
const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

const servers: PiecesServer[] = [];
function server(options: Parameters<typeof setupPiecesServer>[0] = {}) {
  const created = setupPiecesServer({ sampleAssets: false, ...options });
  servers.push(created);
  created.listen();
  return created;
}
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A real local HTTP server that records what reaches it. */
async function realServer() {
  const seen: string[] = [];
  const httpServer = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'Access-Control-Allow-Origin': '*' });
    res.end('from the network');
  });
  const listenOn = await freePort();
  await new Promise<void>((resolve) => httpServer.listen(listenOn, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return { seen, url: `http://127.0.0.1:${port}`, port, close: () => new Promise((r) => httpServer.close(r)) };
}

const get = (url: string) =>
  new Promise<string>((resolve, reject) => {
    const req = http.request(url, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve(`${res.statusCode} ${body}`));
    });
    req.on('error', reject);
    req.end();
  });

const xhr = (url: string) =>
  new Promise<string>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('GET', url);
    request.onload = () => resolve(`${request.status} ${request.responseText}`);
    request.onerror = () => reject(new Error('network error'));
    request.send();
  });

/** Opens a socket and records its messages' items; resolves with the socket once the first message came. */
function listen(Socket: typeof WebSocket = WebSocket, url = STREAM) {
  const messages: Array<Array<{ conversation: { id: string }; deleted?: true }>> = [];
  const socket = new Socket(url);
  const first = new Promise<void>((resolve, reject) => {
    socket.onmessage = (event) => {
      messages.push(JSON.parse(String(event.data)).iterable);
      if (messages.length === 1) resolve();
    };
    socket.onerror = () => reject(new Error('the stream failed'));
  });
  /** The ids the socket knows after applying its messages. */
  const ids = () => {
    const known: string[] = [];
    for (const item of messages.flat()) {
      const at = known.indexOf(item.conversation.id);
      if (item.deleted) known.splice(at, 1);
      else if (at < 0) known.push(item.conversation.id);
    }
    return known;
  };
  return { socket, messages, first, ids };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

const storeIds = async () =>
  ((await (await fetch(`${BASE}/conversations/identifiers`)).json()) as { iterable: { id: string }[] }).iterable.map((c) => c.id);

describe('interception', () => {
  it('answers fetch, http, XMLHttpRequest and WebSocket under the bases', async () => {
    server();
    const created = (await (await fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT', name: 'one' }))).json()) as { id: string };
    expect(await get(`${BASE}/conversations/identifiers`)).toBe(`200 {"iterable":[{"id":"${created.id}"}]}`);
    expect(await xhr('http://localhost:39300/conversations/identifiers')).toBe(`200 {"iterable":[{"id":"${created.id}"}]}`);
    const stream = listen();
    await stream.first;
    expect(stream.messages[0]).toEqual([{ conversation: { id: created.id } }]);
    stream.socket.close();
  });

  it('lets every other request go out untouched', async () => {
    server();
    const network = await realServer();
    const sockets = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    sockets.on('connection', (connection) => connection.send('from the real socket'));
    try {
      expect(await (await fetch(`${network.url}/a`)).text()).toBe('from the network');
      expect(await get(`${network.url}/b`)).toBe('200 from the network');
      expect(await xhr(`${network.url}/c`)).toBe('200 from the network');
      // (happy-dom's fetch and XMLHttpRequest send their CORS preflights too.)
      expect(network.seen.filter((line) => line.startsWith('GET'))).toEqual(['GET /a', 'GET /b', 'GET /c']);
      // Same host, other port: not a base.
      const port = (sockets.address() as AddressInfo).port;
      const socket = new WebSocket(`ws://127.0.0.1:${port}/conversations/stream/identifiers`);
      expect(await new Promise((resolve) => (socket.onmessage = (event) => resolve(event.data)))).toBe('from the real socket');
      socket.close();
    } finally {
      sockets.close();
      await network.close();
    }
  });

  it('hands a fetch outside the bases to the fetch there was, its arguments as given (not through the interceptors)', async () => {
    const original = globalThis.fetch;
    const before = vi.fn(async (..._args: unknown[]) => new Response('from the network'));
    globalThis.fetch = before as unknown as typeof fetch;
    try {
      const s = server();
      const init = { method: 'POST', body: 'a body' };
      const request = new Request('https://app.example.test/other');
      expect(await (await fetch('https://app.example.test/api', init)).text()).toBe('from the network');
      await fetch(request);
      expect(before.mock.calls).toEqual([
        ['https://app.example.test/api', init],
        [request, undefined],
      ]);
      expect(before.mock.calls[1]![0]).toBe(request);
      // Under the bases: the service answers, and Node's fetch is not called.
      expect((await fetch(`${BASE}/applications`)).status).toBe(200);
      expect(before).toHaveBeenCalledTimes(2);
      s.close();
      expect(globalThis.fetch).toBe(before);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('close() restores every patched global', async () => {
    const before = {
      fetch: globalThis.fetch,
      XMLHttpRequest: globalThis.XMLHttpRequest,
      WebSocket: globalThis.WebSocket,
      request: http.request,
      get: http.get,
    };
    const s = server();
    expect(globalThis.fetch).not.toBe(before.fetch);
    s.close();
    expect({
      fetch: globalThis.fetch,
      XMLHttpRequest: globalThis.XMLHttpRequest,
      WebSocket: globalThis.WebSocket,
      request: http.request,
      get: http.get,
    }).toEqual(before);
    // Nothing listens on the base: the request goes to the network and fails there.
    await expect(get(`${BASE}/applications`)).rejects.toThrow(/ECONNREFUSED/);
    s.listen();
    expect((await fetch(`${BASE}/applications`)).status).toBe(200);
  });

  it('keeps two servers apart: their data, their bases and their streams', async () => {
    const a = server({ bases: ['http://localhost:1000'] });
    const b = server({ bases: ['http://localhost:2000'] });
    const streamA = listen(WebSocket, STREAM);
    const streamB = listen(WebSocket, 'ws://localhost:2000/conversations/stream/identifiers');
    await Promise.all([streamA.first, streamB.first]);
    const created = (await (await fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT' }))).json()) as { id: string };
    await until(() => streamA.messages.length === 2);
    expect(streamA.ids()).toEqual([created.id]);
    expect(await (await fetch('http://localhost:2000/conversations/identifiers')).json()).toEqual({ iterable: [] });
    expect((await b.exportData()).conversations).toEqual([]);
    expect((await a.exportData()).conversations.map((c) => c.id)).toEqual([created.id]);
    // Nothing reached B's socket: one more write to B arrives as its second message.
    await fetch('http://localhost:2000/conversations/create', json({ type: 'COPILOT' }));
    await until(() => streamB.messages.length === 2);
    expect(streamB.messages[1]).not.toContainEqual({ conversation: { id: created.id } });
    streamA.socket.close();
    streamB.socket.close();
  });

  it('exports a WebSocket class for runtimes without one', async () => {
    server();
    const stream = listen(ExportedWebSocket);
    await stream.first;
    expect(stream.messages[0]).toEqual([]);
    expect(stream.socket).toBeInstanceOf(ExportedWebSocket);
    expect(stream.socket.readyState).toBe(ExportedWebSocket.OPEN);
    stream.socket.close();
    expect({}).not.toBeInstanceOf(ExportedWebSocket);
  });
});

describe('stream', () => {
  it('loses and doubles nothing under concurrent writes, seeds and resets', async () => {
    const s = server();
    const stream = listen();
    await stream.first;
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT', name: `c${i}` })).then((r) => r.json() as Promise<{ id: string }>),
      ),
    );
    await Promise.all(created.slice(0, 5).map(({ id }) => fetch(`${BASE}/conversations/${id}/delete`, { method: 'POST' })));
    await s.seed({ conversations: [{ id: '00000000-0000-4000-8000-000000000001', type: 'COPILOT', name: 'seeded' }] });
    const expected = await storeIds();
    await until(() => stream.ids().length === expected.length);
    expect(stream.ids()).toEqual(expected);
    const seen = stream.messages
      .slice(1)
      .flat()
      .map((item) => `${item.conversation.id}${item.deleted ? ' deleted' : ''}`);
    expect(new Set(seen).size).toBe(seen.length);
    await s.reset();
    await until(() => stream.ids().length === 0);
    expect(await storeIds()).toEqual([]);
    stream.socket.close();
  });

  it('fails a stream socket as a refused connection under a network-error override', async () => {
    const s = server();
    await s.use({ operation: 'conversationsStreamIdentifiers', networkError: true });
    const socket = new WebSocket(STREAM);
    const events: string[] = [];
    socket.onopen = () => events.push('open');
    socket.onerror = () => events.push('error');
    const closed = new Promise<CloseEvent>((resolve) => (socket.onclose = resolve));
    expect((await closed).code).toBe(1006);
    expect(events).toEqual(['error']);
  });
});

describe('overrides', () => {
  it('answer a status and body by operation, by path and method, and once', async () => {
    const s = server();
    await s.use(
      { operation: 'conversationsSnapshot', status: 500, body: 'The database is on fire.' },
      { path: '/applications/{application}', method: 'GET', status: 404, body: { message: 'gone' }, once: true },
    );
    const failed = await fetch(`${BASE}/conversations`);
    expect([failed.status, failed.headers.get('content-type'), await failed.text()]).toEqual([
      500,
      'text/plain; charset=utf-8',
      'The database is on fire.',
    ]);
    const id = crypto.randomUUID();
    const once = await fetch(`${BASE}/applications/${id}`);
    expect([once.status, await once.json()]).toEqual([404, { message: 'gone' }]);
    // Used up: the service answers (its own 404 message).
    expect(await (await fetch(`${BASE}/applications/${id}`)).text()).toBe(`No application with id ${id}.`);
    // Method filter: a POST to the same path is not matched.
    expect((await fetch(`${BASE}/conversations`, { method: 'POST' })).status).toBe(405);
    await s.resetOverrides();
    expect((await fetch(`${BASE}/conversations`)).status).toBe(200);
  });

  it('the newest override wins', async () => {
    const s = server();
    await s.use({ operation: 'applicationsSnapshot', status: 500 });
    await s.use({ operation: 'applicationsSnapshot', status: 503 });
    expect((await fetch(`${BASE}/applications`)).status).toBe(503);
  });

  it("answer with their headers in place of the service's of the same name, in any case", async () => {
    const s = server();
    await s.use({
      operation: 'conversationsSnapshot',
      status: 200,
      body: '<p>No conversations.</p>',
      headers: { 'content-type': 'text/html', 'cache-control': 'max-age=60' },
    });
    const answered = await fetch(`${BASE}/conversations`);
    expect([answered.headers.get('content-type'), answered.headers.get('cache-control'), await answered.text()]).toEqual([
      'text/html',
      'max-age=60',
      '<p>No conversations.</p>',
    ]);
  });

  it('fail with a network error', async () => {
    const s = server();
    await s.use({ path: '/conversations/identifiers', networkError: true, once: true });
    await expect(fetch(`${BASE}/conversations/identifiers`)).rejects.toThrow(TypeError);
    await expect(get(`${BASE}/applications`)).resolves.toMatch(/^200/);
    await s.use({ path: '/applications', networkError: true });
    await expect(get(`${BASE}/applications`)).rejects.toThrow();
    await expect(xhr(`${BASE}/applications`)).rejects.toThrow('network error');
  });

  it('delay the real answer, or their own', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const s = server();
      await s.use(
        { operation: 'conversationsCreateSpecificConversation', delay: 2_000 },
        { operation: 'applicationsSnapshot', delay: 500, status: 500 },
      );
      let settled = false;
      const pending = s.fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT', name: 'slow' })).then((r) => {
        settled = true;
        return r;
      });
      await vi.advanceTimersByTimeAsync(1_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const response = await pending;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { name: string }).name).toBe('slow');
      const failing = s.fetch(`${BASE}/applications`);
      await vi.advanceTimersByTimeAsync(500);
      expect((await failing).status).toBe(500);
    } finally {
      vi.useRealTimers();
    }
  });

  it('are refused with a message when malformed', async () => {
    const s = server();
    // A misspelt operation does not compile; at run time it is refused with the name it was meant to be.
    // @ts-expect-error 'conversationsSnapshots' is not an operation name
    await expect(s.use({ operation: 'conversationsSnapshots', status: 500 })).rejects.toThrow(
      /must name an operation.*Did you mean conversationsSnapshot\?/,
    );
    await expect(s.use({ operation: 'conversationsSnapshot' })).rejects.toThrow(/changes nothing/);
    await expect(s.use({ path: 'conversations', status: 500 })).rejects.toThrow(/starting with \//);
    await expect(s.use({ operation: 'conversationsSnapshot', status: 500, networkError: true })).rejects.toThrow(/cannot both/);
    await expect(s.use({ operation: 'conversationsSnapshot', body: 'x' })).rejects.toThrow(/needs a status/);
    await expect(s.use({ operation: 'conversationsSnapshot', delay: -1 })).rejects.toThrow(/delay/);
  });
});

describe('data', () => {
  const clock = () => {
    let n = 0;
    let t = Date.UTC(2025, 0, 1);
    return {
      newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
      now: () => new Date((t += 1000)),
    };
  };

  it('round-trips: export, reset, seed, export is byte for byte the same', async () => {
    const s = server({ sampleAssets: true, ...clock() });
    const app = { id: crypto.randomUUID(), name: 'VS_CODE', version: '1.2.3', platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
    await fetch(`${BASE}/applications/register`, json(app));
    await fetch(`${BASE}/applications/usage/engagement/interaction`, json({ description: 'clicked' }));
    const session = (await (await fetch(`${BASE}/applications/session/open`, { method: 'POST' })).json()) as { id: string };
    await fetch(`${BASE}/applications/session/close`, json(JSON.stringify(session.id)));
    await fetch(
      `${BASE}/conversations/create`,
      json({ type: 'COPILOT', name: 'a', messages: [{ role: 'USER', fragment: { string: { raw: 'hi' } } }] }),
    );
    const assets = ((await (await fetch(`${BASE}/assets/identifiers`)).json()) as { iterable: { id: string }[] }).iterable;
    await fetch(`${BASE}/conversations/create/from_asset/${assets[0]!.id}`, { method: 'POST' });
    const exported = JSON.stringify(await s.exportData());
    await s.reset();
    expect(JSON.stringify(await s.exportData())).not.toBe(exported);
    await s.seed(JSON.parse(exported));
    expect(JSON.stringify(await s.exportData())).toBe(exported);
    // What was seeded is served as it was before.
    const snapshot = (await (await fetch(`${BASE}/conversations`)).json()) as { iterable: Array<{ name: string }> };
    expect(snapshot.iterable.map((c) => c.name)).toEqual(['a', expect.any(String)]);
  });

  it('keeps ids and times as given, assigns missing ones, and serves seeded records through the API', async () => {
    const s = server(clock());
    await s.seed({
      conversations: [
        {
          id: '11111111-1111-4111-8111-111111111111',
          type: 'COPILOT',
          name: 'Seeded',
          created: { value: '2024-05-01T10:00:00Z' },
          messages: [{ role: 'USER', fragment: { string: { raw: 'Hello' } } }],
        },
      ],
    });
    const conversation = (await (await fetch(`${BASE}/conversations`)).json()) as {
      iterable: Array<{
        id: string;
        created: { value: string };
        updated: { value: string };
        messages: { iterable: Array<{ id: string; reference: { created: { value: string } } }> };
      }>;
    };
    const [only] = conversation.iterable;
    expect(only!.id).toBe('11111111-1111-4111-8111-111111111111');
    expect(only!.created.value).toBe('2024-05-01T10:00:00Z');
    expect(only!.updated.value).toBe('2024-05-01T10:00:00Z');
    expect(only!.messages.iterable[0]!.id).toBe('00000000-0000-4000-8000-000000000001');
    expect(only!.messages.iterable[0]!.reference.created.value).toBe('2024-05-01T10:00:00Z');
  });

  it('refuses invalid data with a message, changing nothing', async () => {
    const s = server();
    await s.seed({ conversations: [{ type: 'COPILOT', name: 'kept' }] });
    const before = JSON.stringify(await s.exportData());
    await expect(s.seed({ conversations: [{ type: 'CHAT' }] })).rejects.toThrow(
      'data.conversations[0].type must be one of UNKNOWN, COPILOT; got "CHAT".',
    );
    await expect(s.seed({ conversations: [{ messages: [{ role: 'USER' } as never] }] })).rejects.toThrow(
      'data.conversations[0].messages[0].fragment is required.',
    );
    await expect(s.seed({ applications: [{ id: 'x' } as never] })).rejects.toThrow(/data.applications\[0\].id must be a UUID/);
    await expect(s.seed({ sessions: [{ opened: { value: 'yesterday' } }] })).rejects.toThrow(/ISO-8601/);
    await expect(s.seed({ convos: [] } as never)).rejects.toThrow(/unknown key "convos"/);
    expect(JSON.stringify(await s.exportData())).toBe(before);
    expect(() => setupPiecesServer({ data: { assets: [{ name: 'a.ts' } as never] } })).toThrow('data.assets[0].text is required.');
  });

  it('carries materials: seeded by kind in the order given, exported so, and the same after export, wipe, seed', async () => {
    const s = server(clock());
    const stamp = { value: '2024-05-01T10:00:00.000Z' };
    const [ada, bob, tuesday] = [
      '33333333-3333-4333-8333-333333333333',
      '11111111-1111-4111-8111-111111111111',
      '22222222-2222-4222-8222-222222222222',
    ];
    await s.seed({
      materials: {
        // Listed in creation order, not by id; each record its SDK model (here a Person, a Hint).
        person: [
          { id: ada, type: { basic: { name: 'Ada' } }, created: stamp, updated: stamp },
          { id: bob, type: { basic: { name: 'Bob' } }, created: stamp, updated: stamp },
        ],
        // Id and times assigned when missing.
        hint: [
          { type: 'SUGGESTED_QUERY', text: 'Monday' },
          { id: tuesday, type: 'QGPT_HINT', text: 'Tuesday' },
        ],
      },
    });
    const exported = await s.exportData();
    expect(exported.materials).toEqual({
      person: [
        { id: ada, type: { basic: { name: 'Ada' } }, created: stamp, updated: stamp },
        { id: bob, type: { basic: { name: 'Bob' } }, created: stamp, updated: stamp },
      ],
      hint: [
        {
          type: 'SUGGESTED_QUERY',
          text: 'Monday',
          id: '00000000-0000-4000-8000-000000000001',
          created: { value: '2025-01-01T00:00:01.000Z' },
          updated: { value: '2025-01-01T00:00:01.000Z' },
        },
        {
          id: tuesday,
          type: 'QGPT_HINT',
          text: 'Tuesday',
          created: { value: '2025-01-01T00:00:02.000Z' },
          updated: { value: '2025-01-01T00:00:02.000Z' },
        },
      ],
    });
    const text = JSON.stringify(exported);
    await s.reset();
    expect((await s.exportData()).materials).toEqual({});
    await s.seed(JSON.parse(text));
    expect(JSON.stringify(await s.exportData())).toBe(text);
    // Seeded again without a wipe: a material given again keeps its place in its kind's order.
    await s.seed({ materials: { person: [{ ...exported.materials.person![0]!, type: { basic: { name: 'Ada L.' } } }] } });
    expect((await s.exportData()).materials.person!.map((p) => [p.id, (p.type as { basic: { name: string } }).basic.name])).toEqual([
      [ada, 'Ada L.'],
      [bob, 'Bob'],
    ]);
  });

  it('refuses an invalid materials section with a message naming where, loading none of it', async () => {
    const s = server();
    const stamp = { value: '2024-05-01T10:00:00Z' };
    await s.seed({ materials: { person: [{ id: '44444444-4444-4444-8444-444444444444', created: stamp, type: {} }] } });
    const before = JSON.stringify(await s.exportData());
    const refused: Array<[unknown, string | RegExp]> = [
      [[], 'data.materials must be a JSON object, not an array.'],
      [{ people: [] }, /^data.materials has an unknown kind "people"; the kinds are .*\bperson\b/],
      [JSON.parse('{"__proto__": []}'), /^data.materials has an unknown kind "__proto__"/],
      [{ person: {} }, /^data.materials.person must be an array, not /],
      [
        { hint: [{ type: 'QGPT_HINT', text: 'kept?' }], person: [{ type: {} }, 'Ada'] },
        'data.materials.person[1] must be a JSON object, not a string.',
      ],
      [{ person: [{ id: 'p1' }] }, 'data.materials.person[0].id must be a UUID, not "p1".'],
      [
        { range: [{ created: { value: 'yesterday' } }] },
        'data.materials.range[0].created.value must be an ISO-8601 date, not "yesterday".',
      ],
      [{ person: [{ updated: stamp.value }] }, 'data.materials.person[0].updated must be a JSON object, not a string.'],
      [
        {
          person: [
            { id: '55555555-5555-4555-8555-555555555555', type: {} },
            { id: '55555555-5555-4555-8555-555555555555', type: {} },
          ],
        },
        'data.materials.person lists 55555555-5555-4555-8555-555555555555 twice.',
      ],
      // Each record strictly its kind's SDK model.
      [{ person: [{ type: { basic: { name: 7 } } }] }, /^data\.materials\.person\[0\]\.type\.basic\.name: /],
      [{ hint: [{ type: 'SOMETIMES', text: 'x' }] }, /^data\.materials\.hint\[0\]\.type: /],
      [{ person: [{ type: {}, nickname: 'A' }] }, /^data\.materials\.person\[0\]\.nickname: /],
      [
        { person: [{ type: { basic: { name: Number.NaN } } }] },
        'data.materials.person[0].type.basic.name must be JSON (null, a string, a number, a boolean, a list or an object), not NaN.',
      ],
      [{ person: [{ seen: [new Date(0)] }] }, /^data.materials.person\[0\].seen\[0\] must be JSON .*, not a Date\.$/],
    ];
    for (const [materials, message] of refused) {
      await expect(s.seed({ materials } as never)).rejects.toThrow(message);
      expect(JSON.stringify(await s.exportData())).toBe(before);
    }
    expect(() => setupPiecesServer({ data: { materials: { people: [] } } as never })).toThrow(
      /^data.materials has an unknown kind "people"/,
    );
  });

  it('reset() goes back to the initial data: sample assets and the data option', async () => {
    const s = server({
      sampleAssets: true,
      data: { conversations: [{ id: '22222222-2222-4222-8222-222222222222', type: 'COPILOT', name: 'start' }] },
    });
    await fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT' }));
    await fetch(`${BASE}/conversations/22222222-2222-4222-8222-222222222222/delete`, { method: 'POST' });
    await s.reset();
    expect(await storeIds()).toEqual(['22222222-2222-4222-8222-222222222222']);
    expect(((await (await fetch(`${BASE}/assets/identifiers`)).json()) as { iterable: unknown[] }).iterable).toHaveLength(4);
  });
});

describe('now, newId and log', () => {
  it('make ids and times deterministic, and log each request once', async () => {
    const entries: LogEntry[] = [];
    server({
      now: () => new Date('2025-02-03T04:05:06Z'),
      newId: () => 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
      log: (entry) => entries.push(entry),
    });
    const created = (await (await fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT' }))).json()) as {
      id: string;
      created: { value: string };
    };
    expect([created.id, created.created.value]).toEqual(['aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', '2025-02-03T04:05:06.000Z']);
    await fetch(`${BASE}/nowhere`);
    expect(entries.map(({ operation, method, path, status, overridden }) => ({ operation, method, path, status, overridden }))).toEqual([
      {
        operation: 'conversationsCreateSpecificConversation',
        method: 'POST',
        path: '/conversations/create',
        status: 200,
        overridden: false,
      },
      { operation: undefined, method: 'GET', path: '/nowhere', status: 404, overridden: false },
    ]);
  });

  it('prints nothing unless asked', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) => vi.spyOn(console, method));
    try {
      const s = server();
      await fetch(`${BASE}/conversations`);
      await fetch(`${BASE}/conversations/create`, json({ type: 'COPILOT' }));
      await s.reset();
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('log: true prints one line per request the way MSW does', async () => {
    const spy = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      server({ log: true });
      await fetch(`${BASE}/conversations?transferables=false`);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]![0]).toMatch(
        /^\[pieces-os-worker\] \d\d:\d\d:\d\d conversationsSnapshot GET \/conversations\?transferables=false 200 OK \(\d+ ms\)$/,
      );
    } finally {
      spy.mockRestore();
    }
  });
});

describe('kept overrides (the worker keeps them in its database)', () => {
  it('are in force before the first answer; discovery answers without waiting for them', async () => {
    const { createService } = await import('../../../src/core/service.js');
    const { memoryStorage } = await import('../../../src/storage/memory.js');
    let release!: (list: unknown) => void;
    const saved: unknown[] = [];
    const service = createService({
      storage: await memoryStorage(),
      keepOverrides: { load: () => new Promise((resolve) => (release = resolve)), save: async (list) => void saved.push(list) },
    });
    expect(await (await service.handle(new Request(`${BASE}/.well-known/health`))).text()).toBe('ok');
    let settled = false;
    const pending = service.handle(new Request(`${BASE}/conversations`)).then((response) => {
      settled = true;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(false);
    release([{ operation: 'conversationsSnapshot', status: 503, once: true }, { nonsense: true }]);
    expect((await pending).status).toBe(503);
    // The used-up override was written away; the malformed one was dropped.
    expect(saved.at(-1)).toEqual([]);
    expect((await service.handle(new Request(`${BASE}/conversations`))).status).toBe(200);
  });
});

describe('the copilot socket', () => {
  it('carries questions from the client and answers frames, in-process', async () => {
    server();
    const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
    const frames: Array<{ request?: string; status: string }> = [];
    socket.onmessage = (event) => frames.push(JSON.parse(String(event.data)));
    await new Promise((resolve) => (socket.onopen = resolve));
    socket.send(JSON.stringify({ request: 'q1', question: { query: 'retry with backoff', relevant: { iterable: [] } } }));
    await until(() => frames.some((f) => f.request === 'q1' && f.status === 'COMPLETED'));
    expect(frames[0]).toMatchObject({ request: 'q1', status: 'IN-PROGRESS' });
    socket.close();
  });
});

describe('servers on the same bases', () => {
  it('the most recent listen() answers; closing it hands back to the other', async () => {
    const first = server({ data: { conversations: [{ type: 'COPILOT', name: 'first' }] } });
    const second = server({ data: { conversations: [{ type: 'COPILOT', name: 'second' }] } });
    const names = async () =>
      ((await (await fetch(`${BASE}/conversations`)).json()) as { iterable: Array<{ name: string }> }).iterable.map((c) => c.name);
    expect(await names()).toEqual(['second']);
    second.close();
    expect(await names()).toEqual(['first']);
    first.close();
  });
});
