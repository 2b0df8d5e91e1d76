// @vitest-environment node
/**
 * Probing a mirrored Pieces OS that is away: `/.well-known/health` only when something needs
 * it (a request, a queued write, an open socket), one probe at a time, the wait doubling from
 * 1 s to 30 s, at most 2 a minute when only a socket needs it; none when nothing does.
 * On a fake clock, against an upstream that never answers (its probes counted).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import type { MirrorOptions } from '../../../src/core/options.js';
import { localChannel } from '../../../src/host/channel.js';
import { createHost, type Host } from '../../../src/host/create-host.js';
import { PROBE_IDLE_MS } from '../../../src/host/mirror/mirror.js';
import { memoryStorage } from '../../../src/storage/memory.js';

const BASE = 'http://localhost:1000';
const UPSTREAM = 'http://127.0.0.1:9';

let host: Host;
let probes: number[];
let inFlight: number;
let most: number;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  probes = [];
  inFlight = 0;
  most = 0;
  host = start({ upstream: UPSTREAM });
});
afterEach(() => {
  host.close();
  vi.useRealTimers();
});

/** A host mirroring `mirror` over an upstream that never answers. */
function start(mirror: MirrorOptions): Host {
  return createHost({
    open: (_hooks, initialData) => memoryStorage({ initialData }),
    channel: localChannel(),
    settings: { sampleAssets: false, mirror },
    upstream: {
      lock: 'alone',
      // Refused after 50 ms (a dead port), each probe counted with the time it began.
      fetch: (input) => {
        if (String(input).endsWith('/.well-known/health')) probes.push(Date.now());
        inFlight++;
        most = Math.max(most, inFlight);
        return new Promise((_, reject) =>
          setTimeout(() => {
            inFlight--;
            reject(new TypeError('fetch failed'));
          }, 50),
        );
      },
    },
  });
}

/** Lets the fake clock run `ms`, in steps, so that IndexedDB (on real immediates) keeps up. */
async function run(ms: number, step = 250) {
  for (let t = 0; t < ms; t += step) {
    await vi.advanceTimersByTimeAsync(step);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}

const request = (path = '/conversations', init?: RequestInit) => host.service.handle(new Request(BASE + path, init));
const status = () => host.service.mirrorStatus() as Promise<MirrorStatus>;
const within = (from: number, to: number) => probes.filter((t) => t >= from && t < to).length;

it('probes once at start, then never while nothing needs the upstream', async () => {
  await run(1_000);
  expect(probes).toHaveLength(1);
  expect((await status()).state).toBe('down');
  await run(5 * 60_000, 5_000);
  expect(probes).toHaveLength(1);
});

it('while requests need it: the wait doubles from 1 s to 30 s, one probe at a time; requests are answered here meanwhile', async () => {
  // Requests start right after the first probe failed.
  while (probes.length === 0) await run(50, 50);
  await run(100, 50);
  const start = Date.now();
  // A request every second for three minutes, each answered here within the step (not after a probe).
  for (let t = 0; t < 180_000; t += 1_000) {
    let answered: Response | undefined;
    void request().then((response) => (answered = response));
    await run(250);
    expect(answered?.status).toBe(200);
    await run(750);
  }
  const gaps = probes.slice(1).map((t, i) => Math.round((t - probes[i]!) / 1000));
  // 1, 2, 4, 8, 16, then 30 s (each measured from the start of the probe before).
  expect(gaps.slice(0, 5)).toEqual([1, 2, 4, 8, 16]);
  expect(gaps.slice(5).every((gap) => gap === 30)).toBe(true);
  expect(most).toBe(1);
  expect(within(start + 60_000, start + 180_000)).toBeLessThanOrEqual(4 + 1);
});

it('retryMaxMs caps the wait: 1 s doubling up to it, then every retryMaxMs; a value under 1 s is refused', async () => {
  host.close();
  probes = [];
  host = start({ upstream: UPSTREAM, retryMaxMs: 4_000 });
  while (probes.length === 0) await run(50, 50);
  await run(100, 50);
  for (let t = 0; t < 40_000; t += 1_000) {
    void request();
    await run(1_000);
  }
  const gaps = probes.slice(1).map((t, i) => Math.round((t - probes[i]!) / 1000));
  expect(gaps.slice(0, 3)).toEqual([1, 2, 4]);
  expect(gaps.length).toBeGreaterThan(6);
  expect(gaps.slice(3).every((gap) => gap === 4)).toBe(true);
  expect(() => start({ upstream: UPSTREAM, retryMaxMs: 10 })).toThrow(
    'mirror.retryMaxMs must be a number of milliseconds, 1000 or more, not 10.',
  );
});

it('while only an open socket needs it: at most 2 probes a minute', async () => {
  await run(2_000);
  const start = Date.now();
  // A stream socket checks in every 3 s (its handshake and catch-ups), nothing else happens.
  for (let t = 0; t < 180_000; t += 3_000) {
    await request('/conversations/stream/identifiers', { headers: { 'x-pieces-stream': 'handshake' } });
    await run(3_000, 1_000);
  }
  for (let minute = 0; minute < 3; minute++) expect(within(start + minute * 60_000, start + (minute + 1) * 60_000)).toBeLessThanOrEqual(2);
  expect(probes.length).toBeGreaterThanOrEqual(1 + 180_000 / PROBE_IDLE_MS - 1);
  expect(most).toBe(1);
});

it('while writes are queued: probes continue with the backoff, without requests', async () => {
  await run(2_000);
  const created = request('/conversations/create', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ type: 'COPILOT' }),
  });
  await run(500);
  expect((await created).status).toBe(200);
  expect((await status()).outbox).toHaveLength(1);
  const before = probes.length;
  await run(120_000, 1_000);
  // 1+2+4+8+16+30+30+30 s: 8 probes in two minutes, then 2 a minute.
  expect(probes.length - before).toBeGreaterThanOrEqual(6);
  expect(probes.length - before).toBeLessThanOrEqual(9);
  expect(most).toBe(1);
});
