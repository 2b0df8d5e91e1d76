/**
 * The mirror's benchmark (`npm run bench`, this file's section): against the independent
 * upstream (test/upstream/pieces-os.ts) on a real port,
 *
 *  1. pass-through overhead on small reads: a client calling the upstream directly, and the
 *     same client calling the service's base while the service passes through to it; in Node
 *     (the Node host, in process) and in headless Chromium (the worker, over the fast path and
 *     through its fetch handler), interleaved rounds; medians, p95, and the ratio of medians
 *     (target ≤ 1.2×). In Chromium "directly" is a page no service worker controls (a page the
 *     worker controls pays a fetch event even for a request the worker lets pass, shown beside
 *     it); the fetch handler's path is also set against its own floor, a bare service worker
 *     whose fetch handler fetches the same path from the upstream (passthrough-sw.js), read from
 *     a second page of its origin as the fetch-path page is (site.ts, `openBehind`);
 *  2. the time to drain 1,000 queued writes (100 conversations × 1 create + 9 messages),
 *     written while the upstream was away: from its return (the page's `connectMirror()`, or
 *     the Node host's, makes the mirror look at once rather than after its probe backoff) to
 *     the mirror up with an empty outbox.
 *
 * Prints a markdown table and writes the figures to .bench/mirror.json. Targets are reported,
 * never asserted. `BENCH=smoke` runs a short version.
 */
// The Node host's IndexedDB, as the unit tests and the package's Node build give it.
import 'fake-indexeddb/auto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchChromium } from '../browser/chromium.js';
import { createNodeHost } from '../../src/node/host.js';
import type { MirrorStatus } from '../../src/core/mirror-spec.js';
import { startUpstream, type IndependentPiecesOS } from '../upstream/pieces-os.js';
import { median, ms, p95, table } from './stats.js';
import { recordRun, type Figure } from './record.js';
import { buildSite, openBehind, openReady, serveSite } from './site.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke ? { rounds: 4, batch: 20, conversations: 10, messages: 9 } : { rounds: 30, batch: 50, conversations: 100, messages: 9 };
const BASE = 'http://localhost:1000';

type Figures = { median: number; p95: number; n: number };
const figures = (times: number[]): Figures => ({ median: median(times), p95: p95(times), n: times.length });

/** A conversation with 5 messages on the upstream, to read by id. */
async function seed(upstream: IndependentPiecesOS): Promise<string> {
  const messages = Array.from({ length: 5 }, (_, i) => ({
    role: i % 2 ? 'ASSISTANT' : 'USER',
    fragment: { string: { raw: `message ${i}` } },
  }));
  const response = await fetch(`${upstream.url}/conversations/create`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ type: 'COPILOT', name: 'read by id', messages }),
  });
  return ((await response.json()) as { id: string }).id;
}

/** Interleaved rounds of sequential reads per variant, the order rotating each round. */
async function interleave(variants: Record<string, (count: number) => Promise<number[]>>): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const read of Object.values(variants)) await read(10); // warm-up
  for (let round = 0; round < plan.rounds; round++) {
    const order = Object.entries(variants);
    for (let k = 0; k < round % order.length; k++) order.push(order.shift()!);
    for (const [name, read] of order) times[name]!.push(...(await read(plan.batch)));
  }
  return times;
}

/** Writes 1,000 operations (conversations, each created then given messages) through `post`; returns the wall time. */
async function queueWrites(post: (path: string, body: unknown) => Promise<{ id: string }>) {
  const started = performance.now();
  for (let c = 0; c < plan.conversations; c++) {
    const { id } = await post('/conversations/create', { type: 'COPILOT', name: `queued ${c}` });
    for (let m = 0; m < plan.messages; m++)
      await post('/messages/create', { role: 'USER', fragment: { string: { raw: `queued ${c}.${m}` } }, conversation: { id } });
  }
  return performance.now() - started;
}

it('benchmarks the mirror', { timeout: 30 * 60_000 }, async () => {
  const results: Record<string, unknown> = { plan, machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version } };
  const writes = plan.conversations * (1 + plan.messages);

  // ---- Node: the Node host in process -----------------------------------------------------------
  const upstream = await startUpstream();
  const id = await seed(upstream);
  const paths = ['/applications', '/conversations/identifiers', `/conversation/${id}`];
  const host = createNodeHost({ sampleAssets: false, mirror: { upstream: upstream.url } });
  const status = () => host.service.mirrorStatus() as Promise<MirrorStatus>;
  const reach = async () => {
    for (;;) {
      await host.service.mirrorPermission({ granted: true });
      const now = await status();
      if (now.state === 'up' && now.outbox.length === 0) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await reach();
  const step = (what: string) => console.info(`[mirror bench] ${what}`);
  step('Node host up');
  const timed = (call: (path: string) => Promise<Response>, path: string) => async (count: number) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      await (await call(path)).text();
      out.push(performance.now() - start);
    }
    return out;
  };
  const node: Record<string, Record<string, Figures>> = {};
  for (const path of paths) {
    const times = await interleave({
      direct: timed((p) => fetch(upstream.url + p), path),
      through: timed((p) => host.fetch(BASE + p), path),
    });
    node[path] = { direct: figures(times.direct!), through: figures(times.through!) };
  }
  results.node = node;
  step('Node reads timed');

  await upstream.stop();
  const queueNode = await queueWrites(async (path, body) => {
    const response = await host.fetch(BASE + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as { id: string };
  });
  expect((await status()).outbox).toHaveLength(writes);
  step(`Node: ${writes} writes queued`);
  await upstream.start();
  const drainStart = performance.now();
  await reach();
  const drainNode = performance.now() - drainStart;
  results.drainNode = { writes, queueMs: queueNode, drainMs: drainNode };
  step('Node drained');
  host.close();
  await upstream.stop();

  // ---- Chromium: the worker ----------------------------------------------------------------------
  const browserUpstream = await startUpstream();
  const browserId = await seed(browserUpstream);
  const browserPaths = ['/applications', '/conversations/identifiers', `/conversation/${browserId}`];
  const site = await sitePages();
  const { context } = await launchChromium();
  const chromium = context.browser()?.version() ?? 'Chromium';
  (results.machine as Record<string, unknown>).chromium = chromium;
  const open = (query: string) => openReady(context, `${site.origin}/ours.html?mirror=${encodeURIComponent(browserUpstream.url)}${query}`);
  type PagePieces = { pieces: { mirrorStatus(): Promise<MirrorStatus>; connectMirror(): Promise<MirrorStatus> } };
  const pageStatus = (page: Page) => page.evaluate(() => (window as unknown as PagePieces).pieces.mirrorStatus());
  const pageReach = async (page: Page) => {
    // The page's step: the mirror looks now.
    await page.evaluate(() => (window as unknown as PagePieces).pieces.connectMirror());
    for (;;) {
      const now = await pageStatus(page);
      if (now.state === 'up' && now.outbox.length === 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    const fast = await open('');
    const viaFetch = await open('&fastPath=0');
    const plain = await openReady(context, `${site.plain}/plain.html`);
    const floor = await openBehind(context, `${site.passthrough}/passthrough.html?upstream=${encodeURIComponent(browserUpstream.url)}`);
    await pageReach(fast);
    step('Chromium up');
    const reads = (page: Page, url: string) => (count: number) =>
      page.evaluate(
        async ({ url, count }) => {
          const out: number[] = [];
          for (let i = 0; i < count; i++) {
            const start = performance.now();
            await (await fetch(url, { cache: 'no-store' })).text();
            out.push(performance.now() - start);
          }
          return out;
        },
        { url, count },
      );
    const browser: Record<string, Record<string, Figures>> = {};
    for (const path of browserPaths) {
      const times = await interleave({
        direct: reads(plain, browserUpstream.url + path),
        directControlled: reads(fast, browserUpstream.url + path),
        through: reads(fast, BASE + path),
        throughFetch: reads(viaFetch, BASE + path),
        floorFetch: reads(floor, BASE + path),
      });
      browser[path] = Object.fromEntries(Object.entries(times).map(([name, t]) => [name, figures(t)]));
    }
    results.browser = browser;
    step('Chromium reads timed');

    await browserUpstream.stop();
    const queueBrowser = await fast.evaluate(
      async ({ conversations, messages }) => {
        const post = async (path: string, body: unknown) =>
          (await (
            await fetch(`http://localhost:1000${path}`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify(body),
            })
          ).json()) as { id: string };
        const started = performance.now();
        for (let c = 0; c < conversations; c++) {
          const { id } = await post('/conversations/create', { type: 'COPILOT', name: `queued ${c}` });
          for (let m = 0; m < messages; m++)
            await post('/messages/create', { role: 'USER', fragment: { string: { raw: `queued ${c}.${m}` } }, conversation: { id } });
        }
        return performance.now() - started;
      },
      { conversations: plan.conversations, messages: plan.messages },
    );
    for (;;) {
      if ((await pageStatus(fast)).outbox.length === writes) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    step(`Chromium: ${writes} writes queued`);
    await browserUpstream.start();
    const started = performance.now();
    await pageReach(fast);
    const drainBrowser = performance.now() - started;
    results.drainBrowser = { writes, queueMs: queueBrowser, drainMs: drainBrowser };
    expect(browserUpstream.snapshot().conversations.length).toBe(plan.conversations + 1);
  } finally {
    await context.close();
    await browserUpstream.stop();
    await site.close();
  }

  // ---- Report ------------------------------------------------------------------------------------
  const ratio = (a: Figures, b: Figures) => a.median / b.median;
  const rows: Array<Array<string | number>> = [];
  for (const [where, set] of [
    ['Node host', results.node],
    ['Chromium worker', results.browser],
  ] as const) {
    for (const [path, f] of Object.entries(set as Record<string, Record<string, Figures>>)) {
      const label = path.replace(/[0-9a-f-]{36}/, '{id}');
      const row = (calls: string, v: Figures, against = '') =>
        rows.push([where, label, calls, ms(v.median), ms(v.p95), `${ratio(v, f.direct!).toFixed(2)}×`, against]);
      row(where === 'Node host' ? 'direct' : 'direct (a page no worker controls)', f.direct!);
      if (f.directControlled) row('direct, from a page the worker controls', f.directControlled);
      row(where === 'Node host' ? 'through the service' : 'through the service (fast path)', f.through!);
      if (f.floorFetch) row('floor: a bare worker fetching the upstream (fetch handler)', f.floorFetch);
      if (f.throughFetch)
        row('through the service (fetch handler)', f.throughFetch, `${ratio(f.throughFetch, f.floorFetch!).toFixed(2)}× the floor`);
    }
  }
  const drain = (d: { writes: number; queueMs: number; drainMs: number }) =>
    `${d.writes} writes queued in ${(d.queueMs / 1000).toFixed(2)} s, drained in ${(d.drainMs / 1000).toFixed(2)} s (${((d.writes / d.drainMs) * 1000).toFixed(0)} writes/s)`;
  const report = [
    `## Mirror (${smoke ? 'smoke run' : 'full run'})`,
    '',
    `Machine: ${cpus().length} cores, Node ${process.version}, ${chromium}. ${plan.rounds} rounds × ${plan.batch} reads per variant, interleaved.`,
    '',
    table(['host', 'read', 'client calls', 'median', 'p95', 'against direct (medians)', 'against its floor'], rows),
    '',
    `Drain, Node host: ${drain(results.drainNode as never)}.`,
    `Drain, Chromium worker: ${drain(results.drainBrowser as never)}.`,
    '',
  ].join('\n');
  console.info(report);
  mkdirSync(resolve(root, '.bench'), { recursive: true });
  writeFileSync(resolve(root, '.bench/mirror.json'), JSON.stringify(results, null, 2));
  writeFileSync(resolve(root, '.bench/mirror.md'), report);
  const figuresOf: Figure[] = [];
  for (const [where, set] of [
    ['Node host', results.node],
    ['Chromium worker', results.browser],
  ] as const) {
    for (const [path, f] of Object.entries(set as Record<string, Record<string, Figures>>)) {
      const label = `${where}: ${path.replace(/[0-9a-f-]{36}/, '{id}')}`;
      figuresOf.push({
        measure: `${label}, through the service`,
        unit: 'ms',
        ...f.through!,
        floor: { measure: 'the upstream called directly', median: f.direct!.median },
        ratio: ratio(f.through!, f.direct!),
      });
      if (f.throughFetch && f.floorFetch) {
        figuresOf.push({
          measure: `${label}, through the fetch handler`,
          unit: 'ms',
          ...f.throughFetch,
          floor: { measure: 'a bare worker fetching the upstream', median: f.floorFetch.median },
          ratio: ratio(f.throughFetch, f.floorFetch),
        });
      }
    }
  }
  for (const [where, d] of [
    ['Node host', results.drainNode],
    ['Chromium worker', results.drainBrowser],
  ] as const) {
    const { writes, drainMs } = d as { writes: number; drainMs: number };
    figuresOf.push({ measure: `${where}: queued writes drained`, unit: 'per second', median: (writes / drainMs) * 1000, n: writes });
  }
  recordRun('mirror', { plan, machine: results.machine as Record<string, unknown>, figures: figuresOf });
});

/**
 * The benchmark's pages and the worker scripts, served with cross-origin isolation (5 µs timers): ours, the
 * pass-through floor's and a page no worker controls, each on an origin of its own.
 */
async function sitePages() {
  const outDir = await buildSite('mirror', {
    pages: ['ours', 'passthrough', 'plain'],
    files: { 'passthrough-sw.js': resolve(import.meta.dirname, 'passthrough-sw.js') },
  });
  const servers = await Promise.all([serveSite(outDir), serveSite(outDir), serveSite(outDir)]);
  const [origin, passthrough, plain] = servers.map((s) => s.origin) as [string, string, string];
  return { origin, passthrough, plain, close: () => Promise.all(servers.map(({ server }) => server.close())) };
}
