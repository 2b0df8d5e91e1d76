/**
 * `npm run bench`: this project against an empty service worker (the floor)
 * and MSW in headless Chromium, in one run, interleaved; then scale, stream
 * latency, cold start and size. Prints a markdown table; writes the raw
 * figures and a chart to .bench/. `BENCH=smoke` runs a short version.
 *
 * Targets are reported as met or missed; they are never test assertions.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { build, preview, type PreviewServer } from 'vite';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, stopAllWorkers } from '../browser/chromium.js';
import { SEGMENT_SIZE } from '../../src/storage/snapshots.js';
import { barChart, median, ms, p95, table } from './stats.js';
import { benchCopilot } from './copilot.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke
  ? { rounds: 4, batch: 25, sizes: [100], snapshotRepeats: 3, coldSnapshots: 1, streamWrites: 20, coldRepeats: 3, durabilityWrites: 40,
      copilot: { assets: 1_000, relevanceRepeats: 12, streamRepeats: 4, chunks: 100 }, createRounds: 2, createBatch: 20 }
  : { rounds: 30, batch: 50, sizes: [100, 1_000, 10_000], snapshotRepeats: 7, coldSnapshots: 9, streamWrites: 200, coldRepeats: 10, durabilityWrites: 400,
      copilot: { assets: 10_000, relevanceRepeats: 60, streamRepeats: 20, chunks: 200 }, createRounds: 12, createBatch: 50 };

const BASE = 'http://localhost:1000';
const SMALL_PATHS = ['/applications', '/conversations/identifiers'];

async function buildPages(): Promise<string> {
  const configFile = resolve(root, 'vite.config.ts');
  await build({ configFile, mode: 'worker', logLevel: 'warn' });
  const outDir = join(mkdtempSync(join(tmpdir(), 'pieces-bench-')), 'site');
  const pages = resolve(import.meta.dirname, 'pages');
  await build({
    configFile: false,
    root: pages,
    logLevel: 'warn',
    define: { __PIECES_VERSION__: JSON.stringify('bench') },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      rollupOptions: { input: Object.fromEntries(['floor', 'ours', 'msw'].map((n) => [n, join(pages, `${n}.html`)])) },
    },
  });
  copyFileSync(resolve(root, 'dist/pieces-os-worker.js'), join(outDir, 'pieces-os-worker.js'));
  copyFileSync(resolve(root, 'node_modules/msw/lib/mockServiceWorker.js'), join(outDir, 'mockServiceWorker.js'));
  copyFileSync(resolve(import.meta.dirname, 'floor-sw.js'), join(outDir, 'floor-sw.js'));
  return outDir;
}

async function serve(outDir: string): Promise<{ server: PreviewServer; origin: string }> {
  // Cross-origin isolation gives the pages 5 µs timers instead of 100 µs.
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
  const server = await preview({
    configFile: false,
    root: dirname(outDir),
    logLevel: 'warn',
    build: { outDir: basename(outDir) },
    preview: { port: 0, host: '127.0.0.1', headers: isolation },
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

async function open(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector('#status:text("ready")', { timeout: 30_000 });
  return page;
}

/** Times `count` sequential GETs of `url` inside the page; returns each duration in ms. */
const timeReads = (page: Page, url: string, count: number) =>
  page.evaluate(
    async ({ url, count }) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        const response = await fetch(url);
        await response.text();
        times.push(performance.now() - start);
      }
      return times;
    },
    { url, count },
  );

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

const CREATE_URL = 'http://localhost:1000/conversations/create?transferables=false';

/**
 * Runs in the page: `count` creates of a conversation with 5 messages, `inFlight` at a time;
 * ms per create (wall time / count). `raw`: the same records written straight to
 * IndexedDB in the page, one transaction per create (a change, a conversation, its messages).
 */
async function createRate({ count, inFlight, raw }: { count: number; inFlight: number; raw: boolean }): Promise<number> {
  const text = (m: number, i: number) => `message ${m} of conversation ${i}: ${'lorem ipsum '.repeat(8)}`;
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const w = window as unknown as { rawDb?: IDBDatabase };
  if (raw && !w.rawDb) {
    const open = indexedDB.open('bench-raw-creates', 1);
    open.onupgradeneeded = () => {
      const db = open.result;
      db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true });
      db.createObjectStore('conversations', { keyPath: 'id' }).createIndex('by-seq', 'seq', { unique: true });
      db.createObjectStore('messages', { keyPath: 'id' }).createIndex('by-conversation', 'conversation');
    };
    w.rawDb = await request(open);
  }
  const one = async (i: number) => {
    if (!raw) {
      const response = await fetch('http://localhost:1000/conversations/create?transferables=false', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          type: 'COPILOT',
          name: `rate ${i}`,
          messages: Array.from({ length: 5 }, (_, m) => ({ role: m % 2 ? 'ASSISTANT' : 'USER', fragment: { string: { raw: text(m, i) } } })),
        }),
      });
      if (!response.ok) throw new Error(`create answered ${response.status}`);
      await response.arrayBuffer();
      return;
    }
    const id = crypto.randomUUID();
    const tx = w.rawDb!.transaction(['changes', 'conversations', 'messages'], 'readwrite');
    const messageIds = Array.from({ length: 5 }, () => crypto.randomUUID());
    const changes = tx.objectStore('changes');
    const seq = await request(changes.add({ collection: 'conversation', id }));
    for (const m of messageIds) changes.add({ collection: 'conversationMessage', id: m });
    tx.objectStore('conversations').add({ id, seq, json: JSON.stringify({ id, type: 'COPILOT', name: `rate ${i}` }), messageIds });
    messageIds.forEach((m, k) => tx.objectStore('messages').add({ id: m, conversation: id, json: JSON.stringify({ id: m, text: text(k, i) }) }));
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
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
 * origin as Blob segments of the size the service keeps, for the floor worker to answer
 * (`/__wire/<name>`); returns the name.
 */
async function storeWire({ bytes, segment }: { bytes: string; segment: number }): Promise<string> {
  const request = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  const name = `bench-wire-${bytes.length}`;
  await request(indexedDB.deleteDatabase(name));
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore('segments');
  const db = await request(open);
  const data = new TextEncoder().encode(bytes);
  const tx = db.transaction('segments', 'readwrite');
  for (let i = 0, k = 0; i < data.length; i += segment, k++) tx.objectStore('segments').put(new Blob([data.subarray(i, i + segment)]), k);
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
    const worker = targetInfos.find((t) => t.type === 'service_worker' && t.url.includes('pieces-os-worker'));
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
    for (let m = 0; m < 5; m++) tx.objectStore('messages').add({ id: crypto.randomUUID(), conversation: id, json: JSON.stringify({ text }) });
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


it('cold probe', { timeout: 30 * 60_000 }, async () => {
  const outDir = await buildPages();
  const servers = await Promise.all([serve(outDir), serve(outDir)]);
  const [oursSite, floorSite] = servers.map((s) => s.origin) as [string, string];
  const { context } = await launchChromium();
  const ours = await open(context, `${oursSite}/ours.html`);
  const viaFetch = await open(context, `${oursSite}/ours.html?fastPath=0`);
  const hash = `#${encodeURIComponent(JSON.stringify({ [BASE + '/applications']: '[]' }))}`;
  const floor = await open(context, `${floorSite}/floor.html${hash}`);
  const n = Number(process.env.N ?? 10000);
  await createMany(ours, n);
  await timeReads(ours, `${BASE}/conversations?transferables=false`, 1);
  const rows: Record<string, number[]> = {};
  const probes: Array<[string, Page, string]> = [
    ['floor const', floor, `${BASE}/applications`],
    ['ours /applications', ours, `${BASE}/applications`],
    ['fetch /applications', viaFetch, `${BASE}/applications`],
    ['ours ids', ours, `${BASE}/conversations/identifiers`],
    ['fetch ids', viaFetch, `${BASE}/conversations/identifiers`],
    ['ours false', ours, `${BASE}/conversations?transferables=false`],
    ['fetch false', viaFetch, `${BASE}/conversations?transferables=false`],
    ['ours true', ours, `${BASE}/conversations?transferables=true`],
  ];
  for (let round = 0; round < 7; round++) {
    for (const [name, page, url] of probes) {
      await stopAllWorkers(context);
      await new Promise((r) => setTimeout(r, 200));
      (rows[name] ??= []).push(...(await timeReads(page, url, 1)));
      (rows[name + ' warm'] ??= []).push(...(await timeReads(page, url, 1)));
    }
  }
  for (const [name, times] of Object.entries(rows)) console.log(name.padEnd(28), median(times).toFixed(1));
  await context.close();
  for (const s of servers) s.server.httpServer.close();
});
