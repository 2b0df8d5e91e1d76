/**
 * Tags and websites on their own (TagsApi, TagApi, WebsitesApi, WebsiteApi), through the SDK's
 * classes: create (on an asset) → read → list → update → stream frames → exists → search → score
 * → delete → 404, and the asset no longer lists it; bad input a 400 with nothing changed; kept
 * across a restart. Every 2xx body is held to its SDK model by the response check
 * (test/unit/support/response-check.ts).
 */
import { TagApi, TagsApi, WebsiteApi, WebsitesApi, type Seed } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { parseData, toData } from '../../../src/core/data.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

const APP = { id: crypto.randomUUID(), name: 'VS_CODE', version: '1.0.0', platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
const textSeed = (raw: string, metadata: Record<string, unknown> = {}): Seed =>
  ({ type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw } } }, metadata } }) as never;

/** A clock a millisecond further on each reading: one request's records share a time, the next request's is later. */
const steppingClock = () => {
  let at = Date.parse('2026-03-01T00:00:00.000Z');
  return { now: () => new Date(at++) };
};

const harness = async (options: { databaseName?: string } = {}) => {
  const t = await setup({ sampleAssets: false, ...steppingClock(), ...options });
  return {
    t,
    tags: new TagsApi(t.configuration),
    tag: new TagApi(t.configuration),
    websites: new WebsitesApi(t.configuration),
    website: new WebsiteApi(t.configuration),
  };
};

const frames = (recorded: { frames: string[] }) => recorded.frames.map((frame) => JSON.parse(frame) as { iterable: unknown[] });

describe('tags', () => {
  it('create on an asset → read → list → update → stream → exists → search → score → delete → 404, and the asset no longer lists it', async () => {
    const { t, tags, tag } = await harness();
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1') });
    const stream = sockets(t).open('ws://localhost:1000/tags/stream/identifiers');
    const assetStream = sockets(t).open('ws://localhost:1000/assets/stream/identifiers');
    await until(() => stream.frames.length === 1 && assetStream.frames.length === 1, 'the first frames');
    expect(frames(stream)[0]).toEqual({ iterable: [] });

    const ml = await tags.tagsCreateNewTag({ seededTag: { text: 'machine learning', asset: asset.id, category: 'HANDLE' } });
    expect(ml).toMatchObject({ text: 'machine learning', category: 'HANDLE', assets: { iterable: [{ id: asset.id }] } });
    expect(ml.score).toEqual({ manual: 0, automatic: 0 });
    const py = await tags.tagsCreateNewTag({ seededTag: { text: 'python' } });
    expect(py.assets).toBeUndefined();
    // The asset shows the tag, and its stream heard of it.
    expect((await t.asset.assetSnapshot({ asset: asset.id })).tags?.iterable.map((x) => x.text)).toEqual(['machine learning']);
    await until(() => assetStream.frames.length === 2, 'the asset changed');
    // One of a stored text is that tag (put on the asset it names).
    const again = await tags.tagsCreateNewTag({ seededTag: { text: 'python', asset: asset.id } });
    expect(again.id).toBe(py.id);
    expect(again.assets?.iterable).toEqual([{ id: asset.id }]);

    expect(await tag.tagsSpecificTagSnapshot({ tag: ml.id })).toEqual(ml);
    expect((await tags.tagsSnapshot()).iterable.map((x) => x.id)).toEqual([ml.id, py.id]);

    // Update: the whole model; its text and category and score are read back, `created` kept, its assets kept.
    const updated = await tag.tagUpdate({ tag: { ...ml, text: 'ML', category: 'UNKNOWN', score: { manual: 3, automatic: 1 } } });
    expect(updated).toMatchObject({ id: ml.id, text: 'ML', category: 'UNKNOWN', score: { manual: 3, automatic: 1 }, created: ml.created });
    expect(updated.assets?.iterable).toEqual([{ id: asset.id }]);
    expect(updated.updated.value > ml.updated.value).toBe(true);
    expect(await tag.tagsSpecificTagSnapshot({ tag: ml.id })).toEqual(updated);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).tags?.iterable.map((x) => x.text).sort()).toEqual(['ML', 'python']);

    // The stream: every change since it opened, in order.
    await until(() => stream.frames.length === 5, 'the tag changes');
    expect(frames(stream).slice(1)).toEqual([
      { iterable: [{ tag: { id: ml.id } }] },
      { iterable: [{ tag: { id: py.id } }] },
      { iterable: [{ tag: { id: py.id } }] },
      { iterable: [{ tag: { id: ml.id } }] },
    ]);
    const late = sockets(t).open('ws://localhost:1000/tags/stream/identifiers');
    await until(() => late.frames.length === 1, 'the first frame of a late socket');
    expect(frames(late)[0]).toEqual({ iterable: [{ tag: { id: ml.id } }, { tag: { id: py.id } }] });

    expect(await tags.tagsExists({ existentMetadata: { value: 'ML' } })).toMatchObject({ tag: { id: ml.id, reference: updated } });
    expect(await tags.tagsExists({ existentMetadata: { value: 'machine learning' } })).toEqual({});

    const found = await tags.searchTags({ searchInput: { engines: { iterable: [{ query: 'python' }] } } });
    expect(found.iterable.map((x) => [x.identifier, x.exact, x.tag?.text])).toEqual([[py.id, true, 'python']]);
    const bare = await tags.searchTags({ transferables: false, searchInput: { engines: { iterable: [{ query: 'ml python' }] } } });
    expect(bare.iterable.map((x) => [x.identifier, x.similarity, x.tag])).toEqual([
      [ml.id, 0.5, undefined],
      [py.id, 0.5, undefined],
    ]);

    await tag.tagScoresIncrement({ tag: py.id, seededScoreIncrement: { tag: { reuse: true, searched: true } } });
    await tag.tagScoresIncrement({ tag: py.id, seededScoreIncrement: { tags: { reuse: true } } });
    expect((await tag.tagsSpecificTagSnapshot({ tag: py.id })).score).toEqual({ manual: 0, automatic: 0, reuse: 2, searched: 1 });

    // Delete: gone, unlisted from its asset (whose stream hears of it), the tag stream marks it deleted.
    const assetFrames = assetStream.frames.length;
    await tags.tagsDeleteSpecificTag({ tag: ml.id });
    await until(() => frames(stream).some((frame) => JSON.stringify(frame).includes('"deleted":true')), 'the delete');
    expect(frames(stream).at(-1)).toEqual({ iterable: [{ tag: { id: ml.id }, deleted: true }] });
    await until(() => assetStream.frames.length > assetFrames, 'the asset changed by the delete');
    expect(JSON.parse(assetStream.frames.at(-1)!)).toEqual({ iterable: [{ asset: { id: asset.id } }] });
    const read = await t.fetch(`${BASE}/tag/${ml.id}`);
    expect([read.status, await read.text()]).toEqual([404, `No tag with id ${ml.id}.`]);
    const twice = await t.fetch(`${BASE}/tags/${ml.id}/delete`, { method: 'POST' });
    expect(twice.status).toBe(404);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).tags?.iterable.map((x) => x.text)).toEqual(['python']);
    expect((await tags.tagsSnapshot()).iterable.map((x) => x.id)).toEqual([py.id]);

    // Deleting the asset takes it off the tag, and the tag stream hears of it.
    await t.assets.assetsDeleteAsset({ asset: asset.id });
    expect((await tag.tagsSpecificTagSnapshot({ tag: py.id })).assets).toBeUndefined();
    await until(
      () =>
        frames(stream).at(-1)?.iterable.length === 1 &&
        JSON.stringify(frames(stream).at(-1)) === JSON.stringify({ iterable: [{ tag: { id: py.id } }] }),
      'the tag changed by the asset delete',
    );
  });

  it('refuses bad input with a 400 (or 404, 409) naming what is wrong, and changes nothing', async () => {
    const { t, tags } = await harness();
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1') });
    const made = await tags.tagsCreateNewTag({ seededTag: { text: 'kept' } });
    const other = await tags.tagsCreateNewTag({ seededTag: { text: 'other' } });
    const before = await dump(t.databaseName);
    const changes = t.changes.length;
    const unknown = crypto.randomUUID();
    for (const [path, body, status, message] of [
      ['/tags/create', { text: 'x', colour: 'red' }, 400, /seededTag\.colour/],
      ['/tags/create', { text: 7 }, 400, /seededTag\.text/],
      ['/tags/create', { category: 'HANDLE' }, 400, /seededTag\.text/],
      ['/tags/create', { text: 'x', category: 'NOPE' }, 400, /seededTag\.category/],
      ['/tags/create', { text: 'x', person: unknown }, 400, /seededTag\.person/],
      ['/tags/create', { text: 'x', asset: unknown }, 404, new RegExp(`No asset with id ${unknown}`)],
      ['/tags/create', undefined, 400, /SeededTag/],
      ['/tag/update', { ...made, text: 5 }, 400, /tag\.text/],
      ['/tag/update', { ...made, id: unknown, text: 'fresh' }, 404, new RegExp(`No tag with id ${unknown}`)],
      ['/tag/update', { ...made, text: 'other' }, 409, new RegExp(other.id)],
      ['/tag/update', { id: made.id, text: 'y' }, 400, /tag\.created/],
      ['/tags/exists', { value: 3 }, 400, /existentMetadata\.value/],
      ['/tags/exists', { value: 'x', key: 'y' }, 400, /existentMetadata\.key/],
      ['/tags/search', {}, 400, /query/],
      [`/tag/${made.id}/scores/increment`, { tag: { reuse: 'yes' } }, 400, /seededScoreIncrement\.tag\.reuse/],
      [`/tag/${made.id}/scores/increment`, { asset: { reuse: true } }, 400, /seededScoreIncrement\.tag/],
      [`/tag/${unknown}/scores/increment`, { tag: { reuse: true } }, 404, /No tag with id/],
      [`/tags/not-a-uuid/delete`, undefined, 400, /tag id/],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, body === undefined ? { method: 'POST' } : jsonPost(body));
      expect([response.status, await response.text()], `${path} ${JSON.stringify(body)}`).toEqual([status, expect.stringMatching(message)]);
    }
    expect(await dump(t.databaseName)).toBe(before);
    expect(t.changes).toHaveLength(changes);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).tags).toBeUndefined();
  });

  it('keeps what was written across a restart, and the tags an asset was created with are listed and streamed', async () => {
    const { t, tags, tag } = await harness();
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1', { tags: [{ text: 'from-asset' }] }) });
    const made = await tags.tagsCreateNewTag({ seededTag: { text: 'mine', asset: asset.id } });
    await tag.tagScoresIncrement({ tag: made.id, seededScoreIncrement: { tag: { priority: true } } });
    expect(t.changes.filter((change) => change.collection === 'tag').length).toBe(3);
    const restarted = await harness({ databaseName: t.databaseName });
    const listed = await restarted.tags.tagsSnapshot();
    expect(listed.iterable.map((x) => x.text)).toEqual(['from-asset', 'mine']);
    expect(listed.iterable[1]).toMatchObject({
      id: made.id,
      score: { manual: 0, automatic: 0, priority: 1 },
      assets: { iterable: [{ id: asset.id }] },
    });
    const stream = sockets(restarted.t).open('ws://localhost:1000/tags/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the first frame');
    expect(frames(stream)[0]!.iterable).toEqual(listed.iterable.map((x) => ({ tag: { id: x.id } })));
  });
});

describe('the data format', () => {
  it('keeps tags and websites with what they were given (score, interactions, …) through an export and a load', async () => {
    const { t, tags, tag, websites, website } = await harness();
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1') });
    const made = await tags.tagsCreateNewTag({ seededTag: { text: 'kept', asset: asset.id, tagsVector: [0.5, 1] } });
    await tag.tagScoresIncrement({ tag: made.id, seededScoreIncrement: { tag: { searched: true } } });
    const site = await websites.websitesCreateNewWebsite({ seededWebsite: { url: 'https://kept.test/', name: 'kept' } });
    await website.websiteUpdate({ website: { ...site, interactions: 2 } });
    const exported = JSON.parse(JSON.stringify(toData(await t.storage.dumpData()))) as unknown;
    const other = await harness();
    await other.t.storage.loadData(parseData(exported, { now: () => new Date(), newId: () => crypto.randomUUID() }), { replace: true });
    expect(await other.tags.tagsSnapshot()).toEqual(await tags.tagsSnapshot());
    expect(await other.websites.websitesSnapshot()).toEqual(await websites.websitesSnapshot());
    expect((await other.tag.tagsSpecificTagSnapshot({ tag: made.id })).score).toEqual({ manual: 0, automatic: 0, searched: 1 });
    // A kept field that is not the model's is refused, naming it.
    const bad = exported as { tags: Array<Record<string, unknown>> };
    bad.tags[0]!.fields = { score: { manual: 'many', automatic: 0 } };
    expect(() => parseData(bad, { now: () => new Date(), newId: () => crypto.randomUUID() })).toThrow(/tags\[0\]\.fields\.score\.manual/);
  });
});

describe('websites', () => {
  it('create → read → list → update → exists → search → score → delete → 404, the asset no longer lists it; kept across a restart', async () => {
    const { t, websites, website } = await harness();
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1') });
    const stream = sockets(t).open('ws://localhost:1000/websites/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the first frame');
    const docs = await websites.websitesCreateNewWebsite({ seededWebsite: { url: 'https://docs.test/a', name: 'Docs', asset: asset.id } });
    expect(docs).toMatchObject({ url: 'https://docs.test/a', name: 'Docs', assets: { iterable: [{ id: asset.id }] } });
    const blog = await websites.websitesCreateNewWebsite({ seededWebsite: { url: 'https://blog.test/', name: 'Blog' } });
    expect(await website.websitesSpecificWebsiteSnapshot({ website: docs.id })).toEqual(docs);
    expect((await websites.websitesSnapshot()).iterable.map((x) => x.id)).toEqual([docs.id, blog.id]);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).websites?.iterable.map((x) => x.url)).toEqual(['https://docs.test/a']);

    const updated = await website.websiteUpdate({ website: { ...docs, name: 'The docs', interactions: 4 } });
    expect(updated).toMatchObject({ name: 'The docs', interactions: 4, created: docs.created, assets: { iterable: [{ id: asset.id }] } });
    await until(() => stream.frames.length === 4, 'the website changes');
    expect(frames(stream).slice(1)).toEqual([
      { iterable: [{ website: { id: docs.id } }] },
      { iterable: [{ website: { id: blog.id } }] },
      { iterable: [{ website: { id: docs.id } }] },
    ]);

    expect(await websites.websitesExists({ existentMetadata: { value: 'https://blog.test/' } })).toMatchObject({
      website: { id: blog.id },
    });
    expect(await websites.websitesExists({ existentMetadata: { value: 'https://none.test/' } })).toEqual({});
    const found = await websites.searchWebsites({ searchInput: { engines: { iterable: [{ query: 'docs' }] } } });
    expect(found.iterable.map((x) => [x.identifier, x.website?.name])).toEqual([[docs.id, 'The docs']]);
    await website.websiteScoresIncrement({ website: blog.id, seededScoreIncrement: { websites: { update: true } } });
    expect((await website.websitesSpecificWebsiteSnapshot({ website: blog.id })).score).toEqual({ manual: 0, automatic: 0, update: 1 });

    const before = await dump(t.databaseName);
    for (const [path, body, status] of [
      ['/websites/create', { url: 'https://x.test/' }, 400],
      ['/websites/create', { url: 'https://x.test/', name: 'x', conversation: crypto.randomUUID() }, 400],
      ['/website/update', { ...blog, url: 'https://docs.test/a' }, 409],
      ['/websites/exists', {}, 400],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, jsonPost(body));
      expect(response.status, path).toBe(status);
    }
    expect(await dump(t.databaseName)).toBe(before);

    await websites.websitesDeleteSpecificWebsite({ website: docs.id });
    await until(
      () => frames(stream).at(-1)?.iterable.length === 1 && JSON.stringify(frames(stream).at(-1)).includes('"deleted":true'),
      'the delete',
    );
    expect((await t.fetch(`${BASE}/website/${docs.id}`)).status).toBe(404);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).websites).toBeUndefined();

    const restarted = await harness({ databaseName: t.databaseName });
    expect(await restarted.websites.websitesSnapshot()).toEqual({
      iterable: [{ ...blog, score: { manual: 0, automatic: 0, update: 1 }, updated: expect.anything() }],
    });
  });
});
