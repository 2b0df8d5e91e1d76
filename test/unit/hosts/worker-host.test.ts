/** The worker host: its fetch and message wiring, and the routes added to an app's own Router. */
import { DEFAULT_BASES } from '../../../src/shared/bases.js';
import { describe, expect, it, vi } from 'vitest';
import { Route, Router } from 'workbox-routing';
import { addPiecesRoutes, createPiecesWorker, startWorker } from '../../../src/worker/index.js';
import type { ExtendableMessageEventLike, FetchEventLike, ServiceWorkerScope } from '../../../src/worker/sw-types.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import type { PageReply } from '../../../src/host/protocol.js';
import { VERSION } from '../../../src/shared/version.js';
import { ID_HEADER, LOST, REPLAY_HEADER } from '../../../src/port/protocol.js';

let counter = 0;
const databaseName = () => `host-${Date.now()}-${counter++}`;

/** A scope that records its listeners, so that a test can dispatch events to them. */
function fakeScope() {
  const listeners = new Map<string, Array<(event: never) => void>>();
  let claims = 0;
  const scope = {
    location: { href: 'http://127.0.0.1/pieces-os-worker.js' },
    clients: { claim: async () => void claims++ },
    skipWaiting: async () => {},
    addEventListener: (type: string, listener: (event: never) => void) => listeners.set(type, [...(listeners.get(type) ?? []), listener]),
  } as unknown as ServiceWorkerScope;
  const dispatch = (type: string, event: object) => {
    for (const listener of listeners.get(type) ?? []) listener(event as never);
  };
  /** Dispatches a fetch event; resolves with the response, or undefined when the worker let it pass. */
  const fetch = (request: Request) => {
    let answered: Promise<Response> | Response | undefined;
    dispatch('fetch', {
      request,
      respondWith: (r: Promise<Response> | Response) => (answered = r),
      waitUntil: () => {},
    } satisfies Partial<FetchEventLike>);
    return answered === undefined ? undefined : Promise.resolve(answered);
  };
  /** Posts a page request; resolves with the worker's reply on the message port. */
  const message = (data: unknown) =>
    new Promise<PageReply>((resolve) => {
      const { port1, port2 } = new MessageChannel();
      port1.onmessage = (event) => {
        port1.close();
        resolve(event.data as PageReply);
      };
      dispatch('message', { data, ports: [port2], waitUntil: () => {} } satisfies Partial<ExtendableMessageEventLike>);
    });
  return { scope, dispatch, fetch, message, claims: () => claims };
}

describe('startWorker', () => {
  it('answers fetches under the bases and lets every other request pass to the network', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName(), bases: ['http://localhost:4321/api'] });
    const answered = await host.fetch(new Request('http://localhost:4321/api/applications'));
    expect(answered?.status).toBe(200);
    expect(((await answered!.json()) as { iterable: Array<{ name: string }> }).iterable.map((a) => a.name)).toEqual(['OS_SERVER']);
    expect(host.fetch(new Request('http://localhost:1000/applications'))).toBeUndefined();
    expect(host.fetch(new Request('http://127.0.0.1/index.html'))).toBeUndefined();
  });

  it('takes control on activation and when a page asks, and answers the page API', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName(), sampleAssets: false });
    host.dispatch('activate', { waitUntil: () => {} });
    expect(await host.message({ type: 'pieces:claim' })).toEqual({ ok: true });
    expect(host.claims()).toBe(2);
    expect(await host.message({ type: 'pieces:hello', version: VERSION })).toEqual({
      ok: true,
      version: VERSION,
      bases: DEFAULT_BASES,
    });
    expect(
      await host.message({ type: 'pieces:report-external-applications', applications: [{ name: 'Obsidian', version: '1.5.1' }] }),
    ).toEqual({ ok: true });
    const external = await (await host.fetch(new Request('http://localhost:1000/applications/external')))!.json();
    expect(JSON.stringify(external)).toContain('Obsidian');
  });

  it('stores added assets and announces each on the changes channel, as every write is', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName(), sampleAssets: false });
    const heard: unknown[] = [];
    const channel = new BroadcastChannel(CHANGES_CHANNEL);
    // The read cache's notices to other connections travel on the same channel: only announcements count here.
    channel.onmessage = (event) => (event.data as { type?: string })?.type === 'change' && heard.push(event.data);
    const id = crypto.randomUUID();
    expect(await host.message({ type: 'pieces:add-assets', assets: [{ id, name: 'a.ts', text: 'x' }] })).toEqual({ ok: true });
    await host.fetch(
      new Request('http://localhost:1000/connect', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"application":{"name":"VS_CODE","version":"1","platform":"LINUX"}}',
      }),
    );
    await vi.waitFor(() => expect(heard).toHaveLength(4));
    channel.close();
    // The asset, its format and annotation (on their own streams), then the application.
    expect(heard).toEqual([
      { type: 'change', change: { seq: 1, collection: 'asset', id } },
      { type: 'change', change: expect.objectContaining({ seq: 2, collection: 'format' }) },
      { type: 'change', change: expect.objectContaining({ seq: 3, collection: 'annotation' }) },
      { type: 'change', change: expect.objectContaining({ seq: 4, collection: 'application' }) },
    ]);
  });

  it('tells every page its version once it has taken over, and that it started over when its database was wiped', async () => {
    const host = fakeScope();
    const name = databaseName();
    startWorker(host.scope, { databaseName: name, sampleAssets: false });
    const heard: unknown[] = [];
    const page = new BroadcastChannel(CHANGES_CHANNEL);
    // What pages are told (not the read caches' 'written', which other connections hear on the same channel).
    page.onmessage = (event) => event.data !== 'written' && heard.push(event.data);
    host.dispatch('activate', { waitUntil: () => {} });
    await vi.waitFor(() => expect(heard).toEqual([{ type: 'worker', version: VERSION }]));
    const before = (await (await host.fetch(
      new Request('http://localhost:1000/conversations/stream/identifiers', { headers: { 'X-Pieces-Stream': 'handshake' } }),
    ))!.json()) as object;
    expect(before).toBeDefined();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(name);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    });
    expect((await host.fetch(new Request('http://localhost:1000/conversations/identifiers')))!.status).toBe(200);
    await vi.waitFor(() =>
      expect(heard).toEqual([
        { type: 'worker', version: VERSION },
        { type: 'database', identity: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      ]),
    );
    page.close();
  });

  it('takes a model option, and switches the model when a page asks (kept across restarts)', async () => {
    const name = databaseName();
    const host = fakeScope();
    const echo = {
      description: 'echo',
      async *answer({ query }: { query: string }) {
        yield `echo ${query}`;
      },
    };
    startWorker(host.scope, { databaseName: name, model: echo });
    const ask = async (h: ReturnType<typeof fakeScope>) => {
      const response = await h.fetch(
        new Request('http://localhost:1000/qgpt/question', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"query":"hi","relevant":{"iterable":[]}}',
        }),
      );
      return ((await response!.json()) as { answers: { iterable: Array<{ text: string }> } }).answers.iterable[0]!.text;
    };
    expect(await ask(host)).toBe('echo hi');
    expect(await host.message({ type: 'pieces:get-model' })).toEqual({ ok: true, model: 'echo' });
    expect(await host.message({ type: 'pieces:set-model', model: { type: 'extractive' } })).toEqual({
      ok: true,
      model: 'no model (extractive answers)',
    });
    expect(await ask(host)).toMatch(/^No model is configured/);
    expect(await host.message({ type: 'pieces:set-model', model: { type: 'openai', baseUrl: 'not a url', model: 'm' } })).toEqual({
      ok: false,
      error: 'model.baseUrl must be an http(s) URL, not "not a url".',
    });
    // A restarted worker keeps the page's choice over its own option.
    const restarted = fakeScope();
    startWorker(restarted.scope, { databaseName: name, model: echo });
    expect(await restarted.message({ type: 'pieces:get-model' })).toEqual({ ok: true, model: 'no model (extractive answers)' });
    expect(await restarted.message({ type: 'pieces:set-model' })).toEqual({ ok: true, model: 'echo' });
    expect(await ask(restarted)).toBe('echo hi');
  });

  it('refuses malformed page requests with a message, storing nothing', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName(), sampleAssets: false });
    expect(await host.message({ type: 'pieces:nope' })).toEqual({ ok: false, error: 'Unknown page request "pieces:nope".' });
    expect(await host.message(null)).toMatchObject({ ok: false });
    const reply = await host.message({ type: 'pieces:add-assets', assets: [{ name: 7 }] });
    expect(reply.ok).toBe(false);
    const assets = await (await host.fetch(new Request('http://localhost:1000/assets/identifiers')))!.json();
    expect(assets).toEqual({ iterable: [] });
  });
});

describe('addPiecesRoutes', () => {
  it("adds the service to an app's existing Router, next to the app's own routes", async () => {
    const host = fakeScope();
    const router = new Router();
    router.registerRoute(new Route(({ url }) => url.pathname === '/app/hello', { handle: async () => new Response('from the app') }));
    addPiecesRoutes(router, { databaseName: databaseName(), sampleAssets: false }, host.scope);
    const handle = (url: string, init?: RequestInit) => router.handleRequest({ request: new Request(url, init), event: {} as never });

    expect(await (await handle('http://127.0.0.1/app/hello'))!.text()).toBe('from the app');
    const created = await handle('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"type":"COPILOT","name":"from the app\'s worker"}',
    });
    expect(created!.status).toBe(200);
    const { id } = (await created!.json()) as { id: string };
    const identifiers = await (await handle('http://localhost:39300/conversations/identifiers'))!.json();
    expect(identifiers).toEqual({ iterable: [{ id }] });
    expect((await handle('http://localhost:1000/nowhere'))!.status).toBe(404);
    expect((await handle('http://localhost:1000/applications', { method: 'DELETE' }))!.status).toBe(405);
    expect(handle('http://127.0.0.1/other')).toBeUndefined();
    // The page API is served too.
    expect(await host.message({ type: 'pieces:hello', version: VERSION })).toMatchObject({ ok: true, version: VERSION });
  });

  it("with no router, adds the routes to Workbox's default router (the one behind registerRoute)", async () => {
    const host = fakeScope();
    addPiecesRoutes(undefined, { databaseName: databaseName(), sampleAssets: false, bases: ['http://localhost:4555'] }, host.scope);
    // Workbox's default router listens for fetch events on the global scope.
    const answer = (url: string) => {
      let answered: Promise<Response> | Response | undefined;
      const event = Object.assign(new Event('fetch'), {
        request: new Request(url),
        respondWith: (r: Promise<Response> | Response) => (answered = r),
      });
      self.dispatchEvent(event);
      return answered === undefined ? undefined : Promise.resolve(answered);
    };
    expect((await answer('http://localhost:4555/applications'))?.status).toBe(200);
    expect(answer('http://127.0.0.1/app.js')).toBeUndefined();
  });

  it("answers the fetch fallbacks of the page's fast path through the app's Router without running a write twice", async () => {
    const host = fakeScope();
    const router = new Router();
    addPiecesRoutes(router, { databaseName: databaseName(), sampleAssets: false }, host.scope);
    const create = (headers: Record<string, string>) =>
      router.handleRequest({
        request: new Request('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...headers },
          body: '{"type":"COPILOT","name":"sent over a port first"}',
        }),
        event: {} as never,
      })!;
    const ids = async () =>
      (
        (await (
          await router.handleRequest({ request: new Request('http://localhost:1000/conversations/identifiers'), event: {} as never })!
        ).json()) as { iterable: unknown[] }
      ).iterable;
    // Acknowledged over a port by a worker instance that stopped since: this one never received it.
    const replay = await create({ [ID_HEADER]: 'c0ffee00-0000-4000-8000-000000000001', [REPLAY_HEADER]: 'only' });
    expect([replay.status, replay.headers.get(REPLAY_HEADER)]).toEqual([503, LOST]);
    expect(await ids()).toEqual([]);
    // Sent by fetch with its id: run once; the same id again is not run again.
    const id = { [ID_HEADER]: 'c0ffee00-0000-4000-8000-000000000002' };
    expect((await create(id)).status).toBe(200);
    expect((await create(id)).headers.get(REPLAY_HEADER)).toBe(LOST);
    expect(await ids()).toHaveLength(1);
  });
});

describe('createPiecesWorker', () => {
  it('serves a plain fetch listener (no Workbox in the app) and the page API', async () => {
    const host = fakeScope();
    const pieces = createPiecesWorker({ databaseName: databaseName(), sampleAssets: false }, host.scope);
    host.scope.addEventListener('fetch', (event) => {
      const response = pieces.respond(event.request, event);
      if (response !== undefined) event.respondWith(response);
    });
    expect((await host.fetch(new Request('http://localhost:1000/conversations')))?.status).toBe(200);
    expect(host.fetch(new Request('http://127.0.0.1/index.html'))).toBeUndefined();
    expect(await host.message({ type: 'pieces:hello', version: VERSION })).toMatchObject({ ok: true, version: VERSION });
  });
});

describe('the test controls through page messages', () => {
  it('reset, seed, export, use and resetOverrides reach the worker service', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName() });
    const get = async (path: string) => (await host.fetch(new Request(`http://localhost:1000${path}`)))!;
    const conversation = { id: '33333333-3333-4333-8333-333333333333', type: 'COPILOT', name: 'seeded' };
    expect(await host.message({ type: 'pieces:seed', data: { conversations: [conversation] } })).toEqual({ ok: true });
    expect(await (await get('/conversations/identifiers')).json()).toEqual({ iterable: [{ id: conversation.id }] });
    const exported = (await host.message({ type: 'pieces:export' })) as {
      ok: true;
      data: { conversations: Array<{ id: string }>; assets: unknown[] };
    };
    expect(exported.data.conversations.map((c) => c.id)).toEqual([conversation.id]);
    expect(exported.data.assets).toHaveLength(4);

    expect(
      await host.message({
        type: 'pieces:use',
        overrides: [{ operation: 'conversationsSnapshot', status: 503, body: 'down', once: true }],
      }),
    ).toEqual({ ok: true });
    const overridden = await get('/conversations');
    expect([overridden.status, await overridden.text()]).toEqual([503, 'down']);
    expect((await get('/conversations')).status).toBe(200);
    await host.message({ type: 'pieces:use', overrides: [{ path: '/applications', networkError: true }] });
    expect((await get('/applications')).type).toBe('error');
    expect(await host.message({ type: 'pieces:reset-overrides' })).toEqual({ ok: true });
    expect((await get('/applications')).status).toBe(200);

    // Back to the initial data: the sample assets, no conversation.
    expect(await host.message({ type: 'pieces:reset' })).toEqual({ ok: true });
    expect(await (await get('/conversations/identifiers')).json()).toEqual({ iterable: [] });
    expect(((await (await get('/assets/identifiers')).json()) as { iterable: unknown[] }).iterable).toHaveLength(4);
  });

  it('refuses bad seeds and overrides with their message', async () => {
    const host = fakeScope();
    startWorker(host.scope, { databaseName: databaseName(), sampleAssets: false });
    expect(await host.message({ type: 'pieces:seed', data: { conversations: [{ type: 'CHAT' }] } })).toEqual({
      ok: false,
      error: 'data.conversations[0].type must be one of UNKNOWN, COPILOT; got "CHAT".',
    });
    expect(await host.message({ type: 'pieces:use', overrides: [{ operation: 'nope', status: 500 }] })).toMatchObject({
      ok: false,
      error: expect.stringContaining('must name an operation'),
    });
    expect(await host.message({ type: 'pieces:use', overrides: 'all' })).toEqual({
      ok: false,
      error: "override must be an object such as { operation: 'conversationsSnapshot', status: 500 }.",
    });
  });
});

describe('overrides across worker restarts', () => {
  it('hold until reset, with a used-up once override staying used up', async () => {
    const name = databaseName();
    const first = fakeScope();
    startWorker(first.scope, { databaseName: name, sampleAssets: false });
    await first.message({
      type: 'pieces:use',
      overrides: [
        { operation: 'applicationsSnapshot', status: 500, once: true },
        { operation: 'conversationsSnapshot', status: 503 },
      ],
    });
    expect((await first.fetch(new Request('http://localhost:1000/applications')))!.status).toBe(500);

    // The browser stops the worker; a new one starts on the same database.
    const second = fakeScope();
    startWorker(second.scope, { databaseName: name, sampleAssets: false });
    expect((await second.fetch(new Request('http://localhost:1000/conversations')))!.status).toBe(503);
    expect((await second.fetch(new Request('http://localhost:1000/applications')))!.status).toBe(200);
    await second.message({ type: 'pieces:reset-overrides' });

    const third = fakeScope();
    startWorker(third.scope, { databaseName: name, sampleAssets: false });
    expect((await third.fetch(new Request('http://localhost:1000/conversations')))!.status).toBe(200);
  });
});

describe('log', () => {
  it('prints one line per request in the worker console when asked, nothing otherwise', async () => {
    const lines: string[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.join(' '));
    try {
      const quiet = fakeScope();
      startWorker(quiet.scope, { databaseName: databaseName(), sampleAssets: false });
      await quiet.fetch(new Request('http://localhost:1000/applications'));
      expect(lines).toEqual([]);
      const loud = fakeScope();
      startWorker(loud.scope, { databaseName: databaseName(), sampleAssets: false, log: true });
      await loud.fetch(new Request('http://localhost:1000/applications'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^\[pieces-os-worker\] \d\d:\d\d:\d\d applicationsSnapshot GET \/applications 200 OK \(\d+ ms\)$/);
    } finally {
      console.log = original;
    }
  });
});
