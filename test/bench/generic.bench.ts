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
 * Rounds of batches, generic and hand-written alternating (which goes first alternates), each
 * request timed in the page to the last byte of its answer; medians and the ratio of medians. The
 * hand-written operation is another path of this service, not a floor (docs/performance.md, "The
 * floors"): the ratio says what the generic path costs beyond the hand-written one, not what the
 * service costs beyond the browser. Targets are reported, never asserted. `BENCH=smoke`: a short run.
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
const plan = smoke ? { rounds: 4, batch: 10 } : { rounds: 30, batch: 20 };
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
 * Runs in the page: `count` of one path's create, association and read, each phase timed request by
 * request (ms). The association's other sides (workstream summaries, conversations) are created
 * before its phase, untimed; the reads read the records this batch created and associated.
 */
async function batch({ path, count }: { path: 'generic' | 'hand'; count: number }): Promise<Record<Shape, number[]> & { bytes: number }> {
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
  const timed = async <T>(work: () => Promise<T>, into: number[]): Promise<T> => {
    const start = performance.now();
    const result = await work();
    into.push(performance.now() - start);
    return result;
  };
  const w = window as unknown as { benchModel?: unknown };
  w.benchModel ??= ((await (await fetch(`${base}/models`)).json()) as { iterable: unknown[] }).iterable[0];
  const times: Record<Shape, number[]> = { create: [], association: [], read: [] };
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const seed =
      path === 'generic'
        ? { type: { basic: { name: `Person ${i}`, email: `person${i}@example.com` } } }
        : { type: 'FILE', fullpath: `/bench/file-${i}.ts`, name: `file-${i}.ts` };
    const text = await timed(() => post(path === 'generic' ? '/persons/create' : '/anchors/create', seed), times.create);
    ids.push((JSON.parse(text) as { id: string }).id);
  }
  const others: string[] = [];
  for (let i = 0; i < count; i++) {
    const text =
      path === 'generic'
        ? await post('/workstream_summaries/create', { name: `Summary ${i}`, model: w.benchModel })
        : await post('/conversations/create', { type: 'COPILOT', name: `Conversation ${i}` });
    others.push((JSON.parse(text) as { id: string }).id);
  }
  for (let i = 0; i < count; i++) {
    const url =
      path === 'generic'
        ? `/person/${ids[i]}/workstream_summaries/associate/${others[i]}`
        : `/anchor/${ids[i]}/conversations/associate/${others[i]}`;
    await timed(() => post(url), times.association);
  }
  let bytes = 0;
  for (const id of ids) {
    const text = await timed(async () => {
      const response = await fetch(`${base}${path === 'generic' ? '/person' : '/anchor'}/${id}`);
      if (!response.ok) throw new Error(`read answered ${response.status}`);
      return response.text();
    }, times.read);
    bytes += text.length;
  }
  return { ...times, bytes: bytes / ids.length };
}

const run = (page: Page, path: Path, count: number) => page.evaluate(batch, { path, count });

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
    for (const path of ['generic', 'hand'] as const) await run(page, path, 5); // warm-up
    for (let round = 0; round < plan.rounds; round++) {
      for (const path of round % 2 ? (['hand', 'generic'] as const) : (['generic', 'hand'] as const)) {
        const got = await run(page, path, plan.batch);
        for (const { shape } of SHAPES) samples[path][shape].push(...got[shape]);
        bytes[path].push(got.bytes);
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
    `Fast path, one request at a time, ${plan.rounds} rounds × ${plan.batch} of each per path, interleaved. Load averages ${loadBefore.join(', ')} before, ${load.join(', ')} after. The hand-written operation is another path of this service, not a floor. Bodies read: person ${Math.round(median(bytes.generic))} B, anchor ${Math.round(median(bytes.hand))} B.`,
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
