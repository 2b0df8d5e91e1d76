/**
 * The models benchmark (part of `npm run bench`, `BENCH=smoke` for a short run), in headless Chromium:
 *
 * 1. `GET /models` against the empty-worker floor (a bare service worker answering the same body, as
 *    run.bench.ts builds its floor; told the body in a message, models-floor-sw.js), on the fast path
 *    and on the fetch path, interleaved. Target: the fetch path within 1.1x of the floor. Each is set
 *    against the floor read the same way: the fast path from the page its worker was started for, the
 *    fetch path from a second page of the origin (see site.ts, `openBehind`: ~0.3 ms more per fetch).
 * 2. A download's progress frames: a local model mapped to a fake Ollama whose pull streams thousands
 *    of progress lines as fast as it can; the model's socket should get its frames at up to 60 a second
 *    (the latest figure each time), while small reads (`GET /applications`) in the same page are not
 *    stalled: their latency during the download against the same reads while the page drains the same
 *    pull itself (the floor: the pull's traffic alone, on the same 2 cores), and without any pull.
 *
 * Prints a markdown table and writes the figures to .bench/models.json. Targets are reported, never asserted.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchChromium } from '../browser/chromium.js';
import { startFakeOllama } from '../fake-ollama.js';
import { median, ms, p95, table } from './stats.js';
import { machine, recordRun } from './record.js';
import { buildSite, openReady, serveSite, timeReads } from './site.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke ? { rounds: 4, batch: 25, downloads: 2, lines: 10_000 } : { rounds: 30, batch: 50, downloads: 6, lines: 30_000 };
const BASE = 'http://localhost:1000';
const VARIANTS = {
  floor: 'floor (the page its worker was started for)',
  ours: 'ours, fast path (the page its worker was started for)',
  floorBehind: 'floor (a second page of its origin)',
  fetch: 'ours, fetch handler (a second page of its origin)',
};
const MODELS_URL = `${BASE}/models`;
const SMALL_URL = `${BASE}/applications`;

/**
 * Runs in the page: downloads `model` (mapped to the fake Ollama) with its progress socket open,
 * reading `small` in a loop while it runs; the frames' arrival times and the reads' latencies.
 */
const downloadWithReads = (page: Page, args: { model: string; small: string }) =>
  page.evaluate(async ({ model, small }) => {
    const frames: Array<{ at: number; status: string }> = [];
    const socket = new WebSocket(`ws://localhost:1000/model/${model}/download/progress`);
    await new Promise((resolve) => (socket.onopen = resolve));
    let done!: () => void;
    const ended = new Promise<void>((resolve) => (done = resolve));
    socket.onmessage = (event) => {
      const frame = JSON.parse(String(event.data)) as { status: string };
      frames.push({ at: performance.now(), status: frame.status });
      if (!['INITIALIZED', 'IN-PROGRESS'].includes(frame.status)) done();
    };
    const start = performance.now();
    await fetch(`http://localhost:1000/model/${model}/download`, { method: 'POST' });
    const reads: number[] = [];
    let running = true;
    void ended.then(() => (running = false));
    while (running) {
      const t = performance.now();
      await (await fetch(small)).text();
      reads.push(performance.now() - t);
    }
    await ended;
    socket.close();
    // The next run downloads again.
    await fetch(`http://localhost:1000/models/${model}/delete/cache`, { method: 'POST' });
    return { frames, reads, seconds: (performance.now() - start) / 1000 };
  }, args);

/**
 * Runs in the page: the same pull, drained by the page itself (no worker, no parsing), while it reads
 * `small` in a loop: what the pull's traffic alone does to small reads on this machine (the fake
 * server writing as fast as it can, the network process carrying it): the floor of "during".
 */
const drainWithReads = (page: Page, args: { pull: string; model: string; small: string }) =>
  page.evaluate(async ({ pull, model, small }) => {
    let running = true;
    const drained = (async () => {
      const response = await fetch(pull, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model, stream: true }),
      });
      const reader = response.body!.getReader();
      while (!(await reader.read()).done);
      running = false;
    })();
    const reads: number[] = [];
    while (running) {
      const t = performance.now();
      await (await fetch(small)).text();
      reads.push(performance.now() - t);
    }
    await drained;
    return reads;
  }, args);

it('benchmarks the models operations', { timeout: 20 * 60_000 }, async () => {
  const outDir = await buildSite('models', {
    pages: ['models-floor', 'ours'],
    files: { 'models-floor-sw.js': resolve(import.meta.dirname, 'models-floor-sw.js') },
  });
  const [oursSite, floorSite] = (await Promise.all([serveSite(outDir), serveSite(outDir)])).map((s) => s.origin) as [string, string];
  const ollama = await startFakeOllama();
  const { context } = await launchChromium();
  const results: Record<string, unknown> = { plan };
  try {
    const ours = await openReady(context, `${oursSite}/ours.html`);
    const body = await ours.evaluate(async (url) => (await fetch(url)).text(), MODELS_URL);
    const hash = `#${encodeURIComponent(JSON.stringify({ [MODELS_URL]: body, [SMALL_URL]: await ours.evaluate(async (u) => (await fetch(u)).text(), SMALL_URL) }))}`;
    const floor = await openReady(context, `${floorSite}/models-floor.html${hash}`);
    // A second page of each origin: its worker runs in the first one's renderer process.
    const floorBehind = await openReady(context, `${floorSite}/models-floor.html${hash}`);
    const viaFetch = await openReady(context, `${oursSite}/ours.html?fastPath=0`);
    const variants = { floor, ours, floorBehind, fetch: viaFetch } as const;

    // 1. GET /models, interleaved in rotating order.
    const times: Record<string, number[]> = { floor: [], ours: [], floorBehind: [], fetch: [] };
    for (const page of Object.values(variants)) await timeReads(page, MODELS_URL, 10);
    for (let round = 0; round < plan.rounds; round++) {
      const order = Object.entries(variants);
      for (let k = 0; k < round % order.length; k++) order.push(order.shift()!);
      for (const [name, page] of order) times[name]!.push(...(await timeReads(page, MODELS_URL, plan.batch)));
    }
    const models = Object.fromEntries(Object.entries(times).map(([name, t]) => [name, { median: median(t), p95: p95(t), n: t.length }]));
    results.models = models;

    // 2. A download's progress frames against small reads, on the fast path; reads without a download interleaved.
    const model = await ours.evaluate(async () => {
      const list = ((await (await fetch('http://localhost:1000/models')).json()) as { iterable: Array<{ id: string; name: string }> })
        .iterable;
      return list.find((m) => m.name === 'Llama-3.2 3B Chat Model')!.id;
    });
    await ours.evaluate(
      async ({ model, baseUrl, lines }) => {
        const { setModel } = (window as unknown as { pieces: { setModel(config: unknown, forModel: string): Promise<string> } }).pieces;
        await setModel({ type: 'ollama', baseUrl, model: `many:${lines}` }, model);
      },
      { model, baseUrl: ollama.baseUrl, lines: plan.lines },
    );
    const during: number[] = [];
    const without: number[] = [];
    const drained: number[] = [];
    const rates: number[] = [];
    const gaps: number[] = [];
    let frameCount = 0;
    for (let run = 0; run < plan.downloads; run++) {
      without.push(...(await timeReads(ours, SMALL_URL, plan.batch)));
      drained.push(...(await drainWithReads(ours, { pull: `${ollama.baseUrl}/api/pull`, model: `many:${plan.lines}`, small: SMALL_URL })));
      const { frames, reads } = await downloadWithReads(ours, { model, small: SMALL_URL });
      during.push(...reads);
      const progress = frames.filter((f) => f.status === 'IN-PROGRESS');
      frameCount += progress.length;
      // The rate a listener sees: IN-PROGRESS frames from the first to the last (gaps measured where they arrive).
      if (progress.length > 1) rates.push((progress.length - 1) / ((progress.at(-1)!.at - progress[0]!.at) / 1000));
      for (let i = 1; i < progress.length; i++) gaps.push(progress[i]!.at - progress[i - 1]!.at);
      if (frames.at(-1)?.status !== 'COMPLETED')
        throw new Error(`download ${run} ended ${frames.at(-1)?.status}: ${JSON.stringify(frames.slice(-4))}`);
    }
    without.push(...(await timeReads(ours, SMALL_URL, plan.batch)));
    results.download = {
      framesPerSecond: median(rates),
      frameGapMedian: median(gaps),
      frames: frameCount,
      readsDuring: { median: median(during), p95: p95(during), n: during.length },
      readsWithout: { median: median(without), p95: p95(without), n: without.length },
      readsDrained: { median: median(drained), p95: p95(drained), n: drained.length },
      ratio: median(during) / median(without),
      ratioDrained: median(during) / median(drained),
    };

    const fetchRatio = models.fetch!.median / models.floorBehind!.median;
    const oursRatio = models.ours!.median / models.floor!.median;
    const download = results.download as {
      framesPerSecond: number;
      frameGapMedian: number;
      readsDuring: { median: number; p95: number };
      readsWithout: { median: number; p95: number };
      readsDrained: { median: number; p95: number };
      ratio: number;
      ratioDrained: number;
      frames: number;
    };
    const report = [
      '## GET /models against the empty-worker floor',
      table(
        ['variant', 'median', 'p95', 'n', 'x its floor'],
        Object.entries(models).map(([name, m]) => [
          VARIANTS[name as keyof typeof VARIANTS],
          ms(m.median),
          ms(m.p95),
          m.n,
          (m.median / (name === 'fetch' || name === 'floorBehind' ? models.floorBehind! : models.floor!).median).toFixed(2),
        ]),
      ),
      `Target: fetch path ≤ 1.1x the floor: ${fetchRatio.toFixed(2)}x (${fetchRatio <= 1.1 ? 'met' : 'missed'}); fast path ${oursRatio.toFixed(2)}x.`,
      '',
      `## A download's progress (${plan.downloads} pulls of ${plan.lines} progress lines each)`,
      table(
        ['measure', 'value'],
        [
          ['IN-PROGRESS frames a second, first to last (median of the pulls)', download.framesPerSecond.toFixed(1)],
          ['gap between frames (median)', ms(download.frameGapMedian)],
          ['frames (all pulls)', download.frames],
          ['GET /applications during a download: median / p95', `${ms(download.readsDuring.median)} / ${ms(download.readsDuring.p95)}`],
          ['GET /applications without: median / p95', `${ms(download.readsWithout.median)} / ${ms(download.readsWithout.p95)}`],
          [
            'GET /applications while the page itself drains the same pull (the traffic alone): median / p95',
            `${ms(download.readsDrained.median)} / ${ms(download.readsDrained.p95)}`,
          ],
          ['during / while drained by the page (medians)', `${download.ratioDrained.toFixed(2)}x`],
          ['during / without (medians)', `${download.ratio.toFixed(2)}x`],
        ],
      ),
      `Targets: frames at up to 60 a second (${download.framesPerSecond <= 61 ? 'met' : 'missed'}: ${download.framesPerSecond.toFixed(1)}); small reads not stalled, within 1.5x of the reads while the page drains the same pull itself (${download.ratioDrained <= 1.5 ? 'met' : 'missed'}: ${download.ratioDrained.toFixed(2)}x; ${download.ratio.toFixed(2)}x the reads with no pull).`,
    ].join('\n');
    console.log(`\n${report}\n`);
    mkdirSync(resolve(root, '.bench'), { recursive: true });
    writeFileSync(resolve(root, '.bench/models.json'), JSON.stringify(results, null, 2));
    writeFileSync(resolve(root, '.bench/models.md'), `${report}\n`);
    const emptyWorker = 'an empty worker answering the same body (fetch hop)';
    recordRun('models', {
      plan,
      machine: machine(),
      figures: [
        {
          measure: 'GET /models, fast path',
          unit: 'ms',
          ...models.ours!,
          floor: { measure: emptyWorker, median: models.floor!.median },
          ratio: oursRatio,
        },
        {
          measure: 'GET /models, fetch path (second page)',
          unit: 'ms',
          ...models.fetch!,
          floor: { measure: `${emptyWorker}, from a second page`, median: models.floorBehind!.median },
          ratio: fetchRatio,
          target: '≤ 1.1×',
          met: fetchRatio <= 1.1,
        },
        {
          measure: "a download's IN-PROGRESS frames a second",
          unit: 'per second',
          median: download.framesPerSecond,
          target: '≤ 60',
          met: download.framesPerSecond <= 61,
        },
        {
          measure: 'GET /applications during a download',
          unit: 'ms',
          ...download.readsDuring,
          floor: { measure: 'the same reads while the page drains the same pull itself', median: download.readsDrained.median },
          ratio: download.ratioDrained,
          target: '≤ 1.5×',
          met: download.ratioDrained <= 1.5,
        },
      ],
    });
  } finally {
    await context.close();
    await ollama.close();
  }
});
