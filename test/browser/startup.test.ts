/**
 * Start-up in Chromium outside the plain path: failures that say what to do,
 * the update of a stale worker on the reload that installs it, the app's own
 * worker (attached to, or registered with its query kept and as a module),
 * blocked storage, and `fallback: false`. Every console message and error of
 * the page library starts with `[pieces-os-worker]`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartOptions } from '../../src/page/index.js';
import { engine, launch, type BrowserContext, type LaunchOptions, type Page } from './engine.js';
import type { LabResult } from './lab/lab.js';
import { startLab, type Lab } from './lab-server.js';

const INIT = 'Run `npx pieces-os-worker init public`';

/**
 * The PIECES_FAST_PATH=off run (vite.config.ts) runs only what a page's requests could answer
 * otherwise: not the failures, which reject before the fast path starts, nor page mode, which has none.
 */
const pathIndependent = process.env.PIECES_FAST_PATH === 'off';

let lab: Lab;

beforeAll(async () => {
  lab = await startLab();
}, 120_000);

afterAll(async () => {
  await lab?.close();
});

/** A fresh browser profile with the lab page open. */
async function openLab(options: LaunchOptions = {}, path = '/'): Promise<{ context: BrowserContext; page: Page }> {
  const { context } = await launch(undefined, options);
  const page = await context.newPage();
  await page.goto(lab.origin + path);
  await page.waitForFunction(() => 'lab' in window);
  return { context, page };
}

const start = (page: Page, options: StartOptions = {}) => page.evaluate((o) => window.lab.start(o), options) as Promise<LabResult>;

function prefixed(result: LabResult) {
  for (const line of result.logs) {
    if (line.includes('blocked by Playwright')) continue; // the harness's own line
    expect(line).toMatch(/^(info|warn|error|log): \[pieces-os-worker\] /);
  }
  if (result.error) expect(result.error).toMatch(/^\[pieces-os-worker\] /);
}

describe.skipIf(pathIndependent)('failures that say what to do', () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ({ context, page } = await openLab());
  });

  afterAll(async () => {
    await context?.close();
  });

  it('a missing worker script (404) names the init command and the Vite plugin', async () => {
    const result = await start(page, { url: '/missing.js' });
    prefixed(result);
    expect(result.error).toContain('the worker script http://127.0.0.1:');
    expect(result.error).toContain('/missing.js is missing (the server answered 404)');
    expect(result.error).toContain(INIT);
    expect(result.error).toContain('pieces-os-worker/vite');
  });

  it('an HTML page served where the script should be says so, with the same fix', async () => {
    const result = await start(page, { url: '/nowhere/pieces-os-worker.js' });
    prefixed(result);
    expect(result.error).toContain('the server answered with text/html instead of JavaScript');
    expect(result.error).toContain(INIT);
  });

  it('a script that is not the pieces-os-worker script says so', async () => {
    await page.goto(`${lab.origin}/other/`);
    await page.waitForFunction(() => 'lab' in window);
    // It never answers the hello: a short wait (the option, default 10 s) gives the same error sooner.
    const result = await start(page, { url: '/other-sw.js', scope: '/other/', helloTimeoutMs: 1000 });
    prefixed(result);
    expect(result.error).toContain('/other-sw.js is not the pieces-os-worker script');
    expect(result.error).toContain(INIT);
  }, 30_000);
});

describe('a stale worker script', () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    lab.serve('stale');
    ({ context, page } = await openLab());
  });

  afterAll(async () => {
    await context?.close();
  });

  it('is reported while it is stale', async () => {
    const result = await start(page, { url: '/switch.js' });
    prefixed(result);
    expect(result.version).toMatchObject({ worker: '0.0.0-stale', mismatch: true });
    expect(result.logs.join('\n')).toMatch(
      /version mismatch: the page library is \d+\.\d+\.\d+ but the worker script is 0\.0\.0-stale\. Run `npx pieces-os-worker init public`/,
    );
  });

  it('is replaced on the very reload after the script was updated, with no warning', async () => {
    lab.serve('current');
    await page.reload();
    await page.waitForFunction(() => 'lab' in window);
    const result = await start(page, { url: '/switch.js' });
    prefixed(result);
    expect(result.version?.mismatch).toBe(false);
    expect(result.version?.worker).toBe(result.version?.page);
    expect(result.logs.join('\n')).not.toContain('mismatch');
    expect(await page.evaluate(() => fetch('http://localhost:1000/applications').then((r) => r.status))).toBe(200);
  });
});

describe("the app's own service worker", () => {
  it('registers a module worker with its own query kept (/app-sw.js?dev-sw)', async () => {
    const { context, page } = await openLab();
    try {
      const result = await start(page, { url: '/app-sw.js?dev-sw', type: 'module', bases: ['http://localhost:1000'] });
      prefixed(result);
      // The lab page is built with the fast path off in a PIECES_FAST_PATH=off run.
      expect(result).toMatchObject({ mode: 'worker', fastPath: process.env.PIECES_FAST_PATH !== 'off' });
      const script = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL);
      expect(script).toBe(`${lab.origin}/app-sw.js?dev-sw=&bases=http%3A%2F%2Flocalhost%3A1000`);
      expect(await page.evaluate(() => fetch('http://localhost:1000/applications').then((r) => r.status))).toBe(200);
    } finally {
      await context.close();
    }
  });

  it('attaches to the worker the app registered itself (register: false)', async () => {
    const { context, page } = await openLab();
    try {
      await page.evaluate(() => navigator.serviceWorker.register('/app-sw.js?dev-sw', { type: 'module' }));
      const result = await start(page, { register: false });
      prefixed(result);
      expect(result).toMatchObject({ mode: 'worker' });
      const created = await page.evaluate(async () => {
        const response = await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', name: 'attached' }),
        });
        return response.status;
      });
      expect(created).toBe(200);
    } finally {
      await context.close();
    }
  });
  it('register: false with an app worker that lacks the service says to add addPiecesRoutes()', async () => {
    const { context, page } = await openLab();
    try {
      await page.evaluate(() => navigator.serviceWorker.register('/other-sw.js'));
      const result = await start(page, { register: false, helloTimeoutMs: 1000 });
      prefixed(result);
      expect(result.error).toContain(`the service worker controlling this page (${lab.origin}/other-sw.js) does not answer the service`);
      expect(result.error).toContain("add `addPiecesRoutes()` from 'pieces-os-worker/worker' to it.");
    } finally {
      await context.close();
    }
  }, 30_000);
});

describe.skipIf(pathIndependent)('where the browser refuses service workers', () => {
  it.skipIf(engine.lacks('siteData'))(
    'blocked site data: says so (not "the user denied permission") and keeps the data in memory',
    async () => {
      const { context, page } = await openLab({ siteData: 'blocked' });
      try {
        const result = await start(page);
        prefixed(result);
        expect(result).toMatchObject({ mode: 'page', storage: 'memory' });
        expect(result.reason).toContain('the browser blocks site data (cookies and storage) for this site');
        const logs = result.logs.join('\n');
        expect(logs).not.toContain('denied permission');
        expect(logs).toContain('IndexedDB is unavailable here');
        expect(logs).toContain('running in the page, without a service worker');
        expect(await page.evaluate(() => fetch('http://localhost:1000/applications').then((r) => r.status))).toBe(200);
        // The stream works too (without BroadcastChannel where the browser refuses it).
        const streamed = await page.evaluate(
          () =>
            new Promise<string[][]>((resolve, reject) => {
              const messages: string[][] = [];
              const socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
              socket.onmessage = async (event) => {
                messages.push(
                  (JSON.parse(event.data) as { iterable: { conversation: { id: string } }[] }).iterable.map((i) => i.conversation.id),
                );
                if (messages.length === 1) {
                  const response = await fetch('http://localhost:1000/conversations/create', {
                    method: 'POST',
                    headers: { 'Content-Type': 'application/json' },
                    body: JSON.stringify({ type: 'COPILOT', name: 'in memory' }),
                  });
                  messages.push([((await response.json()) as { id: string }).id]);
                } else {
                  socket.close();
                  resolve(messages);
                }
              };
              socket.onerror = () => reject(new Error('the stream failed'));
            }),
        );
        expect(streamed[0]).toEqual([]);
        expect(streamed[2]).toEqual(streamed[1]);
      } finally {
        await context.close();
      }
    },
  );

  it.skipIf(engine.lacks('siteData'))('a third-party iframe (third-party cookies blocked): says so, and runs in the page', async () => {
    const { context, page } = await openLab({ siteData: 'third-party-blocked' });
    try {
      const result = await page.evaluate((url) => window.lab.startInFrame(url), `http://localhost:${lab.port}/framed/`);
      prefixed(result);
      expect(result.mode).toBe('page');
      expect(result.reason).toContain('this page runs in a third-party iframe');
      expect(result.logs.join('\n')).not.toContain('denied permission');
    } finally {
      await context.close();
    }
  });

  it.skipIf(engine.lacks('blockServiceWorkers'))('fallback: false rejects with the reason instead of running in the page', async () => {
    const { context, page } = await openLab({ blockServiceWorkers: true });
    try {
      const result = await start(page, { fallback: false });
      prefixed(result);
      expect(result.error).toMatch(
        /^\[pieces-os-worker\] no service worker can run: (service worker registration is blocked|this browser offers no service workers here)/,
      );
      const outside = await page.evaluate(() =>
        fetch('http://localhost:1000/applications').then(
          () => 'answered',
          () => 'network error',
        ),
      );
      expect(outside).toBe('network error');
    } finally {
      await context.close();
    }
  });
});
