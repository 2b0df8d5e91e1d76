import { describe, expect, it } from 'vitest';
import * as sdk from '@pieces.app/pieces-os-client';
import { catalogueEntries, knownOperation } from '../../../src/core/catalogue.js';
import { OPERATIONS } from '../../../src/core/routes.js';
import { SOCKETS, socketKind } from '../../../src/core/stream-wire.js';
import { BASE, application, dump, jsonPost, setup } from '../support/harness.js';

const expectText = async (response: Response, status: number, pattern: RegExp) => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  const text = await response.text();
  expect(text).toMatch(pattern);
  return text;
};

describe('the route table', () => {
  it('names every operation exactly as the SDK 4.1.0 does, each once, on its API class and path', () => {
    const names = OPERATIONS.map((o) => o.name);
    expect(new Set(names).size).toBe(names.length);
    // The deprecated operations are no longer in SDK 4.1.0; the contract names them.
    for (const operation of OPERATIONS.filter((o) => !o.deprecated)) {
      const api = (sdk as unknown as Record<string, { prototype: Record<string, unknown> }>)[operation.api];
      expect(typeof api?.prototype[operation.name], `${operation.api}.${operation.name}`).toBe('function');
      // The generated catalogue of SDK paths agrees with the route table.
      expect(knownOperation(operation.method, operation.path.replace(/\{\w+\}/g, 'x')), operation.path).toBe(
        `${operation.api}.${operation.name}`,
      );
    }
    for (const name of [
      'applicationsExternalRelated',
      'applicationsExternalSnapshot',
      'applicationsSnapshot',
      'applicationsSpecificApplicationSnapshot',
      'applicationsRegister',
      'applicationsSessionOpen',
      'applicationsSessionClose',
      'applicationsSessionSnapshot',
      'applicationsUsageEngagementInteraction',
      'applicationsUsageEngagementKeyboard',
      'applicationsUsageInstallation',
      'postApplicationsUsageUpdated',
      'conversationsCreateFromAsset',
      'conversationsCreateSpecificConversation',
      'conversationsDeleteSpecificConversation',
      'conversationsIdentifiersSnapshot',
      'conversationsSnapshot',
      'conversationsStreamIdentifiers',
      'assetsIdentifiersSnapshot',
      'relevance',
      'question',
      'qgptStream',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('has a route for every socket path the page shim serves, and a socket for every socket route', () => {
    const sockets = OPERATIONS.filter((o) => o.socket).map((o) => o.path);
    // Two socket paths have a parameter: a model's download progress, a backup's restorations.
    expect(sockets.filter((path) => !path.includes('{')).sort()).toEqual(Object.keys(SOCKETS).sort());
    expect(sockets.filter((path) => path.includes('{'))).toEqual([
      '/model/{model}/download/progress',
      '/backup/{backup}/restore/streamed/websocket',
    ]);
    for (const path of sockets) expect(socketKind(path.replace(/\{\w+\}/, crypto.randomUUID())), path).toBeDefined();
    expect(socketKind('/model/x/download')).toBeUndefined();
  });

  it('lists static paths before parameterised ones', () => {
    const firstParam = OPERATIONS.findIndex((o) => o.path.includes('{'));
    expect(OPERATIONS.slice(firstParam).every((o) => o.path.includes('{'))).toBe(true);
  });
});

describe('routing', () => {
  it('reads /applications/external as the external snapshot, never as an application id', async () => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/applications/external`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { iterable: unknown[] }).iterable.length).toBeGreaterThan(0);
  });

  it('reads the static asset paths as their operations, never as an asset, annotation or format id', async () => {
    const t = await setup();
    for (const [method, path, status] of [
      ['POST', '/assets/draft', 400],
      ['POST', '/assets/create', 400],
      ['GET', '/assets/search', 400],
      ['POST', '/asset/update', 400],
      ['POST', '/annotation/update', 400],
      ['POST', '/format/update/value', 400],
      ['GET', '/assets/draft', 405],
      ['GET', '/annotations/create', 405],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, method === 'POST' ? jsonPost('') : undefined);
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(await response.text()).not.toMatch(/must be a UUID/);
    }
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/conversations/create`, { method: 'GET' });
    expect(response.headers.get('allow')).toBe('POST, OPTIONS');
    await expectText(response, 405, /GET is not allowed on \/conversations\/create; use POST, OPTIONS/);
    const del = await t.fetch(`${BASE}/applications`, { method: 'DELETE' });
    expect(del.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    await expectText(del, 405, /DELETE/);
    const odd = await t.fetch(`${BASE}/applications`, { method: 'PROPFIND' });
    await expectText(odd, 405, /PROPFIND/);
  });

  it('answers GET and HEAD on a POST-only path with 405, never reading it as an application id', async () => {
    const t = await setup();
    for (const path of ['/applications/register', '/applications/session/open', '/applications/usage/installation']) {
      for (const method of ['GET', 'HEAD']) {
        const response = await t.fetch(`${BASE}${path}`, { method });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get('Allow')).toBe('POST, OPTIONS');
        if (method === 'GET') expect(await response.text()).toBe(`GET is not allowed on ${path}; use POST, OPTIONS.`);
      }
    }
    // A path that only starts operations (no operation of its own) is not an id either.
    for (const path of ['/applications/session', '/applications/usage', '/applications/sessions']) {
      const text = await expectText(await t.fetch(`${BASE}${path}`), 404, new RegExp(`${path}`));
      expect(text).not.toMatch(/UUID/);
    }
    // Ids are still ids.
    await expectText(await t.fetch(`${BASE}/applications/not-an-id`), 400, /must be a UUID/);
  });

  it('never echoes a huge path, method, id or content type whole', async () => {
    const t = await setup();
    const huge = 'x'.repeat(100_000);
    const responses = [
      await t.fetch(`${BASE}/${huge}`),
      await t.fetch(`${BASE}/applications/${huge}`),
      await t.fetch(`${BASE}/conversations/create`, { method: 'POST', headers: { 'Content-Type': `text/${huge}` }, body: '{}' }),
      await t.fetch(`${BASE}/conversations?transferables=${huge}`),
      await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: huge })),
    ];
    for (const response of responses) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      const text = await response.text();
      expect(text.length).toBeLessThan(1000);
      expect(text).toMatch(/… \(\d+ characters\)/);
    }
  });

  it('answers every Pieces OS path of the SDK, with either method: served, 405 only where the table serves that path, 501 for the MCP paths without an MCP endpoint, else 404 naming the operation', async () => {
    const t = await setup();
    const pattern = (path: string) => path.replace(/\{\w+\}/g, '{}');
    const entries = catalogueEntries();
    expect(entries.length).toBeGreaterThan(500);
    const checked = { served: 0, refused: 0, unserved: 0, mcp: 0 };
    for (const entry of entries) {
      const path = entry.path.replaceAll('{}', '0f8fad5b-d9cb-469f-a165-70867728950e');
      for (const method of ['GET', 'POST']) {
        const response = await t.fetch(`${BASE}${path}`, method === 'POST' ? jsonPost({}) : {});
        const text = await response.text();
        const at = `${method} ${entry.path} (${entry.name})`;
        const served = OPERATIONS.some((o) => pattern(o.path) === entry.path && (o.method === method || o.streamMethod === method));
        if (entry.path.startsWith('/model_context_protocol/')) {
          // The Model Context Protocol's: served by the MCP endpoint a Node host passes; without one (this host, the Service Worker), 501 saying why.
          checked.mcp++;
          expect(response.status, at).toBe(501);
          expect(text, at).toMatch(/Model Context Protocol endpoint is not served by this host/);
        } else if (served) {
          checked.served++;
          expect(response.status, at).not.toBe(405);
          expect(text, at).not.toMatch(/does not serve/);
        } else if (
          !entries.some((e) => e.path === entry.path && e.method === method) &&
          OPERATIONS.some((o) => pattern(o.path) === entry.path)
        ) {
          // Served here with the other method, and the SDK has no operation with this one.
          checked.refused++;
          expect(response.status, at).toBe(405);
        } else {
          checked.unserved++;
          expect(response.status, `${at}: ${text}`).toBe(404);
          // A path of the SDK is named, never read as an id of a parameterised route (no 400, no 405).
          expect(text, at).toMatch(
            new RegExp(
              `is the Pieces OS operation ${(method === entry.method ? entry.name : knownOperation(method, path))!.replace('.', '\\.')}, which this service does not serve`,
            ),
          );
        }
      }
    }
    expect(checked.served).toBeGreaterThan(40);
    expect(checked.mcp).toBe(6);
    // POST /assets/draft once answered 405 ("use GET"), borrowed from GET /assets/{asset}.
    const draft = await t.fetch(`${BASE}/assets/draft`, jsonPost({}));
    expect(draft.status).not.toBe(405);
  });

  it('answers OPTIONS with 204 and Allow, and HEAD like GET without a body', async () => {
    const t = await setup();
    const options = await t.fetch(`${BASE}/conversations`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const head = await t.fetch(`${BASE}/conversations`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toContain('application/json');
    expect(await head.text()).toBe('');
  });

  it.each(['/nothing', '/applications/', '/Applications', '/conversations/identifiers/extra'])(
    'answers 404 for the unknown path %j under a base',
    async (path) => {
      const t = await setup();
      await expectText(await t.fetch(`${BASE}${path}`), 404, /No operation at/);
    },
  );

  it('answers under every configured base, including one with a path prefix', async () => {
    const t = await setup({ bases: ['http://localhost:1000', 'https://api.example.test/pieces/'] });
    expect((await t.fetch('https://api.example.test/pieces/conversations/identifiers')).status).toBe(200);
    expect(t.service.respond(new Request('https://api.example.test/other/conversations'))).toBeUndefined();
    expect(t.service.respond(new Request('http://localhost:39300/conversations'))).toBeUndefined();
  });

  it('does not handle requests outside the bases at all', async () => {
    const t = await setup();
    for (const url of ['http://localhost:1001/applications', 'http://example.test/conversations', 'http://localhost:10000/conversations']) {
      expect(t.service.respond(new Request(url))).toBeUndefined();
    }
    expect(t.service.respond(new Request('http://localhost:39300/conversations'))).toBeInstanceOf(Promise);
  });
});

describe('errors', () => {
  it('426 for plain HTTP on the stream path, naming WebSocket', async () => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/conversations/stream/identifiers`);
    expect(response.headers.get('upgrade')).toBe('websocket');
    await expectText(response, 426, /WebSocket/);
  });

  it('413 for a body over the limit, by Content-Length or by streaming, changing nothing', async () => {
    const t = await setup({ maxBodyBytes: 1024 });
    const before = await dump(t.databaseName);
    const big = JSON.stringify({ type: 'COPILOT', name: 'x'.repeat(2000) });
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost(big)), 413, /larger than the limit of 1024 bytes/);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const streamed = await t.fetch(`${BASE}/conversations/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await expectText(streamed, 413, /1024 bytes/);
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('never accepts a limit above 16 MiB', async () => {
    const t = await setup({ maxBodyBytes: 64 * 1024 * 1024 });
    const response = await t.fetch(`${BASE}/conversations/create`, jsonPost(' '.repeat(16 * 1024 * 1024 + 1)));
    await expectText(response, 413, /16777216 bytes/);
  });

  it('415 for a body that is not JSON', async () => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/applications/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify(application()),
    });
    await expectText(response, 415, /must be JSON.*text\/plain/);
  });

  it('400 for malformed JSON, deep nesting and non-UTF-8 bytes', async () => {
    const t = await setup();
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost('{"type":')), 400, /not valid JSON/);
    const deep = '['.repeat(100) + ']'.repeat(100);
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost(deep)), 400, /nested deeper than 64/);
    const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    await expectText(
      await t.fetch(`${BASE}/conversations/create`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: bytes }),
      400,
      /UTF-8/,
    );
  });

  it('refuses __proto__ keys: untrusted JSON never reaches Object.prototype', async () => {
    const t = await setup();
    const body = '{"type":"COPILOT","__proto__":{"polluted":true},"name":"x"}';
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost(body)), 400, /reserved key "__proto__"/);
    const nested = '{"type":"COPILOT","messages":[{"role":"USER","fragment":{"constructor":{"prototype":{"polluted":true}}}}]}';
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost(nested)), 400, /reserved key/);
    // Spelled with escapes, the key is still the key.
    const escaped = '{"type":"COPILOT","\\u005f_proto__":{"polluted":true},"name":"x"}';
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost(escaped)), 400, /reserved key "__proto__"/);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect((await t.conversations.conversationsIdentifiersSnapshot()).iterable).toEqual([]);
  });
});

/**
 * A Request as Firefox has it: no `body` stream, the bytes reachable only through
 * the reading methods. (The bytes live in a second Request, because happy-dom's
 * own reading methods go through `body`.)
 */
class BodilessRequest extends Request {
  readonly #bytes: Request;
  constructor(input: string, init: RequestInit = {}) {
    super(input, { ...init, body: undefined });
    this.#bytes = new Request(input, init);
  }
  override get body(): null {
    return undefined as unknown as null;
  }
  override arrayBuffer() {
    return this.#bytes.arrayBuffer();
  }
  override text() {
    return this.#bytes.text();
  }
}

describe('bodies of a Request without a body stream (Firefox)', () => {
  const bodiless = async (options: Parameters<typeof setup>[0] = {}) => {
    const t = await setup(options);
    const fetch = (input: string, init?: RequestInit) => {
      const request = new BodilessRequest(input, init);
      expect(request.body).toBeUndefined();
      return t.service.handle(request);
    };
    return { ...t, fetch };
  };

  it('reads every field of the body', async () => {
    const t = await bodiless();
    const created = await t.fetch(
      `${BASE}/conversations/create`,
      jsonPost({ type: 'COPILOT', name: 'named', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] }),
    );
    expect(created.status).toBe(200);
    const conversation = await created.json();
    expect(conversation.name).toBe('named');
    expect(conversation.messages.iterable).toHaveLength(1);
    const app = application();
    const registered = await t.fetch(`${BASE}/applications/register`, jsonPost(app));
    expect(await registered.json()).toMatchObject({ id: app.id, name: app.name });
    const open = await t.fetch(`${BASE}/applications/session/open`, { method: 'POST' });
    expect(open.status).toBe(200);
  });

  it('keeps 413, strict UTF-8 and JSON validation, changing nothing', async () => {
    const t = await bodiless({ maxBodyBytes: 1024 });
    const before = await dump(t.databaseName);
    await expectText(
      await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: 'COPILOT', name: 'x'.repeat(2000) })),
      413,
      /1024 bytes/,
    );
    await expectText(await t.fetch(`${BASE}/conversations/create`, jsonPost('{nope')), 400, /not valid JSON/);
    const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    await expectText(
      await t.fetch(`${BASE}/conversations/create`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: bytes }),
      400,
      /UTF-8/,
    );
    await expectText(await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost('[]')), 400, /JSON object, not an array/);
    await expectText(await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost('')), 400, /JSON object, not absent/);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('persistence', () => {
  it('keeps every record when the database is closed and opened again', async () => {
    const first = await setup();
    const app = application();
    await first.fetch(`${BASE}/applications/register`, jsonPost(app));
    const session = await first.applications.applicationsSessionOpen();
    const conversation = await first.conversations.conversationsCreateSpecificConversation({
      seededConversation: {
        type: 'COPILOT',
        name: 'kept',
        messages: [{ role: 'USER', fragment: { string: { raw: 'still here' } } }],
      } as never,
    });
    const before = await dump(first.databaseName);
    first.storage.close();

    const second = await setup({ databaseName: first.databaseName });
    expect(await dump(second.databaseName)).toBe(before);
    expect((await second.applications.applicationsSpecificApplicationSnapshot({ application: app.id })).id).toBe(app.id);
    expect((await (await second.fetch(`${BASE}/applications/sessions/${session.id}`)).json()).id).toBe(session.id);
    const listed = await second.conversations.conversationsSnapshot();
    expect(listed.iterable.map((c) => c.id)).toEqual([conversation.id]);
    expect(listed.iterable[0]!.messages.iterable[0]!.reference!.fragment!.string!.raw).toBe('still here');
    // The change sequence goes on from where it was.
    const { seq } = await second.storage.changesSince(0);
    const next = await second.conversations.conversationsCreateSpecificConversation({});
    expect(second.changes[0]).toEqual({ seq: seq + 1, collection: 'conversation', id: next.id });
  });
});
