/**
 * `npm run bench`: this project against an empty service worker (the floor)
 * and MSW in headless Chromium, in one run, interleaved; then scale, stream
 * latency, cold start and size. Prints a markdown table; writes the raw
 * figures and a chart to .bench/, and its figures to the run's file in bench/results/
 * (record.ts). `BENCH=smoke` runs a short version.
 *
 * Targets are reported as met or missed; they are never test assertions.
 */
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { build } from 'vite';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, stopAllWorkers } from '../browser/chromium.js';
import { barChart, median, ms, p95, table } from './stats.js';
import { buildSite, openReady, serveSite, timeReads } from './site.js';
import { benchCopilot } from './copilot.js';
import { createRate, createTemplate } from './creates.js';
import { recordRun, type Figure } from './record.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke
  ? {
      rounds: 4,
      batch: 25,
      sizes: [100],
      snapshotRepeats: 3,
      coldSnapshots: 1,
      streamWrites: 20,
      coldRepeats: 3,
      durabilityWrites: 40,
      copilot: { assets: 1_000, relevanceRepeats: 12, coldRelevance: 2, streamRepeats: 4, chunks: 100 },
      createRounds: 2,
      createBatch: 20,
    }
  : {
      rounds: 30,
      batch: 50,
      sizes: [100, 1_000, 10_000],
      snapshotRepeats: 7,
      coldSnapshots: 9,
      streamWrites: 200,
      coldRepeats: 10,
      durabilityWrites: 400,
      copilot: { assets: 10_000, relevanceRepeats: 60, coldRelevance: 7, streamRepeats: 20, chunks: 200 },
      createRounds: 12,
      createBatch: 50,
    };

/**
 * `BENCH_ONLY=creates,snapshots` runs only those sections (for development; a recorded run runs
 * them all): small, snapshots, creates, stream, copilot, cold, durability, size.
 */
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const want = (section: string) => !only || only.has(section);

// `BENCH_SIZES=10000`: the snapshot sizes to measure (for development).
if (process.env.BENCH_SIZES) plan.sizes = process.env.BENCH_SIZES.split(',').map(Number);

const BASE = 'http://localhost:1000';
const SMALL_PATHS = ['/applications', '/conversations/identifiers'];

async function buildPages(): Promise<string> {
  const outDir = await buildSite('run', {
    pages: ['floor', 'ours', 'msw'],
    files: {
      'mockServiceWorker.js': resolve(root, 'node_modules/msw/lib/mockServiceWorker.js'),
      'floor-sw.js': resolve(import.meta.dirname, 'floor-sw.js'),
    },
  });
  // The same page under /off/: controlled by a second registration of the same script on the
  // same origin (scope /off/), which writes each create alone, on the same database.
  mkdirSync(join(outDir, 'off'));
  copyFileSync(join(outDir, 'ours.html'), join(outDir, 'off', 'ours.html'));
  return outDir;
}

/**
 * Runs in the page: opens a new connection to the service's database and reads
 * what a cold snapshot reads (conversations by sequence, and all messages when
 * `withMessages`); returns the time in ms.
 */
async function rawRead(withMessages: boolean): Promise<number> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const start = performance.now();
  const db = await request(indexedDB.open('pieces-os-worker'));
  const tx = db.transaction(withMessages ? ['conversations', 'messages'] : ['conversations']);
  await Promise.all([
    request(tx.objectStore('conversations').index('by-seq').getAll()),
    withMessages ? request(tx.objectStore('messages').getAll()) : undefined,
  ]);
  const elapsed = performance.now() - start;
  db.close();
  return elapsed;
}

/** Creates `count` conversations with 5 messages each, 16 in flight; returns the wall time in ms. */
const createMany = (page: Page, count: number) =>
  page.evaluate(async (count) => {
    const body = (i: number) =>
      JSON.stringify({
        type: 'COPILOT',
        name: `bench ${i}`,
        messages: Array.from({ length: 5 }, (_, m) => ({
          role: m % 2 ? 'ASSISTANT' : 'USER',
          fragment: { string: { raw: `message ${m} of conversation ${i}: ${'lorem ipsum '.repeat(8)}` } },
        })),
      });
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) {
          const i = next++;
          const response = await fetch('http://localhost:1000/conversations/create?transferables=false', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: body(i),
          });
          if (!response.ok) throw new Error(`create answered ${response.status}`);
          await response.arrayBuffer();
        }
      }),
    );
    return performance.now() - start;
  }, count);

const CREATE_URL = 'http://localhost:1000/conversations/create';

/** Runs in the page: ms per small read of the applications store on an open connection (raw IndexedDB). */
async function rawSmallReads(count: number): Promise<number[]> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const db = await request(indexedDB.open('pieces-os-worker'));
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await request(db.transaction('applications').objectStore('applications').getAll());
    times.push(performance.now() - start);
  }
  db.close();
  return times;
}

/**
 * Runs in the floor's page: stores `bytes` (a snapshot's wire bytes) in a database of its
 * origin as ONE Blob (the fewest records and files the platform needs), for the floor worker
 * to answer (`/__wire/<name>`); returns the name.
 */
async function storeWire(bytes: string): Promise<string> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const name = `bench-wire-${bytes.length}`;
  await request(indexedDB.deleteDatabase(name));
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore('wire');
  const db = await request(open);
  const tx = db.transaction('wire', 'readwrite');
  tx.objectStore('wire').put(new Blob([bytes]), 0);
  await new Promise((resolve) => (tx.oncomplete = resolve));
  db.close();
  return name;
}

/**
 * The worker's JavaScript heap after a garbage collection, in bytes, read over
 * CDP (Runtime.getHeapUsage in the service worker's target).
 */
async function workerHeap(context: BrowserContext, page: Page): Promise<number> {
  const cdp = await context.newCDPSession(page);
  try {
    const { targetInfos } = await cdp.send('Target.getTargets');
    const worker = targetInfos.find(
      (t) => t.type === 'service_worker' && t.url.includes('pieces-os-worker') && !t.url.includes('groupCommit=0'),
    );
    if (!worker) throw new Error('no running pieces-os-worker');
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
    const replies = new Map<number, (result: any) => void>();
    cdp.on('Target.receivedMessageFromTarget', (event) => {
      const message = JSON.parse(event.message) as { id?: number; result?: unknown };
      if (message.id !== undefined) replies.get(message.id)?.(message.result);
    });
    const send = (id: number, method: string) =>
      new Promise<any>((resolve) => {
        replies.set(id, resolve);
        void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method }) });
      });
    await send(1, 'HeapProfiler.collectGarbage');
    const { usedSize } = (await send(2, 'Runtime.getHeapUsage')) as { usedSize: number };
    await cdp.send('Target.detachFromTarget', { sessionId });
    return usedSize;
  } finally {
    await cdp.detach();
  }
}

/**
 * Runs in the page: `count` transactions shaped like a create (a change, a
 * conversation, five messages) on a database of its own, alternating the
 * default durability and `strict` in batches of 20; ms per transaction each.
 */
async function durabilityCost(count: number): Promise<{ default: number[]; strict: number[] }> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const open = indexedDB.open(`durability-${Date.now()}`, 1);
  open.onupgradeneeded = () => {
    const db = open.result;
    db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
    db.createObjectStore('conversations', { keyPath: 'id' }).createIndex('by-seq', 'seq', { unique: true });
    db.createObjectStore('messages', { keyPath: 'id' }).createIndex('by-conversation', 'conversation');
  };
  const db = await request(open);
  const times = { default: [] as number[], strict: [] as number[] };
  const text = 'lorem ipsum '.repeat(8);
  for (let i = 0; i < count; i++) {
    const durability = Math.floor(i / 20) % 2 ? 'strict' : 'default';
    const id = crypto.randomUUID();
    const start = performance.now();
    const tx = db.transaction(['changes', 'conversations', 'messages'], 'readwrite', { durability });
    const seq = await request(tx.objectStore('changes').add({ conversation: id }));
    tx.objectStore('conversations').add({ id, seq, json: JSON.stringify({ id, type: 'COPILOT' }), messageIds: [] });
    for (let m = 0; m < 5; m++)
      tx.objectStore('messages').add({ id: crypto.randomUUID(), conversation: id, json: JSON.stringify({ text }) });
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
    });
    times[durability].push(performance.now() - start);
  }
  db.close();
  return times;
}

function gzipSize(path: string) {
  return gzipSync(readFileSync(path), { level: 9 }).byteLength;
}

it('benchmarks', { timeout: 30 * 60_000 }, async () => {
  const outDir = await buildPages();
  const servers = await Promise.all([serveSite(outDir), serveSite(outDir), serveSite(outDir)]);
  const [oursSite, floorSite, mswSite] = servers.map((s) => s.origin) as [string, string, string];
  const { context } = await launchChromium();
  const chromium =
    context.browser()?.version() ?? (await (await context.newCDPSession(await context.newPage())).send('Browser.getVersion')).product;
  const results: Record<string, unknown> = {
    plan,
    machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version, chromium, load: loadavg()[0]!.toFixed(2) },
  };
  try {
    // Ours first, seeded with a little data; its answers become the floor's and MSW's bodies.
    const ours = await openReady(context, `${oursSite}/ours.html`);
    await ours.evaluate(async () => {
      await fetch('http://localhost:1000/applications/register', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
      for (let i = 0; i < 5; i++) {
        await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"COPILOT"}',
        });
      }
    });
    // One conversation read by id (as the Python wrapper and the copilot SDK read them), with 5 messages.
    const one = await ours.evaluate(async () => {
      const messages = Array.from({ length: 5 }, (_, i) => ({
        role: i % 2 ? 'ASSISTANT' : 'USER',
        fragment: { string: { raw: `message ${i}` } },
      }));
      const response = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'COPILOT', name: 'read by id', messages }),
      });
      return ((await response.json()) as { id: string }).id;
    });
    const SMALL_READS = [...SMALL_PATHS, `/conversation/${one}`];
    const bodies: Record<string, string> = {};
    for (const path of SMALL_READS) bodies[BASE + path] = await ours.evaluate(async (url) => (await fetch(url)).text(), BASE + path);
    // The floor answers a create with a constant body too (the hop alone).
    const created = await ours.evaluate(
      async (url) =>
        (await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"type":"COPILOT"}' })).text(),
      CREATE_URL,
    );
    const hash = `#${encodeURIComponent(JSON.stringify({ ...bodies, [CREATE_URL]: created }))}`;
    const floor = await openReady(context, `${floorSite}/floor.html${hash}`);
    const msw = await openReady(context, `${mswSite}/msw.html${hash}`);
    // The same worker as `ours`, every request through its fetch handler, from a second page of the
    // origin: the worker runs in the first one's renderer process, so the fetch path is set against
    // the floor read from a second page of its origin too (site.ts, `openBehind`).
    const viaFetch = await openReady(context, `${oursSite}/ours.html?fastPath=0`);
    const floorBehind = await openReady(context, `${floorSite}/floor.html${hash}`);
    const variants = { floor, ours, floorBehind, fetch: viaFetch, msw } as const;
    (results.machine as Record<string, unknown>).isolated = await ours.evaluate(() => crossOriginIsolated);

    // 1. Small reads, interleaved: each round runs a batch per variant, in rotating order.
    if (want('small')) {
      const small: Record<string, Record<string, number[]>> = {};
      for (const path of SMALL_READS) {
        small[path] = { floor: [], ours: [], floorBehind: [], fetch: [], msw: [], raw: [] };
        for (const page of Object.values(variants)) await timeReads(page, BASE + path, 10); // warm-up
        for (let round = 0; round < plan.rounds; round++) {
          const order = Object.entries(variants);
          for (let k = 0; k < round % order.length; k++) order.push(order.shift()!);
          for (const [name, page] of order) small[path]![name]!.push(...(await timeReads(page, BASE + path, plan.batch)));
          // Raw IndexedDB: a small read in the page on an open connection (the same one for both paths).
          small[path]!.raw!.push(...(await ours.evaluate(rawSmallReads, plan.batch)));
        }
      }

      results.small = Object.fromEntries(
        Object.entries(small).map(([path, byVariant]) => [
          path,
          Object.fromEntries(
            Object.entries(byVariant).map(([name, times]) => [name, { median: median(times), p95: p95(times), n: times.length }]),
          ),
        ]),
      );
    }

    // 2. Scale.
    if (want('snapshots')) {
      const scale: Array<Record<string, number>> = [];
      let existing = await ours.evaluate(
        async () =>
          ((await (await fetch('http://localhost:1000/conversations/identifiers')).json()) as { iterable: unknown[] }).iterable.length,
      );
      for (const size of plan.sizes) {
        const toCreate = size - existing;
        const createMs = await createMany(ours, toCreate);
        existing = size;
        // After a write: each timed read follows a create (the steady state of an app that writes and reads).
        // Cold: the first read after the worker was stopped (worker start-up and IndexedDB, nothing in memory).
        // Snapshots are also timed against their floor, interleaved cold read by cold read: a stopped bare
        // worker reading the snapshot's own wire bytes (stored as Blob segments of the size the service
        // keeps) from IndexedDB and answering them, timed as ours is.
        const measure = async (url: string, withWire: boolean) => {
          const afterWrite: number[] = [];
          for (let i = 0; i < plan.snapshotRepeats; i++) {
            await createMany(ours, 1);
            afterWrite.push(...(await timeReads(ours, url, 1)));
          }
          const bytes = withWire ? await ours.evaluate(async (u) => (await fetch(u)).text(), url) : '';
          const name = withWire ? await floor.evaluate(storeWire, bytes) : '';
          const cold: number[] = [];
          const wire: number[] = [];
          const coldRead = async (page: Page, target: string, into: number[]) => {
            await stopAllWorkers(context);
            await new Promise((r) => setTimeout(r, 200));
            into.push(...(await timeReads(page, target, 1)));
          };
          for (let i = 0; i < plan.coldSnapshots; i++) {
            const both: Array<() => Promise<void>> = [() => coldRead(ours, url, cold)];
            if (withWire) both.push(() => coldRead(floor, `${BASE}/__wire/${name}`, wire));
            if (i % 2) both.reverse();
            for (const run of both) await run();
          }
          // Cold right after a write: the worker stopped as soon as a create is acknowledged, no read
          // between (what is kept with the write, whatever the stop interrupted), against the same floor.
          const coldAfterWrite: number[] = [];
          const wireAfterWrite: number[] = [];
          for (let i = 0; withWire && i < plan.coldSnapshots; i++) {
            const both: Array<() => Promise<void>> = [
              async () => {
                await createMany(ours, 1);
                await coldRead(ours, url, coldAfterWrite);
              },
              () => coldRead(floor, `${BASE}/__wire/${name}`, wireAfterWrite),
            ];
            if (i % 2) both.reverse();
            for (const run of both) await run();
          }
          if (withWire)
            console.info(
              `${url} at ${size}: cold right after a write ${median(coldAfterWrite).toFixed(1)} ms (p95 ${p95(coldAfterWrite).toFixed(1)}) / one Blob ${median(wireAfterWrite).toFixed(1)} ms (p95 ${p95(wireAfterWrite).toFixed(1)}) = ${(median(coldAfterWrite) / median(wireAfterWrite)).toFixed(2)}×; after a read ${median(cold).toFixed(1)} / ${median(wire).toFixed(1)} ms = ${(median(cold) / median(wire)).toFixed(2)}×`,
            );
          return {
            coldAfterWrite: withWire ? median(coldAfterWrite) : NaN,
            wireAfterWrite: withWire ? median(wireAfterWrite) : NaN,
            afterWrite: median(afterWrite),
            cold: median(cold),
            coldP95: p95(cold),
            wire: withWire ? median(wire) : NaN,
            wireP95: withWire ? p95(wire) : NaN,
            bytes: bytes.length,
          };
        };
        // The floor under a cold read: a new IndexedDB connection reading the same records, nothing else.
        const indexedDbAlone = async (withMessages: boolean) => {
          const times: number[] = [];
          for (let i = 0; i < plan.coldSnapshots; i++) times.push(await ours.evaluate(rawRead, withMessages));
          return median(times);
        };
        const rawFalse = await indexedDbAlone(false);
        const rawTrue = await indexedDbAlone(true);
        const withRefs = await measure(`${BASE}/conversations?transferables=true`, true);
        const idsOnly = await measure(`${BASE}/conversations?transferables=false`, true);
        const identifiers = await measure(`${BASE}/conversations/identifiers`, false);
        const wireTrue = { ms: withRefs.wire, bytes: withRefs.bytes };
        const wireFalse = { ms: idsOnly.wire, bytes: idsOnly.bytes };
        existing += 3 * plan.snapshotRepeats + 2 * plan.coldSnapshots;
        // The worker's heap after both snapshots were read; then after a conversation search and the message
        // list too (what the read cache keeps of conversation lists, within its budget).
        await timeReads(ours, `${BASE}/conversations?transferables=true`, 1);
        await timeReads(ours, `${BASE}/conversations?transferables=false`, 1);
        const heap = await workerHeap(context, ours);
        await ours.evaluate(async () => {
          const search = {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ query: 'lorem conversation' }),
          };
          for (let i = 0; i < 2; i++) {
            await (await fetch('http://localhost:1000/conversations/search?transferables=false', search)).arrayBuffer();
            await (await fetch('http://localhost:1000/messages')).arrayBuffer();
          }
        });
        const heapAfterSearch = await workerHeap(context, ours);
        scale.push({
          heapMiB: heap / 1024 / 1024,
          heapAfterSearchMiB: heapAfterSearch / 1024 / 1024,
          size,
          created: toCreate,
          createPerSecond: (toCreate / createMs) * 1000,
          snapshotTrue: withRefs.afterWrite,
          snapshotFalse: idsOnly.afterWrite,
          identifiers: identifiers.afterWrite,
          snapshotTrueCold: withRefs.cold,
          snapshotTrueColdAfterWrite: withRefs.coldAfterWrite,
          snapshotFalseColdAfterWrite: idsOnly.coldAfterWrite,
          wireTrueAfterWrite: withRefs.wireAfterWrite,
          wireFalseAfterWrite: idsOnly.wireAfterWrite,
          snapshotFalseCold: idsOnly.cold,
          snapshotTrueColdP95: withRefs.coldP95,
          snapshotFalseColdP95: idsOnly.coldP95,
          wireTrueP95: withRefs.wireP95,
          wireFalseP95: idsOnly.wireP95,
          identifiersCold: identifiers.cold,
          indexedDbAloneTrue: rawTrue,
          indexedDbAloneFalse: rawFalse,
          wireTrue: wireTrue.ms,
          wireFalse: wireFalse.ms,
          wireBytesTrue: wireTrue.bytes,
          wireBytesFalse: wireFalse.bytes,
          trueUsPerConversation: (withRefs.afterWrite / size) * 1000,
          falseUsPerConversation: (idsOnly.afterWrite / size) * 1000,
          identifiersUsPerConversation: (identifiers.afterWrite / size) * 1000,
        });
      }
      results.scale = scale;
    }

    // 2b. Creates (a conversation with 5 messages), interleaved: ms per create, sequential and 10 in flight.
    if (want('creates')) {
      // Group commit off: a second registration of the same worker script on the same origin (scope
      // /off/), so both variants write to the same database, one batch after the other; each worker's
      // read cache is cleared by the other's writes (the invalidation channel).
      const alone = await openReady(context, `${oursSite}/off/ours.html?groupCommit=0`);
      // The shared store emptied once, for every variant.
      await ours.evaluate(
        () =>
          new Promise((resolve) => {
            const { port1, port2 } = new MessageChannel();
            port1.onmessage = resolve;
            navigator.serviceWorker.controller!.postMessage({ type: 'pieces:reset' }, [port2]);
          }),
      );
      // What the service writes for one create: the records the raw floor writes copies of (in a
      // page of another origin: a database of its own storage engine, as an app's would be).
      const template = await ours.evaluate(createTemplate);
      results.createTemplate = { changes: template.changes.map((c) => c.collection), messages: template.messages.length };
      const createVariants = {
        ours: { page: ours, raw: false },
        fetch: { page: viaFetch, raw: false },
        alone: { page: alone, raw: false },
        floor: { page: floor, raw: false },
        raw: { page: floor, raw: true },
      };
      const creates: Record<string, Record<string, number[]>> = { '1': {}, '10': {} };
      for (const inFlight of [1, 10]) {
        for (const name of Object.keys(createVariants)) creates[String(inFlight)]![name] = [];
        // A warm-up batch each, not counted (the second worker has only just started).
        for (const { page, raw } of Object.values(createVariants)) await page.evaluate(createRate, { count: 10, inFlight, raw, template });
        for (let round = 0; round < plan.createRounds; round++) {
          const order = Object.entries(createVariants);
          for (let k = 0; k < round % order.length; k++) order.push(order.shift()!);
          for (const [name, { page, raw }] of order) {
            // Each batch starts on a quiet database: the storage engine's work after the previous
            // batch's commits (flushes, compaction, shared by the databases of an origin) is not
            // charged to the next variant.
            await new Promise((r) => setTimeout(r, 300));
            creates[String(inFlight)]![name]!.push(await page.evaluate(createRate, { count: plan.createBatch, inFlight, raw, template }));
          }
        }
      }
      results.creates = Object.fromEntries(
        Object.entries(creates).map(([inFlight, byVariant]) => [
          inFlight,
          Object.fromEntries(
            Object.entries(byVariant).map(([name, times]) => [
              name,
              { msPerCreate: median(times), p95: p95(times), perSecond: 1000 / median(times), n: times.length },
            ]),
          ),
        ]),
      );
      await alone.close();
    }

    // 3. Stream latency: tab B writes, tab A's socket receives; minus the write's own latency.
    if (want('stream')) {
      const a = ours;
      const b = await openReady(context, `${oursSite}/ours.html`);
      await a.evaluate(async () => {
        const w = window as unknown as { arrivals: Map<string, number>; socket: WebSocket };
        w.arrivals = new Map();
        w.socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
        let first = true;
        await new Promise<void>((resolve) => {
          w.socket.onmessage = (event) => {
            const now = performance.timeOrigin + performance.now();
            if (first) {
              first = false;
              resolve();
              return;
            }
            for (const item of JSON.parse(event.data).iterable) w.arrivals.set(item.conversation.id, now);
          };
        });
      });
      const writes = await b.evaluate(async (count) => {
        const done: Array<{ id: string; start: number; end: number }> = [];
        for (let i = 0; i < count; i++) {
          const start = performance.timeOrigin + performance.now();
          const response = await fetch('http://localhost:1000/conversations/create?transferables=false', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: '{"type":"COPILOT","name":"stream"}',
          });
          const { id } = (await response.json()) as { id: string };
          done.push({ id, start, end: performance.timeOrigin + performance.now() });
          await new Promise((r) => setTimeout(r, 5));
        }
        return done;
      }, plan.streamWrites);
      await a.waitForFunction((n) => (window as unknown as { arrivals: Map<string, number> }).arrivals.size >= n, writes.length, {
        timeout: 60_000,
      });
      const arrivals = new Map(await a.evaluate(() => [...(window as unknown as { arrivals: Map<string, number> }).arrivals]));
      const beyond = writes.map((w) => arrivals.get(w.id)! - w.end);
      const endToEnd = writes.map((w) => arrivals.get(w.id)! - w.start);
      results.stream = {
        beyondWrite: { median: median(beyond), p95: p95(beyond) },
        endToEnd: { median: median(endToEnd), p95: p95(endToEnd) },
        write: { median: median(writes.map((w) => w.end - w.start)) },
        n: writes.length,
      };
      await b.close();
    }

    // 4. The copilot: relevance over the stored assets, /qgpt/stream against the model endpoint called directly.
    if (want('copilot')) {
      results.copilot = await benchCopilot(ours, plan.copilot, async () => {
        await stopAllWorkers(context);
        await new Promise((r) => setTimeout(r, 200));
      });
    }

    // 5. Cold start: the first response after the worker is stopped, against a warm one.
    if (want('cold')) {
      const warm: number[] = [];
      const cold: number[] = [];
      for (let i = 0; i < plan.coldRepeats; i++) {
        warm.push(...(await timeReads(ours, `${BASE}/applications`, 3)).slice(-1));
        await stopAllWorkers(context);
        await new Promise((r) => setTimeout(r, 200));
        cold.push(...(await timeReads(ours, `${BASE}/applications`, 1)));
      }
      // Health on a cold worker: the discovery probe clients send with a 100 ms timeout.
      const health: number[] = [];
      for (let i = 0; i < plan.coldRepeats; i++) {
        await stopAllWorkers(context);
        await new Promise((r) => setTimeout(r, 200));
        health.push(...(await timeReads(ours, 'http://127.0.0.1:39300/.well-known/health', 1)));
      }
      results.cold = {
        warm: median(warm),
        warmP95: p95(warm),
        cold: median(cold),
        coldP95: p95(cold),
        beyondWarm: median(cold) - median(warm),
        n: cold.length,
        health: median(health),
        healthP95: p95(health),
      };
    }

    // 5. Durability: what `strict` costs a create-shaped transaction against the default (relaxed in Chromium).
    if (want('durability')) {
      const durability = await ours.evaluate(durabilityCost, plan.durabilityWrites);
      results.durability = {
        default: { median: median(durability.default), p95: p95(durability.default), n: durability.default.length },
        strict: { median: median(durability.strict), p95: p95(durability.strict), n: durability.strict.length },
      };
    }
  } finally {
    await context.close();
    await Promise.all(servers.map((s) => s.server.close()));
  }

  // 6. Size: the worker script, and the page library with the chunks it imports.
  if (want('size')) {
    await build({ configFile: resolve(root, 'vite.config.ts'), mode: 'lib', logLevel: 'warn' });
    const dist = resolve(root, 'dist');
    // The chunks index.js imports (not the worker script, whose default URL it names).
    const imports = [...readFileSync(join(dist, 'index.js'), 'utf8').matchAll(/from "\.\/([^"]+\.js)"/g)].map((m) => m[1]!);
    const library = ['index.js', ...readdirSync(dist).filter((f) => imports.includes(f))];
    results.size = {
      workerGzip: gzipSize(join(dist, 'pieces-os-worker.js')),
      workerBytes: readFileSync(join(dist, 'pieces-os-worker.js')).byteLength,
      libraryGzip: library.reduce((sum, f) => sum + gzipSize(join(dist, f)), 0),
      libraryFiles: library,
    };
  }

  report(results);
  expect(results.machine).toBeDefined();
});

type Figures = { median: number; p95: number; n: number };

function report(results: Record<string, any>) {
  const small = results.small as Record<string, Record<'floor' | 'ours' | 'floorBehind' | 'fetch' | 'msw' | 'raw', Figures>> | undefined;
  const scale = (results.scale ?? []) as Array<Record<string, number>>;
  const verdict = (ok: boolean | null) =>
    ok === null ? 'not measured (a smoke run, or the section was left out)' : ok ? 'met' : '**missed**';
  const lines: string[] = [];
  const m = results.machine;
  lines.push(
    `Machine: ${m.cores} cores (${m.cpu}), Node ${m.node}, Chromium ${m.chromium}, timers ${m.isolated ? '5 µs (cross-origin isolated)' : '100 µs'}, load average at the start ${m.load}${smoke ? ' — smoke run' : ''}`,
    '',
  );
  if (small) {
    lines.push(
      'Small reads (median / p95 per request). ours: the page library with its fast path (a MessagePort to the worker), from the page the worker was started for; fetch: the same worker through its fetch handler (`fastPath: false`), from a second page of the origin; floor: an empty worker answering a constant body through its fetch handler, from the page it was started for and (floor, 2nd page) from a second page, the floor of the fetch path; raw IndexedDB: the same kind of read in the page on an open connection.',
      '',
      table(
        [
          'request',
          'floor',
          'ours (fast path)',
          'floor, 2nd page',
          'fetch path',
          'MSW',
          'raw IndexedDB',
          'ours/floor',
          'fetch/floor (2nd page)',
          'ours/MSW',
          'n',
        ],
        Object.entries(small).map(([path, v]) => [
          `GET ${path}`,
          `${ms(v.floor.median)} / ${ms(v.floor.p95)}`,
          `${ms(v.ours.median)} / ${ms(v.ours.p95)}`,
          `${ms(v.floorBehind.median)} / ${ms(v.floorBehind.p95)}`,
          `${ms(v.fetch.median)} / ${ms(v.fetch.p95)}`,
          `${ms(v.msw.median)} / ${ms(v.msw.p95)}`,
          `${ms(v.raw.median)} / ${ms(v.raw.p95)}`,
          (v.ours.median / v.floor.median).toFixed(2),
          (v.fetch.median / v.floorBehind.median).toFixed(2),
          (v.ours.median / v.msw.median).toFixed(2),
          v.ours.n,
        ]),
      ),
      '',
    );
  }
  type Rate = { msPerCreate: number; p95: number; perSecond: number; n: number };
  const creates = results.creates as Record<'1' | '10', Record<'ours' | 'fetch' | 'alone' | 'floor' | 'raw', Rate>> | undefined;
  if (creates) {
    lines.push(
      `Creates (a conversation with 5 messages, the default \`transferables\`: the answer carries the messages), interleaved batches of ${results.plan.createBatch}: creates per second (median / p95 ms per create over ${creates['1'].ours.n} batches). ours: fast path and group commit; fetch path: the same worker through its fetch handler; group commit off: a second registration of the same worker script (scope /off/, fast path) writing one transaction per create, on the same database; the hop alone: the empty worker answering a constant through its fetch handler; raw IndexedDB (the floor): the records the service writes for a create (${results.createTemplate.messages} messages, the conversation, its activity and ${results.createTemplate.changes.length} change rows), written by the page in one transaction per create, every request issued at once.`,
      '',
      table(
        [
          'in flight',
          'ours (fast path, group commit)',
          'fetch path',
          'group commit off (same database)',
          'the hop alone',
          'raw IndexedDB (floor)',
          'ours/raw',
          'fetch/raw',
          'group commit on/off',
        ],
        (['1', '10'] as const).map((k) => {
          const c = creates[k];
          const cell = (v: Rate) => `${v.perSecond.toFixed(0)}/s (${ms(v.msPerCreate)} / ${ms(v.p95)})`;
          return [
            k,
            cell(c.ours),
            cell(c.fetch),
            cell(c.alone),
            cell(c.floor),
            cell(c.raw),
            (c.ours.perSecond / c.raw.perSecond).toFixed(2),
            (c.fetch.perSecond / c.raw.perSecond).toFixed(2),
            (c.ours.perSecond / c.alone.perSecond).toFixed(2),
          ];
        }),
      ),
      '',
    );
  }
  if (scale.length) {
    lines.push(
      "Scale (conversations with 5 messages each). Snapshot times: median read right after a write / median first read after the worker was stopped (cold: start-up plus IndexedDB); µs per conversation after a write. IndexedDB alone: a new connection reading the records a cold snapshot would read without kept snapshots (false / true). One-Blob floor: a stopped bare worker reading the answer's bytes, stored as one Blob, from IndexedDB and answering them, timed as ours, cold reads interleaved (false / true; median / p95). Worker heap: after both snapshots were read / after a conversation search and the message list too, after a garbage collection.",
      '',
      table(
        [
          'conversations',
          'creates/s',
          'snapshot true',
          'snapshot false',
          'cold true: ours / floor (median, p95)',
          'cold false: ours / floor (median, p95)',
          'cold/floor true',
          'cold/floor false',
          'identifiers',
          'IndexedDB alone',
          'true/false',
          'worker heap',
          'MB true / false',
        ],
        scale.map((s) => [
          s.size!,
          s.createPerSecond!.toFixed(0),
          `${ms(s.snapshotTrue!)} / ${ms(s.snapshotTrueCold!)}`,
          `${ms(s.snapshotFalse!)} / ${ms(s.snapshotFalseCold!)}`,
          `${ms(s.snapshotTrueCold!)}, ${ms(s.snapshotTrueColdP95!)} / ${ms(s.wireTrue!)}, ${ms(s.wireTrueP95!)}`,
          `${ms(s.snapshotFalseCold!)}, ${ms(s.snapshotFalseColdP95!)} / ${ms(s.wireFalse!)}, ${ms(s.wireFalseP95!)}`,
          (s.snapshotTrueCold! / s.wireTrue!).toFixed(2),
          (s.snapshotFalseCold! / s.wireFalse!).toFixed(2),
          `${ms(s.identifiers!)} / ${ms(s.identifiersCold!)}`,
          `${ms(s.indexedDbAloneFalse!)} / ${ms(s.indexedDbAloneTrue!)}`,
          (s.snapshotTrue! / s.snapshotFalse!).toFixed(1),
          `${s.heapMiB!.toFixed(1)} / ${s.heapAfterSearchMiB!.toFixed(1)} MiB`,
          `${(s.wireBytesTrue! / 1e6).toFixed(1)} / ${(s.wireBytesFalse! / 1e6).toFixed(1)}`,
        ]),
      ),
      '',
    );
  }
  const stream = results.stream;
  const cold = results.cold;
  const size = results.size;
  const rows: string[][] = [];
  if (stream) {
    rows.push([
      'stream: write in tab B → message in tab A, beyond the write (median / p95)',
      `${ms(stream.beyondWrite.median)} / ${ms(stream.beyondWrite.p95)}`,
    ]);
    rows.push(['stream: end to end (median / p95)', `${ms(stream.endToEnd.median)} / ${ms(stream.endToEnd.p95)}`]);
  }
  if (cold) {
    rows.push([
      'cold start: first response after the worker stopped / warm (medians)',
      `${ms(cold.cold)} / ${ms(cold.warm)} (p95 ${ms(cold.coldP95)} / ${ms(cold.warmP95)})`,
    ]);
    rows.push(['health on a cold worker (median / p95)', `${ms(cold.health)} / ${ms(cold.healthP95)}`]);
  }
  if (results.durability) {
    rows.push([
      'durability: a create-shaped transaction, default (relaxed) / strict (median, p95)',
      `${ms(results.durability.default.median)}, ${ms(results.durability.default.p95)} / ${ms(results.durability.strict.median)}, ${ms(results.durability.strict.p95)}`,
    ]);
  }
  if (size) {
    rows.push([
      'worker script, gzipped (minified)',
      `${(size.workerGzip / 1024).toFixed(1)} KB (${(size.workerBytes / 1024).toFixed(0)} KB)`,
    ]);
    rows.push(['page library, gzipped', `${(size.libraryGzip / 1024).toFixed(1)} KB`]);
  }
  if (rows.length) lines.push(table(['measure', 'value'], rows), '');
  const copilot = results.copilot;
  if (copilot) {
    lines.push(
      `The copilot: relevance over ${copilot.relevance.assets} stored assets (each request ranks them all); /qgpt/stream against the same OpenAI-compatible endpoint (a local fake, ${copilot.chunks} chunks per answer) called directly from the page, interleaved (median / p95 of ${copilot.stream.n}).`,
      '',
      table(
        ['measure', 'value'],
        [
          [
            `relevance, ${copilot.relevance.assets} assets, warm (median / p95)`,
            `${ms(copilot.relevance.warm.median)} / ${ms(copilot.relevance.warm.p95)}`,
          ],
          [
            'relevance, first request after the worker was stopped (median / p95)',
            `${ms(copilot.relevance.cold.median)} / ${ms(copilot.relevance.cold.p95)} (n=${copilot.relevance.cold.n})`,
          ],
          ['relevance, first request ever (builds the index)', ms(copilot.relevance.first)],
          [
            'time to first chunk: /qgpt/stream / direct (median, p95)',
            `${ms(copilot.stream.firstChunk)}, ${ms(copilot.stream.firstChunkP95)} / ${ms(copilot.direct.firstChunk)}, ${ms(copilot.direct.firstChunkP95)}`,
          ],
          [
            'time to last chunk: /qgpt/stream / direct (median, p95)',
            `${ms(copilot.stream.lastChunk)}, ${ms(copilot.stream.lastChunkP95)} / ${ms(copilot.direct.lastChunk)}, ${ms(copilot.direct.lastChunkP95)} (direct/ours ${copilot.ratio.lastChunk.toFixed(2)})`,
          ],
          [
            'chunks per second over the answer: /qgpt/stream / direct (median)',
            `${copilot.stream.chunksPerSecond.toFixed(0)} / ${copilot.direct.chunksPerSecond.toFixed(0)} (ratio ${copilot.ratio.throughput.toFixed(2)})`,
          ],
        ],
      ),
      '',
    );
  }
  const largest = scale.find((s) => s.size === 10_000);
  const reads = small ? Object.values(small) : [];
  const heap10k = largest ? (Math.max(largest.heapMiB!, largest.heapAfterSearchMiB!) * 1024 * 1024) / 1e6 : null;
  const or = <T>(value: T | undefined, judge: (value: T) => boolean): boolean | null => (value === undefined ? null : judge(value));
  const createRatio = (k: '1' | '10') => (creates ? creates[k].ours.perSecond / creates[k].raw.perSecond : NaN);
  const targets: Array<[string, boolean | null]> = [
    [
      'small reads through the fast path ≤ 0.3× the empty-worker floor',
      small ? reads.every((v) => v.ours.median / v.floor.median <= 0.3) : null,
    ],
    [
      `creates, 10 in flight ≥ 0.8× the raw IndexedDB floor (${createRatio('10').toFixed(2)}×)`,
      or(creates, () => createRatio('10') >= 0.8),
    ],
    [`creates, one at a time ≥ 0.7× the raw IndexedDB floor (${createRatio('1').toFixed(2)}×)`, or(creates, () => createRatio('1') >= 0.7)],
    [
      `cold 10,000-conversation snapshots ≤ 1.5× the one-Blob floor${largest ? ` (true ${(largest.snapshotTrueCold! / largest.wireTrue!).toFixed(2)}×, false ${(largest.snapshotFalseCold! / largest.wireFalse!).toFixed(2)}×)` : ''}`,
      largest ? largest.snapshotFalseCold! / largest.wireFalse! <= 1.5 && largest.snapshotTrueCold! / largest.wireTrue! <= 1.5 : null,
    ],
    [
      `worker heap ≤ 15 MB per 10,000 conversations${heap10k === null ? '' : ` (${heap10k.toFixed(1)} MB)`}`,
      heap10k === null ? null : heap10k <= 15,
    ],
    [
      'small reads, fetch path: ours/floor (both from a second page) ≤ 1.3',
      small ? reads.every((v) => v.fetch.median / v.floorBehind.median <= 1.3) : null,
    ],
    ['small reads: ours/MSW ≤ 0.6', small ? reads.every((v) => v.ours.median / v.msw.median <= 0.6) : null],
    ['10,000 conversations: transferables=false snapshot ≤ 150 ms (after a write)', largest ? largest.snapshotFalse! <= 150 : null],
    ['stream latency median ≤ 5 ms beyond the write', or(stream, (s: any) => s.beyondWrite.median <= 5)],
    [`cold start ≤ 50 ms beyond warm${cold ? ` (${ms(cold.beyondWarm)})` : ''}`, or(cold, (c: any) => c.beyondWarm <= 50)],
    [
      'GET /conversation/{id}: ours/floor ≤ 1.1',
      (() => {
        const byId = small && Object.entries(small).find(([path]) => path.startsWith('/conversation/'))?.[1];
        return byId ? byId.ours.median / byId.floor.median <= 1.1 : null;
      })(),
    ],
    ['health on a cold worker ≤ 100 ms', or(cold, (c: any) => c.health <= 100)],
    [
      `relevance over 10,000 assets ≤ 10 ms warm (median${copilot ? ` ${ms(copilot.relevance.warm.median)}` : ''})`,
      copilot && copilot.relevance.assets >= 10_000 ? copilot.relevance.warm.median <= 10 : null,
    ],
    [
      `first relevance after a worker start ≤ 100 ms at 10,000 assets (median${copilot ? ` ${ms(copilot.relevance.cold.median)}` : ''})`,
      copilot && copilot.relevance.assets >= 10_000 ? copilot.relevance.cold.median <= 100 : null,
    ],
    [
      `/qgpt/stream ≥ 0.9× direct in chunks per second and time to last chunk${copilot ? ` (${copilot.ratio.throughput.toFixed(2)}, ${copilot.ratio.lastChunk.toFixed(2)})` : ''}`,
      or(copilot, (c: any) => c.ratio.throughput >= 0.9 && c.ratio.lastChunk >= 0.9),
    ],
  ];
  if (smoke)
    lines.push('A smoke run checks that the harness works; its few samples are too noisy to judge the targets: run `npm run bench`.', '');
  lines.push(
    table(
      ['target', 'result'],
      targets.map(([name, ok]) => [name, verdict(ok)]),
    ),
  );
  results.targets = Object.fromEntries(targets);
  const markdown = lines.join('\n');
  console.log(`\n${markdown}\n`);

  const out = resolve(root, '.bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'results.json'), JSON.stringify(results, null, 2));
  writeFileSync(join(out, 'results.md'), `${markdown}\n`);
  writeFileSync(
    join(out, 'chart.svg'),
    barChart('Median time per request (lower is better)', [
      ...Object.entries(small ?? {}).flatMap(([path, v]) =>
        (['floor', 'ours', 'floorBehind', 'fetch', 'msw', 'raw'] as const).map((name) => ({
          label: `GET ${path} · ${name}`,
          value: v[name].median,
          unit: 'ms',
        })),
      ),
      ...scale.flatMap((s) => [
        { label: `snapshot ${s.size} · transferables=true`, value: s.snapshotTrue!, unit: 'ms' },
        { label: `snapshot ${s.size} · transferables=false`, value: s.snapshotFalse!, unit: 'ms' },
      ]),
    ]),
  );
  console.log(`Raw figures: .bench/results.json · chart: .bench/chart.svg`);
  recordRun('run', { plan: { ...plan, ...(only ? { only: [...only] } : {}) }, machine: results.machine, figures: figuresOf(results) });
}

/** The run's figures, each against its floor and its target (a smoke run judges none). */
function figuresOf(results: Record<string, any>): Figure[] {
  const figures: Figure[] = [];
  const judge = (ok: boolean) => (smoke ? null : ok);
  const small = (results.small ?? {}) as Record<string, Record<'floor' | 'ours' | 'floorBehind' | 'fetch' | 'msw' | 'raw', Figures>>;
  for (const [path, v] of Object.entries(small)) {
    const against = (measure: string, figure: Figures, floorName: string, floor: Figures, limit: number) =>
      figures.push({
        measure,
        unit: 'ms',
        ...figure,
        floor: { measure: floorName, median: floor.median },
        ratio: figure.median / floor.median,
        target: `≤ ${limit}×`,
        met: judge(figure.median / floor.median <= limit),
      });
    against(
      `GET ${path}, fast path`,
      v.ours,
      'an empty worker answering a constant (fetch hop)',
      v.floor,
      path.startsWith('/conversation/') ? 1.1 : 0.3,
    );
    against(`GET ${path}, fetch path (second page)`, v.fetch, 'the empty worker from a second page', v.floorBehind, 1.3);
    against(`GET ${path}, fast path against MSW`, v.ours, 'MSW', v.msw, 0.6);
    figures.push({ measure: `GET ${path}: the same read in raw IndexedDB in the page`, unit: 'ms', ...v.raw });
  }
  type Rate = { msPerCreate: number; p95: number; perSecond: number; n: number };
  const creates = results.creates as Record<'1' | '10', Record<'ours' | 'fetch' | 'alone' | 'floor' | 'raw', Rate>> | undefined;
  for (const k of ['1', '10'] as const) {
    if (!creates) break;
    const c = creates[k];
    const rate = (measure: string, v: Rate, floorName: string, floor: Rate, limit?: number): Figure => ({
      measure: `creates, ${k} in flight: ${measure}`,
      unit: 'per second',
      median: v.perSecond,
      n: v.n,
      floor: { measure: floorName, median: floor.perSecond },
      ratio: v.perSecond / floor.perSecond,
      ...(limit === undefined ? {} : { target: `≥ ${limit}×`, met: judge(v.perSecond / floor.perSecond >= limit) }),
    });
    const raw = 'raw IndexedDB, the same records in one transaction per create';
    figures.push(
      rate('fast path, group commit', c.ours, raw, c.raw, k === '10' ? 0.8 : 0.7),
      rate('fetch path', c.fetch, raw, c.raw),
      rate('group commit on, against off', c.ours, 'group commit off (same database)', c.alone),
      rate('the hop alone (an empty worker)', c.floor, raw, c.raw),
    );
  }
  for (const s of (results.scale ?? []) as Array<Record<string, number>>) {
    const at = `${s.size} conversations`;
    const tenThousand = s.size === 10_000;
    for (const variant of ['True', 'False'] as const) {
      const cold = s[`snapshot${variant}Cold`]!;
      const wire = s[`wire${variant}`]!;
      figures.push({
        measure: `${at}: cold GET /conversations?transferables=${variant.toLowerCase()}`,
        unit: 'ms',
        median: cold,
        p95: s[`snapshot${variant}ColdP95`]!,
        floor: { measure: 'a stopped bare worker answering the same bytes stored as one Blob', median: wire },
        ratio: cold / wire,
        ...(tenThousand ? { target: '≤ 1.5×', met: judge(cold / wire <= 1.5) } : {}),
      });
    }
    figures.push(
      {
        measure: `${at}: GET /conversations?transferables=false after a write`,
        unit: 'ms',
        median: s.snapshotFalse!,
        ...(tenThousand ? { target: '≤ 150 ms', met: judge(s.snapshotFalse! <= 150) } : {}),
      },
      { measure: `${at}: GET /conversations?transferables=true after a write`, unit: 'ms', median: s.snapshotTrue! },
      { measure: `${at}: cold GET /conversations/identifiers`, unit: 'ms', median: s.identifiersCold! },
      {
        measure: `${at}: worker heap after both snapshots / after a search and the message list (the larger)`,
        unit: 'MiB',
        median: Math.max(s.heapMiB!, s.heapAfterSearchMiB!),
        ...(tenThousand ? { target: '≤ 15 MB', met: judge((Math.max(s.heapMiB!, s.heapAfterSearchMiB!) * 1024 * 1024) / 1e6 <= 15) } : {}),
      },
    );
  }
  const { stream, cold, durability, size, copilot } = results;
  if (stream) {
    figures.push({
      measure: 'stream: write in tab B → message in tab A, beyond the write',
      unit: 'ms',
      ...stream.beyondWrite,
      n: stream.n,
      target: '≤ 5 ms',
      met: judge(stream.beyondWrite.median <= 5),
    });
  }
  if (cold) {
    figures.push(
      {
        measure: 'cold start: first GET /applications after the worker stopped',
        unit: 'ms',
        median: cold.cold,
        p95: cold.coldP95,
        n: cold.n,
        floor: { measure: 'the same read, warm', median: cold.warm },
        target: '≤ 50 ms beyond warm',
        met: judge(cold.beyondWarm <= 50),
      },
      {
        measure: 'health on a cold worker',
        unit: 'ms',
        median: cold.health,
        p95: cold.healthP95,
        n: cold.n,
        target: '≤ 100 ms',
        met: judge(cold.health <= 100),
      },
    );
  }
  if (durability) {
    figures.push({
      measure: 'a create-shaped transaction, durability strict',
      unit: 'ms',
      ...durability.strict,
      floor: { measure: 'the default (relaxed)', median: durability.default.median },
      ratio: durability.strict.median / durability.default.median,
    });
  }
  if (size) {
    figures.push(
      { measure: 'worker script, gzipped', unit: 'KB', median: size.workerGzip / 1024 },
      { measure: 'page library, gzipped', unit: 'KB', median: size.libraryGzip / 1024 },
    );
  }
  if (copilot) {
    const full = copilot.relevance.assets >= 10_000;
    const assets = `${copilot.relevance.assets} assets`;
    figures.push(
      {
        measure: `relevance over ${assets}, warm`,
        unit: 'ms',
        ...copilot.relevance.warm,
        ...(full ? { target: '≤ 10 ms', met: judge(copilot.relevance.warm.median <= 10) } : {}),
      },
      {
        measure: `relevance over ${assets}, first after a worker stop`,
        unit: 'ms',
        median: copilot.relevance.cold.median,
        p95: copilot.relevance.cold.p95,
        n: copilot.relevance.cold.n,
        ...(full ? { target: '≤ 100 ms', met: judge(copilot.relevance.cold.median <= 100) } : {}),
      },
      { measure: `relevance over ${assets}, first ever (builds the index)`, unit: 'ms', median: copilot.relevance.first },
      {
        measure: '/qgpt/stream: chunks per second over the answer',
        unit: 'per second',
        median: copilot.stream.chunksPerSecond,
        n: copilot.stream.n,
        floor: { measure: 'the model endpoint called directly from the page', median: copilot.direct.chunksPerSecond },
        ratio: copilot.ratio.throughput,
        target: '≥ 0.9× (and time to last chunk too)',
        met: judge(copilot.ratio.throughput >= 0.9 && copilot.ratio.lastChunk >= 0.9),
      },
      {
        measure: '/qgpt/stream: time to last chunk',
        unit: 'ms',
        median: copilot.stream.lastChunk,
        p95: copilot.stream.lastChunkP95,
        n: copilot.stream.n,
        floor: { measure: 'direct', median: copilot.direct.lastChunk },
        ratio: copilot.stream.lastChunk / copilot.direct.lastChunk,
      },
      {
        measure: '/qgpt/stream: time to first chunk',
        unit: 'ms',
        median: copilot.stream.firstChunk,
        p95: copilot.stream.firstChunkP95,
        n: copilot.stream.n,
        floor: { measure: 'direct', median: copilot.direct.firstChunk },
        ratio: copilot.stream.firstChunk / copilot.direct.firstChunk,
      },
    );
  }
  return figures;
}
