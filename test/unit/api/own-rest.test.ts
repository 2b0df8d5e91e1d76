/**
 * The rest of the hand-written kinds' operations, through the SDK 4.1.0 classes (every 2xx body
 * is also checked against the SDK models by the response check): score increments read back on
 * their records (and kept across a restart), activities read, formats listed, analysed, counted
 * and reclassified, asset reads, and the searches of anchors, annotations and messages. Bad input
 * is a 400 that changes nothing.
 */
import {
  ActivitiesApi,
  ActivityApi,
  AnalysesApi,
  AnnotationApi,
  AnnotationsApi,
  AnchorTypeEnum,
  AssetSpecificAssetExportExportTypeEnum,
  ClassificationSpecificEnum,
  CodeAnalysesApi,
  FormatApi,
  FormatsApi,
  ImageAnalysesApi,
  MetricsApi,
  OCRAnalysesApi,
  type Seed,
} from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { BASE, MODEL, application, dump, jsonPost, seeded, setup } from '../support/harness.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const textSeed = (raw: string, ext = 'ts'): Seed =>
  ({
    type: 'SEEDED_ASSET',
    asset: { application: application({ name: 'OS_SERVER' }), format: { fragment: { string: { raw }, metadata: { ext } } }, metadata: {} },
  }) as never;

const apis = (t: Harness) => ({
  activity: new ActivityApi(t.configuration),
  analyses: new AnalysesApi(t.configuration),
  annotation: new AnnotationApi(t.configuration),
  annotations: new AnnotationsApi(t.configuration),
  code: new CodeAnalysesApi(t.configuration),
  format: new FormatApi(t.configuration),
  formats: new FormatsApi(t.configuration),
  image: new ImageAnalysesApi(t.configuration),
  metrics: new MetricsApi(t.configuration),
  ocr: new OCRAnalysesApi(t.configuration),
});

/** Posts `body` to `path` and expects a 400 naming `field`, with nothing stored changed. */
async function refused(t: Harness, path: string, body: unknown, field: string) {
  const before = await dump(t.databaseName);
  const changes = t.changes.length;
  const response = await t.fetch(`${BASE}${path}`, jsonPost(body));
  expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(400);
  expect(await response.text()).toContain(field);
  expect(await dump(t.databaseName)).toBe(before);
  expect(t.changes).toHaveLength(changes);
}

describe('score increments', () => {
  it('add to the record’s score, read back on it and kept across a restart, announced on its stream', async () => {
    const t = await setup({ sampleAssets: false });
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('const a = 1;') });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      transferables: true,
      seededConversation: seeded('Scored', ['hello', 'hi']),
    });
    const message = conversation.messages.iterable![0]!.id;
    const anchor = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/a.ts', conversation: conversation.id },
    });
    const annotation = await new AnnotationsApi(t.configuration).annotationsCreateNewAnnotation({
      seededAnnotation: { type: 'DESCRIPTION', text: 'about a', asset: asset.id },
    });
    const changes = t.changes.length;

    await t.asset.assetScoresIncrement({ asset: asset.id, seededScoreIncrement: { asset: { reuse: true, update: true } } });
    await t.asset.assetScoresIncrement({ asset: asset.id, seededScoreIncrement: { assets: { reuse: true } } });
    await t.conversation.conversationScoresIncrement({
      conversation: conversation.id,
      seededScoreIncrement: { conversation: { searched: true } },
    });
    await t.message.messageScoresIncrement({ message, seededScoreIncrement: { conversationMessage: { reference: true } } });
    await t.anchor.anchorScoresIncrement({ anchor: anchor.id, seededScoreIncrement: { anchor: { priority: true } } });
    await apis(t).annotation.annotationScoresIncrement({
      annotation: annotation.id,
      seededScoreIncrement: { annotation: { update: true } },
    });

    const read = async (s: Harness) => ({
      asset: (await s.asset.assetSnapshot({ asset: asset.id })).score,
      conversation: (await s.conversation.conversationGetSpecificConversation({ conversation: conversation.id })).score,
      message: (await s.message.messageSpecificMessageSnapshot({ message })).score,
      anchor: (await s.anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id })).score,
      listed: (await s.conversation.conversationGetSpecificConversation({ conversation: conversation.id })).anchors?.iterable[0]?.reference
        ?.score,
      annotation: (await apis(s).annotation.annotationSpecificAnnotationSnapshot({ annotation: annotation.id })).score,
    });
    const expected = {
      asset: { manual: 0, automatic: 0, reuse: 2, update: 1 },
      conversation: { manual: 0, automatic: 0, searched: 1 },
      message: { manual: 0, automatic: 0, reference: 1 },
      anchor: { manual: 0, automatic: 0, priority: 1 },
      listed: { manual: 0, automatic: 0, priority: 1 },
      annotation: { manual: 0, automatic: 0, update: 1 },
    };
    expect(await read(t)).toEqual(expected);
    expect(new Set(t.changes.slice(changes).map((c) => c.collection))).toEqual(
      new Set(['asset', 'conversation', 'conversationMessage', 'anchor', 'annotation']),
    );
    expect(await read(await setup({ databaseName: t.databaseName }))).toEqual(expected);
    // The asset's score is in the data it exports, and an import keeps it.
    const exported = await t.service.exportData();
    expect(exported.assets[0]!.score).toEqual(expected.asset);
    const other = await setup({ sampleAssets: false });
    await other.service.seed(exported);
    expect((await other.asset.assetSnapshot({ asset: asset.id })).score).toEqual(expected.asset);
  });

  it('refuse a body that names nothing of the kind or a count that is not one, and a record that is not there', async () => {
    const t = await setup({ sampleAssets: false });
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('let b = 2;') });
    const path = `/asset/${asset.id}/scores/increment`;
    await refused(t, path, { conversation: { reuse: true } }, 'seededScoreIncrement.asset');
    await refused(t, path, { asset: { reuse: 'yes' } }, 'seededScoreIncrement.asset.reuse');
    await refused(t, path, { asset: { views: true } }, 'views');
    await refused(t, path, [], 'SeededScoreIncrement');
    const missing = await t.fetch(
      `${BASE}/conversation/${crypto.randomUUID()}/scores/increment`,
      jsonPost({ conversation: { reuse: true } }),
    );
    expect(missing.status).toBe(404);
    expect((await t.asset.assetSnapshot({ asset: asset.id })).score).toBeUndefined();
  });
});

describe('activities', () => {
  it('are read one by one, by kind, and per asset', async () => {
    const t = await setup({ sampleAssets: false });
    const a = apis(t);
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('x = 1', 'py') });
    await t.asset.assetUpdate({ asset: { ...asset, name: 'renamed.py' } });
    const other = await t.assets.assetsCreateNewAsset({ seed: textSeed('y = 2', 'py') });
    await t.assets.assetsDeleteAsset({ asset: other.id });

    const all = (await t.fetch(`${BASE}/activities`).then((r) => r.json())) as { iterable: Array<{ id: string; asset?: { id: string } }> };
    // The deleted asset's creation went with it: its deletion is left.
    expect(all.iterable).toHaveLength(3);
    const ids = await a.activity.activityIdentifiersSnapshot();
    expect(ids.iterable.map((i) => i.id)).toEqual(all.iterable.map((i) => i.id));
    const created = await a.activity.activityIdentifiersSnapshot({ activityFilterEnum: 'CREATED' });
    expect(created.iterable.map((i) => i.id)).toEqual([all.iterable[0]!.id]);
    expect((await a.activity.activityIdentifiersSnapshot({ activityFilterEnum: 'UPDATED' })).iterable.map((i) => i.id)).toEqual([
      all.iterable[1]!.id,
    ]);
    expect((await a.activity.activityIdentifiersSnapshot({ activityFilterEnum: 'DELETED' })).iterable.map((i) => i.id)).toEqual([
      all.iterable[2]!.id,
    ]);
    expect((await a.activity.activityIdentifiersSnapshot({ pseudo: true })).iterable).toEqual([]);

    const one = await a.activity.activitiesSpecificActivitySnapshot({ activity: all.iterable[1]!.id });
    expect(one.asset?.id).toBe(asset.id);
    expect(one.asset?.name).toBe('renamed.py');
    const own = await t.asset.assetSpecificAssetActivities({ asset: asset.id });
    expect(own.iterable.map((x) => x.id)).toEqual([all.iterable[0]!.id, all.iterable[1]!.id]);

    expect((await t.fetch(`${BASE}/activity/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/asset/${other.id}/activities`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/activity/identifiers?activity_filter_enum=SOMETIMES`)).status).toBe(400);
  });
});

describe('formats', () => {
  it('are listed, read, analysed, counted and reclassified, the asset showing the new classification', async () => {
    const t = await setup({ sampleAssets: false });
    const a = apis(t);
    const ts = await t.assets.assetsCreateNewAsset({ seed: textSeed('const x: number = 1;', 'ts') });
    const py = await t.assets.assetsCreateNewAsset({ seed: textSeed('print(1)', 'py') });
    const py2 = await t.assets.assetsCreateNewAsset({ seed: textSeed('print(2)', 'py') });
    const formatOf = (asset: typeof ts) => asset.original.id;

    const all = await a.formats.formatsSnapshot();
    expect(new Set(all.iterable.map((f) => f.id))).toEqual(new Set([formatOf(ts), formatOf(py), formatOf(py2)]));
    expect(all.iterable.every((f) => f.fragment?.string?.raw !== undefined)).toBe(true);
    expect((await a.formats.formatsSnapshot({ transferables: false })).iterable.every((f) => f.fragment === undefined)).toBe(true);
    const one = await a.formats.formatsSpecificFormatSnapshot({ format: formatOf(ts) });
    expect(one.classification.specific).toBe('ts');
    expect(one.asset.id).toBe(ts.id);

    const analysis = await a.format.formatAnalysis({ format: formatOf(py) });
    expect(analysis).toMatchObject({ format: formatOf(py), code: { language: 'py', type: 'CODE' } });
    expect((await a.analyses.analysesSnapshot()).iterable).toHaveLength(3);
    expect((await a.code.codeAnalysesSnapshot()).iterable.map((c) => c.language).sort()).toEqual(['py', 'py', 'ts']);
    expect((await a.image.imageAnalysesSnapshot()).iterable).toEqual([]);
    expect((await a.ocr.ocrAnalysesSnapshot()).iterable).toEqual([]);

    expect((await a.metrics.metricsFormatsOrdered()).ordered).toEqual(['py', 'ts']);
    const metrics = await a.metrics.getMetricsFormats();
    expect(metrics.iterable.map((m) => [m.specific, m.identifiers.length])).toEqual([
      ['py', 2],
      ['ts', 1],
    ]);

    const reclassified = await a.format.formatReclassify({ formatReclassification: { ext: ClassificationSpecificEnum.Js, format: one } });
    expect(reclassified.classification).toMatchObject({ generic: 'CODE', specific: 'js' });
    expect((await t.asset.assetSnapshot({ asset: ts.id })).original.reference?.classification.specific).toBe('js');
    const asset = await t.asset.assetReclassify({ assetReclassification: { ext: ClassificationSpecificEnum.Md, asset: py } });
    expect(asset.original.reference?.classification).toMatchObject({ generic: 'TEXT', specific: 'md' });
    expect((await a.metrics.metricsFormatsOrdered()).ordered.sort()).toEqual(['js', 'py']);
    // Kept: a restarted service reads the new classification.
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await apis(restarted).formats.formatsSpecificFormatSnapshot({ format: formatOf(py) })).classification.specific).toBe('md');
  });

  it('refuse a reclassification to no classification, to one the value cannot have, or of nothing stored', async () => {
    const t = await setup({ sampleAssets: false });
    const ts = await t.assets.assetsCreateNewAsset({ seed: textSeed('const y = 2;', 'ts') });
    const format = { id: ts.original.id };
    await refused(t, '/format/reclassify', { ext: 'nope', format }, 'formatReclassification.ext');
    await refused(t, '/format/reclassify', { ext: 'UNKNOWN', format }, 'formatReclassification.ext');
    await refused(t, '/format/reclassify', { ext: 'png', format }, 'holds text');
    await refused(t, '/format/reclassify', { ext: 'js' }, 'formatReclassification.format');
    await refused(t, '/format/reclassify', { ext: 'js', format, extra: 1 }, 'formatReclassification.extra');
    await refused(t, '/asset/reclassify', { ext: 'js', asset: { id: 'x' } }, 'assetReclassification.asset.id');
    expect((await t.fetch(`${BASE}/format/reclassify`, jsonPost({ ext: 'js', format: { id: crypto.randomUUID() } }))).status).toBe(404);
    expect((await t.fetch(`${BASE}/format/${crypto.randomUUID()}/analysis`)).status).toBe(404);
  });
});

describe('asset reads', () => {
  it('pseudo assets, the conversations listing an asset, an export, recommended and related assets, a read by an accessor', async () => {
    const t = await setup({ sampleAssets: false });
    const sort = await t.assets.assetsCreateNewAsset({
      seed: textSeed('function sortNumbers(list) { return list.sort((a, b) => a - b); }', 'js'),
    });
    const fetcher = await t.assets.assetsCreateNewAsset({
      seed: textSeed('async function fetchJson(url) { return (await fetch(url)).json(); }', 'js'),
    });
    const numbers = await t.assets.assetsCreateNewAsset({
      seed: textSeed('function sumNumbers(list) { return list.reduce((a, b) => a + b, 0); }', 'js'),
    });
    expect((await t.assets.assetsPseudoSnapshot()).identifiers?.iterable).toEqual([]);

    const { conversation } = await t.conversations.conversationsCreateFromAsset({ asset: sort.id });
    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('unrelated', ['hi']) });
    const listing = await t.asset.assetSpecificAssetConversations({ asset: sort.id });
    expect(listing.iterable.map((c) => c.id)).toEqual([conversation.id]);
    expect((await t.asset.assetSpecificAssetConversations({ asset: fetcher.id })).iterable).toEqual([]);

    const md = await t.asset.assetSpecificAssetExport({ asset: sort.id, exportType: AssetSpecificAssetExportExportTypeEnum.Md });
    expect(md.name).toBe(sort.name);
    expect(md.raw.string?.raw).toContain('```js\nfunction sortNumbers');
    const html = await t.asset.assetSpecificAssetExport({ asset: sort.id, exportType: AssetSpecificAssetExportExportTypeEnum.Html });
    expect(html.raw.string?.raw).toContain('(a, b) =&gt; a - b');
    expect((await t.fetch(`${BASE}/asset/${sort.id}/export?export_type=PDF`)).status).toBe(400);

    // Recommended: the asset used most (its score) first, then those with more activities, then the latest used.
    await t.asset.assetScoresIncrement({ asset: fetcher.id, seededScoreIncrement: { asset: { reuse: true } } });
    expect((await t.assets.assetsGetRecommendedAssets()).iterable.map((x) => x.id)).toEqual([fetcher.id, numbers.id, sort.id]);
    await t.asset.assetUpdate({ asset: { ...sort, name: 'sort numbers.js' } });
    expect((await t.assets.assetsGetRecommendedAssets()).iterable.map((x) => x.id)).toEqual([fetcher.id, sort.id, numbers.id]);
    // Related to the asset used last (renamed just now): the other list function, not the fetch.
    await t.asset.assetUpdate({ asset: { ...numbers, name: 'sum numbers of a list.js' } });
    const related = await t.assets.assetsGetRelatedAssets();
    expect(related.iterable[0]?.id).toBe(sort.id);
    expect(related.iterable.map((x) => x.id)).not.toContain(numbers.id);

    const read = await t.asset.assetSnapshotPost({ asset: sort.id, seededAccessor: { os: 'os', share: 'share' } });
    expect(read.id).toBe(sort.id);
    await refused(t, `/asset/${sort.id}`, { os: 'os' }, 'seededAccessor.share');
  });
});

describe('searches of anchors, annotations and messages', () => {
  it('find the records whose text holds the query, best first, with the record when transferables', async () => {
    const t = await setup({ sampleAssets: false });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      transferables: true,
      seededConversation: seeded('Search', ['how do I debounce input', 'use a timer to debounce']),
    });
    const other = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: seeded('Other', ['debounce elsewhere']),
    });
    const anchor = await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/debounce.ts' } });
    await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/other.ts' } });
    const annotation = await apis(t).annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: 'COMMENT', text: 'debounce notes' },
    });
    const input = { engines: { iterable: [{ query: 'debounce' }] } };

    const anchors = await t.anchors.searchAnchors({ searchInput: input });
    expect(anchors.iterable.map((x) => x.identifier)).toEqual([anchor.id]);
    expect(anchors.iterable[0]!.anchor?.id).toBe(anchor.id);
    const annotations = await apis(t).annotations.searchAnnotations({ searchInput: input, transferables: false });
    expect(annotations.iterable.map((x) => [x.identifier, x.annotation])).toEqual([[annotation.id, undefined]]);
    const messages = await t.messages.searchMessages({ searchInput: input });
    expect(messages.iterable).toHaveLength(3);
    expect(messages.iterable.every((x) => x.message?.id === x.identifier)).toBe(true);
    const inOne = await t.conversation.searchConversationSpecificMessages({ conversation: conversation.id, searchInput: input });
    expect(inOne.iterable.map((x) => x.identifier).sort()).toEqual(conversation.messages.iterable!.map((m) => m.id).sort());
    expect(inOne.iterable.map((x) => x.identifier)).not.toContain(other.messages.iterable?.[0]?.id);

    await refused(t, '/anchors/search', {}, 'searchInput');
    const missing = await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}/search`, jsonPost(input));
    expect(missing.status).toBe(404);
  });
});

describe('anchors updated and renamed, capabilities, prepare, relationships', () => {
  it('an anchor’s name and watch are updated (and its reference on the conversations listing it); a rename names it after its path', async () => {
    const t = await setup({ sampleAssets: false });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('With anchor') });
    const anchor = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/work/src/main.ts', conversation: conversation.id },
    });
    const updated = await t.anchor.anchorUpdate({ anchor: { ...anchor, name: 'entry point', watch: true } });
    expect([updated.name, updated.watch]).toEqual(['entry point', true]);
    expect((await t.anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id })).name).toBe('entry point');
    const listing = await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id });
    expect(listing.anchors?.iterable[0]?.reference?.name).toBe('entry point');
    const renamed = await t.anchor.anchorRename({ anchor: anchor.id });
    expect(renamed.name).toBe('main.ts');
    // Kept across a restart.
    expect((await (await setup({ databaseName: t.databaseName })).anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id })).name).toBe(
      'main.ts',
    );
    // The same name again changes nothing.
    const changes = t.changes.length;
    await t.anchor.anchorRename({ anchor: anchor.id });
    expect(t.changes).toHaveLength(changes);

    await refused(t, '/anchor/update', { id: anchor.id, name: 3 }, 'anchor.name');
    await refused(t, '/anchor/update', { id: anchor.id, color: 'red' }, 'color');
    await refused(t, '/anchor/update', { name: 'x' }, 'anchor.id');
    expect((await t.fetch(`${BASE}/anchor/update`, jsonPost({ id: crypto.randomUUID(), name: 'x' }))).status).toBe(404);
    expect((await t.fetch(`${BASE}/anchor/${crypto.randomUUID()}/rename`, { method: 'POST' })).status).toBe(404);
  });

  it('every registered application takes the capabilities (the OS’s own entry stays LOCAL); a bad one is refused', async () => {
    const t = await setup({ sampleAssets: false });
    const registered = await t.applications.applicationsRegister({ application: application() as never });
    const answer = await t.applications.applicationsBulkUpdateApplicationCapabilities({
      applicationsBulkUpdateCapabilitiesInput: { capabilities: 'BLENDED' },
    });
    const byName = Object.fromEntries(answer.iterable.map((a) => [a.id, a.capabilities]));
    expect(byName[registered.id]).toBe('BLENDED');
    expect(answer.iterable.find((a) => a.name === 'OS_SERVER')?.capabilities).toBe('LOCAL');
    expect((await t.applications.applicationsSpecificApplicationSnapshot({ application: registered.id })).capabilities).toBe('BLENDED');
    await refused(t, '/applications/update/capabilities', { capabilities: 'SOMETIMES' }, 'capabilities');
    await refused(t, '/applications/update/capabilities', {}, 'capabilities');
  });

  it('a conversation is prepared when it is stored; relationships are none, one by id a 404', async () => {
    const t = await setup({ sampleAssets: false });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('Prepared') });
    await t.conversation.conversationSpecificConversationPrepare({ conversation: conversation.id });
    expect((await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}/prepare`, { method: 'POST' })).status).toBe(404);
    expect(await (await t.fetch(`${BASE}/relationships`)).json()).toEqual({ iterable: [] });
    const one = await t.fetch(`${BASE}/relationship/${crypto.randomUUID()}`);
    expect([one.status, await one.text()]).toEqual([404, expect.stringContaining('No relationship with id')]);
  });
});

describe('conversationsCreateFromWorkstreamSummary', () => {
  it('makes a conversation grounded on the summary, each listing the other', async () => {
    const t = await setup({ sampleAssets: false });
    const made = await t.fetch(`${BASE}/workstream_summaries/create`, jsonPost({ name: 'Fixing the build', model: MODEL }));
    const summary = (await made.json()) as { id: string };
    const answer = await t.conversations.conversationsCreateFromWorkstreamSummary({ workstreamSummary: summary.id });
    const conversation = answer.conversation.reference!;
    expect(conversation.name).toBe('Fixing the build');
    expect(conversation.summaries?.iterable.map((s) => s.id)).toEqual([summary.id]);
    const first = conversation.messages.iterable?.[0]?.reference;
    expect([first?.role, first?.fragment?.string?.raw]).toEqual(['SYSTEM', expect.stringContaining('Fixing the build')]);
    const listed = (await (await t.fetch(`${BASE}/workstream_summary/${summary.id}`)).json()) as {
      conversations?: { iterable: Array<{ id: string }> };
    };
    expect(listed.conversations?.iterable.map((c) => c.id)).toEqual([conversation.id]);
    expect((await t.conversations.conversationsIdentifiersSnapshot()).iterable.map((c) => c.id)).toEqual([conversation.id]);

    const before = await dump(t.databaseName);
    const missing = await t.fetch(`${BASE}/conversations/create/from_workstream_summary/${crypto.randomUUID()}`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('activities written by a client', () => {
  it('are created, read, updated and deleted, on the activities stream, kept across a restart', async () => {
    const t = await setup({ sampleAssets: false });
    const a = apis(t);
    const activities = new ActivitiesApi(t.configuration);
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('z = 3', 'py') });
    const app = application();
    const event = {
      asset: { asset: { id: asset.id }, identifierDescriptionPair: { assetReferenced: 'an_asset_was_referenced_by_the_user' } },
    };
    const made = await activities.activitiesCreateNewActivity({
      seededActivity: { event: event as never, application: app as never, asset: { id: asset.id } },
    });
    expect(made.asset?.id).toBe(asset.id);
    expect(made.mechanism).toBe('MANUAL');
    expect(t.changes.at(-1)).toMatchObject({ collection: 'activity', id: made.id });
    expect((await a.activity.activitiesSpecificActivitySnapshot({ activity: made.id })).event).toEqual(made.event);
    expect((await a.activity.activityIdentifiersSnapshot({ activityFilterEnum: 'REFERENCED' })).iterable.map((x) => x.id)).toEqual([
      made.id,
    ]);
    expect((await t.asset.assetSpecificAssetActivities({ asset: asset.id })).iterable.map((x) => x.id)).toContain(made.id);

    const updated = await a.activity.activityUpdate({ activity: { ...made, mechanism: 'AUTOMATIC' } });
    expect(updated.mechanism).toBe('AUTOMATIC');
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await apis(restarted).activity.activitiesSpecificActivitySnapshot({ activity: made.id })).mechanism).toBe('AUTOMATIC');

    await activities.activitiesDeleteSpecificActivity({ activity: made.id });
    expect(t.changes.at(-1)).toEqual(expect.objectContaining({ collection: 'activity', id: made.id, deleted: true }));
    expect((await t.fetch(`${BASE}/activity/${made.id}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/activities/${made.id}/delete`, { method: 'POST' })).status).toBe(404);
  });

  it('refuse an activity with no event, an unknown key, an application that is not one, or an asset not stored', async () => {
    const t = await setup({ sampleAssets: false });
    const app = application();
    const event = { interaction: { description: 'clicked' } };
    await refused(t, '/activities/create', { application: app }, 'seededActivity.event');
    await refused(t, '/activities/create', { event: {}, application: app }, 'seededActivity.event');
    await refused(t, '/activities/create', { event: { clicks: {} }, application: app }, 'clicks');
    await refused(t, '/activities/create', { event, application: { ...app, name: 'NOTEPAD' } }, 'seededActivity.application.name');
    await refused(t, '/activities/create', { event, application: app, mechanism: 'SOMETIMES' }, 'seededActivity.mechanism');
    const before = await dump(t.databaseName);
    const missing = await t.fetch(`${BASE}/activities/create`, jsonPost({ event, application: app, asset: { id: crypto.randomUUID() } }));
    expect(missing.status).toBe(404);
    expect(await dump(t.databaseName)).toBe(before);
    await refused(t, '/activity/update', { id: crypto.randomUUID(), event }, 'activity.application');
  });
});

describe('assetsSearchWithFilters', () => {
  it('keeps the assets that pass the filters (AND, OR, nested), ranked against the query when there is one', async () => {
    const t = await setup({ sampleAssets: false });
    const ts = await t.assets.assetsCreateNewAsset({
      seed: textSeed('export function parseDate(text: string) { return new Date(text); }', 'ts'),
    });
    const py = await t.assets.assetsCreateNewAsset({
      seed: textSeed('def parse_date(text):\n    return datetime.fromisoformat(text)', 'py'),
    });
    const js = await t.assets.assetsCreateNewAsset({ seed: textSeed('const sum = (a, b) => a + b;', 'js') });
    await new AnnotationsApi(t.configuration).annotationsCreateNewAnnotation({
      seededAnnotation: { type: 'DESCRIPTION', text: 'Adds Two numbers', asset: js.id },
    });
    const ids = async (input: Record<string, unknown>) =>
      (await t.assets.assetsSearchWithFilters({ assetsSearchWithFiltersInput: input as never })).results.iterable.map((x) => x.identifier);

    expect(await ids({ filters: { iterable: [{ classification: 'py' }] } })).toEqual([py.id]);
    expect(new Set(await ids({ filters: { iterable: [{ classification: 'py' }, { classification: 'ts' }], type: 'OR' } }))).toEqual(
      new Set([py.id, ts.id]),
    );
    expect(await ids({ filters: { iterable: [{ classification: 'py' }, { classification: 'ts' }] } })).toEqual([]);
    expect(await ids({ filters: { iterable: [{ phrase: { value: 'two numbers', annotation: true } }] } })).toEqual([js.id]);
    expect(await ids({ casing: true, filters: { iterable: [{ phrase: { value: 'two numbers', annotation: true } }] } })).toEqual([]);
    expect(
      await ids({
        filters: { iterable: [{ phrase: { value: 'datetime', content: true }, operations: { iterable: [{ classification: 'py' }] } }] },
      }),
    ).toEqual([py.id]);
    const future = { from: { value: new Date('2999-01-01T00:00:00.000Z') } };
    expect(await ids({ filters: { iterable: [{ created: future }] } })).toEqual([]);
    // A query ranks what the filters keep; the space keeps to the assets it names.
    const ranked = await t.assets.assetsSearchWithFilters({
      transferables: true,
      assetsSearchWithFiltersInput: {
        query: 'parse date',
        filters: { iterable: [{ classification: 'ts' }, { classification: 'py' }], type: 'OR' },
      },
    });
    expect(new Set(ranked.results.iterable.map((x) => x.identifier))).toEqual(new Set([ts.id, py.id]));
    expect(ranked.results.iterable.every((x) => x.asset?.id === x.identifier)).toBe(true);
    expect(await ids({ query: 'parse date', space: { identifers: { iterable: [{ id: py.id }] } } })).toEqual([py.id]);

    await refused(
      t,
      '/assets/search',
      { filters: { iterable: [{ classification: 'cobol' }] } },
      'assetsSearchWithFiltersInput.filters.iterable[0].classification',
    );
    await refused(t, '/assets/search', { filters: { iterable: [{ colour: 'red' }] } }, 'colour');
    await refused(t, '/assets/search', { filters: { iterable: [], type: 'XOR' } }, 'assetsSearchWithFiltersInput.filters.type');
  });
});

describe('conversationSummarize', () => {
  it('makes a SUMMARY annotation of the conversation (or of the messages given), listed by the conversation', async () => {
    const t = await setup({ sampleAssets: false });
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      transferables: true,
      seededConversation: seeded('Debouncing', [
        'How do I debounce input?',
        'Wrap the handler in a timer.',
        'And throttle?',
        'Use the last call time.',
      ]),
    });
    const answer = await t.conversation.conversationSummarize({ conversation: conversation.id });
    expect(answer.conversation.id).toBe(conversation.id);
    const text = answer.annotation.reference?.text ?? '';
    expect(text).toContain('Asked: How do I debounce input?');
    expect(text).toContain('Answered: Use the last call time.');
    expect(answer.annotation.reference?.type).toBe('SUMMARY');
    const stored = await new AnnotationApi(t.configuration).annotationSpecificAnnotationSnapshot({ annotation: answer.annotation.id });
    expect(stored.text).toBe(text);
    const listing = await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id });
    expect(listing.annotations?.iterable.map((a) => a.id)).toEqual([answer.annotation.id]);

    const first = conversation.messages.iterable![0]!.id;
    const some = await t.conversation.conversationSummarize({
      conversation: conversation.id,
      conversationSummarizeInput: { messages: { iterable: [{ id: first }] } },
    });
    expect(some.annotation.reference?.text).not.toContain('Answered');

    await refused(
      t,
      `/conversation/${conversation.id}/summarize`,
      { messages: { iterable: [{ id: crypto.randomUUID() }] } },
      'is not a message of',
    );
    await refused(t, `/conversation/${conversation.id}/summarize`, { length: 3 }, 'length');
    expect((await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}/summarize`, jsonPost({}))).status).toBe(404);
  });
});
