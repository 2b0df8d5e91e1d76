/**
 * The mirror of a real Pieces OS in the browser (worker mode, and page mode), against the
 * independent upstream (test/upstream/pieces-os.ts) on a real port: pass-through, answering
 * and queueing while it is away from several tabs, replay without loss, sockets that stay
 * open, the worker stopped mid-drain, the demo's indicator, and the Local Network Access step.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { piecesControls } from '../../src/node/page-controls.js';
import { startUpstream, type IndependentPiecesOS } from '../upstream/pieces-os.js';
import { sleep } from './driver.js';
import { launch, need, type BrowserContext, type Page } from './engine.js';
import { contextPerTest, listen, socketIds } from './pages.js';

const newContext = contextPerTest();
const upstreams: IndependentPiecesOS[] = [];
afterEach(async () => {
  for (const upstream of upstreams.splice(0)) await upstream.stop();
});

async function upstreamOn(latencyMs = 0) {
  const upstream = await startUpstream({ latencyMs });
  upstreams.push(upstream);
  return upstream;
}

/**
 * The demo mirroring `upstream`, probing it at most every 2 s while it is away (`retryMaxMs`; the
 * default backoff, 1 s doubling to 30 s, is test/unit/hosts/mirror-probe.test.ts's): the tests wait
 * for it to be found again after each return, not out a backoff grown while it was away.
 */
const demoUrl = (upstream: IndependentPiecesOS, base = inject('demoUrl')) =>
  `${base}?mirror=${encodeURIComponent(upstream.url)}&mirrorRetryMax=2000`;

/** Opens the demo mirroring `upstream`, once its indicator shows the mirror. */
async function openMirrored(context: BrowserContext, upstream: IndependentPiecesOS, state = 'up', base?: string, mode = ''): Promise<Page> {
  const page = await context.newPage();
  await page.goto(demoUrl(upstream, base));
  await page.waitForSelector(`#status[data-state="ready"]${mode}`);
  await page.waitForSelector(`#mirror[data-mirror="${state}"]`, { timeout: 30_000 });
  return page;
}

/** Waits until the mirror is up with nothing queued, asking from the page now and then (a request is what makes it look again). */
async function drained(page: Page, timeout = 45_000) {
  const controls = piecesControls(page);
  const deadline = Date.now() + timeout;
  for (;;) {
    const status = await controls.mirrorStatus();
    if (status?.state === 'up' && status.outbox.length === 0) return status;
    if (Date.now() > deadline) throw new Error(`not drained: ${JSON.stringify(status)}`);
    await page.evaluate(() =>
      fetch('http://localhost:1000/.well-known/health').then(
        () => {},
        () => {},
      ),
    );
    await sleep(300);
  }
}

/** In the page: creates a conversation named `name` with `count` messages, one after another; the ids it was given. */
const write = (page: Page, name: string, count: number) =>
  page.evaluate(
    async ({ name, count }) => {
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`http://localhost:1000${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
        return (await response.json()) as { id: string };
      };
      const conversation = await post('/conversations/create', { type: 'COPILOT', name });
      const messages: string[] = [];
      for (let i = 0; i < count; i++) {
        messages.push(
          (
            await post('/messages/create', {
              role: 'USER',
              fragment: { string: { raw: `${name} #${i}` } },
              conversation: { id: conversation.id },
            })
          ).id,
        );
      }
      return { conversation: conversation.id, messages };
    },
    { name, count },
  );

/** The upstream's conversations: name → message texts in order. */
const held = (upstream: IndependentPiecesOS) =>
  Object.fromEntries(
    upstream
      .snapshot()
      .conversations.map((c) => [
        c.name as string,
        (c.messages as Array<{ fragment: { string: { raw: string } } }>).map((m) => m.fragment.string.raw),
      ]),
  );

describe('worker mode', () => {
  it('passes requests through while the upstream answers (its answers, its ids), and answers from the kept copy once it goes away', async () => {
    const upstream = await upstreamOn();
    const context = await newContext();
    const page = await openMirrored(context, upstream);
    const through = await page.evaluate(async (direct) => {
      const created = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'COPILOT', name: 'through the worker' }),
      });
      const body = (await created.json()) as { id: string };
      const [ours, theirs] = await Promise.all([
        fetch('http://localhost:1000/conversations').then((r) => r.text()),
        fetch(`${direct}/conversations`).then((r) => r.text()),
      ]);
      const unserved = await fetch('http://localhost:1000/os/device/information');
      return {
        id: body.id,
        header: created.headers.get('x-upstream'),
        same: ours === theirs,
        unserved: [unserved.status, unserved.headers.get('x-upstream')],
      };
    }, upstream.url);
    expect(through.header).toBe('independent');
    expect(through.id).toMatch(/-0000-5000-9000-/);
    expect(through.same).toBe(true);
    expect(through.unserved).toEqual([200, 'independent']);
    await upstream.stop();
    const local = await page.evaluate(async (id) => {
      const response = await fetch(`http://localhost:1000/conversation/${id}`);
      return {
        status: response.status,
        header: response.headers.get('x-upstream'),
        name: ((await response.json()) as { name: string }).name,
      };
    }, through.id);
    expect(local).toEqual({ status: 200, header: null, name: 'through the worker' });
    await page.waitForSelector('#mirror[data-mirror="down"]');
  });

  it('writes from 3 tabs while it is away, then back: 0 lost, 0 duplicated, order kept, both sides equal; the indicator follows', async () => {
    const upstream = await upstreamOn();
    const context = await newContext();
    const tabs = [await openMirrored(context, upstream)];
    await upstream.stop();
    tabs.push(await context.newPage(), await context.newPage());
    for (const tab of tabs.slice(1)) await tab.goto(demoUrl(upstream));
    for (const tab of tabs) await tab.waitForSelector('#status[data-state="ready"]');
    // Written at once from the three tabs, each in its own order.
    const written = await Promise.all(tabs.map((tab, i) => write(tab, `tab ${i}`, 6)));
    await tabs[0]!.waitForSelector('#mirror[data-mirror="down"]:not([data-outbox="0"])');
    // Every write was acknowledged, so it is in the outbox; the status reads it again a moment after.
    await expect.poll(async () => (await piecesControls(tabs[0]!).mirrorStatus())!.outbox.length, { timeout: 10_000 }).toBe(3 * 7);
    await upstream.start();
    await drained(tabs[1]!);
    expect(held(upstream)).toEqual(Object.fromEntries([0, 1, 2].map((i) => [`tab ${i}`, [0, 1, 2, 3, 4, 5].map((m) => `tab ${i} #${m}`)])));
    expect(upstream.log.filter((e) => e.path === '/conversations/create')).toHaveLength(3);
    expect(upstream.log.filter((e) => e.path === '/messages/create')).toHaveLength(18);
    // No id a tab was given while it was away reached the upstream; reads by them keep working.
    const sent = JSON.stringify(upstream.log);
    for (const { conversation, messages } of written) for (const id of [conversation, ...messages]) expect(sent).not.toContain(id);
    const byLocalId = await tabs[2]!.evaluate(
      (id) => fetch(`http://localhost:1000/conversation/${id}`).then((r) => r.json() as Promise<{ name: string }>),
      written[2]!.conversation,
    );
    expect(byLocalId.name).toBe('tab 2');
    // The local copy holds what the upstream holds, under its ids.
    await expect
      .poll(async () => (await piecesControls(tabs[0]!).exportData()).conversations.map((c) => c.id).sort(), { timeout: 10_000 })
      .toEqual(
        upstream
          .snapshot()
          .conversations.map((c) => c.id as string)
          .sort(),
      );
    await tabs[0]!.waitForSelector('#mirror[data-mirror="up"][data-outbox="0"]');
  });

  it('an asset created while it is away (with a format value edited and a comment) is on the upstream once it returns, under the id it gave; reads by the local id keep working', async () => {
    const upstream = await upstreamOn();
    const context = await newContext();
    const page = await openMirrored(context, upstream);
    await upstream.stop();
    const local = await page.evaluate(async () => {
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`http://localhost:1000${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
        return { body: (await response.json()) as any, header: response.headers.get('x-upstream') };
      };
      const { application } = (await post('/connect', { application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX' } })).body;
      const made = await post('/assets/create', {
        asset: {
          application,
          format: { fragment: { string: { raw: 'export const offline = true;\n' } } },
          metadata: { name: 'offline.ts', tags: [{ text: 'away' }] },
        },
      });
      const format = made.body.formats.iterable[0].id as string;
      await post('/format/update/value', {
        id: format,
        asset: { id: made.body.id },
        fragment: { string: { raw: 'export const offline = false;\n' } },
      });
      const comment = await post('/annotations/create', { type: 'COMMENT', text: 'written while away', asset: made.body.id });
      return {
        id: made.body.id as string,
        format,
        comment: comment.body.id as string,
        application: application.id as string,
        header: made.header,
      };
    });
    // Answered here.
    expect(local.header).toBeNull();
    await page.waitForSelector('#mirror[data-mirror="down"]:not([data-outbox="0"])');
    await upstream.start();
    await drained(page);
    const theirs = upstream.snapshot().assets.filter((a) => a.name === 'offline.ts');
    expect(theirs).toHaveLength(1);
    const asset = theirs[0]!;
    // The upstream's own id (its scheme), the value edited, the comment and the tag on it.
    expect(asset.id).toMatch(/-0000-5000-9000-/);
    expect(asset.original.reference.fragment.string.raw).toBe('export const offline = false;\n');
    expect(asset.annotations.iterable.map((a: { type: string; text: string }) => `${a.type}:${a.text}`)).toContain(
      'COMMENT:written while away',
    );
    expect(asset.tags.iterable.map((t: { text: string }) => t.text)).toEqual(['away']);
    // Sent once, and no id made in the browser reached it.
    expect(upstream.log.filter((e) => e.path === '/assets/create')).toHaveLength(1);
    const sent = JSON.stringify(upstream.log);
    for (const id of [local.id, local.format, local.comment, local.application]) expect(sent).not.toContain(id);
    // Reads by the ids the page was given keep working (the worker rewrites them), and answer the upstream's record.
    const read = await page.evaluate(
      async ({ id, format }) => {
        const [byAsset, byFormat] = await Promise.all([
          fetch(`http://localhost:1000/asset/${id}`),
          fetch(`http://localhost:1000/format/${format}`),
        ]);
        return {
          asset: ((await byAsset.json()) as { id: string }).id,
          format: ((await byFormat.json()) as { asset: { id: string } }).asset.id,
        };
      },
      { id: local.id, format: local.format },
    );
    expect(read).toEqual({ asset: asset.id, format: asset.id });
    // The local copy holds it under the upstream's id.
    await expect
      .poll(async () => (await piecesControls(page).exportData()).assets.map((a) => a.id), { timeout: 10_000 })
      .toContain(asset.id);
  });

  it('keeps identifier sockets open through down, up and the drain; they end holding the upstream’s ids', async () => {
    const upstream = await upstreamOn();
    const context = await newContext();
    const page = await openMirrored(context, upstream);
    await write(page, 'while up', 0);
    await listen(page);
    await upstream.stop();
    const offline = await write(page, 'while down', 2);
    await expect.poll(() => socketIds(page), { timeout: 10_000 }).toContain(offline.conversation);
    await upstream.start();
    await drained(page);
    const theirs = upstream
      .snapshot()
      .conversations.map((c) => c.id as string)
      .sort();
    await expect.poll(async () => (await socketIds(page)).sort(), { timeout: 10_000 }).toEqual(theirs);
    expect(await page.evaluate(() => window.streamSocket!.readyState)).toBe(1);
    // The socket heard the local id go and the upstream's come.
    const frames = await page.evaluate(() => window.streamMessages.flat());
    expect(frames).toContainEqual({ conversation: { id: offline.conversation }, deleted: true });
  });

  it('the worker stopped mid-drain: the replay resumes, a create in flight is looked for, nothing is sent twice or lost', async (test) => {
    need(test, 'stopWorkers');
    const upstream = await upstreamOn(40);
    const context = await newContext();
    const page = await openMirrored(context, upstream);
    await upstream.stop();
    await page.evaluate(async () => {
      for (let i = 0; i < 30; i++) {
        await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            type: 'COPILOT',
            name: `queued ${i}`,
            messages: [{ role: 'USER', fragment: { string: { raw: `queued ${i}` } } }],
          }),
        });
      }
    });
    await upstream.start();
    // Once the replay is under way, the worker is stopped, again and again.
    await page.evaluate(() => fetch('http://localhost:1000/.well-known/health').then(() => {}));
    await expect.poll(() => upstream.log.filter((e) => e.path === '/conversations/create').length, { timeout: 30_000 }).toBeGreaterThan(3);
    for (let stops = 0; stops < 3; stops++) {
      await context.stopWorkers();
      await sleep(150);
      await page.evaluate(() =>
        fetch('http://localhost:1000/.well-known/health').then(
          () => {},
          () => {},
        ),
      );
    }
    await drained(page);
    const names = upstream
      .snapshot()
      .conversations.map((c) => c.name as string)
      .sort();
    expect(names).toEqual(Array.from({ length: 30 }, (_, i) => `queued ${i}`).sort());
  });
});

describe('page mode (no service worker)', () => {
  it('tabs share one outbox and one replayer (a lease where there are no Web Locks): nothing sent twice', async (test) => {
    need(test, 'loopbackHosts');
    const upstream = await upstreamOn();
    const demo = new URL(inject('demoUrl'));
    const { context } = await launch(undefined, { loopbackHosts: ['pieces-lan.test'] });
    try {
      const base = `http://pieces-lan.test:${demo.port}/`;
      const a = await openMirrored(context, upstream, 'up', base, '[data-mode="page"]');
      await upstream.stop();
      const b = await context.newPage();
      await b.goto(demoUrl(upstream, base));
      await b.waitForSelector('#status[data-state="ready"][data-mode="page"]');
      await Promise.all([write(a, 'page a', 4), write(b, 'page b', 4)]);
      await upstream.start();
      await drained(b);
      expect(held(upstream)).toEqual({
        'page a': [0, 1, 2, 3].map((i) => `page a #${i}`),
        'page b': [0, 1, 2, 3].map((i) => `page b #${i}`),
      });
      expect(upstream.log.filter((e) => e.path === '/conversations/create')).toHaveLength(2);
      expect(upstream.log.filter((e) => e.path === '/messages/create')).toHaveLength(8);
    } finally {
      await context.close();
    }
  });
});

describe('Local Network Access', () => {
  it('a page the browser refuses the local network: blocked, answered locally; allowed, up', async (test) => {
    need(test, 'localNetworkAccess');
    const upstream = await upstreamOn();
    const demo = new URL(inject('demoUrl'));
    // The demo's origin taken for a public one: reaching the upstream (loopback) needs the permission, which the user refused.
    const { context } = await launch(undefined, { publicPorts: [Number(demo.port)] });
    await context.setLocalNetwork!(demo.origin, 'denied');
    try {
      const page = await openMirrored(context, upstream, 'blocked');
      const status = await piecesControls(page).mirrorStatus();
      expect(status!.lastError).toMatch(/refused this page access to the local network/);
      // Answered here, and queued.
      const created = await page.evaluate(async () => {
        const response = await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', name: 'while blocked' }),
        });
        return { status: response.status, header: response.headers.get('x-upstream') };
      });
      expect(created).toEqual({ status: 200, header: null });
      expect(upstream.log).toEqual([]);
      // Allowed (as the user would, in the prompt): the page's step reaches it, the queue drains.
      await context.setLocalNetwork!(demo.origin, 'granted');
      await page.click('#mirror');
      await page.waitForSelector('#mirror[data-mirror="up"][data-outbox="0"]', { timeout: 30_000 });
      expect(Object.keys(held(upstream))).toEqual(['while blocked']);
    } finally {
      await context.close();
    }
  });
});
