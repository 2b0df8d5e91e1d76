/** The test controls in a browser: from one tab, for every tab of the origin, across worker restarts. */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chromium } from 'playwright-core';
import { piecesControls } from '../../src/node/page-controls.js';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.js';
import { engine, launch, need, type BrowserContext, type Page } from './engine.js';
import { openDemo, storeIds } from './pages.js';

const status = (page: Page, path: string) =>
  page.evaluate(
    (url) =>
      fetch(url).then(
        (r) => r.status,
        () => 'network error',
      ),
    `http://localhost:1000${path}`,
  );

describe('controls', () => {
  let context: BrowserContext;
  let a: Page;
  let b: Page;

  beforeAll(async () => {
    ({ context } = await launch());
    a = await openDemo(context);
    b = await openDemo(context);
  });
  afterAll(() => context?.close());

  it('seed, export and reset from one tab change the store every tab reads', async () => {
    const pieces = piecesControls(a);
    await pieces.reset();
    await pieces.seed({ conversations: [{ id: '44444444-4444-4444-8444-444444444444', type: 'COPILOT', name: 'seeded from a test' }] });
    expect(await storeIds(b)).toEqual(['44444444-4444-4444-8444-444444444444']);
    expect((await pieces.exportData()).conversations.map((c) => c.name)).toEqual(['seeded from a test']);
    await pieces.reset();
    expect(await storeIds(b)).toEqual([]);
    await expect(pieces.seed({ conversations: [{ type: 'CHAT' }] })).rejects.toThrow(
      'data.conversations[0].type must be one of UNKNOWN, COPILOT; got "CHAT".',
    );
  });

  it('overrides set from one tab hold in every tab until reset', async () => {
    const pieces = piecesControls(a);
    await pieces.use({ operation: 'conversationsSnapshot', status: 500, body: 'forced' }, { path: '/applications', networkError: true });
    expect(await status(b, '/conversations')).toBe(500);
    expect(await status(b, '/applications')).toBe('network error');
    await pieces.resetOverrides();
    expect(await status(b, '/conversations')).toBe(200);
    expect(await status(a, '/applications')).toBe(200);
  });

  it('overrides hold across a worker restart', async (test) => {
    need(test, 'stopWorkers');
    const pieces = piecesControls(a);
    await pieces.use({ operation: 'conversationsSnapshot', status: 503 });
    await context.stopWorkers();
    expect(await status(b, '/conversations')).toBe(503);
    await pieces.resetOverrides();
    expect(await status(b, '/conversations')).toBe(200);
  });
});

describe("Playwright's serviceWorkers: 'block'", () => {
  it('runs in the page, and the controls reach it', async (test) => {
    if (engine.name !== 'chromium') test.skip('a Playwright option: tested in Chromium');
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
    try {
      const context = await browser.newContext({ serviceWorkers: 'block' });
      const page = await context.newPage();
      await page.goto(inject('demoUrl'));
      await page.waitForSelector('#status[data-state="ready"][data-mode="page"]');
      expect(await page.textContent('#status')).toContain('service worker registration is blocked in this browser');
      const pieces = piecesControls(page);
      await pieces.reset();
      await pieces.seed({ conversations: [{ id: '55555555-5555-4555-8555-555555555555', type: 'COPILOT', name: 'seeded in page mode' }] });
      expect(await storeIds(page as never)).toEqual(['55555555-5555-4555-8555-555555555555']);
      await pieces.use({ operation: 'conversationsSnapshot', status: 503 });
      expect(await status(page as never, '/conversations')).toBe(503);
      await pieces.resetOverrides();
      expect(await status(page as never, '/conversations')).toBe(200);
    } finally {
      await browser.close();
    }
  });
});
