/**
 * `BENCH_PROFILE=creates|stream npm run bench -- profile`: where the time goes, by CPU profiles
 * (CDP Profiler) of the page and the worker over sequential creates or copilot streams: self
 * time by function, per thread. Not part of a normal run (skipped without BENCH_PROFILE).
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { it } from 'vitest';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { launchChromium } from '../browser/chromium.js';
import { startFakeOpenAi } from '../fake-openai.js';
import { createRate, createTemplate } from './creates.js';
import { buildSite, openReady, serveSite } from './site.js';

const root = resolve(import.meta.dirname, '../..');
const what = process.env.BENCH_PROFILE;

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function selfTimes(profile: Profile, top = 30) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const f = node.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  });
  const total = (profile.endTime - profile.startTime) / 1000;
  const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((n, [, v]) => n + v, 0);
  return { total, idle, top: [...self].sort((a, b) => b[1] - a[1]).slice(0, top) };
}

async function workerSession(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  const { targetInfos } = await cdp.send('Target.getTargets');
  const worker = targetInfos.find((t) => t.type === 'service_worker' && t.url.includes('pieces-os-worker'));
  if (!worker) throw new Error('no worker');
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
  const replies = new Map<number, (result: any) => void>();
  let n = 0;
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message) as { id?: number; result?: unknown };
    if (message.id !== undefined) replies.get(message.id)?.(message.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = ++n;
      replies.set(id, resolve);
      void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  return { send };
}

it.skipIf(!what)('profiles', { timeout: 10 * 60_000 }, async () => {
  const outDir = await buildSite('profile', { minify: false });
  const { server, origin } = await serveSite(outDir);
  const { context } = await launchChromium();
  const fake = await startFakeOpenAi();
  try {
    const page = await openReady(context, `${origin}/ours.html`);
    const template = what === 'creates' ? await page.evaluate(createTemplate) : undefined;
    const interval = Number(process.env.BENCH_PROFILE_INTERVAL ?? 200);
    const run = async (count: number, raw = false): Promise<number> => {
      if (what === 'creates')
        return page.evaluate(createRate, { count, inFlight: Number(process.env.BENCH_PROFILE_IN_FLIGHT ?? 1), raw, template });
      return page.evaluate(async (count) => {
        const socket = new WebSocket('ws://localhost:1000/qgpt/stream');
        await new Promise((resolve) => (socket.onopen = resolve));
        const times: number[] = [];
        for (let i = 0; i < count; i++) {
          const start = performance.now();
          await new Promise<void>((resolve) => {
            socket.onmessage = (event) => {
              const frame = JSON.parse(event.data) as { status: string };
              if (frame.status === 'COMPLETED') resolve();
            };
            socket.send(JSON.stringify({ request: `p${i}`, question: { query: 'count', relevant: { iterable: [] } } }));
          });
          times.push(performance.now() - start);
        }
        socket.close();
        times.sort((a, b) => a - b);
        return times[times.length >> 1]!;
      }, count);
    };
    if (what === 'stream') {
      await page.evaluate(
        (baseUrl) => (window as any).pieces.setModel({ type: 'openai', baseUrl, model: 'count', maxTokens: 200 }),
        fake.baseUrl,
      );
    }
    await run(20);
    if (what === 'creates') await run(20, true);
    const pageCdp: CDPSession = await context.newCDPSession(page);
    const worker = await workerSession(context, page);
    await pageCdp.send('Profiler.enable');
    await pageCdp.send('Profiler.setSamplingInterval', { interval });
    await worker.send('Profiler.enable');
    await worker.send('Profiler.setSamplingInterval', { interval });
    const count = what === 'creates' ? 400 : 30;
    const lines: string[] = [];
    const profiled = async (label: string, raw: boolean) => {
      await pageCdp.send('Profiler.start');
      await worker.send('Profiler.start');
      const each = await run(count, raw);
      const pageProfile = (await pageCdp.send('Profiler.stop')).profile as unknown as Profile;
      const workerProfile = (await worker.send('Profiler.stop')).profile as Profile;
      lines.push(
        `${label}: ${count} ${what === 'creates' ? 'creates' : 'answers'}, ${each.toFixed(2)} ms each (${what === 'creates' ? 'mean' : 'median'}, under the profiler)`,
      );
      for (const [name, profile] of [
        ['page', pageProfile],
        ['worker', workerProfile],
      ] as const) {
        const { total, idle, top } = selfTimes(profile);
        lines.push(
          `\n${name}: ${total.toFixed(0)} ms profiled, busy ${(total - idle).toFixed(0)} ms (${((total - idle) / count).toFixed(3)} ms each)`,
        );
        for (const [key, ms] of top) lines.push(`  ${(ms / count).toFixed(4)} ms  ${key}`);
        writeFileSync(resolve(root, `.bench/profile-${what}-${label}-${name}.cpuprofile`), JSON.stringify(profile));
      }
      lines.push('');
    };
    mkdirSync(resolve(root, '.bench'), { recursive: true });
    if (process.env.BENCH_PROFILE_EACH) {
      // The time of each create of a batch that follows a batch of the raw floor.
      await run(50, true);
      const each = await page.evaluate(async () => {
        const times: number[] = [];
        const text = (m: number, i: number) => `message ${m} of conversation ${i}: ${'lorem ipsum '.repeat(8)}`;
        for (let i = 0; i < 50; i++) {
          const start = performance.now();
          const body = JSON.stringify({
            type: 'COPILOT',
            name: `rate ${i}`,
            messages: Array.from({ length: 5 }, (_, m) => ({
              role: m % 2 ? 'ASSISTANT' : 'USER',
              fragment: { string: { raw: text(m, i) } },
            })),
          });
          await (
            await fetch('http://localhost:1000/conversations/create', {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body,
            })
          ).arrayBuffer();
          times.push(performance.now() - start);
        }
        return times;
      });
      lines.push(`each create of a batch after a raw batch (ms): ${each.map((t) => t.toFixed(1)).join(' ')}`, '');
    }
    await profiled('ours', false);
    if (what === 'creates') await profiled('raw', true);
    writeFileSync(resolve(root, `.bench/profile-${what}.txt`), `${lines.join('\n')}\n`);
    console.info(lines.join('\n'));
  } finally {
    await fake.close();
    await context.close();
    await server.close();
  }
});
