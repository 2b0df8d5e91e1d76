/**
 * `npm run bench` (this file beside run.bench.ts): assets in headless Chromium, through the
 * page library as an app uses it (the `ours` page of run.bench.ts).
 *
 * 1. Create (POST /assets/create, a 1 KB snippet), 10 in flight and one at a time, against raw
 *    IndexedDB in the page writing the same records in the fewest requests: one transaction
 *    per asset, its record, its format, its DESCRIPTION annotation, its activity and the two
 *    change-log entries (asset, activity). Interleaved batches.
 * 2. Full-text search (GET /search/full_text) over 10,000 stored assets: the first search (it
 *    builds the index), then warm searches (median, p95).
 * 3. The first search after the worker was stopped (cold: the worker's start, the database's
 *    open and the index).
 *
 * Targets are reported as met or missed; they are never test assertions.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { it } from 'vitest';
import { launchChromium, stopAllWorkers } from '../browser/chromium.js';
import { median, ms, p95, table } from './stats.js';
import { machine, recordRun, sampled, type Figure } from './record.js';
import { buildSite, openReady, serveSite } from './site.js';
import { snippets } from './snippets.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke
  ? { createRounds: 3, createBatch: 20, assets: 1_000, warmSearches: 20, coldSearches: 3 }
  : { createRounds: 10, createBatch: 50, assets: 10_000, warmSearches: 60, coldSearches: 9 };

/**
 * Runs in the page: `count` asset creates, `inFlight` at a time; ms per create. `raw`: the same
 * records written straight to IndexedDB in the page, one transaction per asset, in the fewest requests.
 */
async function createRate({
  count,
  inFlight,
  raw,
  texts,
}: {
  count: number;
  inFlight: number;
  raw: boolean;
  texts: string[];
}): Promise<number> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const w = window as unknown as { rawAssets?: IDBDatabase };
  if (raw && !w.rawAssets) {
    const open = indexedDB.open('bench-raw-assets', 1);
    open.onupgradeneeded = () => {
      const db = open.result;
      db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
      db.createObjectStore('assets', { keyPath: 'id' }).createIndex('by-name', 'name');
      db.createObjectStore('formats', { keyPath: 'id' }).createIndex('by-asset', 'asset');
      db.createObjectStore('annotations', { keyPath: 'id' }).createIndex('by-asset', 'asset.id');
      const activities = db.createObjectStore('activities', { keyPath: 'id' });
      activities.createIndex('by-created', 'order');
      activities.createIndex('by-asset', 'asset');
    };
    w.rawAssets = await request(open);
  }
  const application = {
    id: '7f0c7c39-7e3a-4c52-9d4e-4a0f4c9b7b10',
    name: 'OPEN_SOURCE',
    version: '1',
    platform: 'WEB',
    onboarded: true,
    privacy: 'OPEN',
  };
  const one = async (i: number) => {
    const text = texts[i % texts.length]!;
    if (!raw) {
      const response = await fetch('http://localhost:1000/assets/create?transferables=false', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          type: 'SEEDED_ASSET',
          asset: { application, format: { fragment: { string: { raw: text }, metadata: { ext: 'ts' } } } },
        }),
      });
      if (!response.ok) throw new Error(`create answered ${response.status}`);
      await response.arrayBuffer();
      return;
    }
    const now = new Date().toISOString();
    const id = crypto.randomUUID();
    const formatId = crypto.randomUUID();
    const activityId = crypto.randomUUID();
    const tx = w.rawAssets!.transaction(['assets', 'formats', 'annotations', 'activities', 'changes'], 'readwrite');
    tx.objectStore('assets').put({
      id,
      name: `snippet-${i}.ts`,
      created: now,
      updated: now,
      creator: application.id,
      mechanism: 'MANUAL',
      formats: [formatId],
      original: formatId,
      preview: formatId,
    });
    tx.objectStore('formats').put({
      id: formatId,
      asset: id,
      role: 'BOTH',
      classification: { generic: 'CODE', specific: 'ts' },
      application,
      created: now,
      updated: now,
      kind: 'fragment',
      text,
      size: text.length,
    });
    tx.objectStore('annotations').put({
      id: crypto.randomUUID(),
      created: { value: now },
      updated: { value: now },
      type: 'DESCRIPTION',
      text: 'A TypeScript snippet of 14 lines.',
      mechanism: 'AUTOMATIC',
      asset: { id },
    });
    tx.objectStore('activities').put({
      id: activityId,
      created: now,
      order: now,
      event: { asset: { asset: { id }, identifier_description_pair: { asset_created: 'an_asset_was_created' } } },
      application,
      mechanism: 'MANUAL',
      asset: id,
    });
    tx.objectStore('changes').add({ collection: 'asset', id });
    tx.objectStore('changes').add({ collection: 'activity', id: activityId });
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
  };
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return (performance.now() - start) / count;
}

/** Runs in the page: one full-text search; its time in ms (the answer read whole). */
async function search(query: string): Promise<{ ms: number; found: number }> {
  const start = performance.now();
  const response = await fetch(`http://localhost:1000/search/full_text?query=${encodeURIComponent(query)}`);
  const body = (await response.json()) as { iterable: unknown[] };
  if (!response.ok) throw new Error(`search answered ${response.status}`);
  return { ms: performance.now() - start, found: body.iterable.length };
}

it('benchmarks assets', { timeout: 30 * 60_000 }, async () => {
  const outDir = await buildSite('assets');
  const { server, origin } = await serveSite(outDir);
  const { context } = await launchChromium();
  const results: Record<string, unknown> = { plan, machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version } };
  try {
    const page = await openReady(context, `${origin}/ours.html`);
    const corpus = snippets(plan.assets, 7);
    const texts = corpus.slice(0, 100).map((s) => s.text);

    // 1. Creates, interleaved: ours and raw IndexedDB, batch by batch, in alternating order.
    const creates: Record<string, Record<string, number[]>> = {};
    for (const inFlight of [1, 10]) {
      creates[inFlight] = { ours: [], raw: [] };
      for (const raw of [false, true]) await page.evaluate(createRate, { count: 10, inFlight, raw, texts });
      for (let round = 0; round < plan.createRounds; round++) {
        const order = round % 2 ? [true, false] : [false, true];
        for (const raw of order)
          creates[inFlight]![raw ? 'raw' : 'ours']!.push(
            await page.evaluate(createRate, { count: plan.createBatch, inFlight, raw, texts }),
          );
      }
    }
    results.creates = creates;
    // Back to an empty store for the search part.
    await page.evaluate(
      () =>
        new Promise((resolve) => {
          const { port1, port2 } = new MessageChannel();
          port1.onmessage = resolve;
          navigator.serviceWorker.controller!.postMessage({ type: 'pieces:reset' }, [port2]);
        }),
    );

    // 2. Full-text search over the stored assets.
    for (let i = 0; i < corpus.length; i += 1000) {
      await page.evaluate(
        (batch) => (window as unknown as { pieces: { addAssets(a: unknown): Promise<void> } }).pieces.addAssets(batch),
        corpus.slice(i, i + 1000).map(({ name, text }) => ({ name, text })),
      );
    }
    const queries = corpus.slice(0, plan.warmSearches).map((s) => s.query);
    const first = await page.evaluate(search, queries[0]!);
    const warm: number[] = [];
    const found: number[] = [];
    for (const query of queries) {
      const result = await page.evaluate(search, query);
      warm.push(result.ms);
      found.push(result.found);
    }
    // 3. The first search after the worker was stopped.
    const cold: number[] = [];
    for (let i = 0; i < plan.coldSearches; i++) {
      // Let anything the worker keeps for a cold start be kept, as after real use.
      await new Promise((r) => setTimeout(r, 3_000));
      await stopAllWorkers(context);
      await new Promise((r) => setTimeout(r, 200));
      cold.push((await page.evaluate(search, queries[(i + 1) % queries.length]!)).ms);
    }
    results.search = { assets: plan.assets, first: first.ms, warm, cold, found };
  } finally {
    await context.close();
    await server.close();
  }

  const c = results.creates as Record<string, Record<string, number[]>>;
  const rate = (inFlight: number, name: string) => 1000 / median(c[inFlight]![name]!);
  const s = results.search as { assets: number; first: number; warm: number[]; cold: number[]; found: number[] };
  const ratio10 = rate(10, 'ours') / rate(10, 'raw');
  const ratio1 = rate(1, 'ours') / rate(1, 'raw');
  const verdict = (ok: boolean | null) => (ok === null ? 'not measured (smoke run)' : ok ? 'met' : '**missed**');
  const full = !smoke;
  const report = [
    `## Assets (${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores)`,
    '',
    'Creates (POST /assets/create, a 1 KB snippet) against raw IndexedDB writing the same records in the page (one transaction per asset: its record, format, DESCRIPTION annotation, activity and two change-log entries), interleaved batches: median and p95 ms per create over the batches, creates per second, ratio of rates.',
    '',
    table(
      ['in flight', 'ours (median / p95)', 'raw IndexedDB (median / p95)', 'ours/s', 'raw/s', 'ours/raw'],
      [1, 10].map((n) => [
        n,
        `${ms(median(c[n]!.ours!))} / ${ms(p95(c[n]!.ours!))}`,
        `${ms(median(c[n]!.raw!))} / ${ms(p95(c[n]!.raw!))}`,
        rate(n, 'ours').toFixed(0),
        rate(n, 'raw').toFixed(0),
        (rate(n, 'ours') / rate(n, 'raw')).toFixed(2),
      ]),
    ),
    '',
    `Full-text search over ${s.assets} assets (GET /search/full_text, two-word queries; median ${median(s.found)} results): first search (builds the index) ${ms(s.first)}; warm median ${ms(median(s.warm))}, p95 ${ms(p95(s.warm))} (n=${s.warm.length}); first search after a worker stop: median ${ms(median(s.cold))}, p95 ${ms(p95(s.cold))} (n=${s.cold.length}).`,
    '',
    table(
      ['target', 'verdict'],
      [
        [
          `asset creates ≥ 0.8× raw IndexedDB with 10 in flight (${ratio10.toFixed(2)}×; one at a time ${ratio1.toFixed(2)}×)`,
          verdict(ratio10 >= 0.8),
        ],
        [`full-text search over 10,000 assets ≤ 20 ms warm, median (${ms(median(s.warm))})`, verdict(full ? median(s.warm) <= 20 : null)],
        [`first search after a worker stop ≤ 150 ms (median ${ms(median(s.cold))})`, verdict(full ? median(s.cold) <= 150 : null)],
      ],
    ),
  ].join('\n');
  mkdirSync(resolve(root, '.bench'), { recursive: true });
  writeFileSync(resolve(root, '.bench/assets.json'), JSON.stringify(results, null, 2));
  writeFileSync(resolve(root, '.bench/assets.md'), `${report}\n`);
  console.info(`\n${report}\n`);
  const raw = 'raw IndexedDB, the same records in one transaction per asset';
  const judge = (ok: boolean) => (full ? ok : null);
  recordRun('assets', {
    plan,
    machine: machine(),
    figures: [
      ...[1, 10].map(
        (n): Figure => ({
          measure: `asset creates, ${n} in flight`,
          unit: 'per second',
          median: rate(n, 'ours'),
          n: c[n]!.ours!.length,
          floor: { measure: raw, median: rate(n, 'raw') },
          ratio: rate(n, 'ours') / rate(n, 'raw'),
          ...(n === 10 ? { target: '≥ 0.8×', met: ratio10 >= 0.8 } : {}),
        }),
      ),
      { measure: `full-text search over ${s.assets} assets, first (builds the index)`, unit: 'ms', median: s.first },
      sampled(`full-text search over ${s.assets} assets, warm`, s.warm, { target: '≤ 20 ms', met: judge(median(s.warm) <= 20) }),
      sampled(`full-text search over ${s.assets} assets, first after a worker stop`, s.cold, {
        target: '≤ 150 ms',
        met: judge(median(s.cold) <= 150),
      }),
    ],
  });
});
