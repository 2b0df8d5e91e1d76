/**
 * The assets' search index kept in the database: a service started again on the same
 * database loads it and the changes made since (from the change log) instead of reading and
 * indexing every asset, and ranks exactly as the service that kept it.
 */
import { describe, expect, it, vi } from 'vitest';
import { createService } from '../../../src/core/service.js';
import { KEEP_INDEX_AFTER_MS } from '../../../src/core/copilot/corpus.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { BASE, application, jsonPost, sampleData } from '../support/harness.js';

let counter = 0;
const APP = application({ name: 'OS_SERVER' });
const seed = (raw: string) => jsonPost({ type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw } } } } });

async function started(name: string) {
  const storage = await openStorage({ name, initialData: sampleData() });
  const service = createService({ storage });
  const call = async (path: string, init?: RequestInit) => {
    const response = await service.handle(new Request(`${BASE}${path}`, init));
    expect(response.status, path).toBeLessThan(300);
    return response.json();
  };
  return { storage, service, call };
}

describe('the kept search index', () => {
  it('is loaded by a service started again, with the changes made after it was kept, and ranks the same', async () => {
    const name = `kept-index-${Date.now()}-${counter++}`;
    const first = await started(name);
    for (const text of ['retry with backoff', 'retry once', 'backoff table', 'nothing here'])
      await first.call('/assets/create', seed(text));
    const before = await first.call('/search/neural_code?query=retry%20backoff');
    await new Promise((resolve) => setTimeout(resolve, KEEP_INDEX_AFTER_MS + 300));
    expect(await first.storage.getSearchIndex('assets')).toMatchObject({ seq: expect.any(Number) });
    // Written after the index was kept: the next start reads these from the change log.
    const later = await first.call('/assets/create', seed('backoff and retry, later'));
    const gone = before.iterable.find((s: { identifier: string }) => s.identifier)!.identifier as string;
    await first.service.handle(new Request(`${BASE}/assets/${gone}/delete`, { method: 'POST' }));
    first.storage.close();

    const second = await started(name);
    const listAssets = vi.spyOn(second.storage, 'listAssets');
    const after = await second.call('/search/neural_code?query=retry%20backoff');
    expect(listAssets).not.toHaveBeenCalled();
    const ids = after.iterable.map((s: { identifier: string }) => s.identifier);
    expect(ids).toContain(later.id);
    expect(ids).not.toContain(gone);

    // A service that indexes every asset afresh ranks exactly the same.
    await second.storage.putSearchIndex('assets', { seq: 0, value: null });
    const third = createService({ storage: second.storage });
    const fresh = await (await third.handle(new Request(`${BASE}/search/neural_code?query=retry%20backoff`))).json();
    expect(after).toEqual(fresh);
    second.storage.close();
  });
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function remove(service: { handle(request: Request): Promise<Response> }, id: string) {
  expect((await service.handle(new Request(`${BASE}/assets/${id}/delete`, { method: 'POST' }))).status).toBeLessThan(300);
}
const idsOf = (answer: { iterable: Array<{ identifier: string }> }) => answer.iterable.map((s) => s.identifier);

describe('the kept search index, kept with the writes', () => {
  it('is kept after writes in a service that never searched, and loaded (not rebuilt) by the next start', async () => {
    const name = `kept-writes-${Date.now()}-${counter++}`;
    const first = await started(name);
    const created: string[] = [];
    for (const text of ['alpha kestrel', 'kestrel nest', 'nothing']) created.push((await first.call('/assets/create', seed(text))).id);
    await wait(KEEP_INDEX_AFTER_MS + 500);
    const { seq } = await first.storage.changesSince(0);
    expect((await first.storage.getSearchIndex('assets'))?.seq).toBe(seq);
    first.storage.close();

    const second = await started(name);
    const listAssets = vi.spyOn(second.storage, 'listAssets');
    expect(idsOf(await second.call('/search/neural_code?query=kestrel'))).toEqual([created[0], created[1]].sort());
    expect(listAssets).not.toHaveBeenCalled();
    second.storage.close();
  });

  it('is built afresh when missing, damaged or from another database, its texts read from the assets when theirs are, and ranks as an index built afresh', async () => {
    const name = `kept-damaged-${Date.now()}-${counter++}`;
    const first = await started(name);
    for (const text of ['retry with backoff', 'retry once', 'backoff table']) await first.call('/assets/create', seed(text));
    const expected = await first.call('/search/full_text?query=retry%20backoff');
    const expectedAny = await first.call('/search/neural_code?query=retry%20backoff');
    await wait(KEEP_INDEX_AFTER_MS + 500);
    const good = (await first.storage.getSearchIndex('assets'))!;
    const goodTexts = (await first.storage.getSearchIndex('assets:texts:0'))!;
    first.storage.close();
    type Kept = {
      identity: string;
      stamp: string;
      index: { postings: Uint32Array; counts: Uint32Array; terms: string[] };
      names: string[];
    };
    type Texts = { stamp: string; texts: string; textEnds: Uint32Array };
    const value = good.value as Kept;
    const texts = goodTexts.value as Texts;
    // What was damaged; the kept index and texts; whether the index is built afresh (else only the texts are read from the assets).
    const damaged: Array<[string, unknown, unknown, boolean]> = [
      ['nothing kept', null, texts, true],
      ['not an index', 'garbage', texts, true],
      [
        'postings cut short',
        { ...value, index: { ...value.index, postings: value.index.postings.subarray(0, value.index.postings.length - 2) } },
        texts,
        true,
      ],
      ['terms out of order', { ...value, index: { ...value.index, terms: [...value.index.terms].reverse() } }, texts, true],
      [
        'a term twice',
        { ...value, index: { ...value.index, terms: value.index.terms.map((t, i) => (i === 1 ? value.index.terms[0]! : t)) } },
        texts,
        true,
      ],
      ['names missing', { ...value, names: value.names.slice(1) }, texts, true],
      ['chunks of texts miscounted', { ...value, textChunks: 2 }, texts, true],
      ['another database', { ...value, identity: 'another' }, texts, true],
      ['texts missing', value, null, false],
      ['texts of another keep', value, { ...texts, stamp: 'another' }, false],
      ['texts that do not add up', value, { ...texts, textEnds: texts.textEnds.map((x) => x + 1) }, false],
    ];
    for (const [what, kept, keptTexts, rebuilt] of damaged) {
      const storage = await openStorage({ name, initialData: sampleData() });
      await storage.putSearchIndex('assets', { seq: good.seq, value: kept });
      await storage.putSearchIndex('assets:texts:0', { seq: good.seq, value: keptTexts });
      const service = createService({ storage });
      const listAssets = vi.spyOn(storage, 'listAssets');
      const all = await (await service.handle(new Request(`${BASE}/search/full_text?query=retry%20backoff`))).json();
      const any = await (await service.handle(new Request(`${BASE}/search/neural_code?query=retry%20backoff`))).json();
      expect(listAssets, what).toHaveBeenCalledTimes(rebuilt ? 1 : 0);
      expect(all, what).toEqual(expected);
      expect(any, what).toEqual(expectedAny);
      storage.close();
    }
    // The last start rebuilt it and keeps it again, whole.
    const last = await started(name);
    await last.call('/search/neural_code?query=retry');
    await wait(KEEP_INDEX_AFTER_MS + 500);
    expect((await last.storage.getSearchIndex('assets'))?.value).toMatchObject({ identity: await last.storage.identity() });
    last.storage.close();
  });

  it('is built afresh when the change log no longer reaches back to it (a write made since is found)', async () => {
    const name = `kept-pruned-${Date.now()}-${counter++}`;
    const first = await started(name);
    await first.call('/assets/create', seed('plover one'));
    await wait(KEEP_INDEX_AFTER_MS + 500);
    expect(await first.storage.getSearchIndex('assets')).toBeDefined();
    const later = await first.call('/assets/create', seed('plover two'));
    first.storage.close();

    const second = await started(name);
    const changesSince = second.storage.changesSince.bind(second.storage);
    vi.spyOn(second.storage, 'changesSince').mockImplementation(async (seq, collection) => ({
      ...(await changesSince(seq, collection)),
      changes: [],
      complete: false,
    }));
    const listAssets = vi.spyOn(second.storage, 'listAssets');
    expect(idsOf(await second.call('/search/neural_code?query=plover'))).toContain(later.id);
    expect(listAssets).toHaveBeenCalledTimes(1);
    second.storage.close();
  });

  it('answers a write at once and never a deleted asset, over a loaded index and across a stop before it was kept again', async () => {
    const name = `kept-live-${Date.now()}-${counter++}`;
    const first = await started(name);
    const keptIds: string[] = [];
    for (const text of ['godwit flats', 'godwit tide', 'godwit']) keptIds.push((await first.call('/assets/create', seed(text))).id);
    await wait(KEEP_INDEX_AFTER_MS + 500);
    first.storage.close();

    const second = await started(name);
    expect(idsOf(await second.call('/search/neural_code?query=godwit')).sort()).toEqual([...keptIds].sort());
    const added = (await second.call('/assets/create', seed('godwit godwit godwit'))).id;
    expect(idsOf(await second.call('/search/neural_code?query=godwit'))).toContain(added);
    // A loaded asset deleted, and one added since: neither answers after its delete.
    await remove(second.service, keptIds[0]!);
    await remove(second.service, added);
    const after = idsOf(await second.call('/search/neural_code?query=godwit'));
    expect(after).not.toContain(keptIds[0]);
    expect(after).not.toContain(added);
    expect(after.sort()).toEqual(keptIds.slice(1).sort());
    // Stopped at once (the index kept still has both): the next start reads the deletes from the change log.
    second.storage.close();
    const third = await started(name);
    expect(idsOf(await third.call('/search/neural_code?query=godwit')).sort()).toEqual(keptIds.slice(1).sort());
    expect(idsOf(await third.call('/search/full_text?query=flats'))).toEqual([]);
    third.storage.close();
  });

  it('makes a search that comes while changed assets are being read again wait for them', async () => {
    const name = `kept-race-${Date.now()}-${counter++}`;
    const first = await started(name);
    await first.call('/assets/create', seed('curlew one'));
    await first.call('/search/neural_code?query=curlew');
    const added = (await first.call('/assets/create', seed('curlew two'))).id;
    const getAsset = first.storage.getAsset.bind(first.storage);
    vi.spyOn(first.storage, 'getAsset').mockImplementation(async (id) => {
      await wait(100);
      return getAsset(id);
    });
    // Both begin after the write: the second must not answer before the first has read it.
    const [one, two] = await Promise.all([first.call('/search/neural_code?query=curlew'), first.call('/search/neural_code?query=curlew')]);
    expect(idsOf(one)).toContain(added);
    expect(idsOf(two)).toContain(added);
    first.storage.close();
  });

  it('breaks equal scores by id, the same in a loaded index as in a fresh one', async () => {
    const name = `kept-ties-${Date.now()}-${counter++}`;
    const first = await started(name);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await first.call('/assets/create', seed('sandpiper'))).id);
    const fresh = await first.call('/search/neural_code?query=sandpiper');
    expect(idsOf(fresh)).toEqual([...ids].sort());
    await wait(KEEP_INDEX_AFTER_MS + 500);
    first.storage.close();
    const second = await started(name);
    expect(await second.call('/search/neural_code?query=sandpiper')).toEqual(fresh);
    second.storage.close();
  });
});

describe('the kept texts', () => {
  it('are read a chunk at a time: a start reads the index and only the chunks of the hits it answers with', async () => {
    const name = `kept-chunks-${Date.now()}-${counter++}`;
    const first = await started(name);
    await first.service.addAssets(
      Array.from({ length: 600 }, (_, i) => ({ name: `note_${i}.txt`, text: i === 450 ? 'the lone avocet' : `common words ${i}` })),
    );
    await wait(KEEP_INDEX_AFTER_MS + 1_500);
    expect((await first.storage.getSearchIndex('assets'))?.value).toMatchObject({ textChunks: 3 });
    first.storage.close();

    const second = await started(name);
    const read = vi.spyOn(second.storage, 'getSearchIndex');
    const getAsset = vi.spyOn(second.storage, 'getAsset');
    const found = await second.call('/search/full_text?query=avocet');
    expect(found.iterable).toHaveLength(1);
    expect(found.iterable[0].exact).toBe(true);
    const relevance = await second.call('/qgpt/relevance', jsonPost({ query: 'lone avocet', options: { database: true } }));
    expect(relevance.relevant.iterable[0].seed.asset.format.fragment.string.raw).toBe('the lone avocet');
    // The index, and the one chunk holding the hit (the 451st of 600 assets, in some chunk).
    const keys = read.mock.calls.map(([key]) => key);
    expect(keys.filter((key) => key === 'assets')).toHaveLength(1);
    expect(keys.filter((key) => key.startsWith('assets:texts:'))).toHaveLength(1);
    expect(getAsset).not.toHaveBeenCalled();
    // A search whose hits are in every chunk reads the others.
    await second.call('/search/neural_code?query=common%20words');
    expect(new Set(read.mock.calls.map(([key]) => key)).size).toBe(4);
    second.storage.close();
  });
});
