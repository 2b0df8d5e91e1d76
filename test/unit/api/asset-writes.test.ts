/**
 * Assets written, formatted, annotated, tagged and searched, through the SDK 4.1.0 classes
 * (every 2xx body is also checked against the SDK models by the response check). Bad input
 * is refused with a message and changes nothing.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  ActivitiesApi,
  AnnotationApi,
  AnnotationsApi,
  FormatApi,
  instanceOfAsset,
  instanceOfFormat,
  instanceOfSeed,
  QGPTApi,
  SearchApi,
  TagApi,
  WebsiteApi,
  type Seed,
} from '@pieces.app/pieces-os-client';
import { BASE, application, dump, jsonPost, setup } from '../support/harness.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const APP = application({ name: 'OS_SERVER' });

/** A Seed of text, as the example web app and the Python wrapper send it. */
const textSeed = (raw: string, metadata: Record<string, unknown> = {}, fragmentMetadata?: { ext: string }): Seed =>
  ({
    type: 'SEEDED_ASSET',
    asset: {
      application: APP,
      format: { fragment: { string: { raw }, ...(fragmentMetadata ? { metadata: fragmentMetadata } : {}) } },
      metadata,
    },
  }) as never;

async function apis(t: Harness) {
  return {
    format: new FormatApi(t.configuration),
    annotation: new AnnotationApi(t.configuration),
    annotations: new AnnotationsApi(t.configuration),
    tag: new TagApi(t.configuration),
    website: new WebsiteApi(t.configuration),
    activities: new ActivitiesApi(t.configuration),
    search: new SearchApi(t.configuration),
    qgpt: new QGPTApi(t.configuration),
  };
}

const DEBOUNCE = `export function debounce(fn: () => void, ms: number) {\n  let timer: ReturnType<typeof setTimeout> | undefined;\n  return () => {\n    clearTimeout(timer);\n    timer = setTimeout(fn, ms);\n  };\n}\n`;

describe('assetsCreateNewAsset', () => {
  it('makes a whole Asset from a fragment: classification from the metadata, name derived, a description, formats readable by id', async () => {
    const t = await setup({ sampleAssets: false });
    const a = await apis(t);
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed(DEBOUNCE, {}, { ext: 'ts' }) });
    expect(instanceOfAsset(asset)).toBe(true);
    expect(asset.name).toBe('debounce.ts');
    expect(asset.original.reference?.classification.specific).toBe('ts');
    expect(asset.original.reference?.classification.generic).toBe('CODE');
    expect(asset.original.reference?.fragment?.string?.raw).toBe(DEBOUNCE);
    expect(asset.preview.base.reference?.fragment?.string?.raw).toBe(DEBOUNCE);
    expect(asset.formats.iterable.map((f) => f.role)).toEqual(['BOTH']);
    expect(asset.annotations?.iterable.map((n) => [n.type, n.text])).toEqual([
      ['DESCRIPTION', 'A TypeScript snippet of 7 lines, declaring debounce.'],
    ]);
    const original = await a.format.formatSnapshot({ format: asset.original.id, transferable: true });
    expect(instanceOfFormat(original)).toBe(true);
    expect(original.fragment?.string?.raw).toBe(DEBOUNCE);
    expect(original.asset.id).toBe(asset.id);
    expect((await a.format.formatSnapshot({ format: asset.preview.base.id, transferable: false })).fragment).toBeUndefined();
    // Announced on the assets stream, and read back the same.
    expect(t.changes.filter((c) => c.collection === 'asset').map((c) => c.id)).toEqual([asset.id]);
    expect(await (await t.fetch(`${BASE}/asset/${asset.id}`)).json()).toEqual(
      JSON.parse(JSON.stringify(await (await t.fetch(`${BASE}/assets/${asset.id}`)).json())),
    );
    expect((await t.assets.assetsIdentifiersSnapshot()).iterable!.map((i) => i.id)).toEqual([asset.id]);
  });

  it('keeps the name and annotations sent, reuses a stored tag of the same text, and detects the language from the text', async () => {
    const t = await setup({ sampleAssets: false });
    const first = await t.assets.assetsCreateNewAsset({
      seed: textSeed('def retry(fn):\n    return fn()\n', { name: 'retry helper', tags: [{ text: 'python' }] }),
    });
    expect(first.name).toBe('retry helper');
    expect(first.original.reference?.classification.specific).toBe('py');
    const second = await t.assets.assetsCreateNewAsset({
      seed: textSeed('package main\n\nfunc main() {}\n', {
        tags: [{ text: 'python' }, { text: 'go' }],
        websites: [{ url: 'https://go.dev/', name: 'Go' }],
        annotations: [
          { type: 'DESCRIPTION', text: 'An empty Go program.' },
          { type: 'COMMENT', text: 'kept' },
        ],
      }),
    });
    expect(second.original.reference?.classification.specific).toBe('go');
    expect(second.annotations?.iterable.map((n) => n.text).sort()).toEqual(['An empty Go program.', 'kept']);
    const python = second.tags!.iterable.find((tag) => tag.text === 'python')!;
    expect(python.id).toBe(first.tags!.iterable[0]!.id);
    const tag = await new TagApi(t.configuration).tagsSpecificTagSnapshot({ tag: python.id });
    expect(tag.assets?.iterable?.map((x) => x.id).sort()).toEqual([first.id, second.id].sort());
    const site = await new WebsiteApi(t.configuration).websitesSpecificWebsiteSnapshot({ website: second.websites!.iterable[0]!.id });
    expect([site.url, site.name, site.assets?.iterable?.[0]?.id]).toEqual(['https://go.dev/', 'Go', second.id]);
    for (const [text, specific] of [
      ['{"a": [1, 2]}', 'json'],
      ['SELECT id FROM users WHERE name = ?', 'sql'],
      ['#!/bin/bash\necho hi\n', 'sh'],
      ['just a note to myself', 'txt'],
    ]) {
      const made = await t.assets.assetsCreateNewAsset({ seed: textSeed(text!) });
      expect(made.original.reference?.classification.specific, text).toBe(specific);
    }
  });

  it("stores a file's bytes: the bytes as the original, their text as the preview; an image as one format", async () => {
    const t = await setup({ sampleAssets: false });
    const source = 'fn main() {\n    println!("hi");\n}\n';
    const file = await t.assets.assetsCreateNewAsset({
      seed: {
        type: 'SEEDED_ASSET',
        asset: {
          application: APP,
          format: { file: { bytes: { raw: [...new TextEncoder().encode(source)] }, metadata: { name: 'main.rs' } } },
        },
      } as never,
    });
    expect(file.formats.iterable.map((f) => [f.role, f.classification.specific])).toEqual([
      ['ORIGINAL', 'rs'],
      ['PREVIEW', 'rs'],
    ]);
    expect(file.original.reference?.file?.bytes?.raw).toEqual([...new TextEncoder().encode(source)]);
    expect(file.preview.base.reference?.fragment?.string?.raw).toBe(source);
    const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13];
    const image = await t.assets.assetsCreateNewAsset({
      seed: { type: 'SEEDED_ASSET', asset: { application: APP, format: { file: { bytes: { raw: png } } } } } as never,
    });
    expect(image.formats.iterable.map((f) => [f.role, f.classification.generic])).toEqual([['BOTH', 'CODE']]);
    expect(image.original.reference?.file?.bytes?.raw).toEqual(png);
    const named = await t.assets.assetsCreateNewAsset({
      seed: {
        type: 'SEEDED_ASSET',
        asset: { application: APP, format: { file: { bytes: { raw: png }, metadata: { ext: 'png' } } } },
      } as never,
    });
    expect(named.original.reference?.classification).toMatchObject({ generic: 'IMAGE', specific: 'png' });
  });

  it('refuses a seed without content, without an application, or with a bad classification, changing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const post = (body: unknown) => t.fetch(`${BASE}/assets/create`, jsonPost(body));
    for (const [body, message] of [
      [undefined, /must be a Seed/],
      [{ type: 'SEEDED_ASSET', asset: { application: APP, format: {} } }, /has no content/],
      [{ type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw: '' } } } } }, /has no content/],
      [{ type: 'SEEDED_ASSET', asset: { format: { fragment: { string: { raw: 'x' } } } } }, /seed\.asset\.application is required/],
      [
        { type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw: 'x' }, metadata: { ext: 'nope' } } } } },
        /must be one of/,
      ],
      [{ type: 'SEEDED_FORMAT', asset: { application: APP, format: { fragment: { string: { raw: 'x' } } } } }, /SEEDED_ASSET/],
      [
        { type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw: 'x' } } }, colour: 'red' } },
        /not a field of SeededAsset/,
      ],
    ] as const) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.text()).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('is seen at once by from_asset, relevance and the three searches', async () => {
    const t = await setup();
    const a = await apis(t);
    const asset = await t.assets.assetsCreateNewAsset({
      seed: textSeed('function zebraStripes(rows) {\n  return rows.map((r, i) => (i % 2 ? "odd" : "even"));\n}\n'),
    });
    const from = await t.conversations.conversationsCreateFromAsset({ asset: asset.id });
    expect(from.conversation.reference?.messages.iterable[0]?.reference?.fragment?.string?.raw).toMatch(/zebraStripes/);
    const relevance = await a.qgpt.relevance({ qGPTRelevanceInput: { query: 'zebra stripes', options: { database: true } } as never });
    expect(relevance.relevant.iterable[0]?.asset?.id).toBe(asset.id);
    for (const found of [
      await a.search.fullTextSearch({ query: 'zebra stripes' }),
      await a.search.neuralCodeSearch({ query: 'zebra' }),
      await t.assets.searchAssets({ query: 'zebraStripes', transferables: false }),
    ]) {
      expect(found.iterable[0]?.identifier).toBe(asset.id);
    }
  });
});

describe('assetsDraft', () => {
  it('answers the Seed with what the service works out, storing nothing; /assets/draft is no asset id', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const seed = await t.assets.assetsDraft({ seed: textSeed(DEBOUNCE) });
    expect(instanceOfSeed(seed)).toBe(true);
    expect(seed.asset?.metadata?.name).toBe('debounce.ts');
    expect(seed.asset?.format.classification).toMatchObject({ generic: 'CODE', specific: 'ts' });
    expect(seed.asset?.metadata?.annotations?.[0]).toMatchObject({ type: 'DESCRIPTION' });
    expect(seed.asset?.format.fragment?.string?.raw).toBe(DEBOUNCE);
    expect((await t.assets.assetsDraft({ seed: textSeed(DEBOUNCE), transferables: false })).asset?.format.fragment?.string).toBeUndefined();
    expect(await dump(t.databaseName)).toBe(before);
    expect((await t.fetch(`${BASE}/assets/draft`, jsonPost({}))).status).toBe(400);
    expect((await t.fetch(`${BASE}/assets/draft`)).status).toBe(405);
  });
});

describe('assetUpdate', () => {
  it('renames and redescribes (the name and DESCRIPTION annotation of the Asset sent), as the example app and the Python wrapper do', async () => {
    const t = await setup();
    const [listed] = (await t.assets.assetsSnapshot({})).iterable;
    listed!.name = 'renamed.ts';
    listed!.annotations!.iterable[0]!.text = 'A new description.';
    const updated = await t.asset.assetUpdate({ asset: listed!, transferables: false });
    expect(updated.name).toBe('renamed.ts');
    expect(updated.annotations?.iterable[0]?.text).toBe('A new description.');
    expect(updated.updated.value.getTime()).toBeGreaterThanOrEqual(listed!.updated.value.getTime());
    expect(updated.formats.iterable[0]!.fragment).toBeUndefined();
    const read = await t.asset.assetSnapshot({ asset: listed!.id });
    expect([read.name, read.annotations?.iterable[0]?.text]).toEqual(['renamed.ts', 'A new description.']);
    const annotation = await new AnnotationApi(t.configuration).annotationSpecificAnnotationSnapshot({
      annotation: listed!.annotations!.iterable[0]!.id,
    });
    expect(annotation.text).toBe('A new description.');
  });

  it('refuses an unknown asset (404), an annotation of another asset, an empty name (400), changing nothing', async () => {
    const t = await setup();
    const [one, two] = (await t.assets.assetsSnapshot({})).iterable;
    const before = await dump(t.databaseName);
    const post = (body: unknown) => t.fetch(`${BASE}/asset/update`, jsonPost(body));
    const unknown = await post({ ...one, id: crypto.randomUUID() });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toMatch(/^No asset with id/);
    const foreign = await post({
      ...JSON.parse(JSON.stringify(one)),
      name: 'x',
      annotations: JSON.parse(JSON.stringify(two!.annotations)),
    });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toMatch(/is not an annotation of this asset/);
    expect((await post({ ...JSON.parse(JSON.stringify(one)), name: ' ' })).status).toBe(400);
    expect((await post({ ...JSON.parse(JSON.stringify(one)), favourite: true })).status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('assetsDeleteAsset', () => {
  it('deletes the asset with its formats, annotations and places on tags, in one write; answers its id', async () => {
    const t = await setup({ sampleAssets: false });
    const a = await apis(t);
    const keep = await t.assets.assetsCreateNewAsset({ seed: textSeed('keep me', { tags: [{ text: 'shared' }] }) });
    const gone = await t.assets.assetsCreateNewAsset({
      seed: textSeed('delete me', { tags: [{ text: 'shared' }], websites: [{ url: 'https://x.test/', name: 'x' }] }),
    });
    expect(await t.assets.assetsDeleteAsset({ asset: gone.id })).toBe(gone.id);
    const after = JSON.parse(await dump(t.databaseName));
    expect(after.assets.map(([id]: [string]) => id)).toEqual([keep.id]);
    expect(after.formats.map(([, f]: [string, { asset: string }]) => f.asset)).toEqual([keep.id]);
    expect(after.annotations.every(([, n]: [string, { asset: { id: string } }]) => n.asset.id === keep.id)).toBe(true);
    expect(after.tags.map(([, tag]: [string, { assets: string[] }]) => tag.assets)).toEqual([[keep.id]]);
    expect(after.websites.map(([, site]: [string, { assets: string[] }]) => site.assets)).toEqual([[]]);
    expect(t.changes.filter((c) => c.collection === 'asset').at(-1)).toMatchObject({ id: gone.id, deleted: true });
    expect((await t.fetch(`${BASE}/asset/${gone.id}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/format/${gone.original.id}`)).status).toBe(404);
    expect((await a.search.fullTextSearch({ query: 'delete' })).iterable).toEqual([]);
    const before = await dump(t.databaseName);
    const unknown = await t.fetch(`${BASE}/assets/${gone.id}/delete`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe(`No asset with id ${gone.id}.`);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('formats', () => {
  it("formatUpdateValue edits the text as the Python wrapper does, updating the asset; another asset's format is refused", async () => {
    const t = await setup();
    const a = await apis(t);
    const [one, two] = (await t.assets.assetsSnapshot({})).iterable;
    const original = await a.format.formatSnapshot({ format: one!.original.id, transferable: true });
    original.fragment!.string!.raw = 'const edited = "quokka";\n';
    const answered = await a.format.formatUpdateValue({ transferable: false, format: original });
    expect(answered.fragment).toBeUndefined();
    expect(answered.bytes.value).toBe(25);
    const asset = await t.asset.assetSnapshot({ asset: one!.id });
    expect(asset.original.reference?.fragment?.string?.raw).toBe('const edited = "quokka";\n');
    expect(asset.updated.value.getTime()).toBeGreaterThanOrEqual(one!.updated.value.getTime());
    expect((await a.search.fullTextSearch({ query: 'quokka' })).iterable.map((s) => s.identifier)).toEqual([one!.id]);
    const before = await dump(t.databaseName);
    const foreign = await t.fetch(
      `${BASE}/format/update/value`,
      jsonPost({ ...JSON.parse(JSON.stringify(original)), asset: { id: two!.id } }),
    );
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toMatch(/belongs to asset .*, not to asset/);
    const unknown = await t.fetch(`${BASE}/format/update/value`, jsonPost({ id: crypto.randomUUID(), fragment: { string: { raw: 'x' } } }));
    expect([unknown.status, await unknown.text()]).toEqual([404, expect.stringMatching(/^No format with id/)]);
    expect((await t.fetch(`${BASE}/format/update/value`, jsonPost({ id: one!.original.id }))).status).toBe(400);
    expect((await t.fetch(`${BASE}/format/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/format/${one!.original.id}?transferable=maybe`)).status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
    expect((await t.assets.assetsSpecificAssetFormatsSnapshot({ asset: one!.id })).iterable.map((f) => f.id)).toEqual([one!.original.id]);
    expect((await t.asset.assetFormats({ asset: one!.id, transferables: false })).iterable[0]!.fragment).toBeUndefined();
  });
});

describe('annotations, tags and websites', () => {
  it('creates, reads, lists and deletes annotations of an asset and on their own', async () => {
    const t = await setup();
    const a = await apis(t);
    const [one] = (await t.assets.assetsSnapshot({})).iterable;
    const comment = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: 'COMMENT', text: 'look here', asset: one!.id } as never,
    });
    const alone = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: 'SUMMARY', text: 'on its own' } as never,
    });
    expect((await a.annotation.annotationSpecificAnnotationSnapshot({ annotation: comment.id })).asset?.id).toBe(one!.id);
    expect((await t.asset.assetSnapshot({ asset: one!.id })).annotations?.indices?.[comment.id]).toBe(1);
    expect((await a.annotations.annotationsSnapshot({ annotationTypeFilter: 'COMMENT' as never })).iterable.map((n) => n.id)).toEqual([
      comment.id,
    ]);
    const updated = await a.annotation.annotationUpdate({ annotation: { ...comment, text: 'look there' } });
    expect(updated.text).toBe('look there');
    await a.annotations.annotationsDeleteSpecificAnnotation({ annotation: comment.id });
    await a.annotations.annotationsDeleteSpecificAnnotation({ annotation: alone.id });
    expect((await t.asset.assetSnapshot({ asset: one!.id })).annotations?.iterable).toHaveLength(1);
    const before = await dump(t.databaseName);
    for (const [path, init, status, message] of [
      [`/annotation/${comment.id}`, undefined, 404, /^No annotation with id/],
      [`/annotations/${comment.id}/delete`, { method: 'POST' }, 404, /^No annotation with id/],
      ['/annotations/create', jsonPost({ type: 'COMMENT', text: 'x', asset: crypto.randomUUID() }), 404, /^No asset with id/],
      ['/annotations/create', jsonPost({ type: 'NOTE', text: 'x' }), 400, /must be one of/],
      ['/annotations?annotation_type_filter=NOTE', undefined, 400, /must be one of/],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect([response.status, await response.text()], path).toEqual([status, expect.stringMatching(message)]);
    }
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('puts an asset on a tag or website and takes it off; unknown tags, websites and assets are 404 naming the kind', async () => {
    const t = await setup({ sampleAssets: false });
    const tagged = await t.assets.assetsCreateNewAsset({
      seed: textSeed('x = 1', { tags: [{ text: 'ml' }], websites: [{ url: 'https://a.test/', name: 'a' }] }),
    });
    const plain = await t.assets.assetsCreateNewAsset({ seed: textSeed('y = 2') });
    const tag = tagged.tags!.iterable[0]!.id;
    const site = tagged.websites!.iterable[0]!.id;
    await t.asset.assetAssociateTag({ asset: plain.id, tag });
    await t.asset.assetAssociateWebsite({ asset: plain.id, website: site });
    expect((await t.asset.assetSnapshot({ asset: plain.id })).tags?.iterable.map((x) => x.text)).toEqual(['ml']);
    expect((await new TagApi(t.configuration).tagsSpecificTagSnapshot({ tag })).assets?.iterable).toHaveLength(2);
    await t.asset.assetDisassociateTag({ asset: plain.id, tag });
    await t.asset.assetDisassociateWebsite({ asset: plain.id, website: site });
    const read = await t.asset.assetSnapshot({ asset: plain.id });
    expect([read.tags, read.websites]).toEqual([undefined, undefined]);
    const before = await dump(t.databaseName);
    for (const [path, message] of [
      [`/asset/${plain.id}/tags/associate/${crypto.randomUUID()}`, /^No tag with id/],
      [`/asset/${plain.id}/websites/associate/${crypto.randomUUID()}`, /^No website with id/],
      [`/asset/${crypto.randomUUID()}/tags/associate/${tag}`, /^No asset with id/],
    ] as const) {
      const response = await t.fetch(`${BASE}${path}`, { method: 'POST' });
      expect([response.status, await response.text()]).toEqual([404, expect.stringMatching(message)]);
    }
    // The example app sends the tag's text as its id.
    expect((await t.fetch(`${BASE}/asset/${plain.id}/tags/associate/react`, { method: 'POST' })).status).toBe(400);
    expect((await t.fetch(`${BASE}/tag/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/website/${crypto.randomUUID()}`)).status).toBe(404);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('activities', () => {
  it('records asset and conversation events, each asset event with its asset while it exists', async () => {
    const t = await setup({ sampleAssets: false });
    const a = await apis(t);
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('print(1)') });
    await t.asset.assetUpdate({ asset: { ...asset, name: 'one.py' } });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({});
    await t.conversations.conversationsDeleteSpecificConversation({ conversation: conversation.id });
    await t.assets.assetsDeleteAsset({ asset: asset.id });
    const kept = await t.assets.assetsCreateNewAsset({ seed: textSeed('print(2)') });
    const activities = await a.activities.activitiesSnapshot({});
    expect(
      activities.iterable.map((x) => [
        Object.entries(x.event.asset?.identifierDescriptionPair ?? x.event.conversation?.identifierDescriptionPair ?? {}).find(
          ([, v]) => v !== undefined,
        )?.[0],
        x.asset?.name,
      ]),
    ).toEqual([
      ['conversationCreated', undefined],
      ['conversationDeleted', undefined],
      ['assetDeleted', undefined],
      ['assetCreated', kept.name],
    ]);
    // The deleted asset's own activities went with it.
    const stream = await t.fetch(`${BASE}/activities/stream/identifiers`, { headers: { 'x-pieces-stream': 'handshake' } });
    expect((await stream.json()).message.iterable.map((i: { activity: { id: string } }) => i.activity.id)).toEqual(
      activities.iterable.map((x) => x.id),
    );
    expect((await t.fetch(`${BASE}/activities?transferables=nope`)).status).toBe(400);
  });
});

describe('search', () => {
  it('full text keeps assets with every word; neural code and fuzzy any word; best first, the same every time', async () => {
    const t = await setup({ sampleAssets: false });
    const a = await apis(t);
    const both = await t.assets.assetsCreateNewAsset({
      seed: textSeed('retry the request with exponential backoff', { name: 'backoff.txt' }),
    });
    const one = await t.assets.assetsCreateNewAsset({ seed: textSeed('retry once, no waiting', { name: 'once.txt' }) });
    await t.assets.assetsCreateNewAsset({ seed: textSeed('nothing related', { name: 'other.txt' }) });
    const full = await a.search.fullTextSearch({ query: 'retry backoff' });
    expect(full.iterable.map((s) => s.identifier)).toEqual([both.id]);
    expect(full.iterable[0]).toMatchObject({ exact: false, match: 'TITLE' });
    const neural = await a.search.neuralCodeSearch({ query: 'retry backoff' });
    expect(neural.iterable.map((s) => s.identifier)).toEqual([both.id, one.id]);
    expect(neural.iterable[0]!.score).toBeGreaterThan(neural.iterable[1]!.score);
    expect(await a.search.neuralCodeSearch({ query: 'retry backoff' })).toEqual(neural);
    // Full text ranks its assets by the same score as the whole query's.
    expect(full.iterable[0]!.score).toBeCloseTo(neural.iterable[0]!.score, 12);
    // Words that share a term (an identifier and its parts) are ranked by the whole query's search.
    const camel = await a.search.fullTextSearch({ query: 'retry retryBackoff' });
    expect(camel.iterable.map((s) => s.identifier)).toEqual(
      (await a.search.neuralCodeSearch({ query: 'retry retryBackoff' })).iterable
        .map((s) => s.identifier)
        .filter((id) => id !== undefined && [both.id, one.id].includes(id)),
    );
    const exact = await a.search.fullTextSearch({ query: 'exponential backoff' });
    expect([exact.exact, exact.suggested, exact.iterable[0]!.exact, exact.iterable[0]!.match]).toEqual([1, 0, true, 'TITLE']);
    const fuzzy = await t.assets.searchAssets({ query: 'waiting' });
    expect(fuzzy.iterable.map((s) => [s.identifier, s.asset?.name, s.match])).toEqual([[one.id, 'once.txt', 'CONTENT']]);
    for (const path of [
      '/search/full_text',
      '/search/full_text?query=%20',
      '/search/neural_code',
      '/assets/search',
      '/assets/search?query=x&pseudo=maybe',
    ]) {
      const response = await t.fetch(`${BASE}${path}`);
      expect(response.status, path).toBe(400);
    }
  });

  it('searches by tags (searchable_tags), with a query or without', async () => {
    const t = await setup({ sampleAssets: false });
    const two = await t.assets.assetsCreateNewAsset({ seed: textSeed('alpha beta', { tags: [{ text: 'React' }, { text: 'hooks' }] }) });
    const one = await t.assets.assetsCreateNewAsset({ seed: textSeed('gamma delta', { tags: [{ text: 'react' }] }) });
    await t.assets.assetsCreateNewAsset({ seed: textSeed('alpha omega') });
    expect((await t.assets.searchAssets({ searchableTags: 'react,hooks' })).iterable.map((s) => s.identifier)).toEqual([two.id, one.id]);
    expect(
      (await t.assets.searchAssets({ searchableTags: 'react', query: 'gamma', transferables: false })).iterable.map((s) => s.identifier),
    ).toEqual([one.id]);
  });
});

describe('storage full', () => {
  it('answers 507 when a create hits the quota, changing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const put = IDBObjectStore.prototype.put;
    let calls = 0;
    // The third put of the create (its format, after the asset record) hits the quota.
    const spy = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (this: IDBObjectStore, ...args) {
      if (++calls === 2) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.apply(this, args as Parameters<typeof put>);
    });
    try {
      const response = await t.fetch(`${BASE}/assets/create`, jsonPost(textSeed('too much')));
      expect(response.status).toBe(507);
      expect(await response.text()).toMatch(/storage is full/);
    } finally {
      spy.mockRestore();
    }
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(await dump(t.databaseName)).toBe(before);
    expect(t.changes).toEqual([]);
  });
});

describe('asset creates written together', () => {
  it('writes concurrent creates in one transaction each group, every one answered with its own changes; one that fails fails alone', async () => {
    const t = await setup({ sampleAssets: false });
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.assets.assetsCreateNewAsset({ seed: textSeed(`const value${i} = ${i};`) })),
    );
    expect(new Set(made.map((a) => a.id)).size).toBe(20);
    expect((await t.assets.assetsIdentifiersSnapshot()).iterable!.length).toBe(20);
    // Each asset's change is followed by its activity's, in the log's order.
    const assetChanges = t.changes.filter((c) => c.collection === 'asset').map((c) => c.id);
    expect(assetChanges.sort()).toEqual(made.map((a) => a.id).sort());
    const whole = (await t.storage.getAsset(made[0]!.id))!;
    const again = { ...whole, record: { ...whole.record, id: crypto.randomUUID() } };
    const results = await Promise.allSettled([t.storage.createAsset(whole, []), t.storage.createAsset(again, [])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(await t.storage.getAsset(again.record.id)).toBeDefined();
  });
});
