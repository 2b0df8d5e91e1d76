/**
 * The assets' search index kept in the engine's IndexedDB: kept with the writes (its index and
 * texts records, same stamp); after a worker stop, the next search loads it and the changes since
 * (a write made after it was kept is found, a deleted asset never is); a damaged one is rebuilt.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { engine, launch, need, type BrowserContext, type Page } from './engine.js';

const contexts: BrowserContext[] = [];
afterEach(async () => {
  while (contexts.length) await contexts.pop()!.close();
});

async function start() {
  const launched = await launch();
  contexts.push(launched.context);
  const page = await launched.context.newPage();
  await page.goto(inject('demoUrl'));
  await page.waitForSelector('#status[data-state="ready"]');
  return { ...launched, page };
}

const create = (page: Page, raw: string) =>
  page.evaluate(async (text) => {
    const response = await fetch('http://localhost:1000/assets/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        type: 'SEEDED_ASSET',
        asset: {
          application: {
            id: 'a1b2c3d4-0000-4000-8000-000000000001',
            name: 'OS_SERVER',
            version: '1',
            platform: 'LINUX',
            onboarded: true,
            privacy: 'OPEN',
          },
          format: { fragment: { string: { raw: text } } },
        },
      }),
    });
    if (!response.ok) throw new Error(`create answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { id: string }).id;
  }, raw);

const remove = (page: Page, id: string) =>
  page.evaluate(async (asset) => {
    const response = await fetch(`http://localhost:1000/assets/${asset}/delete`, { method: 'POST' });
    if (!response.ok) throw new Error(`delete answered ${response.status}`);
  }, id);

const search = (page: Page, query: string) =>
  page.evaluate(async (q) => {
    const response = await fetch(`http://localhost:1000/search/neural_code?query=${encodeURIComponent(q)}`);
    return ((await response.json()) as { iterable: Array<{ identifier: string }> }).iterable.map((s) => s.identifier).sort();
  }, query);

const relevant = (page: Page, query: string) =>
  page.evaluate(async (q) => {
    const response = await fetch('http://localhost:1000/qgpt/relevance', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: q, options: { database: true } }),
    });
    const body = (await response.json()) as { relevant: { iterable: Array<{ asset?: { id: string } }> } };
    return body.relevant.iterable.map((s) => s.asset?.id ?? '').sort();
  }, query);

/** The kept records as the page reads them from the worker's database (or, with `damaged`, that text put in place of the index). */
const keptRecords = (page: Page, damaged = '') =>
  page.evaluate(async (value) => {
    const request = <T>(r: IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
    const db = await request(indexedDB.open('pieces-os-worker'));
    try {
      const store = db.transaction('search', value ? 'readwrite' : 'readonly').objectStore('search');
      if (value) {
        const kept = (await request(store.get('assets'))) as { seq: number };
        await request(store.put({ seq: kept.seq, value }, 'assets'));
        return null;
      }
      const [index, texts] = (await Promise.all([request(store.get('assets')), request(store.get('assets:texts:0'))])) as Array<
        { seq: number; value: { stamp: string; index?: { postings: unknown }; textEnds?: unknown } } | undefined
      >;
      return {
        seq: index?.seq,
        sameStamp: !!index && !!texts && index.value.stamp === texts.value.stamp,
        typed: index?.value.index?.postings instanceof Uint32Array && texts?.value.textEnds instanceof Uint32Array,
      };
    } finally {
      db.close();
    }
  }, damaged);

const kept = () => new Promise((resolve) => setTimeout(resolve, 3_000));

describe(`the kept search index in ${engine.name}`, () => {
  it('is kept with the writes, answers a write at once and never a deleted asset', async () => {
    const { page } = await start();
    const a = await create(page, 'kestrel hovering over the field');
    const b = await create(page, 'a kestrel nest');
    await kept();
    expect(await keptRecords(page)).toMatchObject({ seq: expect.any(Number), sameStamp: true, typed: true });
    expect(await search(page, 'kestrel')).toEqual([a, b].sort());
    const c = await create(page, 'kestrel again');
    expect(await search(page, 'kestrel')).toEqual([a, b, c].sort());
    await remove(page, a);
    expect(await search(page, 'kestrel')).toEqual([b, c].sort());
    expect(await relevant(page, 'kestrel')).toEqual([b, c].sort());
  });

  it('after a worker stop, loads the kept index and the changes made since, and rebuilds a damaged one', async (test) => {
    need(test, 'stopWorkers');
    const { context, page } = await start();
    const a = await create(page, 'godwit on the flats');
    const b = await create(page, 'godwit at high tide');
    await kept();
    // Made after the index was kept, and the worker stopped at once: only the change log has them.
    const c = await create(page, 'a godwit flock');
    await remove(page, a);
    await context.stopWorkers();
    expect(await search(page, 'godwit')).toEqual([b, c].sort());
    expect(await relevant(page, 'godwit')).toEqual([b, c].sort());

    await kept();
    await keptRecords(page, 'damaged');
    await context.stopWorkers();
    expect(await search(page, 'godwit')).toEqual([b, c].sort());
  });
});
