/**
 * Hostile input: thousands of generated requests across every route. Every
 * one answers 2xx or 4xx (never 5xx, never a throw; 501 only for what no host
 * can do), every error carries a message, and every rejected request leaves
 * the store byte-for-byte as it was.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HOST_CANNOT } from '../../../src/core/handlers/host-cannot.js';
import { OPERATIONS } from '../../../src/core/routes.js';
import { MODEL, application, dump, setup } from '../support/harness.js';

/** What no host can do, and what this host cannot as configured (no Ollama, Foundry or OpenAI-compatible endpoint: 501 naming it). */
const cannotPaths = [
  ...HOST_CANNOT.map((row) => row.path),
  ...['/ollama', '/foundry'].flatMap((runtime) => ['install', 'update', 'uninstall'].map((op) => `${runtime}/${op}`)),
  '/open_ai/models/list',
];

const RUNS = Number(process.env.HOSTILE_RUNS ?? 2500);
const BASES = ['http://localhost:1000', 'https://api.example.test/pieces'];

type State = {
  app: string;
  session: string;
  conversation: string;
  asset: string;
  message: string;
  format: string;
  annotation: string;
  tag: string;
  website: string;
  model: string;
  anchor: string;
  range: string;
};

const validBodies = (state: State): Record<string, unknown> => ({
  applicationsRegister: application(),
  applicationsSessionClose: state.session,
  applicationsUsageEngagementInteraction: {
    description: 'clicked',
    element: 'button',
    identifier_description_pair: { assets_list_refreshed: 'x' },
  },
  applicationsUsageEngagementKeyboard: { description: 'copy', shortcut: [17, 67] },
  applicationsUsageInstallation: { application: application() },
  postApplicationsUsageUpdated: { current: application(), previous: application() },
  conversationsCreateSpecificConversation: {
    type: 'COPILOT',
    name: 'n',
    annotations: [{ type: 'DESCRIPTION', text: 't' }],
    messages: [{ role: 'USER', fragment: { string: { raw: 'x' } }, created: { value: '2026-01-01T00:00:00Z' } }],
  },
  connect: { application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX', privacy: 'OPEN' } },
  applicationUpdate: application({ id: state.app, version: '2.0.0' }),
  conversationUpdate: {
    id: state.conversation,
    type: 'COPILOT',
    name: 'renamed',
    favorited: true,
    created: { value: '2026-01-01T00:00:00Z' },
    messages: { iterable: [] },
  },
  searchConversations: { engines: { iterable: [{ query: 'x' }] } },
  messagesCreateSpecificMessage: {
    role: 'ASSISTANT',
    fragment: { string: { raw: 'y' } },
    conversation: { id: state.conversation },
    model: MODEL,
  },
  messageSpecificMessageUpdate: { id: state.message, role: 'USER', fragment: { string: { raw: 'z' } }, sentiment: 'LIKE' },
  messageUpdateValue: { id: state.message, fragment: { string: { raw: 'v' } } },
  assetsCreateNewAsset: {
    type: 'SEEDED_ASSET',
    asset: {
      application: application({ id: state.app }),
      format: { fragment: { string: { raw: 'const x = 1;' }, metadata: { ext: 'ts' } } },
      metadata: {
        name: 'x.ts',
        tags: [{ text: 'hostile' }],
        websites: [{ url: 'https://example.test/', name: 'example' }],
        annotations: [{ type: 'COMMENT', text: 'c' }],
      },
    },
  },
  assetsDraft: {
    type: 'SEEDED_ASSET',
    asset: { application: application({ id: state.app }), format: { fragment: { string: { raw: 'def f():\n  pass' } } } },
  },
  assetUpdate: {
    id: state.asset,
    name: 'renamed.ts',
    favorited: true,
    annotations: {
      iterable: [
        {
          id: state.annotation,
          type: 'DESCRIPTION',
          text: 'new',
          created: { value: '2026-01-01T00:00:00Z' },
          updated: { value: '2026-01-01T00:00:00Z' },
        },
      ],
    },
  },
  formatUpdateValue: { id: state.format, asset: { id: state.asset }, fragment: { string: { raw: 'edited' } } },
  annotationsCreateNewAnnotation: { type: 'COMMENT', text: 'note', asset: state.asset },
  annotationUpdate: { id: state.annotation, type: 'DESCRIPTION', text: 'changed' },
  anchorsCreateNewAnchor: {
    type: 'FILE',
    fullpath: '/src/a.ts',
    platform: 'LINUX',
    conversation: state.conversation,
    annotations: [{ type: 'COMMENT', text: 'x' }],
  },
  modelsDeleteSpecificModelCache: { schema: { migration: 0, semantic: 'MAJOR_0_MINOR_0_PATCH_1' } },
  osAppletLaunch: { type: 'COPILOT' },
  allocationsConnectNewCloud: { id: crypto.randomUUID(), aesthetics: { theme: { dark: false }, font: { size: 1 } } },
  allocationsDisconnectCloud: { id: 'a', user: 'u', urls: {}, status: { cloud: 'DISCONNECTED' }, project: '' },
});

/** Replaces the value at a random path of `value` with `replacement` (or deletes it). */
function corrupt(value: unknown, choices: number[], replacement: unknown, remove: boolean): unknown {
  if (value === null || typeof value !== 'object') return replacement;
  const copy: Record<string, unknown> = Array.isArray(value) ? ([...value] as never) : { ...(value as object) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || choices.length === 0) return replacement;
  const key = keys[choices[0]! % keys.length]!;
  if (choices.length === 1) {
    if (remove) delete copy[key];
    else copy[key] = replacement;
  } else copy[key] = corrupt(copy[key], choices.slice(1), replacement, remove);
  return copy;
}

const segment = fc.oneof(
  fc.constant('..'),
  fc.constant('.'),
  fc.constant('%2F'),
  fc.constant('%2e%2e'),
  fc.constant('a%2Fb'),
  fc.constant('%00'),
  fc.constant('%E0%A4%A'),
  fc.constant(''),
  fc.uuid(),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);

const methods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND', 'MKCOL', 'patch', 'Post');
const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/vnd.pieces+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'garbage',
);

const hostile = (state: State) => {
  const valid = validBodies(state);
  const mutated = (name: string) =>
    fc
      .tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), fc.boolean(), fc.nat(3))
      .map(([choices, replacement, remove, kind]) => {
        const bad = kind === 0 ? 'NOT_AN_ENUM' : kind === 1 ? crypto.randomUUID() : replacement;
        return JSON.stringify(corrupt(valid[name], choices, bad, remove));
      });
  const junk = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 40 }),
    fc
      .nat({ max: 3 })
      .map((k) => ['{"type":"COPILOT","__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":', '\uFEFF{}'][k]!),
    fc.integer({ min: 60, max: 200 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
    fc.constant('x'.repeat(70 * 1024)),
  );
  const request = (operation: (typeof OPERATIONS)[number]) => {
    const byName: Record<string, keyof State> = {
      application: 'app',
      session: 'session',
      conversation: 'conversation',
      asset: 'asset',
      message: 'message',
      format: 'format',
      annotation: 'annotation',
      tag: 'tag',
      website: 'website',
      model: 'model',
      anchor: 'anchor',
      range: 'range',
    };
    // 'auto' fills each parameter with the state's id of its kind.
    const fill = (which: keyof State | 'random' | 'auto', random: string) =>
      operation.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
        which === 'random' ? random : which === 'auto' ? state[byName[name] ?? 'conversation'] : state[which],
      );
    const path = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .constantFrom<keyof State | 'auto'>('auto', 'auto', 'app', 'session', 'conversation', 'asset', 'message', 'format', 'model')
          .map((w) => fill(w, '')),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.constantFrom<keyof State | 'random' | 'auto'>('auto', 'app', 'session', 'conversation', 'asset', 'message', 'random'),
            segment,
            fc.nat(6),
            fc.boolean(),
          )
          .map(([which, random, trick, upper]) => {
            let path = fill(which, random);
            if (trick === 1) path += '/';
            if (trick === 2) path = path.replace('/', '//');
            if (trick === 3) path += `/${random}`;
            if (trick === 4) path = `/..${path}`;
            if (trick === 5) path = path.replace(/\/[^/]*$/, `/${random}`);
            return upper ? path.toUpperCase() : path;
          }),
      },
    );
    const body = fc.oneof(
      { weight: 1, arbitrary: fc.constant(undefined) },
      ...(operation.name in valid
        ? [
            { weight: 3, arbitrary: fc.constant(JSON.stringify(valid[operation.name])) },
            { weight: 3, arbitrary: mutated(operation.name) },
          ]
        : []),
      { weight: 2, arbitrary: junk },
    );
    return fc.record({
      base: fc.constantFrom(...BASES),
      method: fc.oneof({ weight: 4, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: methods }),
      path,
      query: fc.oneof(
        { weight: 3, arbitrary: fc.constant('') },
        {
          weight: 1,
          arbitrary: fc.constantFrom('true', 'false', '', 'yes', 'TRUE', '1', 'true&transferables=false').map((v) => `?transferables=${v}`),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map((q) => `?${encodeURIComponent(q)}=${encodeURIComponent(q)}`) },
      ),
      body,
      contentType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, { weight: 2, arbitrary: contentTypes }),
      appHeader: fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: fc.constantFrom(state.app, crypto.randomUUID(), 'nope', '') },
      ),
      appHeaderName: fc.constantFrom('X-Application-ID', 'application'),
    });
  };
  return fc.constantFrom(...OPERATIONS).chain(request);
};

describe('hostile input', () => {
  it(`answers ${RUNS} generated requests with 2xx or 4xx, and rejected ones change nothing`, async () => {
    const t = await setup({ bases: BASES, maxBodyBytes: 64 * 1024 });
    const app = application();
    await t.fetch(`${BASES[0]}/applications/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(app),
    });
    const session = await t.applications.applicationsSessionOpen();
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: { type: 'COPILOT', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] } as never,
    });
    const made = await t.assets.assetsCreateNewAsset({
      seed: {
        type: 'SEEDED_ASSET',
        asset: {
          application: app as never,
          format: { fragment: { string: { raw: 'export const answer = 42;' } } },
          metadata: { tags: [{ text: 'numbers' }], websites: [{ url: 'https://example.test/42', name: '42' }] },
        },
      } as never,
    });
    // A local model (downloads complete at once: nothing to fetch), an anchor, a range id (no range exists).
    const model = ((await (await t.fetch(`${BASES[0]}/models`)).json()).iterable as Array<{ id: string; cloud: boolean }>).find(
      (m) => !m.cloud,
    )!.id;
    const anchor = (
      await (
        await t.fetch(`${BASES[0]}/anchors/create`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"FILE","fullpath":"/x"}',
        })
      ).json()
    ).id as string;
    const state: State = {
      app: app.id,
      session: session.id,
      conversation: conversation.id,
      asset: made.id,
      message: conversation.messages.iterable[0]!.id,
      format: made.original.id,
      annotation: made.annotations!.iterable[0]!.id,
      tag: made.tags!.iterable[0]!.id,
      website: made.websites!.iterable[0]!.id,
      model,
      anchor,
      range: crypto.randomUUID(),
    };
    const statuses = new Map<number, number>();
    let notHandled = 0;

    await fc.assert(
      fc.asyncProperty(hostile(state), async (input) => {
        const headers: Record<string, string> = {};
        if (input.contentType) headers['Content-Type'] = input.contentType;
        if (input.appHeader !== undefined) headers[input.appHeaderName] = input.appHeader;
        const withBody = input.body !== undefined && !['GET', 'HEAD'].includes(input.method.toUpperCase());
        let request: Request;
        try {
          request = new Request(input.base + input.path + input.query, {
            method: input.method,
            headers,
            body: withBody ? input.body : undefined,
          });
        } catch {
          return; // Not a request a browser could send (e.g. a forbidden method).
        }
        const before = await dump(t.databaseName);
        const pending = t.service.respond(request);
        if (!pending) {
          // Only a path that leaves its base is not the service's.
          expect(t.service.pathUnderBase(new URL(request.url))).toBeNull();
          notHandled++;
          return;
        }
        const response = await pending;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 501) {
          // What no host can do (src/core/handlers/host-cannot.ts), whatever it is sent.
          expect(cannotPaths, `${input.method} ${request.url}`).toContain(t.service.pathUnderBase(new URL(request.url)));
        } else expect(response.status, `${input.method} ${request.url}`).toBeLessThan(500);
        if (response.status >= 400) {
          // A token endpoint refuses as OAuth has it (RFC 6749, section 5.2): JSON `{error, error_description}`.
          const oauth =
            ['/oauth/token', '/pkce/token'].includes(t.service.pathUnderBase(new URL(request.url)) ?? '') && response.status === 400;
          expect(response.headers.get('content-type')).toBe(oauth ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8');
          // A HEAD answer has no body by definition; every other error says what went wrong.
          if (request.method !== 'HEAD') expect((await response.text()).trim().length).toBeGreaterThan(10);
          expect(await dump(t.databaseName)).toBe(before);
        } else {
          await response.arrayBuffer();
        }
      }),
      { numRuns: RUNS },
    );
    expect(({} as { x?: unknown }).x).toBeUndefined();
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    const ok = [...statuses].filter(([s]) => s < 400).reduce((a, [, n]) => a + n, 0);
    console.info(
      `hostile input: ${total + notHandled} requests, ${ok} answered 2xx, ${total - ok} rejected with 4xx, ${notHandled} outside the bases; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    expect(total).toBeGreaterThanOrEqual(2000);
    // The generator reaches both outcomes and many error classes.
    expect(ok).toBeGreaterThan(100);
    for (const status of [400, 404, 405, 413, 415, 426]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  }, 180_000);
});
