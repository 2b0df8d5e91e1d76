import { describe, expect, it } from 'vitest';
import { SessionFromJSON, instanceOfSession } from '@pieces.app/pieces-os-client';
import { BASE, application, dump, jsonPost, setup } from '../support/harness.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const register = async (t: Harness, overrides: Record<string, unknown> = {}) => {
  const body = application(overrides);
  expect((await t.fetch(`${BASE}/applications/register`, jsonPost(body))).status).toBe(200);
  return body.id;
};

const engagementOf = async (t: Harness, id: string) =>
  ((await (await t.fetch(`${BASE}/applications/${id}`)).json()) as { engagement: Record<string, unknown> }).engagement;

describe('sessions', () => {
  it('opens, snapshots and closes a session; closing twice keeps the first closed time', async () => {
    let clock = Date.parse('2026-11-22T10:00:00Z');
    const t = await setup({ now: () => new Date(clock) });
    const opened = await t.applications.applicationsSessionOpen();
    expect(instanceOfSession(opened)).toBe(true);
    expect(opened.opened.value.toISOString()).toBe('2026-11-22T10:00:00.000Z');
    expect(opened.closed).toBeUndefined();

    const snapshot = await (await t.fetch(`${BASE}/applications/sessions/${opened.id}`)).json();
    expect(instanceOfSession(SessionFromJSON(snapshot))).toBe(true);
    expect(snapshot.id).toBe(opened.id);

    clock += 60_000;
    const closed = await t.applications.applicationsSessionClose({ body: opened.id });
    expect(closed.closed!.value.toISOString()).toBe('2026-11-22T10:01:00.000Z');
    clock += 60_000;
    const again = await t.applications.applicationsSessionClose({ body: opened.id });
    expect(again.closed!.value.toISOString()).toBe('2026-11-22T10:01:00.000Z');
  });

  it('refuses a missing or non-UUID close body (400) and an unknown session (404)', async () => {
    const t = await setup();
    const empty = await t.fetch(`${BASE}/applications/session/close`, { method: 'POST', headers: { 'Content-Type': 'application/json' } });
    expect(empty.status).toBe(400);
    const bad = await t.fetch(`${BASE}/applications/session/close`, jsonPost('"nope"'));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/UUID/);
    const notString = await t.fetch(`${BASE}/applications/session/close`, jsonPost({ id: crypto.randomUUID() }));
    expect(notString.status).toBe(400);
    const unknown = crypto.randomUUID();
    const missing = await t.fetch(`${BASE}/applications/session/close`, jsonPost(JSON.stringify(unknown)));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain(unknown);
    expect((await t.fetch(`${BASE}/applications/sessions/${unknown}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/applications/sessions/xyz`)).status).toBe(400);
  });

  it('carries engagement counted from the events inside its window', async () => {
    let clock = Date.parse('2026-11-22T10:00:00Z');
    const t = await setup({ now: () => new Date(clock) });
    await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost({ description: 'before' }));
    clock += 1000;
    const session = await t.applications.applicationsSessionOpen();
    clock += 1000;
    await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost({ description: 'inside' }));
    await t.fetch(`${BASE}/applications/usage/engagement/keyboard`, jsonPost({ description: 'copy', shortcut: [17, 67] }));
    clock += 1000;
    await t.applications.applicationsSessionClose({ body: session.id });
    clock += 1000;
    await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost({ description: 'after' }));
    const snapshot = await (await t.fetch(`${BASE}/applications/sessions/${session.id}`)).json();
    expect(snapshot.engagement).toEqual({
      interactions: 1,
      keyboard: 1,
      installations: 0,
      updates: 0,
      lastActivity: { value: '2026-11-22T10:00:02.000Z' },
    });
  });
});

describe('usage events', () => {
  it('echoes an interaction event in its Tracked form (the snake_case pair stored, not echoed) and counts it for the scoped application', async () => {
    const t = await setup();
    const app = await register(t);
    const body = { description: 'clicked save', element: 'save-button', identifier_description_pair: { assets_list_refreshed: 'yes' } };
    const response = await t.fetch(`${BASE}/applications/usage/engagement/interaction`, jsonPost(body, { 'X-Application-ID': app }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ description: 'clicked save', element: 'save-button' });
    expect(await dump(t.databaseName)).toContain('"identifier_description_pair":{"assets_list_refreshed":"yes"}');
    expect(await engagementOf(t, app)).toMatchObject({ interactions: 1, keyboard: 0 });
  });

  it('echoes a keyboard event and counts it; events without the header count for no application', async () => {
    const t = await setup();
    const app = await register(t);
    const body = { description: 'copy', shortcut: [17, 67] };
    const response = await t.fetch(`${BASE}/applications/usage/engagement/keyboard`, jsonPost(body, { 'X-Application-ID': app }));
    expect(await response.json()).toEqual(body);
    await t.fetch(`${BASE}/applications/usage/engagement/keyboard`, jsonPost(body));
    expect(await engagementOf(t, app)).toMatchObject({ keyboard: 1 });
  });

  it('refuses bad events with 400 and an unknown X-Application-ID with 404, storing nothing', async () => {
    const t = await setup();
    const app = await register(t);
    const cases: Array<[string, unknown, Record<string, string>, number, RegExp]> = [
      ['interaction', { element: 'x' }, {}, 400, /description is required/],
      ['interaction', { description: 7 }, {}, 400, /description must be a string/],
      ['keyboard', { description: 'k', shortcut: [1.5] }, {}, 400, /integer/],
      ['keyboard', { description: 'k' }, {}, 400, /shortcut is required/],
      ['interaction', { description: 'x' }, { 'X-Application-ID': 'nope' }, 400, /UUID/],
      ['interaction', { description: 'x' }, { 'X-Application-ID': crypto.randomUUID() }, 404, /No application [0-9a-f-]+ is registered/],
    ];
    for (const [kind, body, headers, status, message] of cases) {
      const response = await t.fetch(`${BASE}/applications/usage/engagement/${kind}`, jsonPost(body, headers));
      expect(response.status).toBe(status);
      expect(await response.text()).toMatch(message);
    }
    expect(await engagementOf(t, app)).toEqual({ interactions: 0, keyboard: 0, installations: 0, updates: 0 });
  });

  it("refuses events and sessions for the OS's own entry (listed by GET /applications) with 400 saying so, storing nothing", async () => {
    const t = await setup();
    const listed = ((await (await t.fetch(`${BASE}/applications`)).json()) as { iterable: Array<{ id: string; name: string }> }).iterable;
    const os = listed.find((a) => a.name === 'OS_SERVER')!.id;
    const before = await dump(t.databaseName);
    const requests: Array<[string, unknown]> = [
      ['/applications/usage/engagement/interaction', { description: 'x' }],
      ['/applications/usage/engagement/keyboard', { description: 'k', shortcut: [17, 67] }],
      ['/applications/session/open', undefined],
    ];
    for (const [path, body] of requests) {
      for (const header of ['X-Application-ID', 'application']) {
        const response = await t.fetch(
          `${BASE}${path}`,
          body === undefined ? { method: 'POST', headers: { [header]: os } } : jsonPost(body, { [header]: os }),
        );
        expect(response.status, path).toBe(400);
        expect(await response.text()).toBe(
          `Application ${os} (${header} header) is the OS's own entry (OS_SERVER): it records no usage events or sessions. Send them with a registered application's id, or without the header.`,
        );
      }
    }
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('installation upserts its application and answers 204', async () => {
    const t = await setup();
    const installed = application({ name: 'OBSIDIAN' });
    const response = await t.fetch(`${BASE}/applications/usage/installation`, jsonPost({ application: installed, user: { id: 'u' } }));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const stored = await (await t.fetch(`${BASE}/applications/${installed.id}`)).json();
    expect(stored).toMatchObject({ ...installed, engagement: { installations: 1 } });
  });

  it('update records previous → current: current is upserted with the new version', async () => {
    const t = await setup();
    const previous = application({ version: '1.0.0' });
    await register(t, previous);
    const current = { ...previous, version: '2.0.0' };
    const response = await t.fetch(`${BASE}/applications/usage/updated`, jsonPost({ previous, current }));
    expect(response.status).toBe(204);
    const stored = await (await t.fetch(`${BASE}/applications/${previous.id}`)).json();
    expect(stored.version).toBe('2.0.0');
    expect(stored.engagement.updates).toBe(1);
    const missing = await t.fetch(`${BASE}/applications/usage/updated`, jsonPost({ previous }));
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('event.current is required');
  });

  it('X-Application-ID scopes installation events to the named application', async () => {
    const t = await setup();
    const scope = await register(t);
    const other = application();
    await t.fetch(`${BASE}/applications/usage/installation`, jsonPost({ application: other }, { 'X-Application-ID': scope }));
    expect(await engagementOf(t, scope)).toMatchObject({ installations: 1 });
    expect(await engagementOf(t, other.id)).toMatchObject({ installations: 0 });
  });
});
