/**
 * The last streams of assets and what hangs on them: the annotations' and formats' identifier
 * streams (AnnotationsApi.annotationsStreamIdentifiers, FormatsApi.formatsStreamIdentifiers) and the
 * streams of whole assets (AssetsApi.streamAssets, getAssetsStreamTransferables), through the page's
 * socket shim over the in-process service. Every frame is held to its SDK model (StreamedIdentifiers,
 * Assets) by the strict checker.
 */
import {
  AnnotationApi,
  AnnotationsApi,
  AnnotationTypeEnum,
  ClassificationSpecificEnum,
  FormatApi,
  type Seed,
} from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { application, BASE, newAsset, setup } from '../support/harness.js';
import { check } from '../support/sdk-shape.js';
import { sockets, until, type RecordedSocket } from '../support/sockets.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const textSeed = (raw: string, ext = 'ts'): Seed =>
  ({
    type: 'SEEDED_ASSET',
    asset: { application: application({ name: 'OS_SERVER' }), format: { fragment: { string: { raw }, metadata: { ext } } }, metadata: {} },
  }) as never;

const apis = (t: Harness) => ({
  annotation: new AnnotationApi(t.configuration),
  annotations: new AnnotationsApi(t.configuration),
  format: new FormatApi(t.configuration),
});

/** Each frame parsed, after checking it against its SDK model. */
function frames<T = { iterable: Array<Record<string, unknown>> }>(recorded: RecordedSocket, model: string): T[] {
  return recorded.frames.map((text) => {
    const frame = JSON.parse(text) as T;
    expect(check(model, frame), text).toEqual([]);
    return frame;
  });
}

/** The identifier frames after the first: `[id, deleted?]` of each one's one item, keyed by `key`. */
const identified = (recorded: RecordedSocket, key: string) =>
  frames<{ iterable: Array<Record<string, { id: string } | boolean>> }>(recorded, 'StreamedIdentifiers')
    .slice(1)
    .map(({ iterable }) => {
      expect(iterable).toHaveLength(1);
      const item = iterable[0]!;
      return item.deleted ? [(item[key] as { id: string }).id, 'deleted'] : [(item[key] as { id: string }).id];
    });

const waitFor = (recorded: RecordedSocket, count: number, what: string) => until(() => recorded.frames.length >= count, what);

describe('the annotations stream', () => {
  it('first every annotation id, then each create, update and delete (of an asset, of none, with its asset)', async () => {
    const t = await setup({ sampleAssets: false });
    const a = apis(t);
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('const a = 1;\n') });
    const early = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: AnnotationTypeEnum.Description, text: 'made first', asset: asset.id },
    });
    // The annotations the asset was made with (its description), and the one made since.
    const made = (await t.asset.assetSnapshot({ asset: asset.id })).annotations!.iterable!.map(({ id }) => id);
    expect(made).toContain(early.id);
    const stream = sockets(t).open('ws://localhost:1000/annotations/stream/identifiers');
    await waitFor(stream, 1, 'the first frame');
    expect(
      frames(stream, 'StreamedIdentifiers')[0]!
        .iterable.map((item) => (item.annotation as { id: string }).id)
        .sort(),
    ).toEqual([...made].sort());

    const onAsset = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: AnnotationTypeEnum.Comment, text: 'on the asset', asset: asset.id },
    });
    await waitFor(stream, 2, 'the create on an asset');
    const alone = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: AnnotationTypeEnum.Comment, text: 'on nothing' },
    });
    await waitFor(stream, 3, 'the create on nothing');
    await a.annotation.annotationUpdate({ annotation: { ...onAsset, text: 'edited' } });
    await waitFor(stream, 4, 'the update on an asset');
    await a.annotation.annotationUpdate({ annotation: { ...alone, text: 'edited too' } });
    await waitFor(stream, 5, 'the update on nothing');
    await a.annotations.annotationsDeleteSpecificAnnotation({ annotation: alone.id });
    await waitFor(stream, 6, 'the delete of one on nothing');
    await a.annotations.annotationsDeleteSpecificAnnotation({ annotation: onAsset.id });
    await waitFor(stream, 7, 'the delete of one on an asset');
    await t.assets.assetsDeleteAsset({ asset: asset.id });
    await waitFor(stream, 7 + made.length, 'the delete of the asset');
    const heard = identified(stream, 'annotation');
    expect(heard.slice(0, 6)).toEqual([[onAsset.id], [alone.id], [onAsset.id], [alone.id], [alone.id, 'deleted'], [onAsset.id, 'deleted']]);
    // The asset's own, deleted with it (in no particular order).
    expect(heard.slice(6).sort()).toEqual(made.map((id) => [id, 'deleted']).sort());

    // A socket opened later (and after a restart) starts from what is stored.
    const kept = await a.annotations.annotationsCreateNewAnnotation({
      seededAnnotation: { type: AnnotationTypeEnum.Comment, text: 'kept' },
    });
    const restarted = await setup({ databaseName: t.databaseName, sampleAssets: false });
    const late = sockets(restarted).open('ws://localhost:1000/annotations/stream/identifiers');
    await waitFor(late, 1, 'the first frame after a restart');
    expect(frames(late, 'StreamedIdentifiers')[0]).toEqual({ iterable: [{ annotation: { id: kept.id } }] });
  });
});

describe('the formats stream', () => {
  it('first every format id, then each format an asset create, value update, reclassification or delete changed', async () => {
    const t = await setup({ sampleAssets: false });
    const a = apis(t);
    const first = await t.assets.assetsCreateNewAsset({ seed: textSeed('const first = 1;\n') });
    const stream = sockets(t).open('ws://localhost:1000/formats/stream/identifiers');
    await waitFor(stream, 1, 'the first frame');
    expect(frames(stream, 'StreamedIdentifiers')[0]).toEqual({ iterable: first.formats.iterable!.map(({ id }) => ({ format: { id } })) });

    const second = await t.assets.assetsCreateNewAsset({ seed: textSeed('const second = 2;\n') });
    const made = second.formats.iterable!.map(({ id }) => [id]);
    await waitFor(stream, 1 + made.length, 'the create');
    const format = await a.format.formatSnapshot({ format: second.original.id, transferable: true });
    format.fragment!.string!.raw = 'const second = 3;\n';
    await a.format.formatUpdateValue({ transferable: false, format });
    await waitFor(stream, 2 + made.length, 'the value update');
    await a.format.formatReclassify({ formatReclassification: { ext: ClassificationSpecificEnum.Js, format } });
    await waitFor(stream, 3 + made.length, 'the reclassification');
    await t.asset.assetReclassify({ assetReclassification: { ext: ClassificationSpecificEnum.Py, asset: first } });
    await waitFor(stream, 4 + made.length, "the asset's reclassification");
    await t.assets.assetsDeleteAsset({ asset: second.id });
    await waitFor(stream, 4 + 2 * made.length, 'the delete');
    expect(identified(stream, 'format')).toEqual([
      ...made,
      [second.original.id],
      [second.original.id],
      [first.original.id],
      ...made.map(([id]) => [id, 'deleted']),
    ]);
  });
});

describe('the streams of whole assets', () => {
  for (const [path, withValues] of [
    ['/assets/stream', false],
    ['/assets/stream/transferables', true],
  ] as const) {
    it(`${path}: first every asset, then each asset changed as it is now, a deleted one marked deleted`, async () => {
      const t = await setup({ sampleAssets: false });
      const first = await t.assets.assetsCreateNewAsset({ seed: textSeed('const quokka = 1;\n') });
      const stream = sockets(t).open(`ws://localhost:1000${path}`);
      await waitFor(stream, 1, 'the first frame');
      type Frame = { iterable: Array<{ id: string; name?: string; deleted?: { value: string }; formats: unknown }> };
      const [all] = frames<Frame>(stream, 'Assets');
      expect(all!.iterable.map((asset) => asset.id)).toEqual([first.id]);
      // The formats' values: only on the transferables stream.
      expect(JSON.stringify(all).includes('"raw":"const quokka = 1;\\n"')).toBe(withValues);

      const second = await t.assets.assetsCreateNewAsset({ seed: textSeed('const wombat = 2;\n') });
      await waitFor(stream, 2, 'the create');
      await t.asset.assetUpdate({ asset: { ...second, name: 'renamed' } });
      await waitFor(stream, 3, 'the update');
      await t.assets.assetsDeleteAsset({ asset: second.id });
      await waitFor(stream, 4, 'the delete');
      const later = frames<Frame>(stream, 'Assets').slice(1);
      expect(later.map(({ iterable }) => iterable.map((asset) => [asset.id, asset.name, !!asset.deleted]))).toEqual([
        [[second.id, second.name, false]],
        [[second.id, 'renamed', false]],
        [[second.id, 'renamed', true]],
      ]);
      expect(JSON.stringify(later[0]).includes('"raw":"const wombat = 2;\\n"')).toBe(withValues);
      // Each frame is the asset as the service answers it.
      const read = await t.fetch(`${BASE}/asset/${first.id}?transferables=${withValues}`);
      expect(all!.iterable[0]).toEqual(await read.json());
    });
  }

  it('several changes of one asset between two catch-ups are one frame, and an asset made and deleted between them none', async () => {
    const t = await setup({ sampleAssets: false });
    const asset = await t.assets.assetsCreateNewAsset({ seed: textSeed('const a = 1;\n') });
    const { seq } = await t.storage.listIds('asset');
    await t.asset.assetUpdate({ asset: { ...asset, name: 'one' } });
    await t.asset.assetUpdate({ asset: { ...asset, name: 'two' } });
    const brief = await t.assets.assetsCreateNewAsset({ seed: textSeed('const b = 2;\n') });
    await t.assets.assetsDeleteAsset({ asset: brief.id });
    const caught = await t.fetch(`${BASE}/assets/stream?after=${seq}`, { headers: { 'x-pieces-stream': 'handshake' } });
    const body = (await caught.json()) as { records: Record<string, { name: string }>; changes: Array<{ id: string }> };
    expect(Object.keys(body.records)).toEqual([asset.id]);
    expect(body.records[asset.id]!.name).toBe('two');
    const { wholeAssetFrames } = await import('../../../src/core/stream-wire.js');
    const sent = new Map([[asset.id, JSON.stringify({ id: asset.id })]]);
    const made = wholeAssetFrames(body.changes as never, body as never, sent).map(
      (frame) => JSON.parse(frame) as { iterable: Array<{ name: string }> },
    );
    expect(made.map(({ iterable }) => iterable.map((a) => a.name))).toEqual([['two']]);
    expect(check('Assets', made[0])).toEqual([]);
  });

  it('refuses a catch-up after no sequence number, and answers a plain GET with 426', async () => {
    const t = await setup({ sampleAssets: false });
    for (const path of [
      '/assets/stream',
      '/assets/stream/transferables',
      '/formats/stream/identifiers',
      '/annotations/stream/identifiers',
    ]) {
      const bad = await t.fetch(`${BASE}${path}?after=x`, { headers: { 'x-pieces-stream': 'handshake' } });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toMatch(/after must be a change sequence number/);
      expect((await t.fetch(`${BASE}${path}`)).status).toBe(426);
    }
  });
});

describe("the mirror's writes", () => {
  it('log the formats and annotations of the assets they put, change, drop and re-key', async () => {
    const t = await setup({ sampleAssets: false });
    const made = newAsset({ name: 'm.ts', text: 'const m = 1;\n', description: 'kept' });
    const whole = { record: made.record, formats: made.formats, annotations: made.annotations, tags: [], websites: [] };
    const logged = (changes: Array<{ collection: string; id: string; deleted?: true }>) =>
      changes.filter((c) => c.collection !== 'asset').map((c) => [c.collection, c.id, !!c.deleted]);
    const format = made.formats[0]!;
    const annotation = made.annotations[0]!;
    expect(logged(await t.storage.applyMirror({ put: { assets: [whole] } }))).toEqual([
      ['format', format.id, false],
      ['annotation', annotation.id, false],
    ]);
    // The same asset again: nothing; its format changed: that format alone.
    expect(await t.storage.applyMirror({ put: { assets: [whole] } })).toEqual([]);
    const edited = { ...whole, formats: [{ ...format, size: format.size + 1 }] };
    expect(logged(await t.storage.applyMirror({ put: { assets: [edited] } }))).toEqual([['format', format.id, false]]);
    // An annotation of its own, put and dropped.
    const { asset: _asset, ...rest } = annotation;
    const alone = { ...rest, id: crypto.randomUUID() };
    expect(logged(await t.storage.applyMirror({ put: { annotations: [alone] } }))).toEqual([['annotation', alone.id, false]]);
    expect(logged(await t.storage.applyMirror({ remove: [{ kind: 'annotation', id: alone.id }] }))).toEqual([
      ['annotation', alone.id, true],
    ]);
    // Re-keyed: the asset's format and annotation follow it under the ids the map gives them.
    const upstream = crypto.randomUUID();
    const rekeyed = logged(await t.storage.applyMirror({ rekey: [{ local: made.record.id, upstream, kind: 'asset' }] }));
    expect(rekeyed.filter(([collection]) => collection === 'format' || collection === 'annotation')).toEqual([
      ['format', format.id, false],
      ['annotation', annotation.id, false],
    ]);
    // Dropped: each of them deleted.
    expect(logged(await t.storage.applyMirror({ remove: [{ kind: 'asset', id: upstream }] }))).toEqual([
      ['format', format.id, true],
      ['annotation', annotation.id, true],
    ]);
  });
});

describe('a data load', () => {
  it('logs the formats and annotations it writes, and with replace those it removes', async () => {
    const t = await setup({ sampleAssets: false });
    await t.assets.assetsCreateNewAsset({ seed: textSeed('const kept = 1;\n') });
    const data = await t.storage.dumpData();
    const parts = (changes: Array<{ collection: string; id: string; deleted?: true }>) =>
      changes.filter((c) => c.collection === 'format' || c.collection === 'annotation').map((c) => [c.collection, c.id, !!c.deleted]);
    const formats = data.formats.map((f) => ['format', f.id, false]);
    const annotations = data.annotations.map((a) => ['annotation', a.id, false]);
    expect(formats.length).toBeGreaterThan(0);
    expect(parts(await t.storage.loadData(data, { replace: false }))).toEqual([...formats, ...annotations]);
    const gone = parts(await t.storage.loadData({ ...data, assets: [], formats: [], annotations: [] }, { replace: true }));
    expect(gone.sort()).toEqual([...formats, ...annotations].map(([kind, id]) => [kind, id, true]).sort());
  });
});
