/** AssetsApi and AssetApi: the stored assets as full SDK Asset records. */
import { describe, expect, it } from 'vitest';
import { AssetFromJSON, AssetsFromJSON, instanceOfAsset, instanceOfAssets, instanceOfFormat } from '@pieces.app/pieces-os-client';
import { parseAssets } from '../../../src/core/models/asset.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { BASE, setup } from '../support/harness.js';

const json = async (response: Response) => {
  expect(response.status).toBe(200);
  return response.json();
};

describe('assets', () => {
  it('assetsSnapshot answers full Asset records of the stored assets, by name, with their text', async () => {
    const t = await setup();
    const body = await json(await t.fetch(`${BASE}/assets`));
    expect(instanceOfAssets(AssetsFromJSON(body))).toBe(true);
    const byName = [...SAMPLE_ASSETS].sort((a, b) => a.name.localeCompare(b.name));
    expect(body.iterable.map((a: { id: string }) => a.id)).toEqual(byName.map((a) => a.id));
    for (const [i, raw] of body.iterable.entries()) {
      const asset = AssetFromJSON(raw);
      expect(instanceOfAsset(asset)).toBe(true);
      const format = asset.formats.iterable[0]!;
      expect(instanceOfFormat(format)).toBe(true);
      expect(format.fragment?.string?.raw).toBe(byName[i]!.text);
      expect(format.classification.specific).toBe(byName[i]!.language);
      expect(asset.original.id).toBe(format.id);
      expect(asset.preview.base.id).toBe(format.id);
      expect(format.asset.id).toBe(asset.id);
      expect(asset.annotations?.iterable[0]).toMatchObject({ type: 'DESCRIPTION', text: byName[i]!.description, asset: { id: asset.id } });
    }
    const sdk = await t.assets.assetsSnapshot({});
    expect(sdk.iterable).toHaveLength(SAMPLE_ASSETS.length);
  });

  it('transferables=false leaves the text out', async () => {
    const t = await setup();
    const body = await json(await t.fetch(`${BASE}/assets?transferables=false`));
    expect(
      body.iterable.every((a: { formats: { iterable: Array<{ fragment?: unknown }> } }) => a.formats.iterable[0]!.fragment === undefined),
    ).toBe(true);
    expect((await t.fetch(`${BASE}/assets?transferables=maybe`)).status).toBe(400);
  });

  it('assetsSpecificAssetSnapshot and assetSnapshot answer the same record as the snapshot', async () => {
    const t = await setup();
    const listed = (await json(await t.fetch(`${BASE}/assets`))).iterable[0];
    expect(await json(await t.fetch(`${BASE}/assets/${listed.id}`))).toEqual(listed);
    expect(await json(await t.fetch(`${BASE}/asset/${listed.id}`))).toEqual(listed);
    expect((await t.asset.assetSnapshot({ asset: listed.id })).id).toBe(listed.id);
    expect((await t.assets.assetsSpecificAssetSnapshot({ asset: listed.id })).name).toBe(listed.name);
    expect((await t.fetch(`${BASE}/asset/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/assets/nope`)).status).toBe(400);
  });

  it('addAssets input becomes the same records that from_asset and the Asset reads see', async () => {
    const t = await setup({ sampleAssets: false });
    const [added] = parseAssets([{ name: 'x.rs', text: 'fn main() {}', description: 'entry' }], {
      newId: () => crypto.randomUUID(),
      now: () => new Date('2026-02-02T00:00:00.000Z'),
    });
    const changes = await t.storage.putAssets([added!]);
    // The asset, and its format and annotation on their own streams.
    expect(changes.map((c) => [c.collection, c.id])).toEqual([
      ['asset', added!.record.id],
      ...added!.formats.map((f) => ['format', f.id]),
      ...added!.annotations.map((a) => ['annotation', a.id]),
    ]);
    const asset = await t.asset.assetSnapshot({ asset: added!.record.id });
    expect(asset).toMatchObject({
      name: 'x.rs',
      formats: { iterable: [{ classification: { specific: 'rs' }, fragment: { string: { raw: 'fn main() {}' } } }] },
    });
    const from = await t.conversations.conversationsCreateFromAsset({ asset: added!.record.id });
    expect(from.conversation.reference?.assets?.iterable).toEqual([{ id: added!.record.id }]);
    expect((await t.fetch(`${BASE}/assets/identifiers`)).status).toBe(200);
  });
});
