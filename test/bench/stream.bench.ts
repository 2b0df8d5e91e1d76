/**
 * The copilot stream and the worker's start-up (part of `npm run bench`, `BENCH=smoke` for a short
 * run; alone: `npx vitest run --project bench test/bench/stream.bench.ts`),
 * in headless Chromium:
 *
 * 1. `/qgpt/stream` answered by a model behind an OpenAI-compatible endpoint (the fake one on
 *    127.0.0.1, `count`: N chunks, each its own network write) against the same endpoint called
 *    directly from the page, interleaved answer by answer: time to the first and to the last chunk,
 *    chunks per second over the answer; medians and p95. On the fast path and on the fetch path.
 * 2. Cold start: the first answer (`GET /applications`) after the worker was stopped, against a warm
 *    one, interleaved; the worker script's size, gzipped.
 *
 * `BENCH_PROFILE=1`: CPU profiles of the page and of the service worker over extra stream answers
 * (through the DevTools protocol of the worker's own target), written to .bench/ and summarised as
 * the functions with the most self time.
 *
 * Prints markdown tables and writes the figures to .bench/stream.json. Targets are reported, never asserted.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, stopAllWorkers } from '../browser/chromium.js';
import { startFakeOpenAi } from '../fake-openai.js';
import { freePort } from '../free-port.js';
import { median, ms, p95, quantile, table } from './stats.js';
import { machine, recordRun, type Figure } from './record.js';
import { buildSite, openReady, serveSite, timeReads } from './site.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const profile = !!process.env.BENCH_PROFILE;
const plan = smoke
  ? { repeats: 8, chunks: 200, coldRepeats: 3, profiled: 10 }
  : { repeats: 40, chunks: 200, coldRepeats: 15, profiled: 60 };
const BASE = 'http://localhost:1000';

interface Run {
  first: number;
  last: number;
  count: number;
  /** The answer's text, as received (checked whole: no chunk lost, doubled or reordered). */
  text: number;
}

/**
 * Runs in the page: `repeats` answers through /qgpt/stream and as many straight from the endpoint,
 * interleaved (which goes first alternates); `only`: just stream answers (for a profile).
 */
async function streamRuns({ baseUrl, chunks, repeats, only }: { baseUrl: string; chunks: number; repeats: number; only?: 'stream' }) {
  const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const viaStream = (request: string) =>
    new Promise<Run>((resolve, reject) => {
      let first = 0;
      let last = 0;
      let count = 0;
      let text = 0;
      const start = performance.now();
      socket.onmessage = (event) => {
        const frame = JSON.parse(event.data as string) as {
          request: string;
          status: string;
          errorMessage?: string;
          question?: { answers: { iterable: Array<{ text: string }> } };
        };
        if (frame.request !== request) return;
        if (frame.status === 'IN-PROGRESS') {
          last = performance.now() - start;
          if (count++ === 0) first = last;
          text += frame.question?.answers.iterable[0]?.text.length ?? 0;
        } else if (frame.status === 'COMPLETED') resolve({ first, last, count, text });
        else reject(new Error(`${frame.status}: ${frame.errorMessage}`));
      };
      socket.send(JSON.stringify({ request, question: { query: 'count', relevant: { iterable: [] } } }));
    });
  const direct = async (): Promise<Run> => {
    const start = performance.now();
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'count', stream: true, max_tokens: chunks, messages: [{ role: 'user', content: 'count' }] }),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let first = 0;
    let last = 0;
    let count = 0;
    let text = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      const events = buffer.split('\n\n');
      buffer = events.pop()!;
      for (const event of events) {
        const data = event.replace(/^data: /, '');
        if (data === '[DONE]') continue;
        const content = (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content;
        if (!content) continue;
        last = performance.now() - start;
        if (count++ === 0) first = last;
        text += content.length;
      }
    }
    return { first, last, count, text };
  };
  const results: { stream: Run[]; direct: Run[] } = { stream: [], direct: [] };
  await viaStream('warm-up');
  await direct();
  for (let i = 0; i < repeats; i++) {
    if (only) results.stream.push(await viaStream(`p${i}`));
    else if (i % 2) {
      results.direct.push(await direct());
      results.stream.push(await viaStream(`r${i}`));
    } else {
      results.stream.push(await viaStream(`r${i}`));
      results.direct.push(await direct());
    }
  }
  socket.close();
  return results;
}

function summary(list: Run[], chunks: number) {
  if (list.some((r) => r.count !== chunks || r.text !== chunks * chunks)) {
    throw new Error(`expected ${chunks} chunks of ${chunks} characters, got ${list.map((r) => `${r.count}/${r.text}`)}`);
  }
  const last = list.map((r) => r.last);
  const first = list.map((r) => r.first);
  const rate = list.map((r) => (r.count / r.last) * 1000);
  return {
    first: median(first),
    firstP95: p95(first),
    last: median(last),
    lastP95: p95(last),
    rate: median(rate),
    rateP95: p95(rate),
    n: list.length,
  };
}

type Summary = ReturnType<typeof summary>;
interface Figures {
  stream: Summary;
  direct: Summary;
  /** Median over the pairs (an answer through /qgpt/stream, the direct one next to it) of direct / stream time to the last chunk. */
  paired: number;
  pairedP5: number;
  /** Medians over the pairs of stream − direct: time to the first chunk, and from the first chunk to the last. */
  firstGap: number;
  restGap: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The functions with the most self time in a CPU profile: name (file:line:column), ms and share. */
function topSelf(cpu: CpuProfile, count = 18): Array<[string, string, string]> {
  const byId = new Map(cpu.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  cpu.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const file = frame.url.split('/').pop() || '';
    const key = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
    const dt = (cpu.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, t]) => [key.replace(/\|/g, '\\|'), ms(t), `${((t / total) * 100).toFixed(1)} %`]);
}

/** A raw DevTools protocol connection (to the service worker's own target). */
async function devtools(url: string) {
  const socket = new NodeWebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let next = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  return {
    send: <T>(method: string, params: object = {}) =>
      new Promise<T>((resolve) => {
        const id = ++next;
        waiting.set(id, resolve as (result: unknown) => void);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

it('copilot stream against its endpoint called directly; cold start and size', async () => {
  const outDir = await buildSite('stream');
  const { server, origin } = await serveSite(outDir);
  const fake = await startFakeOpenAi();
  const profileDir = mkdtempSync(join(tmpdir(), 'pieces-stream-chromium-'));
  const port = profile ? await freePort() : 0;
  // The DevTools port (for a profile) reaches the service worker's own target, which playwright does not expose.
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath(),
    headless: true,
    args: [...CHROMIUM_ARGS, ...(profile ? [`--remote-debugging-port=${port}`] : [])],
  });
  const results: Record<string, unknown> = {
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
  try {
    const pages = {
      fast: await openReady(context, `${origin}/ours.html`),
      fetch: await openReady(context, `${origin}/ours.html?fastPath=0`),
    };
    await pages.fast.evaluate(
      ({ baseUrl, chunks }) =>
        (window as unknown as { pieces: { setModel(m: object): Promise<string> } }).pieces.setModel({
          type: 'openai',
          baseUrl,
          model: 'count',
          maxTokens: chunks,
        }),
      { baseUrl: fake.baseUrl, chunks: plan.chunks },
    );
    const stream: Record<string, Figures> = {};
    for (const [path, page] of Object.entries(pages)) {
      const runs = await page.evaluate(streamRuns, { baseUrl: fake.baseUrl, chunks: plan.chunks, repeats: plan.repeats });
      // Each answer against the direct one next to it (the machine's load moves both alike).
      const paired = runs.stream.map((r, i) => runs.direct[i]!.last / r.last);
      stream[path] = {
        stream: summary(runs.stream, plan.chunks),
        direct: summary(runs.direct, plan.chunks),
        paired: median(paired),
        pairedP5: quantile(paired, 0.05),
        // Where the difference is: before the first chunk (the request reaching the model through the
        // worker), or after it (each chunk's extra hop through the worker).
        firstGap: median(runs.stream.map((r, i) => r.first - runs.direct[i]!.first)),
        restGap: median(runs.stream.map((r, i) => r.last - r.first - (runs.direct[i]!.last - runs.direct[i]!.first))),
      };
    }
    results.stream = stream;

    if (profile) {
      const out = resolve(root, '.bench');
      mkdirSync(out, { recursive: true });
      const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
        type: string;
        url: string;
        webSocketDebuggerUrl: string;
      }>;
      const target = targets.find((t) => t.type === 'service_worker' && t.url.endsWith('/pieces-os-worker.js'));
      if (!target) throw new Error(`no service worker target among ${targets.map((t) => `${t.type} ${t.url}`)}`);
      const worker = await devtools(target.webSocketDebuggerUrl);
      const page = await context.newCDPSession(pages.fast);
      const sends = [
        (method: string, params?: object) => worker.send(method, params),
        (method: string, params?: object) => page.send(method as 'Profiler.enable', params),
      ];
      for (const send of sends) {
        await send('Profiler.enable');
        await send('Profiler.setSamplingInterval', { interval: 50 });
        await send('Profiler.start');
      }
      await pages.fast.evaluate(streamRuns, {
        baseUrl: fake.baseUrl,
        chunks: plan.chunks,
        repeats: plan.profiled,
        only: 'stream' as const,
      });
      const profiles: Record<string, CpuProfile> = {};
      profiles.worker = (await worker.send<{ profile: CpuProfile }>('Profiler.stop')).profile;
      profiles.page = ((await page.send('Profiler.stop')) as { profile: CpuProfile }).profile;
      worker.close();
      for (const [name, cpu] of Object.entries(profiles)) {
        writeFileSync(join(out, `stream-${name}.cpuprofile`), JSON.stringify(cpu));
        console.log(
          `\nSelf time in the ${name} over ${plan.profiled} answers of ${plan.chunks} chunks (.bench/stream-${name}.cpuprofile):\n`,
        );
        console.log(table(['function', 'self', 'share'], topSelf(cpu)));
      }
    }

    // Cold start against warm, interleaved.
    const warm: number[] = [];
    const cold: number[] = [];
    for (let i = 0; i < plan.coldRepeats; i++) {
      warm.push(...(await timeReads(pages.fast, `${BASE}/applications`, 3)).slice(-1));
      await stopAllWorkers(context);
      await new Promise((r) => setTimeout(r, 200));
      cold.push(...(await timeReads(pages.fast, `${BASE}/applications`, 1)));
    }
    results.cold = {
      warm: median(warm),
      warmP95: p95(warm),
      cold: median(cold),
      coldP95: p95(cold),
      beyondWarm: median(cold) - median(warm),
      n: cold.length,
    };
    const script = readFileSync(join(outDir, 'pieces-os-worker.js'));
    results.size = { worker: script.byteLength, workerGzip: gzipSync(script, { level: 9 }).byteLength };
  } finally {
    await context.close();
    await fake.close();
    await server.close();
  }

  const s = results.stream as Record<string, Figures>;
  const c = results.cold as { warm: number; warmP95: number; cold: number; coldP95: number; beyondWarm: number; n: number };
  const size = results.size as { worker: number; workerGzip: number };
  const rows = Object.entries(s).flatMap(([path, { stream, direct }]) => [
    [
      `${path} path: time to first chunk (median / p95)`,
      `${ms(stream.first)} / ${ms(stream.firstP95)}`,
      `${ms(direct.first)} / ${ms(direct.firstP95)}`,
      (direct.first / stream.first).toFixed(2),
    ],
    [
      `${path} path: time to last chunk (median / p95)`,
      `${ms(stream.last)} / ${ms(stream.lastP95)}`,
      `${ms(direct.last)} / ${ms(direct.lastP95)}`,
      (direct.last / stream.last).toFixed(2),
    ],
    [`${path} path: chunks per second (median)`, stream.rate.toFixed(0), direct.rate.toFixed(0), (stream.rate / direct.rate).toFixed(2)],
    [
      `${path} path: direct / stream time to last chunk, answer by answer (median / 5th percentile)`,
      '',
      '',
      `${s[path]!.paired.toFixed(2)} / ${s[path]!.pairedP5.toFixed(2)}`,
    ],
    [
      `${path} path: stream − direct, answer by answer (median): to the first chunk / first to last`,
      ms(s[path]!.firstGap),
      ms(s[path]!.restGap),
      '',
    ],
  ]);
  const fast = s.fast!;
  console.log(
    [
      '',
      `Copilot stream: ${plan.chunks} chunks per answer, /qgpt/stream against the endpoint called directly, interleaved (n = ${fast.stream.n} each); load average ${results.load}.`,
      '',
      table(['figure', '/qgpt/stream', 'direct', 'ratio (≥ 0.9 is the target)'], rows),
      '',
      table(
        ['start-up and size', 'figure'],
        [
          [
            'first answer after the worker stopped / warm (median)',
            `${ms(c.cold)} / ${ms(c.warm)} (p95 ${ms(c.coldP95)} / ${ms(c.warmP95)}, n = ${c.n})`,
          ],
          ['cold beyond warm (target ≤ 50 ms)', ms(c.beyondWarm)],
          ['worker script (raw / gzipped)', `${(size.worker / 1024).toFixed(1)} KB / ${(size.workerGzip / 1024).toFixed(1)} KB`],
        ],
      ),
      '',
      table(
        ['target', 'status'],
        [
          ['/qgpt/stream ≥ 0.9× direct, time to last chunk (fast path)', direct(fast, 'last')],
          ['/qgpt/stream ≥ 0.9× direct, chunks per second (fast path)', fast.stream.rate / fast.direct.rate >= 0.9 ? 'met' : 'missed'],
          ['cold start ≤ 50 ms beyond warm', c.beyondWarm <= 50 ? 'met' : 'missed'],
        ],
      ),
    ].join('\n'),
  );
  const out = resolve(root, '.bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'stream.json'), JSON.stringify({ plan, ...results }, null, 2));
  const figures: Figure[] = Object.entries(s).flatMap(([path, { stream, direct: straight }]): Figure[] => [
    {
      measure: `/qgpt/stream, ${path} path: chunks per second`,
      unit: 'per second',
      median: stream.rate,
      n: stream.n,
      floor: { measure: 'the model endpoint called directly', median: straight.rate },
      ratio: stream.rate / straight.rate,
      ...(path === 'fast' ? { target: '≥ 0.9×', met: stream.rate / straight.rate >= 0.9 } : {}),
    },
    {
      measure: `/qgpt/stream, ${path} path: time to last chunk`,
      unit: 'ms',
      median: stream.last,
      p95: stream.lastP95,
      n: stream.n,
      floor: { measure: 'direct', median: straight.last },
      ratio: stream.last / straight.last,
      ...(path === 'fast' ? { target: 'direct/ours ≥ 0.9', met: straight.last / stream.last >= 0.9 } : {}),
    },
    {
      measure: `/qgpt/stream, ${path} path: time to first chunk`,
      unit: 'ms',
      median: stream.first,
      p95: stream.firstP95,
      n: stream.n,
      floor: { measure: 'direct', median: straight.first },
      ratio: stream.first / straight.first,
    },
  ]);
  figures.push(
    {
      measure: 'first answer after the worker stopped',
      unit: 'ms',
      median: c.cold,
      p95: c.coldP95,
      n: c.n,
      floor: { measure: 'warm', median: c.warm },
      target: '≤ 50 ms beyond warm',
      met: c.beyondWarm <= 50,
    },
    { measure: 'worker script, gzipped', unit: 'KB', median: size.workerGzip / 1024 },
  );
  recordRun('stream', { plan, machine: machine({ load: results.load }), figures });
});

function direct(figures: Figures, key: 'last'): string {
  return figures.direct[key] / figures.stream[key] >= 0.9 ? 'met' : 'missed';
}
