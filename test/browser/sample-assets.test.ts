/**
 * `startPiecesService({ sampleAssets: false })` (the demo's `?sampleAssets=0`): an app's first
 * `GET /assets` holds only what it made, in worker mode (the option travels to the worker) and
 * in page mode (where no service worker can run).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { engine, launch, type BrowserContext, type LaunchOptions, type Page } from './engine.js';

const contexts: BrowserContext[] = [];
afterEach(async () => {
  while (contexts.length) await contexts.pop()!.close();
});

async function open(mode: 'worker' | 'page', query: string, options?: LaunchOptions): Promise<Page> {
  const { context } = await launch(undefined, options);
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${inject('demoUrl')}${query}`);
  await page.waitForSelector(`#status[data-state="ready"][data-mode="${mode}"]`);
  return page;
}

const assetNames = (page: Page) =>
  page.evaluate(async () => {
    const body = (await (await fetch('http://localhost:1000/assets')).json()) as { iterable: Array<{ name: string }> };
    return body.iterable.map((a) => a.name);
  });

describe(`the sample assets turned off from the page in ${engine.name}`, () => {
  it('worker mode: the first GET /assets holds nothing (with them: the four samples)', async () => {
    expect(await assetNames(await open('worker', '?sampleAssets=0'))).toEqual([]);
    expect(await assetNames(await open('worker', ''))).toHaveLength(4);
  });

  it.skipIf(engine.lacks('blockServiceWorkers'))('page mode: the first GET /assets holds nothing', async () => {
    expect(await assetNames(await open('page', '?sampleAssets=0', { blockServiceWorkers: true }))).toEqual([]);
  });
});
