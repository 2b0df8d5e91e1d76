/**
 * The OS's own state: its settings (kept in the store across restarts, updated strictly, sent on
 * their socket), its permissions (none on this host), its device information (from the user
 * agent) and its metadata (the totals of what the store holds). Every answer is held to its SDK
 * model by the response check (test/unit/support/response-check.ts).
 */
import { AnchorTypeEnum } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { BASE, dump, jsonPost, seeded, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

describe('the OS settings', () => {
  it('start as Pieces OS has them; an update is read back, kept across a restart and sent on the settings socket', async () => {
    const t = await setup();
    expect(await (await t.fetch(`${BASE}/os/settings`)).json()).toEqual({ autoboot: false });
    // The settings stream is a WebSocket: a plain GET is told so.
    expect((await t.fetch(`${BASE}/os/settings/stream`)).status).toBe(426);
    const stream = sockets(t).open('ws://localhost:1000/os/settings/stream');
    await until(() => stream.frames.length === 1, 'the settings on open');
    expect(JSON.parse(stream.frames[0]!)).toEqual({ autoboot: false });

    const updated = await t.os.osSettingsUpdate({ oSServerSettings: { autoboot: true } });
    expect(updated).toEqual({ autoboot: true });
    expect(await (await t.fetch(`${BASE}/os/settings`)).json()).toEqual({ autoboot: true });
    await until(() => stream.frames.length === 2, 'the settings after the update');
    expect(JSON.parse(stream.frames[1]!)).toEqual({ autoboot: true });
    expect(t.changes.filter((change) => change.collection === 'osSettings')).toHaveLength(1);

    // Kept: a restarted service over the same database has them, and its socket opens with them.
    const restarted = await setup({ databaseName: t.databaseName });
    expect(await restarted.os.osSettingsSnapshot()).toEqual({ autoboot: true });
    const late = sockets(restarted).open('ws://localhost:1000/os/settings/stream');
    await until(() => late.frames.length === 1, 'the kept settings on open');
    expect(JSON.parse(late.frames[0]!)).toEqual({ autoboot: true });

    // An update that gives no field changes none (and still answers the whole settings).
    expect(await (await restarted.fetch(`${BASE}/os/settings/update`, jsonPost({}))).json()).toEqual({ autoboot: true });
    await restarted.os.osSettingsUpdate({ oSServerSettings: { autoboot: false } });
    await until(() => late.frames.length === 2, 'the settings turned back');
    expect(late.frames.map((frame) => JSON.parse(frame))).toEqual([{ autoboot: true }, { autoboot: false }]);

    // A reset gives the defaults again, and the socket sends them.
    await restarted.os.osSettingsUpdate({ oSServerSettings: { autoboot: true } });
    await until(() => late.frames.length === 3, 'the settings set again');
    await restarted.service.reset();
    expect(await restarted.os.osSettingsSnapshot()).toEqual({ autoboot: false });
    await until(() => late.frames.length === 4, 'the defaults after the reset');
    expect(JSON.parse(late.frames[3]!)).toEqual({ autoboot: false });
  });

  it('refuses a bad update with a 400 naming the field, and changes nothing', async () => {
    const t = await setup();
    await t.os.osSettingsUpdate({ oSServerSettings: { autoboot: true } });
    const before = await dump(t.databaseName);
    const changes = t.changes.length;
    const refused = async (init: RequestInit, field: string) => {
      const response = await t.fetch(`${BASE}/os/settings/update`, init);
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(field);
    };
    await refused(jsonPost({ autoboot: 'yes' }), 'autoboot');
    await refused(jsonPost({ autoboot: true, theme: 'dark' }), 'theme');
    await refused(jsonPost({ schema: { migration: 'x', semantic: 'MAJOR_0_MINOR_0_PATCH_1' } }), 'migration');
    await refused(jsonPost([true]), 'oSServerSettings');
    await refused({ method: 'POST' }, 'body');
    expect(await dump(t.databaseName)).toBe(before);
    expect(t.changes).toHaveLength(changes);
    expect(await t.os.osSettingsSnapshot()).toEqual({ autoboot: true });
  });
});

describe('the OS permissions', () => {
  it('are none until a request grants those it asks for; bad requests grant nothing', async () => {
    const t = await setup();
    const none = { processing: { vision: false, accessibility: false } };
    expect(await (await t.fetch(`${BASE}/os/permissions`)).json()).toEqual(none);
    const before = await dump(t.databaseName);
    for (const body of [{ processing: { screen: true } }, { processing: { vision: 'yes' } }, [true]]) {
      const bad = await t.fetch(`${BASE}/os/permissions/request`, jsonPost(body));
      expect(bad.status).toBe(400);
    }
    expect(await (await t.fetch(`${BASE}/os/permissions/request`, jsonPost({ processing: { screen: true } }))).text()).toContain('screen');
    expect(await dump(t.databaseName)).toBe(before);
    // Asking for nothing (or false) grants nothing.
    expect((await t.os.osPermissionsRequest({ oSPermissions: { processing: { vision: false } } })).processing).toMatchObject(
      none.processing,
    );
    const vision = await t.fetch(`${BASE}/os/permissions/request`, jsonPost({ processing: { vision: true } }));
    expect([vision.status, await vision.json()]).toEqual([200, { processing: { vision: true, accessibility: false } }]);
    expect((await t.os.osPermissionsRequest({ oSPermissions: { processing: { accessibility: true } } })).processing).toMatchObject({
      vision: true,
      accessibility: true,
    });
    expect((await t.os.osPermissions()).processing).toMatchObject({ vision: true, accessibility: true });
    // Gone with the data.
    await t.service.reset();
    expect((await t.os.osPermissions()).processing).toMatchObject(none.processing);
  });

  it("let the Pieces CLI's `ltm enable` go through: permissions checked, requested, checked again, then the processor activated", async () => {
    const t = await setup();
    // LTM.enable(): the missing permissions are requested, and the answer must grant them (else PermissionError).
    const perms = await t.os.osPermissions();
    const missing = (['vision', 'accessibility'] as const).filter((name) => !perms.processing?.[name]);
    expect(missing).toEqual(['vision', 'accessibility']);
    const out = await t.os.osPermissionsRequest({
      oSPermissions: { processing: Object.fromEntries(missing.map((name) => [name, true])) },
    });
    expect((['vision', 'accessibility'] as const).filter((name) => !out.processing?.[name])).toEqual([]);
    const activated = await t.fetch(
      `${BASE}/workstream_pattern_engine/processors/vision/activate`,
      jsonPost({ vision: { activation: { continuous: true } } }),
    );
    expect(activated.status).toBe(200);
    expect((await (await t.fetch(`${BASE}/workstream_pattern_engine/processors/vision/status`)).json()).vision.activation).toBeDefined();
  });
});

describe('the device information', () => {
  it('gives the platform and system version the user agent names, and nothing it does not', async () => {
    const windows = await setup({ userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36' });
    expect(await (await windows.fetch(`${BASE}/os/device/information`)).json()).toEqual({ name: 'WINDOWS', version: '10.0' });
    const mac = await setup({
      userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/18.1 Safari/605.1.15',
    });
    expect(await mac.os.osDeviceInformation()).toEqual({ name: 'MACOS', version: '10.15.7' });
    const linux = await setup({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' });
    expect(await (await linux.fetch(`${BASE}/os/device/information`)).json()).toEqual({ name: 'LINUX' });
    const node = await setup({ userAgent: 'Node.js/22' });
    expect(await (await node.fetch(`${BASE}/os/device/information`)).json()).toEqual({});
  });
});

describe('the OS metadata', () => {
  it('counts what the store holds, and follows a create', async () => {
    const t = await setup();
    const totals = async () => ((await (await t.fetch(`${BASE}/os/metadata`)).json()) as { totals: Record<string, number> }).totals;
    const assets = (await t.assets.assetsSnapshot({})).iterable ?? [];
    const tags = new Set(assets.flatMap((asset) => (asset.tags?.iterable ?? []).map((tag) => tag.id)));
    const websites = new Set(assets.flatMap((asset) => (asset.websites?.iterable ?? []).map((website) => website.id)));
    const before = await totals();
    expect(before).toMatchObject({
      assets: assets.length,
      tags: tags.size,
      websites: websites.size,
      copilot_conversations: 0,
      anchor_files: 0,
      anchor_folders: 0,
      persons: 0,
      shares: 0,
    });
    expect(assets.length).toBeGreaterThan(0);

    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('a chat') });
    await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/app.ts' } });
    await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.Directory, fullpath: '/src' } });
    expect(await totals()).toEqual({ ...before, copilot_conversations: 1, anchor_files: 1, anchor_folders: 1 });
    expect((await t.os.osMetadata()).totals?.copilotConversations).toBe(1);
  });
});
