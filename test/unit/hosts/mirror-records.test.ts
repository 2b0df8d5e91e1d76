/**
 * The mirror's conversion of an upstream's wire records to stored ones (src/host/mirror/records.ts)
 * is exact: a record this service answers (an Asset whole with its formats, file bytes,
 * annotations, tags and websites; an Anchor; an Activity; an Annotation), converted back, is the
 * record it was answered from, ids kept, field for field.
 */
import { describe, expect, it } from 'vitest';
import { activityRecord, anchorRecord, annotationRecord, assetRecord, assetValuesListed } from '../../../src/host/mirror/records.js';
import { setup } from '../support/harness.js';

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});
const APPLICATION = {
  id: '44444444-4444-4444-8444-444444444444',
  name: 'VS_CODE',
  version: '1',
  platform: 'LINUX',
  onboarded: true,
  privacy: 'OPEN',
};

describe('the upstream’s wire records as stored', () => {
  it('an Asset read with its values converts to the stored asset whole: record, formats (text and bytes), annotations, tags, websites', async () => {
    const { fetch, storage } = await setup({ sampleAssets: false });
    const json = async (path: string, init?: RequestInit) => (await fetch(`http://localhost:1000${path}`, init)).json();
    const text = await json(
      '/assets/create',
      post({
        asset: {
          application: APPLICATION,
          format: { fragment: { string: { raw: 'const a = 1;\n' } } },
          metadata: {
            name: 'a.ts',
            tags: [{ text: 'one' }, { text: 'two' }],
            websites: [{ url: 'https://example.com/a', name: 'A' }],
            annotations: [{ type: 'COMMENT', text: 'a comment' }],
          },
        },
      }),
    );
    // A file's bytes that are text: an ORIGINAL of bytes and a PREVIEW of text.
    const file = await json(
      '/assets/create',
      post({
        asset: {
          application: APPLICATION,
          format: { file: { bytes: { raw: [...new TextEncoder().encode('# title\n')] }, metadata: { name: 'notes.md' } } },
        },
      }),
    );
    await json('/asset/update', post({ id: text.id, name: 'a renamed.ts', favorited: true }));
    for (const id of [text.id, file.id]) {
      const wire = await json(`/asset/${id}?transferables=true`);
      expect(assetValuesListed(wire)).toBe(true);
      expect(assetRecord(wire)).toEqual(await storage.getAsset(id));
    }
    // Without its values, it says so (the mirror then reads it whole).
    expect(assetValuesListed(await json(`/asset/${text.id}?transferables=false`))).toBe(false);
    // An annotation on its own, and one of an asset.
    const alone = await json('/annotations/create', post({ type: 'COMMENT', text: 'alone' }));
    expect(annotationRecord(alone)).toEqual(await storage.getAnnotation(alone.id));
    const onAsset = (await json(`/asset/${text.id}`)).annotations.iterable[0];
    expect(annotationRecord(onAsset)).toEqual(await storage.getAnnotation(onAsset.id));
  });

  it('an Anchor converts to its stored JSON; an Activity to the stored activity (its asset by id)', async () => {
    const { fetch, storage } = await setup({ sampleAssets: false });
    const json = async (path: string, init?: RequestInit) => (await fetch(`http://localhost:1000${path}`, init)).json();
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'anchored' }));
    const anchor = await json('/anchors/create', post({ type: 'FILE', fullpath: '/src/a.ts', conversation: conversation.id }));
    expect(anchorRecord(await json(`/anchor/${anchor.id}`))?.json).toBe((await storage.getAnchor(anchor.id))!.json);
    await json('/assets/create', post({ asset: { application: APPLICATION, format: { fragment: { string: { raw: 'x' } } } } }));
    const { iterable } = await json('/activities');
    const stored = await storage.listActivities();
    expect(iterable.length).toBeGreaterThan(0);
    // The same record but its listing key (this service's own counter; an upstream's activities are ordered by time, then id).
    expect(iterable.map((wire: unknown) => ({ ...activityRecord(wire), order: undefined }))).toEqual(
      stored.map((record) => ({ ...record, order: undefined })),
    );
  });
});
