// @vitest-environment node
/**
 * Backups, the database's export and import, shares (their links and htmlShare) and
 * distributions: round trips, export → wipe → import equal, backup → change → restore gives the
 * backup's records, a share's link stable across a restart, bad input a 400 with nothing changed.
 * Every 2xx body is checked against the SDK's models (test/unit/support/response-check.ts).
 */
import { describe, expect, it } from 'vitest';
import { BASE, dump, jsonPost, seeded, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

type Json = Record<string, any>;

const harness = async () => {
  const t = await setup();
  const call = (path: string, init?: RequestInit) => t.fetch(BASE + path, init);
  const json = async (path: string, init?: RequestInit) => {
    const response = await call(path, init);
    expect(response.status, `${path}: ${await response.clone().text()}`).toBeLessThan(300);
    return (await response.json()) as Json;
  };
  return { t, call, json };
};

const post = { method: 'POST' };

describe('backups', () => {
  it("create → read → list → restore after a change gives the backup's records → delete", async () => {
    const { t, call, json } = await harness();
    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('kept') });
    const before = await t.service.exportData();
    const backup = await json('/backups/create', jsonPost({}));
    expect(backup).toMatchObject({ id: expect.any(String), version: expect.any(String), platform: expect.any(String) });
    expect(backup.bytes).toBeGreaterThan(100);
    expect(await json(`/backup/${backup.id}`)).toEqual(backup);
    expect((await json('/backups')).iterable).toEqual([backup]);
    expect(await json(`/backup/${backup.id}/creation/status`)).toEqual({ value: 'COMPLETED', percentage: 100, backup });
    expect((await json(`/backup/${backup.id}/restoration/status`)).value).toBe('UNKNOWN');

    // What was written after it is gone once restored; the backups stay.
    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('after') });
    const assets = (await json('/assets')).iterable;
    expect((await call(`/assets/${assets[0].id}/delete`, post)).status).toBe(200);
    const second = await json('/backups/create/streamed', jsonPost({}));
    expect(second).toMatchObject({ status: 'COMPLETED', percentage: 100 });
    expect(await json(`/backup/${backup.id}/restore`, jsonPost(backup))).toEqual(backup);
    const after = await t.service.exportData();
    expect(after.conversations).toEqual(before.conversations);
    expect(after.assets).toEqual(before.assets);
    expect((await json('/backups')).iterable.map((b: Json) => b.id)).toEqual([backup.id, second.backup.id]);
    expect(await json(`/backup/${backup.id}/restoration/status`)).toEqual({ value: 'COMPLETED', percentage: 100, backup });
    expect((await json('/backups/streamed/progress')).restorations).toEqual([{ status: 'COMPLETED', percentage: 100, backup }]);

    // The second backup restores what it kept (the conversation made after the first).
    const restored = await json(`/backup/${second.backup.id}/restore/streamed`, post);
    expect(restored).toEqual({ status: 'COMPLETED', percentage: 100, backup: second.backup });
    expect((await t.service.exportData()).conversations.map((c) => c.name)).toEqual(['kept', 'after']);

    // Kept across a restart.
    const restarted = await setup({ databaseName: t.databaseName });
    const listed = (await (await restarted.fetch(`${BASE}/backups`)).json()) as Json;
    expect(listed.iterable.map((b: Json) => b.id)).toEqual([backup.id, second.backup.id]);

    expect((await call(`/backups/${backup.id}/delete`, post)).status).toBe(204);
    expect((await call(`/backup/${backup.id}`)).status).toBe(404);
    expect((await call(`/backup/${backup.id}/restore`, post)).status).toBe(404);
    expect((await call(`/backups/${backup.id}/delete`, post)).status).toBe(404);
    // A reset takes the backups (and their kept content) with it.
    await t.service.reset();
    expect((await json('/backups')).iterable).toEqual([]);
    expect(await t.storage.getMeta(`backup:${second.backup.id}`)).toBeUndefined();
  });

  it('sends the progress of each creation and restoration on their sockets, to completion', async () => {
    const { t, call, json } = await harness();
    expect((await call('/backups/create/streamed/websocket')).status).toBe(426);
    const creations = sockets(t).open('ws://localhost:1000/backups/create/streamed/websocket');
    await until(() => creations.events.includes('open'), 'the creation socket');
    const made = await json('/backups/create/streamed', post);
    await until(() => creations.frames.length === 2, 'the creation frames');
    expect(creations.frames.map((frame) => JSON.parse(frame))).toEqual([{ status: 'INITIALIZED', percentage: 0 }, made]);

    const restorations = sockets(t).open(`ws://localhost:1000/backup/${made.backup.id}/restore/streamed/websocket`);
    await until(() => restorations.events.includes('open'), 'the restoration socket');
    await json(`/backup/${made.backup.id}/restore`, post);
    await until(() => restorations.frames.length === 2, 'the restoration frames');
    expect(restorations.frames.map((frame) => JSON.parse(frame))).toEqual([
      { status: 'INITIALIZED', percentage: 0 },
      { status: 'COMPLETED', percentage: 100, backup: made.backup },
    ]);
    // Another creation is sent on the creation socket only.
    await json('/backups/create', post);
    await until(() => creations.frames.length === 4, 'the second creation');
    expect(restorations.frames).toHaveLength(2);
  });

  it('backs up the assets sent: a backup holding them alone', async () => {
    const { t, call, json } = await harness();
    const [first] = (await json('/assets')).iterable;
    expect((await call('/backup/asset', jsonPost(first))).status).toBe(204);
    const [made] = (await json('/backups')).iterable;
    await json(`/backup/${made.id}/restore`, post);
    expect((await t.service.exportData()).assets.map((a) => a.id)).toEqual([first.id]);
  });

  it('refuses bad input with a 400 (an unknown backup a 404) and changes nothing', async () => {
    const { t, call, json } = await harness();
    const backup = await json('/backups/create', post);
    const before = await dump(t.databaseName);
    expect((await call('/backups/create', jsonPost({ notAField: 1 }))).status).toBe(400);
    expect((await call('/backup/not-an-id/restore', post)).status).toBe(400);
    expect((await call(`/backup/${crypto.randomUUID()}/restore`, post)).status).toBe(404);
    expect((await call(`/backup/${backup.id}/restore`, jsonPost({ id: 1 }))).status).toBe(400);
    expect((await call('/backup/asset', jsonPost({ id: crypto.randomUUID() }))).status).toBe(404);
    expect((await call('/backup', jsonPost({ iterable: [] }))).status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('the database export and import', () => {
  it('export → wipe → import gives the same records; backups stay', async () => {
    const { t, call, json } = await harness();
    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('exported', ['hello']) });
    await json('/persons/create', jsonPost({ type: { basic: { name: 'Ada' } } }));
    const [asset] = (await json('/assets')).iterable;
    await json('/linkify/multiple', jsonPost({ assets: [asset.id], access: 'PUBLIC' }));
    const backup = await json('/backups/create', post);
    const before = await t.service.exportData();
    const exported = await json('/database/export');
    expect(exported.version).toBe('1');
    expect(exported.persons.length).toBeGreaterThan(0);

    await t.service.seed({ conversations: [seeded('stray') as never] });
    await t.service.reset();
    await json('/backups/create', post);
    const imported = await call('/database/import', jsonPost(exported));
    expect([imported.status, await imported.text()]).toEqual([204, '']);
    const after = await t.service.exportData();
    const { backup: _b, ...beforeMaterials } = before.materials;
    const { backup: kept, ...afterMaterials } = after.materials;
    expect({ ...after, materials: afterMaterials }).toEqual({ ...before, materials: beforeMaterials });
    expect(kept?.length).toBe(1);
    expect(kept?.[0]?.id).not.toBe(backup.id);

    // The export of an empty store (no bytes in any field) empties it; the backups stay.
    const none = ['analyses', 'applications', 'assets', 'codeAnalyses', 'files', 'formatMetrics', 'formats', 'fragments']
      .concat(['imageAnalyses', 'models', 'ocrAnalyses', 'persons', 'sensitives', 'tags', 'websites'])
      .map((field) => [field, []]);
    const emptied = await call('/database/import', jsonPost({ version: '1', ...Object.fromEntries(none), values: { iterable: [] } }));
    expect(emptied.status).toBe(204);
    const empty = await t.service.exportData();
    expect([empty.assets, empty.conversations, empty.materials.person]).toEqual([[], [], undefined]);
    expect(empty.materials.backup).toEqual(kept);
  });

  it('refuses a bad import with a 400 naming the field, and changes nothing', async () => {
    const { t, call, json } = await harness();
    const exported = await json('/database/export');
    const before = await dump(t.databaseName);
    const refused = async (body: unknown, field: string) => {
      const response = await call('/database/import', jsonPost(body));
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(field);
    };
    await refused({ ...exported, version: '2' }, 'version');
    await refused({ ...exported, assets: [256] }, 'exportedDatabase.assets');
    await refused({ ...exported, assets: Array.from(new TextEncoder().encode('[{"id":1}]')) }, 'data.assets');
    await refused({ ...exported, fragments: [1] }, 'fragments');
    await refused({ ...exported, extra: [] }, 'extra');
    await refused({ ...exported, values: { iterable: [{ id: 'other', raw: [] }] } }, 'values.iterable[0].id');
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('shares and their links', () => {
  it('create → read → list → update → score → htmlShare → revoke; the link is stable across a restart', async () => {
    const { t, call, json } = await harness();
    const [asset] = (await json('/assets')).iterable;
    const whole = await json(`/asset/${asset.id}`);
    const made = await json('/shares/create', jsonPost({ asset: whole, access: 'PUBLIC', name: 'mine' }));
    const [share] = made.iterable;
    expect(share.link).toBe(`${BASE}/?p=${share.short}`);
    expect(share.asset.id).toBe(asset.id);
    expect(await json(`/share/${share.id}`)).toEqual(share);
    expect(await json(`/shares/${share.id}`)).toEqual(share);
    expect((await json('/shares')).iterable).toEqual([share]);
    const updated = await json('/share/update', jsonPost({ ...share, name: 'renamed' }));
    expect(updated.name).toBe('renamed');
    expect((await call(`/share/${share.id}/scores/increment`, jsonPost({ share: { reuse: true } }))).status).toBe(204);

    const page = await call(`/?p=${share.short}`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('renamed');

    const restarted = await setup({ databaseName: t.databaseName });
    const again = (await (await restarted.fetch(`${BASE}/share/${share.id}`)).json()) as Json;
    expect(again.link).toBe(share.link);
    expect((await restarted.fetch(share.link)).status).toBe(200);

    const revoked = await call(`/linkify/${share.id}/revoke`, post);
    expect([revoked.status, await revoked.text()]).toEqual([200, share.id]);
    expect((await call(`/?p=${share.short}`)).status).toBe(404);
    expect((await call(`/share/${share.id}`)).status).toBe(404);
    expect((await call(`/shares/${share.id}/delete`, post)).status).toBe(404);
  });

  it("linkify makes a share with its distributions; a distribution is updated and deleted with its share's list", async () => {
    const { call, json } = await harness();
    const [asset] = (await json('/assets')).iterable;
    const whole = await json(`/asset/${asset.id}`);
    const recipients = { iterable: [{ email: 'a@example.com' }] };
    const [share] = (
      await json('/linkify', jsonPost({ asset: whole, access: 'PRIVATE', distributions: { iterable: [{ mailgun: { recipients } }] } }))
    ).iterable;
    const [distribution] = share.distributions.iterable;
    expect(distribution.share.id).toBe(share.id);
    expect(await json(`/distribution/${distribution.id}`)).toEqual(distribution);
    expect((await json('/distributions')).iterable).toEqual([distribution]);
    const changed = await json('/distribution/update', jsonPost({ ...distribution, mailgun: { recipients: { iterable: [] } } }));
    expect((await json(`/share/${share.id}`)).distributions.iterable).toEqual([changed]);
    expect((await call(`/distributions/${distribution.id}/delete`, post)).status).toBe(204);
    expect((await json(`/share/${share.id}`)).distributions).toBeUndefined();
    expect((await json('/distributions')).iterable).toEqual([]);

    // A share's delete takes its distributions.
    const [other] = (await json('/linkify', jsonPost({ asset: whole, access: 'PUBLIC', distributions: { iterable: [{}] } }))).iterable;
    expect((await call(`/shares/${other.id}/delete`, post)).status).toBe(200);
    expect((await json('/distributions')).iterable).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field (an unknown asset a 404), and changes nothing', async () => {
    const { t, call, json } = await harness();
    const [asset] = (await json('/assets')).iterable;
    const before = await dump(t.databaseName);
    const refused = async (path: string, body: unknown, status: number, text: string) => {
      const response = await call(path, jsonPost(body));
      expect([response.status, await response.text()]).toEqual([status, expect.stringContaining(text)]);
    };
    await refused('/shares/create', { access: 'OPEN' }, 400, 'seededShare.access');
    await refused('/shares/create', { access: 'PUBLIC' }, 400, 'asset');
    await refused('/linkify/multiple', { assets: [asset.id], access: 'PUBLIC', extra: 1 }, 400, 'extra');
    await refused('/linkify/multiple', { assets: [crypto.randomUUID()], access: 'PUBLIC' }, 404, 'No asset');
    await refused('/linkify', { access: 'PUBLIC' }, 400, 'linkify.asset');
    await refused('/distributions/create', {}, 400, 'share');
    await refused('/distributions/create', { github: { gist: { name: 'g' } } }, 501, 'gist');
    expect((await call('/?p=nothing')).status).toBe(404);
    expect(await dump(t.databaseName)).toBe(before);
  });
});
