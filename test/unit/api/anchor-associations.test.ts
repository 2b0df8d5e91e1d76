/**
 * Anchors associated with conversations and assets, from either side (AnchorApi,
 * ConversationApi, AssetApi), through the SDK's own classes: both sides list each
 * other, associating twice lists once, disassociating what is not associated is a
 * 204 that changes nothing, deletes on every side unlist, bad input changes nothing,
 * and the identifier streams announce every record that changed.
 */
import { AnchorTypeEnum } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { BASE, dump, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

type T = Awaited<ReturnType<typeof setup>>;

async function fixture() {
  const t = await setup();
  const asset = (await t.assets.assetsSnapshot({ transferables: false })).iterable[0]!;
  const conversation = await t.conversations.conversationsCreateSpecificConversation({
    seededConversation: { type: 'COPILOT', name: 'c' },
  });
  const anchor = await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/main.ts' } });
  return { t, asset, conversation, anchor };
}

const anchorRead = (t: T, id: string) => t.anchor.anchorSpecificAnchorSnapshot({ anchor: id });
const conversationAnchors = async (t: T, id: string) =>
  (await t.conversation.conversationGetSpecificConversation({ conversation: id })).anchors?.iterable.map((a) => a.id) ?? [];
const assetAnchors = async (t: T, id: string) => {
  const asset = await t.asset.assetSnapshot({ asset: id });
  return asset.anchors?.iterable.map((a) => a.id) ?? [];
};

describe('anchors and conversations', () => {
  it('associates from the anchor side: both sides list each other, once; disassociating undoes it, and again is a no-op', async () => {
    const { t, conversation, anchor } = await fixture();
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: conversation.id });
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: conversation.id });
    const read = await anchorRead(t, anchor.id);
    expect(read.conversations).toEqual({ iterable: [{ id: conversation.id }], indices: { [conversation.id]: 0 } });
    expect(read.updated).toEqual(anchor.updated);
    const listed = await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id });
    expect(listed.anchors!.iterable.map((a) => [a.id, a.reference?.points.iterable[0]?.reference?.fullpath])).toEqual([
      [anchor.id, '/src/main.ts'],
    ]);
    expect(listed.updated.value.getTime()).toBeGreaterThanOrEqual(conversation.updated.value.getTime());

    await t.anchor.anchorDisassociateConversation({ anchor: anchor.id, conversation: conversation.id });
    expect((await anchorRead(t, anchor.id)).conversations).toBeUndefined();
    expect(await conversationAnchors(t, conversation.id)).toEqual([]);
    const before = await dump(t.databaseName);
    await t.anchor.anchorDisassociateConversation({ anchor: anchor.id, conversation: conversation.id });
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('associates from the conversation side, the same records; several anchors and conversations keep their order', async () => {
    const { t, conversation, anchor } = await fixture();
    const other = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'd' } });
    const second = await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.Directory, fullpath: '/src' } });
    await t.conversation.conversationAssociateAnchor({ conversation: conversation.id, anchor: anchor.id });
    await t.conversation.conversationAssociateAnchor({ conversation: conversation.id, anchor: second.id });
    await t.conversation.conversationAssociateAnchor({ conversation: other.id, anchor: anchor.id });
    await t.conversation.conversationAssociateAnchor({ conversation: conversation.id, anchor: anchor.id });
    expect(await conversationAnchors(t, conversation.id)).toEqual([anchor.id, second.id]);
    expect(await conversationAnchors(t, other.id)).toEqual([anchor.id]);
    expect((await anchorRead(t, anchor.id)).conversations).toEqual({
      iterable: [{ id: conversation.id }, { id: other.id }],
      indices: { [conversation.id]: 0, [other.id]: 1 },
    });
    await t.conversation.conversationDisassociateAnchor({ conversation: conversation.id, anchor: anchor.id });
    expect(await conversationAnchors(t, conversation.id)).toEqual([second.id]);
    expect((await anchorRead(t, anchor.id)).conversations).toEqual({ iterable: [{ id: other.id }], indices: { [other.id]: 0 } });
  });

  it('deleting the conversation unlists it from its anchors; deleting the anchor unlists it from its conversations', async () => {
    const { t, conversation, anchor } = await fixture();
    const other = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'd' } });
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: conversation.id });
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: other.id });
    await t.conversations.conversationsDeleteSpecificConversation({ conversation: conversation.id });
    expect((await anchorRead(t, anchor.id)).conversations).toEqual({ iterable: [{ id: other.id }], indices: { [other.id]: 0 } });
    await t.anchors.anchorsDeleteSpecificAnchor({ anchor: anchor.id });
    expect(await conversationAnchors(t, other.id)).toEqual([]);
  });
});

describe('anchors and assets', () => {
  it('associates from either side: the Asset lists the anchor whole, the anchor lists the asset, once', async () => {
    const { t, asset, anchor } = await fixture();
    const second = await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.Directory, fullpath: '/src' } });
    await t.anchor.anchorAssociateAsset({ anchor: anchor.id, asset: asset.id });
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: second.id });
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: anchor.id });
    const read = await t.asset.assetSnapshot({ asset: asset.id });
    expect(read.anchors!.iterable.map((a) => [a.id, a.points.iterable[0]!.reference!.fullpath])).toEqual([
      [anchor.id, '/src/main.ts'],
      [second.id, '/src'],
    ]);
    expect(read.anchors!.indices).toEqual({ [anchor.id]: 0, [second.id]: 1 });
    expect(read.anchors!.iterable[0]!.assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });
    expect(read.updated.value.getTime()).toBeGreaterThanOrEqual(asset.updated.value.getTime());
    // The same asset in every read: the snapshot, the other class, a format's asset (flattened, by id).
    const listed = (await t.assets.assetsSnapshot({})).iterable.find((a) => a.id === asset.id)!;
    expect(listed.anchors).toEqual(read.anchors);
    expect(await t.assets.assetsSpecificAssetSnapshot({ asset: asset.id })).toEqual(read);
    expect(read.formats.iterable[0]!.asset.anchors).toEqual({
      iterable: [{ id: anchor.id }, { id: second.id }],
      indices: read.anchors!.indices,
    });
    expect((await anchorRead(t, second.id)).assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });

    await t.asset.assetDisassociateAnchor({ asset: asset.id, anchor: anchor.id });
    expect(await assetAnchors(t, asset.id)).toEqual([second.id]);
    expect((await anchorRead(t, anchor.id)).assets).toBeUndefined();
    const before = await dump(t.databaseName);
    await t.anchor.anchorDisassociateAsset({ anchor: anchor.id, asset: asset.id });
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: second.id });
    expect(await dump(t.databaseName)).toBe(before);
    await t.anchor.anchorDisassociateAsset({ anchor: second.id, asset: asset.id });
    expect((await t.asset.assetSnapshot({ asset: asset.id })).anchors).toBeUndefined();
  });

  it('an anchor created on an asset is listed by it; deleting the anchor unlists it; deleting the asset unlists it from its anchors', async () => {
    const { t, asset } = await fixture();
    const made = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/a.ts', asset: asset.id },
    });
    expect(made.assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });
    expect(await assetAnchors(t, asset.id)).toEqual([made.id]);
    await t.anchors.anchorsDeleteSpecificAnchor({ anchor: made.id });
    expect(await assetAnchors(t, asset.id)).toEqual([]);

    const kept = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/b.ts', asset: asset.id },
    });
    const other = (await t.assets.assetsSnapshot({ transferables: false })).iterable[1]!;
    await t.anchor.anchorAssociateAsset({ anchor: kept.id, asset: other.id });
    await t.assets.assetsDeleteAsset({ asset: asset.id });
    expect((await anchorRead(t, kept.id)).assets).toEqual({ iterable: [{ id: other.id }], indices: { [other.id]: 0 } });
    expect(await assetAnchors(t, other.id)).toEqual([kept.id]);
  });

  it('an anchor a conversation was seeded with lists its asset alone; associating it makes the asset list it too', async () => {
    const t = await setup();
    const asset = (await t.assets.assetsSnapshot({ transferables: false })).iterable[0]!;
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: { type: 'COPILOT', anchors: [{ type: AnchorTypeEnum.File, fullpath: '/seeded.ts', asset: asset.id }] },
    });
    const anchor = conversation.anchors!.iterable[0]!.id;
    expect((await anchorRead(t, anchor)).assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });
    expect(await assetAnchors(t, asset.id)).toEqual([]);
    const from = t.changes.length;
    await t.anchor.anchorAssociateAsset({ anchor, asset: asset.id });
    expect(await assetAnchors(t, asset.id)).toEqual([anchor]);
    expect((await anchorRead(t, anchor)).assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });
    expect(t.changes.slice(from).map((c) => c.collection)).toEqual(['anchor', 'asset']);
  });

  it('an anchor on a conversation and an asset: its delete unlists it from both, in one change of each', async () => {
    const { t, asset, conversation, anchor } = await fixture();
    await t.anchor.anchorAssociateAsset({ anchor: anchor.id, asset: asset.id });
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: conversation.id });
    const from = t.changes.length;
    await t.anchors.anchorsDeleteSpecificAnchor({ anchor: anchor.id });
    expect(t.changes.slice(from).map((c) => [c.collection, c.id, c.deleted ?? false])).toEqual([
      ['anchor', anchor.id, true],
      ['conversation', conversation.id, false],
      ['asset', asset.id, false],
    ]);
    expect(await assetAnchors(t, asset.id)).toEqual([]);
    expect(await conversationAnchors(t, conversation.id)).toEqual([]);
  });
});

describe('the data format', () => {
  it('exports an asset with its anchors and seeds them back', async () => {
    const { t, asset, anchor } = await fixture();
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: anchor.id });
    const data = await t.service.exportData();
    expect(data.assets.find((a) => a.id === asset.id)!.anchors).toEqual([anchor.id]);
    await t.service.reset();
    await t.service.seed({ assets: data.assets, anchors: data.anchors });
    expect(await assetAnchors(t, asset.id)).toEqual([anchor.id]);
    expect((await anchorRead(t, anchor.id)).assets).toEqual({ iterable: [{ id: asset.id }], indices: { [asset.id]: 0 } });
    const bad = { ...data.assets[0]!, anchors: ['nope'] };
    await expect(t.service.seed({ assets: [bad] })).rejects.toThrow('data.assets[0].anchors[0] must be a UUID');
  });
});

describe('the streams', () => {
  it('announce the anchor and the conversation or asset each association changes; a no-op announces nothing', async () => {
    const { t, asset, conversation, anchor } = await fixture();
    const open = (path: string) => sockets(t).open(`ws://localhost:1000${path}/stream/identifiers`);
    const streams = { anchors: open('/anchors'), conversations: open('/conversations'), assets: open('/assets') };
    await until(() => Object.values(streams).every((s) => s.frames.length === 1), 'the snapshots');
    const last = (s: { frames: string[] }) => JSON.parse(s.frames.at(-1)!) as unknown;
    await t.conversation.conversationAssociateAnchor({ conversation: conversation.id, anchor: anchor.id });
    await until(() => streams.anchors.frames.length === 2 && streams.conversations.frames.length === 2, 'the conversation association');
    expect(last(streams.anchors)).toEqual({ iterable: [{ anchor: { id: anchor.id } }] });
    expect(last(streams.conversations)).toEqual({ iterable: [{ conversation: { id: conversation.id } }] });
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: anchor.id });
    await until(() => streams.anchors.frames.length === 3 && streams.assets.frames.length === 2, 'the asset association');
    expect(last(streams.assets)).toEqual({ iterable: [{ asset: { id: asset.id } }] });
    const from = t.changes.length;
    await t.asset.assetAssociateAnchor({ asset: asset.id, anchor: anchor.id });
    await t.conversation.conversationAssociateAnchor({ conversation: conversation.id, anchor: anchor.id });
    expect(t.changes.length).toBe(from);
    await t.anchor.anchorDisassociateAsset({ anchor: anchor.id, asset: asset.id });
    await until(() => streams.anchors.frames.length === 4 && streams.assets.frames.length === 3, 'the disassociation');
    expect(streams.conversations.frames.length).toBe(2);
  });
});

describe('bad input', () => {
  it('is a 400 for a non-UUID, a 404 naming the kind for an unknown record, and changes nothing', async () => {
    const { t, asset, conversation, anchor } = await fixture();
    await t.anchor.anchorAssociateConversation({ anchor: anchor.id, conversation: conversation.id });
    const before = await dump(t.databaseName);
    const unknown = crypto.randomUUID();
    const cases: Array<[string, number, string | RegExp]> = [];
    for (const verb of ['associate', 'disassociate']) {
      cases.push(
        [`/anchor/${unknown}/conversations/${verb}/${conversation.id}`, 404, `No anchor with id ${unknown}.`],
        [`/anchor/${anchor.id}/conversations/${verb}/${unknown}`, 404, `No conversation with id ${unknown}.`],
        [`/anchor/nope/conversations/${verb}/${conversation.id}`, 400, /The anchor id must be a UUID/],
        [`/anchor/${anchor.id}/conversations/${verb}/nope`, 400, /The conversation id must be a UUID/],
        [`/anchor/${unknown}/assets/${verb}/${asset.id}`, 404, `No anchor with id ${unknown}.`],
        [`/anchor/${anchor.id}/assets/${verb}/${unknown}`, 404, `No asset with id ${unknown}.`],
        [`/anchor/${anchor.id}/assets/${verb}/nope`, 400, /The asset id must be a UUID/],
        [`/conversation/${unknown}/anchors/${verb}/${anchor.id}`, 404, `No conversation with id ${unknown}.`],
        [`/conversation/${conversation.id}/anchors/${verb}/${unknown}`, 404, `No anchor with id ${unknown}.`],
        [`/conversation/${conversation.id}/anchors/${verb}/nope`, 400, /The anchor id must be a UUID/],
        [`/asset/${unknown}/anchors/${verb}/${anchor.id}`, 404, `No asset with id ${unknown}.`],
        [`/asset/${asset.id}/anchors/${verb}/${unknown}`, 404, `No anchor with id ${unknown}.`],
        [`/asset/nope/anchors/${verb}/${anchor.id}`, 400, /The asset id must be a UUID/],
      );
    }
    for (const [path, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, { method: 'POST' });
      expect(response.status, path).toBe(status);
      const text = await response.text();
      if (typeof message === 'string') expect(text, path).toBe(message);
      else expect(text, path).toMatch(message);
    }
    expect((await t.fetch(`${BASE}/anchor/${anchor.id}/assets/associate/${asset.id}`)).status).toBe(405);
    expect(await dump(t.databaseName)).toBe(before);
  });
});
