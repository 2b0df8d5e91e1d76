/**
 * Snippets as real clients use them, in every engine:
 * - a React app built like Pieces's example web app (test/browser/snippets-app/, from
 *   pieces-app/example-typescript `src/app/App.tsx` and `components/Asset/Asset.tsx`), driven
 *   through its UI: create → list → preview → rename → search → delete, SDK 4.1.0 classes;
 * - the Raycast extension's read path, re-enacted in its order (raycast/extensions
 *   `extensions/pieces-raycast/src/connection/assets/AssetsStream.ts` and `fetchAsset.ts`):
 *   the assets stream's ids, each asset with `transferables: false`, then its original and
 *   preview formats with `transferable: true`, then every annotation, tag and website by the
 *   ids in the asset's `indices`;
 * - a 16 MiB asset (the largest body a request may carry) stored and served while other
 *   requests go on.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, launch, type BrowserContext, type Page } from './engine.js';

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ context } = await launch());
  page = await context.newPage();
  await page.goto(new URL('snippets-app/', inject('demoUrl')).href);
  await page.waitForSelector('#status[data-state="ready"]');
});

afterAll(async () => {
  await context?.close();
});

const items = () => page.evaluate(() => [...document.querySelectorAll('#snippets li h3')].map((h) => h.textContent));

describe(`a React app built like Pieces's example web app, in ${engine.name}`, () => {
  it('creates, lists, previews, renames, searches and deletes a snippet through its UI', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#snippets li').length >= 4);
    const start = await items();
    expect(start).toContain('debounce.ts');

    const code = 'def fizzbuzz(n):\n    return "fizz" * (n % 3 == 0) + "buzz" * (n % 5 == 0) or str(n)\n';
    await page.fill('#name', 'fizzbuzz.py');
    await page.fill('#data', code);
    await page.click('#create');
    await page.waitForFunction(() => [...document.querySelectorAll('#snippets li h3')].some((h) => h.textContent === 'fizzbuzz.py'));
    expect(await page.evaluate(() => document.querySelector('#error')!.textContent)).toBe('');
    // Listed with its classification, as the app reads it: original.reference.classification.specific.
    const created = await page.evaluate(() => {
      const li = [...document.querySelectorAll('#snippets li')].find((l) => l.querySelector('h3')!.textContent === 'fizzbuzz.py')!;
      return { id: li.getAttribute('data-id')!, classification: li.querySelector('.classification')!.textContent };
    });
    expect(created.classification).toBe('py');
    // Preview: original.reference.fragment.string.raw.
    await page.click(`#snippets li[data-id="${created.id}"]`);
    await page.waitForFunction(() => document.querySelector('#preview')!.textContent !== '');
    expect(await page.textContent('#preview')).toBe(code);
    expect(await page.getAttribute('#preview', 'data-classification')).toBe('py');
    // Its creation is in the activity list (activitiesSnapshot, each with its asset).
    await page.waitForFunction(() => [...document.querySelectorAll('#activities li')].some((l) => l.textContent === 'fizzbuzz.py'));

    await page.fill('#rename', 'FizzBuzz in Python');
    await page.click('#do-rename');
    await page.waitForFunction(() => [...document.querySelectorAll('#snippets li h3')].some((h) => h.textContent === 'FizzBuzz in Python'));
    expect(await items()).not.toContain('fizzbuzz.py');

    await page.fill('#query', 'fizz buzz');
    await page.click('#search');
    await page.waitForSelector('#results[data-ready="yes"]');
    await page.waitForFunction(() => document.querySelectorAll('#results li').length > 0);
    expect(await page.evaluate(() => [...document.querySelectorAll('#results li')].map((l) => l.textContent))).toEqual([
      'FizzBuzz in Python',
    ]);

    await page.click('#delete');
    await page.waitForFunction((id) => !document.querySelector(`#snippets li[data-id="${id}"]`), created.id);
    expect(await items()).toEqual(start);
    expect(await page.evaluate(() => document.querySelector('#error')!.textContent)).toBe('');
  });
});

describe(`the Raycast extension's read path, in ${engine.name}`, () => {
  it('stream → asset (no transferables) → original and preview formats → annotations, tags and websites by their indices', async () => {
    const result = await page.evaluate(async () => {
      const { Pieces } = window;
      const host = 'http://localhost:39300';
      const configuration = new Pieces.Configuration({ basePath: host });
      const assets = new Pieces.AssetsApi(configuration);
      const context = await new Pieces.ConnectorApi(configuration).connect({
        seededConnectorConnection: { application: { name: 'RAYCAST', version: '1.0.0', platform: 'MACOS' } } as never,
      });
      // Raycast saves text with its extension in the fragment's metadata, and an asset may carry tags and websites.
      const saved = await assets.assetsCreateNewAsset({
        seed: {
          type: 'SEEDED_ASSET',
          asset: {
            application: context.application,
            format: { fragment: { string: { raw: 'SELECT * FROM snippets;' }, metadata: { ext: 'sql' } } },
            metadata: { anchors: [], tags: [{ text: 'sql' }], websites: [{ url: 'https://www.sqlite.org/', name: 'SQLite' }] },
          },
        } as never,
      });
      // AssetsStream.ts: the first message is every id (read in reverse), then one message per change.
      const ws = new WebSocket(`${host.replace('http://', 'ws://')}/assets/stream/identifiers`);
      const first = await new Promise<string[]>((resolve, reject) => {
        ws.onmessage = (event) =>
          resolve(
            Pieces.StreamedIdentifiersFromJSON(JSON.parse(String(event.data)))
              .iterable.map((i) => i.asset!.id)
              .reverse(),
          );
        ws.onerror = () => reject(new Error('socket error'));
      });
      ws.close();
      // fetchAsset.ts for each id, as its DedupeAssetQueue does (batches of 5).
      const formatApi = new Pieces.FormatApi(configuration);
      const annotationApi = new Pieces.AnnotationApi(configuration);
      const tagApi = new Pieces.TagApi(configuration);
      const websiteApi = new Pieces.WebsiteApi(configuration);
      const fetchAsset = async (id: string) => {
        const asset = await new Pieces.AssetApi(configuration).assetSnapshot({ asset: id, transferables: false });
        const formats = await Promise.all([
          formatApi.formatSnapshot({ format: asset.original.reference?.id ?? asset.original.id, transferable: true }),
          formatApi.formatSnapshot({ format: asset.preview.base.id, transferable: true }),
        ]);
        if (asset.original.reference) asset.original.reference.fragment = formats[0].fragment;
        if (asset.preview.base.reference) asset.preview.base.reference.fragment = formats[1].fragment;
        const join = async (key: 'annotations' | 'tags' | 'websites', call: (id: string) => Promise<unknown>) => {
          if (!asset[key]) return [];
          return Promise.all(
            Object.keys(asset[key]!.indices ?? {})
              .filter((k) => asset[key]!.indices![k] !== -1)
              .map(call),
          );
        };
        const [annotations, tags, websites] = await Promise.all([
          join('annotations', (annotation) => annotationApi.annotationSpecificAnnotationSnapshot({ annotation })),
          join('tags', (tag) => tagApi.tagsSpecificTagSnapshot({ tag })),
          join('websites', (website) => websiteApi.websitesSpecificWebsiteSnapshot({ website })),
        ]);
        // AssetUtil.stripAsset: what the extension keeps and shows.
        return {
          id: asset.id,
          text: asset.original.reference?.fragment?.string?.raw ?? asset.preview.base.reference?.fragment?.string?.raw ?? '',
          ext: asset.original.reference!.classification.specific,
          name: asset.name,
          annotations: (annotations as Array<{ type: string; text: string }>).map((a) => a.type),
          tags: (tags as Array<{ text: string }>).map((t) => t.text),
          websites: (websites as Array<{ url: string }>).map((w) => w.url),
        };
      };
      const stripped = [];
      for (let i = 0; i < first.length; i += 5) stripped.push(...(await Promise.all(first.slice(i, i + 5).map(fetchAsset))));
      const cleanup = await assets.assetsDeleteAsset({ asset: saved.id });
      return { stripped, saved: saved.id, cleanup };
    });
    expect(result.cleanup).toBe(result.saved);
    expect(result.stripped.length).toBeGreaterThanOrEqual(5);
    for (const asset of result.stripped) {
      expect(asset.text.length, asset.name).toBeGreaterThan(0);
      expect(asset.annotations, asset.name).toContain('DESCRIPTION');
    }
    expect(result.stripped.find((a) => a.id === result.saved)).toEqual({
      id: result.saved,
      text: 'SELECT * FROM snippets;',
      ext: 'sql',
      name: expect.any(String),
      annotations: ['DESCRIPTION'],
      tags: ['sql'],
      websites: ['https://www.sqlite.org/'],
    });
  });
});

describe(`a 16 MiB asset, in ${engine.name}`, () => {
  it('is stored and served whole, and other requests are answered meanwhile', async () => {
    const result = await page.evaluate(async () => {
      const host = 'http://localhost:1000';
      const limit = 16 * 1024 * 1024;
      const envelope = (raw: string) =>
        JSON.stringify({
          type: 'SEEDED_ASSET',
          asset: {
            application: {
              id: '7f0c7c39-7e3a-4c52-9d4e-4a0f4c9b7b10',
              name: 'OPEN_SOURCE',
              version: '1',
              platform: 'WEB',
              onboarded: true,
              privacy: 'OPEN',
            },
            format: { fragment: { string: { raw } } },
            metadata: { name: 'big.log' },
          },
        });
      // The largest body a request may carry: text filling 16 MiB with its envelope.
      const line = 'INFO 2026-01-01T00:00:00Z worker started, nothing to report on this line at all\n';
      const room = limit - envelope('').length;
      // Each line's newline is two characters in JSON.
      const escaped = JSON.stringify(line).length - 2;
      const text = line.repeat(Math.floor(room / escaped)) + 'x'.repeat(room % escaped);
      const body = envelope(text);
      const probes: number[] = [];
      let creating = true;
      const probe = async () => {
        while (creating) {
          const t0 = performance.now();
          await fetch(`${host}/.well-known/health`);
          await fetch(`${host}/conversations/identifiers`);
          probes.push(performance.now() - t0);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      const probing = probe();
      const t0 = performance.now();
      const created = await fetch(`${host}/assets/create?transferables=false`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      const createMs = performance.now() - t0;
      const asset = await created.json();
      const t1 = performance.now();
      const read = await (await fetch(`${host}/format/${asset.original.id}`)).json();
      const readMs = performance.now() - t1;
      creating = false;
      await probing;
      const tooBig = await fetch(`${host}/assets/create`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: envelope(`${text}x`),
      });
      await fetch(`${host}/assets/${asset.id}/delete`, { method: 'POST' });
      return {
        bodyBytes: new TextEncoder().encode(body).byteLength,
        status: created.status,
        same: read.fragment.string.raw === text,
        size: read.bytes.value,
        textBytes: new TextEncoder().encode(text).byteLength,
        createMs,
        readMs,
        worstProbe: Math.max(...probes),
        probes: probes.length,
        tooBig: tooBig.status,
      };
    });
    console.info(
      `16 MiB asset in ${engine.name}: create ${result.createMs.toFixed(0)} ms, read ${result.readMs.toFixed(0)} ms, longest wait of another request ${result.worstProbe.toFixed(0)} ms over ${result.probes} probes`,
    );
    expect(result.bodyBytes).toBe(16 * 1024 * 1024);
    expect(result.status).toBe(200);
    expect(result.same).toBe(true);
    expect(result.size).toBe(result.textBytes);
    expect(result.textBytes).toBeGreaterThan(16_000_000);
    expect(result.tooBig).toBe(413);
    expect(result.probes).toBeGreaterThan(0);
  });
});
