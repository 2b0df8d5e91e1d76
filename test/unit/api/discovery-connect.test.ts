/** Discovery (health, version), bases, connect, user and applicationUpdate, through the SDK 4.1.0. */
import { describe, expect, it, vi } from 'vitest';
import {
  ApplicationFromJSON,
  ContextFromJSON,
  instanceOfApplication,
  instanceOfContext,
  instanceOfReturnedUserProfile,
  instanceOfUserProfile,
  ReturnedUserProfileFromJSON,
  type SeededConnectorConnection,
} from '@pieces.app/pieces-os-client';
import { baseMatcher, DEFAULT_BASES, expandBase } from '../../../src/shared/bases.js';
import { createService } from '../../../src/core/service.js';
import { reconnectingStorage } from '../../../src/storage/reconnect.js';
import type { Storage } from '../../../src/storage/storage.js';
import { PIECES_OS_VERSION } from '../../../src/shared/version.js';
import { BASE, application, dump, jsonPost, setup } from '../support/harness.js';

const connection = (overrides: Record<string, unknown> = {}): SeededConnectorConnection =>
  ({ application: { name: 'VS_CODE', version: '1.95.0', platform: 'LINUX', ...overrides } }) as SeededConnectorConnection;

describe('bases', () => {
  it('default to localhost and 127.0.0.1 on 1000, 5323 and 39300-39333, written compactly', () => {
    expect(DEFAULT_BASES).toEqual([
      'http://localhost:1000',
      'http://localhost:5323',
      'http://localhost:39300-39333',
      'http://127.0.0.1:1000',
      'http://127.0.0.1:5323',
      'http://127.0.0.1:39300-39333',
    ]);
    const matcher = baseMatcher(DEFAULT_BASES);
    for (const host of ['localhost', '127.0.0.1']) {
      for (const port of [1000, 5323, 39300, 39317, 39333]) {
        expect(matcher.match(new URL(`http://${host}:${port}/.well-known/health`))?.path).toBe('/.well-known/health');
      }
      for (const port of [999, 39299, 39334, 5324]) expect(matcher.match(new URL(`http://${host}:${port}/x`))).toBeNull();
    }
    expect(matcher.match(new URL('https://localhost:1000/x'))).toBeNull();
  });

  it('expand a port range, keep a path prefix, and refuse bad ranges and non-http URLs', () => {
    expect(expandBase('http://127.0.0.1:8000-8002/api/')).toEqual([
      { origin: 'http://127.0.0.1:8000', path: '/api' },
      { origin: 'http://127.0.0.1:8001', path: '/api' },
      { origin: 'http://127.0.0.1:8002', path: '/api' },
    ]);
    expect(() => expandBase('http://localhost:9-3')).toThrow(/port range/);
    expect(() => expandBase('http://localhost:1-65536')).toThrow(/port range/);
    expect(() => expandBase('ftp://localhost:1')).toThrow(/http\(s\) URL/);
    expect(() => expandBase('nonsense')).toThrow(/http\(s\) URL/);
  });

  it('match the longest path prefix of an origin', () => {
    const matcher = baseMatcher(['https://example.test/a', 'https://example.test/a/b']);
    expect(matcher.match(new URL('https://example.test/a/b/c'))).toMatchObject({ base: { path: '/a/b' }, path: '/c' });
    expect(matcher.match(new URL('https://example.test/a/c'))).toMatchObject({ base: { path: '/a' }, path: '/c' });
    expect(matcher.match(new URL('https://example.test/ab'))).toBeNull();
  });
});

describe('WellKnownApi', () => {
  it('getWellKnownHealth: GET and HEAD answer 200 text/plain ok, on 127.0.0.1:39300 too', async () => {
    const t = await setup();
    expect(await t.wellKnown.getWellKnownHealth()).toBe('ok');
    const head = await t.fetch('http://127.0.0.1:39300/.well-known/health', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await head.text()).toBe('');
  });

  it('getWellKnownHealth answers while the database is still opening, without touching storage', async () => {
    let open!: (storage: Storage) => void;
    const storage = reconnectingStorage(new Promise<Storage>((resolve) => (open = resolve)));
    const service = createService({ storage });
    const response = await service.handle(new Request('http://localhost:39333/.well-known/health'));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(open).toBeTypeOf('function');
  });

  it('getWellKnownVersion: a Pieces OS 12.x version, which SDK 4.1.0-generation clients accept', async () => {
    const t = await setup();
    const version = await t.wellKnown.getWellKnownVersion();
    expect(version).toBe(PIECES_OS_VERSION);
    const [major] = version.split('.').map(Number);
    expect(major).toBe(12);
  });
});

describe('ConnectorApi.connect', () => {
  it('answers a Context: os id, the application, health {os: {id, version}}, the user', async () => {
    const t = await setup();
    const context = await t.connector.connect({ seededConnectorConnection: connection() });
    expect(instanceOfContext(context)).toBe(true);
    expect(context.application).toMatchObject({ name: 'VS_CODE', version: '1.95.0', platform: 'LINUX', onboarded: true, privacy: 'OPEN' });
    expect(instanceOfApplication(context.application)).toBe(true);
    expect(context.health.os).toEqual({ id: context.os, version: PIECES_OS_VERSION });
    expect(instanceOfUserProfile(context.user!)).toBe(true);
    const raw = await (await t.fetch(`${BASE}/connect`, jsonPost(connection()))).json();
    expect(instanceOfContext(ContextFromJSON(raw))).toBe(true);
  });

  it('gives the same application id for the same name, platform and version; another for another version', async () => {
    const t = await setup();
    const one = await t.connector.connect({ seededConnectorConnection: connection() });
    const again = await t.connector.connect({ seededConnectorConnection: connection() });
    const other = await t.connector.connect({ seededConnectorConnection: connection({ version: '2.0.0' }) });
    expect(again.application.id).toBe(one.application.id);
    expect(again.os).toBe(one.os);
    expect(other.application.id).not.toBe(one.application.id);
    const listed = await t.applications.applicationsSnapshot();
    expect(
      listed.iterable
        .filter((a) => a.name !== 'OS_SERVER')
        .map((a) => a.id)
        .sort(),
    ).toEqual([one.application.id, other.application.id].sort());
    // The OS's own entry comes first, its id the Context's `os`.
    expect(listed.iterable[0]).toMatchObject({ id: one.os, name: 'OS_SERVER' });
    // Connecting announces the application on the applications stream.
    expect(t.changes.filter((c) => c.collection === 'application').map((c) => c.id)).toEqual([
      one.application.id,
      one.application.id,
      other.application.id,
    ]);
  });

  it('scopes later usage events by the `application` header, as X-Application-ID does', async () => {
    const t = await setup();
    const { application: app } = await t.connector.connect({ seededConnectorConnection: connection() });
    const scoped = await setup({ databaseName: t.databaseName, headers: { application: app.id } });
    await scoped.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost({ description: 'clicked' }, { application: app.id }));
    const engagement = (await (await t.fetch(`${BASE}/applications/${app.id}`)).json()).engagement;
    expect(engagement.interactions).toBe(1);
    const unknown = await t.fetch(
      `${BASE}/applications/usage/engagement/interaction`,
      jsonPost({ description: 'x' }, { application: crypto.randomUUID() }),
    );
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toMatch(/application header/);
  });

  it.each([
    ['no body', undefined, /must be a JSON object/],
    ['no application', {}, /seededConnectorConnection.application is required/],
    ['a bad name', { application: { name: 'EMACS', version: '1', platform: 'LINUX' } }, /name must be one of/],
    ['a bad platform', { application: { name: 'VS_CODE', version: '1', platform: 'BEOS' } }, /platform must be one of/],
    ['no version', { application: { name: 'VS_CODE', platform: 'LINUX' } }, /version is required/],
  ])('refuses %s with 400 and changes nothing', async (_what, body, message) => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const response = await t.fetch(`${BASE}/connect`, body === undefined ? { method: 'POST' } : jsonPost(body));
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(message);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('UserApi.userSnapshot', () => {
  it('answers a stable local profile', async () => {
    const t = await setup();
    const first = await t.user.userSnapshot();
    expect(instanceOfReturnedUserProfile(first)).toBe(true);
    expect(instanceOfUserProfile(first.user!)).toBe(true);
    expect(first.user).toMatchObject({ username: 'local', name: 'Local user', aesthetics: { theme: { dark: false }, font: { size: 1 } } });
    expect((await t.user.userSnapshot()).user!.id).toBe(first.user!.id);
    const reopened = await setup({ databaseName: t.databaseName });
    expect((await reopened.user.userSnapshot()).user!.id).toBe(first.user!.id);
  });

  it('is configurable, and has no user when configured to none', async () => {
    const named = await setup({ user: { username: 'ada', name: 'Ada', dark: true } });
    const raw = await (await named.fetch(`${BASE}/user`)).json();
    expect(raw.user).toMatchObject({ username: 'ada', name: 'Ada', aesthetics: { theme: { dark: true } } });
    expect(instanceOfReturnedUserProfile(ReturnedUserProfileFromJSON(raw))).toBe(true);
    const none = await setup({ user: null });
    expect(await (await none.fetch(`${BASE}/user`)).json()).toEqual({});
    const context = await none.connector.connect({ seededConnectorConnection: connection() });
    expect(context.user).toBeUndefined();
  });
});

describe('ApplicationApi.applicationUpdate', () => {
  it('replaces a registered application and announces it', async () => {
    const t = await setup();
    const app = application();
    await t.fetch(`${BASE}/applications/register`, jsonPost(app));
    const updated = await t.application.applicationUpdate({ application: ApplicationFromJSON({ ...app, version: '9.9.9' }) });
    expect(updated.version).toBe('9.9.9');
    expect((await t.applications.applicationsSpecificApplicationSnapshot({ application: app.id })).version).toBe('9.9.9');
    expect(t.changes.at(-1)).toMatchObject({ collection: 'application', id: app.id });
  });

  it('takes back an application as it was answered, engagement included (ignored)', async () => {
    const t = await setup();
    const answered = await (await t.fetch(`${BASE}/applications/register`, jsonPost(application()))).json();
    expect(answered.engagement).toBeDefined();
    const response = await t.fetch(
      `${BASE}/application/update`,
      jsonPost({ ...answered, version: '9.9.9', engagement: { interactions: 99 } }),
    );
    expect(response.status).toBe(200);
    const updated = await response.json();
    expect(updated.version).toBe('9.9.9');
    expect(updated.engagement).toEqual(answered.engagement);
  });

  it('answers 404 for an unknown application and 400 for a bad one, changing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    expect((await t.fetch(`${BASE}/application/update`, jsonPost(application()))).status).toBe(404);
    const bad = await t.fetch(`${BASE}/application/update`, jsonPost(application({ platform: 'AMIGA' })));
    expect(bad.status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('the Model Context Protocol paths in a host without the MCP endpoint', () => {
  it('answer 501 saying why and where it is served (the Service Worker does not bundle the MCP SDK); other paths a plain 404', async () => {
    const warn = vi.fn();
    const t = await setup({ warn });
    for (const [path, init] of [
      ['/model_context_protocol/schema_versions', {}],
      ['/model_context_protocol/2024-11-05/sse', {}],
      ['/model_context_protocol/2024-11-05/messages?sessionId=x', { method: 'POST', body: '{}' }],
      ['/model_context_protocol/2025-03-26/mcp', { method: 'POST', body: '{}' }],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect(response.status, path).toBe(501);
      expect(await response.text()).toMatch(/not served by this host.*@modelcontextprotocol\/sdk.*loopback server.*setupPiecesServer/);
    }
    // Not a Pieces OS path: a plain 404.
    expect(await (await t.fetch(`${BASE}/nothing/here`)).text()).toMatch(/No operation at \/nothing\/here/);
    expect(warn).not.toHaveBeenCalled();
  });
});
