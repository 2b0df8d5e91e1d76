/**
 * Chromium's own ways of clearing a site under a running worker: DevTools'
 * "Clear site data" (CDP Storage.clearDataForOrigin, which closes the
 * worker's database connection) and a Clear-Site-Data response header.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { engine } from './engine.js';

const contexts: BrowserContext[] = [];
afterEach(async () => {
  while (contexts.length) await contexts.pop()!.close();
});

async function demo(): Promise<{ context: BrowserContext; page: Page }> {
  const { context } = await launchChromium();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(inject('demoUrl'));
  await page.waitForSelector('#status[data-state="ready"]');
  return { context, page };
}

const create = (page: Page) =>
  page.evaluate(async () => {
    const response = await fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"type":"COPILOT"}',
    });
    return { status: response.status, id: response.ok ? ((await response.json()) as { id: string }).id : undefined };
  });

const ids = (page: Page) =>
  page.evaluate(async () =>
    ((await (await fetch('http://localhost:1000/conversations/identifiers')).json()) as { iterable: { id: string }[] }).iterable.map(
      (i) => i.id,
    ),
  );

describe.skipIf(engine.name !== 'chromium')('clearing the site in Chromium', () => {
  it('DevTools "Clear site data" (Storage.clearDataForOrigin): no ghosts, writes at once', async () => {
    const { context, page } = await demo();
    const ghost = await create(page);
    expect(await ids(page)).toEqual([ghost.id]);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.clearDataForOrigin', { origin: new URL(inject('demoUrl')).origin, storageTypes: 'indexeddb' });
    await cdp.detach();
    expect(await ids(page)).toEqual([]);
    const after = await create(page);
    expect(after.status).toBe(200);
    expect(await ids(page)).toEqual([after.id]);
  });

  it('DevTools "Clear site data" while creates run: every create answers 200 (kept) or 503, never 500', async () => {
    const { context, page } = await demo();
    await page.evaluate(() => {
      window.burstDone = 0;
      const create = (i: number) =>
        fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            type: 'COPILOT',
            name: `burst ${i}`,
            messages: [{ role: 'USER', fragment: { string: { raw: `message ${i}` } } }],
          }),
        }).then(async (r) => {
          window.burstDone++;
          return { status: r.status, id: r.ok ? ((await r.json()) as { id: string }).id : undefined, body: r.ok ? '' : await r.text() };
        });
      // 10 writers, 15 creates each, one after another: creates are in flight from before the clearing to after it.
      window.burst = Promise.all(
        Array.from({ length: 10 }, async (_, writer) => {
          const outcome = [];
          for (let i = 0; i < 15; i++) outcome.push(await create(writer * 15 + i));
          return outcome;
        }),
      ).then((outcomes) => outcomes.flat());
    });
    // Cleared once the first create was answered, with the rest in flight (was: up to all 150 answered 500).
    await page.waitForFunction(() => window.burstDone >= 1);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.clearDataForOrigin', { origin: new URL(inject('demoUrl')).origin, storageTypes: 'indexeddb' });
    await cdp.detach();
    const outcome = await page.evaluate(() => window.burst);
    const failed = outcome.filter((o) => o.status !== 200 && o.status !== 503);
    expect(failed.map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(outcome.filter((o) => o.status === 200).length).toBeGreaterThan(0);
    // What is stored now was acknowledged.
    const acknowledged = outcome.flatMap((o) => (o.id ? [o.id] : []));
    for (const id of await ids(page)) expect(acknowledged).toContain(id);
    expect((await create(page)).status).toBe(200);
  });

  it('a Clear-Site-Data response: the demo says lost, then recovered, and works', async () => {
    const { page } = await demo();
    await create(page);
    await page.evaluate(async () => {
      window.pillStates = [];
      const pill = document.querySelector('#status')!;
      new MutationObserver(() =>
        window.pillStates.push(`${pill.getAttribute('data-state')}: ${pill.textContent} | ${pill.getAttribute('title') ?? ''}`),
      ).observe(pill, { childList: true, subtree: true, characterData: true, attributes: true });
      // The demo server answers it with the header (test/browser/global-setup.ts).
      await fetch('/clear-site-data');
    });
    await page.waitForFunction(
      () => {
        // The worker itself started again: the browser clears the database and unregisters the worker
        // one after the other, and the database's recovery alone can come before the worker is gone.
        const lost = window.pillStates.findIndex((s) => s.startsWith('lost: '));
        return lost >= 0 && window.pillStates.slice(lost).some((s) => /^ready: .*recovered \| started again after/.test(s));
      },
      undefined,
      { timeout: 20_000 },
    );
    const states = await page.evaluate(() => window.pillStates);
    expect(await ids(page), states.join('\n')).toEqual([]);
    expect((await create(page)).status).toBe(200);
  });
});

declare global {
  interface Window {
    pillStates: string[];
    burstDone: number;
    burst: Promise<Array<{ status: number; id?: string; body: string }>>;
  }
}
