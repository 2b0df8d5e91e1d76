/**
 * The asset step of the schema (whole assets) run on a database of the version before it, with
 * data in it: every asset becomes a whole one (record, format, DESCRIPTION annotation) answered
 * with the same ids, text, language and description as before; nothing else changes.
 */
import { describe, expect, it } from 'vitest';
import { AssetFromJSON, instanceOfAsset } from '@pieces.app/pieces-os-client';
import { openDB } from 'idb';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { descriptionAnnotationId, STORES, UPGRADES, type PiecesDB } from '../../../src/storage/schema.js';
import { createService } from '../../../src/core/service.js';
import { BASE, dump } from '../support/harness.js';

let counter = 0;
const STAMP = '2026-01-01T00:00:00.000Z';
const OLD_ASSETS = [
  {
    id: '00000000-0000-4000-8000-0000000000a1',
    name: 'retry.py',
    language: 'py',
    text: 'def retry(fn):\n    return fn()\n',
    created: STAMP,
    description: 'Retry a call.',
    formatId: '00000000-0000-4000-8000-0000000000f1',
  },
  {
    id: '00000000-0000-4000-8000-0000000000a2',
    name: 'lru.go',
    language: 'go',
    text: 'package lru\n',
    created: STAMP,
    formatId: '00000000-0000-4000-8000-0000000000f2',
  },
];
const CONVERSATION = '11111111-1111-4111-8111-111111111111';

/** The version before the step that made assets whole (the step that added their formats' store). */
const BEFORE = STORES.formats - 1;

describe('upgrading assets to whole ones', () => {
  it(`opens a version ${BEFORE} database with assets and conversations in it: the assets answered as before, whole`, async () => {
    const name = `asset-upgrade-${Date.now()}-${counter++}`;
    const before = BEFORE;
    const old = await openDB<PiecesDB>(name, before, {
      upgrade: (db, _old, _new, tx) => {
        for (let step = 0; step < before; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    for (const asset of OLD_ASSETS) await old.put('assets', asset as never);
    const conversation = {
      id: CONVERSATION,
      type: 'COPILOT',
      name: 'kept',
      created: { value: STAMP },
      updated: { value: STAMP },
      assets: { iterable: [{ id: OLD_ASSETS[0]!.id }] },
    };
    await old.put('conversations', { id: CONVERSATION, seq: 1, json: JSON.stringify(conversation), messageIds: [] });
    await old.add('changes', { collection: 'conversation', id: CONVERSATION });
    await old.put('meta', true, 'seeded');
    old.close();
    const dumped = JSON.parse(await dump(name));

    const storage = await openStorage({ name });
    const after = JSON.parse(await dump(name));
    for (const store of ['applications', 'sessions', 'events', 'external', 'conversations', 'messages', 'changes'])
      expect(after[store], store).toEqual(dumped[store]);
    expect(after.activities).toEqual([]);
    expect(after.tags).toEqual([]);

    const service = createService({ storage });
    const get = async (path: string) => (await service.handle(new Request(`${BASE}${path}`))).json();
    const listed = await get('/assets');
    expect(listed.iterable.map((a: { id: string }) => a.id)).toEqual([
      '00000000-0000-4000-8000-0000000000a2',
      '00000000-0000-4000-8000-0000000000a1',
    ]);
    for (const old of OLD_ASSETS) {
      const raw = await get(`/asset/${old.id}`);
      const asset = AssetFromJSON(raw);
      expect(instanceOfAsset(asset)).toBe(true);
      expect([asset.name, asset.created.value.toISOString(), asset.original.id, asset.preview.base.id]).toEqual([
        old.name,
        STAMP,
        old.formatId,
        old.formatId,
      ]);
      expect(asset.original.reference?.fragment?.string?.raw).toBe(old.text);
      expect(asset.original.reference?.classification.specific).toBe(old.language);
      // The description keeps the id it was answered with before the upgrade.
      expect(asset.annotations?.iterable.map((a) => [a.id, a.type, a.text]) ?? []).toEqual(
        old.description ? [[descriptionAnnotationId(old.id), 'DESCRIPTION', old.description]] : [],
      );
      const format = await get(`/format/${old.formatId}`);
      expect(format.fragment.string.raw).toBe(old.text);
    }
    // What reads assets reads the upgraded ones.
    const search = await get('/search/full_text?query=retry');
    expect(search.iterable.map((s: { identifier: string }) => s.identifier)).toEqual([OLD_ASSETS[0]!.id]);
    const from = await service.handle(new Request(`${BASE}/conversations/create/from_asset/${OLD_ASSETS[1]!.id}`, { method: 'POST' }));
    expect(from.status).toBe(200);
    expect((await get(`/conversation/${CONVERSATION}`)).assets).toEqual({ iterable: [{ id: OLD_ASSETS[0]!.id }] });
    storage.close();
  });
});
