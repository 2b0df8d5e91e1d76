/**
 * The same component tests in a real browser: the app registers the worker;
 * the test drives its data and failures with piecesControls(page), which sends
 * reset/seed/use to the worker from the page (so they hold for every tab).
 * The test bodies read the same with @playwright/test's `page` fixture.
 */
import { afterAll, afterEach, beforeAll, expect, inject, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { piecesControls, type PiecesControls } from 'pieces-os-worker/node';
import type { ViteDevServer } from 'vite';
import { launchChromium, startApp } from './app-server.js';

const conversations = [
  { id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0001', type: 'COPILOT', name: 'Refactor the parser', created: { value: '2025-01-01T09:00:00Z' } },
  {
    id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0002',
    type: 'COPILOT',
    name: 'Write the release notes',
    created: { value: '2025-01-02T09:00:00Z' },
  },
];

let browser: Browser;
let app: { url: string; server: ViteDevServer };
let context: BrowserContext;
let page: Page;
let pieces: PiecesControls;

const names = () => page.evaluate(() => [...document.querySelectorAll('#conversations li')].map((li) => li.textContent));

beforeAll(async () => {
  app = await startApp(inject('packageRoot'));
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(app.url); // registers the worker
  await page.waitForSelector('#conversations[data-status="ready"]', { state: 'attached' });
  pieces = piecesControls(page);
});

afterEach(async () => {
  await pieces.reset();
  await pieces.resetOverrides();
});

afterAll(async () => {
  await browser?.close();
  await app?.server.close();
});

/** Loads the app again, so that it reads the data the test has just arranged. */
async function reload(status = 'ready') {
  await page.reload();
  await page.waitForSelector(`#conversations[data-status="${status}"]`, { state: 'attached' });
}

it('shows the seeded conversations', async () => {
  await pieces.seed({ conversations });
  await reload();
  expect(await names()).toEqual(['Refactor the parser', 'Write the release notes']);
});

it('follows a conversation created in another tab, live', async () => {
  await pieces.seed({ conversations });
  await reload();
  const other = await context.newPage();
  await other.goto(app.url);
  await other.waitForSelector('#conversations[data-status="ready"]', { state: 'attached' });
  await other.evaluate(() =>
    fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'COPILOT', name: 'Created in another tab' }),
    }),
  );
  await page.waitForFunction(() => document.querySelectorAll('#conversations li').length === 3);
  expect((await names()).at(-1)).toBe('Created in another tab');
  await other.close();
});

it('shows the error when the snapshot fails with a 500', async () => {
  await pieces.use({ operation: 'conversationsSnapshot', status: 500, body: 'The database is locked.' });
  await reload('error');
  expect(await page.textContent('#conversations')).toBe('Could not load conversations: The database is locked.');
});

it('shows the loading state while the answer is delayed', async () => {
  await pieces.seed({ conversations });
  // Every snapshot is slow (not `once`: the tab's live list may read one before the reload).
  await pieces.use({ operation: 'conversationsSnapshot', delay: 1_000 });
  await reload('loading');
  expect(await page.textContent('#conversations')).toBe('Loading…');
  await page.waitForSelector('#conversations[data-status="ready"]', { state: 'attached' });
  expect(await names()).toHaveLength(2);
});

it('starts each test from the initial data (reset between tests)', async () => {
  const data = await pieces.exportData();
  expect(data.conversations).toEqual([]);
  expect(data.assets).toHaveLength(4); // the sample assets
});
