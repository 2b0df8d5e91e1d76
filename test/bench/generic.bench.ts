/**
 * The generic path against the hand-written operations of the same shape (issue 32: "the generic
 * path costs no more than a hand-written operation of the same shape, ≤ 1.2× a read, a create and
 * an association, through the fast path"), in headless Chromium, through the page library as an app
 * uses it (the `ours` page, fast path, one request at a time):
 *
 * - create: `POST /persons/create` (generic) against `POST /anchors/create` (hand-written). Each
 *   writes one record (an anchor's points are inside its record), its change row and, mirrored,
 *   its outbox entry, in one transaction, from a small seed;
 * - association: `POST /person/{p}/workstream_summaries/associate/{s}` (both sides generic records
 *   of the `materials` store) against `POST /anchor/{a}/conversations/associate/{c}`: each reads
 *   two records, rewrites both (each lists the other) and logs two changes in one transaction. Each
 *   associates a fresh pair (a repeat writes nothing), the records created just before, untimed;
 * - read: `GET /person/{id}` against `GET /anchor/{id}` (one record by key, answered whole; a
 *   conversation's read also gathers its messages, so the anchor is the closer shape), reading
 *   the records the round associated.
 *
 * Rounds of batches; in each phase the generic and the hand-written requests alternate one by one
 * (which goes first alternates), each timed in the page to the last byte of its answer; medians and
 * the ratio of medians. The hand-written operation is another path of this service, not a floor
 * (docs/performance.md, "The floors"): the ratio says what the generic path costs beyond the
 * hand-written one, not what the service costs beyond the browser. Targets are reported, never
 * asserted. `BENCH=smoke`: a short run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchChromium } from '../browser/chromium.js';
import { median, ms, p95, table } from './stats.js';
import { machine, recordRun, sampled, type Figure } from './record.js';
import { buildSite, openReady, serveSite } from './site.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke ? { rounds: 8, batch: 10 } : { rounds: 30, batch: 20 };
const TARGET = 1.2;

type Path = 'generic' | 'hand';
const SHAPES = [
  {
    shape: 'create',
    generic: 'POST /persons/create (a SeededPerson)',
    hand: 'POST /anchors/create (a SeededAnchor)',
  },
  {
    shape: 'association',
    generic: 'POST /person/{id}/workstream_summaries/associate/{id}',
    hand: 'POST /anchor/{id}/conversations/associate/{id}',
  },
  { shape: 'read', generic: 'GET /person/{id}', hand: 'GET /anchor/{id}' },
] as const;
type Shape = (typeof SHAPES)[number]['shape'];

/**
 * Runs in the page: `count` creates, associations and reads of each path, phase by phase, the two
 * paths' requests alternating one by one (which goes first alternates), each request timed (ms).
 * The associations' other sides (workstream summaries, conversations) are created before their
 * phase, untimed; the reads read the records this batch created and associated.
 */
async function batch({ count, first }: { count: number; first: number }) {
  const base = 'http://localhost:1000';
  const post = async (url: string, body?: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method: 'POST',
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
    return text;
  };
  const get = async (url: string) => {
    const response = await fetch(`${base}${url}`);
    const text = await response.text();
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
    return text;
  };
  const w = window as unknown as { benchModel?: unknown };
  w.benchModel ??= ((await (await fetch(`${base}/models`)).json()) as { iterable: unknown[] }).iterable[0];
  type Path = 'generic' | 'hand';
  const times = {
    generic: { create: [] as number[], association: [] as number[], read: [] as number[] },
    hand: { create: [] as number[], association: [] as number[], read: [] as number[] },
  };
  const ids: Record<Path, string[]> = { generic: [], hand: [] };
  const others: Record<Path, string[]> = { generic: [], hand: [] };
  let bytes = { generic: 0, hand: 0 };
  /** Runs `work` for each path, alternating which goes first; times it into `into` when given. */
  const both = async (i: number, work: (path: Path) => Promise<void>) => {
    for (const path of (i + first) % 2 ? (['hand', 'generic'] as const) : (['generic', 'hand'] as const)) await work(path);
  };
  const timed = async (path: Path, shape: 'create' | 'association' | 'read', work: () => Promise<string>) => {
    const start = performance.now();
    const text = await work();
    times[path][shape].push(performance.now() - start);
    return text;
  };
  for (let i = 0; i < count; i++)
    await both(i, async (path) => {
      const text =
        path === 'generic'
          ? await timed(path, 'create', () =>
              post('/persons/create', { type: { basic: { name: `Person ${i}`, email: `person${i}@example.com` } } }),
            )
          : await timed(path, 'create', () =>
              post('/anchors/create', { type: 'FILE', fullpath: `/bench/file-${i}.ts`, name: `file-${i}.ts` }),
            );
      ids[path].push((JSON.parse(text) as { id: string }).id);
    });
  for (let i = 0; i < count; i++)
    await both(i, async (path) => {
      const text =
        path === 'generic'
          ? await post('/workstream_summaries/create', { name: `Summary ${i}`, model: w.benchModel })
          : await post('/conversations/create', { type: 'COPILOT', name: `Conversation ${i}` });
      others[path].push((JSON.parse(text) as { id: string }).id);
    });
  for (let i = 0; i < count; i++)
    await both(i, async (path) => {
      const url =
        path === 'generic'
          ? `/person/${ids.generic[i]}/workstream_summaries/associate/${others.generic[i]}`
          : `/anchor/${ids.hand[i]}/conversations/associate/${others.hand[i]}`;
      await timed(path, 'association', () => post(url));
    });
  for (let i = 0; i < count; i++)
    await both(i, async (path) => {
      const text = await timed(path, 'read', () => get(`${path === 'generic' ? '/person' : '/anchor'}/${ids[path][i]}`));
      bytes = { ...bytes, [path]: bytes[path] + text.length };
    });
  return { times, bytes: { generic: bytes.generic / count, hand: bytes.hand / count } };
}

const run = (page: Page, count: number, first: number) => page.evaluate(batch, { count, first });

it('benchmarks the generic path against the hand-written operations', { timeout: 30 * 60_000 }, async () => {
  const loadBefore = loadavg().map((l) => Number(l.toFixed(2)));
  const outDir = await buildSite('generic');
  const { server, origin } = await serveSite(outDir);
  const { context } = await launchChromium();
  const samples: Record<Path, Record<Shape, number[]>> = {
    generic: { create: [], association: [], read: [] },
    hand: { create: [], association: [], read: [] },
  };
  const bytes: Record<Path, number[]> = { generic: [], hand: [] };
  try {
    const page = await openReady(context, `${origin}/ours.html`);
    await run(page, 5, 0); // warm-up
    for (let round = 0; round < plan.rounds; round++) {
      const got = await run(page, plan.batch, round);
      for (const path of ['generic', 'hand'] as const) {
        for (const { shape } of SHAPES) samples[path][shape].push(...got.times[path][shape]);
        bytes[path].push(got.bytes[path]);
      }
    }
  } finally {
    await context.close();
    await server.close();
  }

  const ratio = (shape: Shape) => median(samples.generic[shape]) / median(samples.hand[shape]);
  const verdict = (r: number) => (smoke ? 'not judged (smoke run)' : r <= TARGET ? 'met' : '**missed**');
  const load = loadavg().map((l) => Number(l.toFixed(2)));
  const report = [
    `## The generic path against the hand-written operations (${smoke ? 'smoke run' : 'full run'})`,
    '',
    `Fast path, one request at a time, ${plan.rounds} rounds × ${plan.batch} of each per path, interleaved request by request. Load averages ${loadBefore.join(', ')} before, ${load.join(', ')} after. The hand-written operation is another path of this service, not a floor. Bodies read: person ${Math.round(median(bytes.generic))} B, anchor ${Math.round(median(bytes.hand))} B.`,
    '',
    table(
      ['shape', 'generic (median / p95)', 'hand-written (median / p95)', 'generic / hand-written', `target ≤ ${TARGET}×`],
      SHAPES.map(({ shape, generic, hand }) => [
        `${shape}: ${generic} against ${hand}`,
        `${ms(median(samples.generic[shape]))} / ${ms(p95(samples.generic[shape]))}`,
        `${ms(median(samples.hand[shape]))} / ${ms(p95(samples.hand[shape]))}`,
        `${ratio(shape).toFixed(2)}×`,
        verdict(ratio(shape)),
      ]),
    ),
  ].join('\n');
  mkdirSync(resolve(root, '.bench'), { recursive: true });
  writeFileSync(resolve(root, '.bench/generic.json'), JSON.stringify({ plan, loadBefore, load, samples, bytes }, null, 2));
  writeFileSync(resolve(root, '.bench/generic.md'), `${report}\n`);
  console.info(`\n${report}\n`);
  const figures: Figure[] = SHAPES.flatMap(({ shape, generic, hand }) => {
    const handFigure = sampled(`${shape}, hand-written: ${hand}`, samples.hand[shape]);
    return [
      handFigure,
      sampled(`${shape}, generic path: ${generic}`, samples.generic[shape], {
        against: { measure: handFigure.measure, median: handFigure.median },
        ratio: ratio(shape),
        target: `≤ ${TARGET}× the hand-written operation`,
        met: smoke ? null : ratio(shape) <= TARGET,
      }),
    ];
  });
  recordRun('generic', { plan, machine: machine({ loadavgBefore: loadBefore }), figures });
});
