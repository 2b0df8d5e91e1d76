import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { openProbe } from './pages.js';

describe(`the worker in ${engine.name}`, () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ({ context } = await launch());
    page = await context.newPage();
    await page.goto(inject('demoUrl'));
    await page.waitForSelector('#status[data-state="ready"]');
  });

  afterAll(async () => {
    await context?.close();
  });

  it('answers cross-origin fetches to both default bases with nothing listening', async () => {
    const result = await page.evaluate(async () => {
      const created = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'COPILOT', name: 'from the page' }),
      });
      const conversation = await created.json();
      const ids = await (await fetch('http://localhost:39300/conversations/identifiers')).json();
      return { status: created.status, id: conversation.id, ids: ids.iterable.map((i: { id: string }) => i.id) };
    });
    expect(result.status).toBe(200);
    expect(result.ids).toContain(result.id);
  });

  it('sends requests outside the bases to the network without a fetch event, where the browser has static routes', async () => {
    const probe = await openProbe(context);
    const sources = await probe.evaluate(async () => {
      const own = await fetch('/probe.html?outside');
      const under = await fetch('http://localhost:1000/applications');
      // An entry is added once its body has been read.
      const [ownText] = await Promise.all([own.text(), under.text()]);
      // Every port of the bases is still answered (each wildcard of the route's patterns, and the single ports).
      const others = ['http://localhost:5323', 'http://127.0.0.1:39319', 'http://127.0.0.1:39333', 'http://localhost:39300'];
      const otherStatuses = await Promise.all(others.map(async (base) => (await fetch(`${base}/.well-known/version`)).status));
      const timing = (name: string) =>
        performance.getEntriesByName(name)[0] as PerformanceResourceTiming & { workerMatchedSourceType?: string };
      return {
        statuses: [own.status, under.status, ...otherStatuses],
        ownText,
        // Chromium says which route a request took; engines without static routes have no such field.
        reported: 'workerMatchedSourceType' in PerformanceResourceTiming.prototype,
        outside: timing(new URL('/probe.html?outside', location.href).href).workerMatchedSourceType,
        base: timing('http://localhost:1000/applications').workerMatchedSourceType,
      };
    });
    expect(sources.statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(sources.ownText).toContain('<title>probe</title>');
    if (engine.name === 'chromium') expect(sources.reported).toBe(true);
    if (sources.reported) {
      expect(sources.outside).toBe('network');
      expect(sources.base).not.toBe('network');
    }
  });

  it('leaves other origins alone', async () => {
    // From a page with no CSP: the demo's own policy would refuse the request before the worker saw it.
    const probe = await openProbe(context);
    const outside = await probe.evaluate(async () => {
      try {
        await fetch('http://localhost:1001/applications');
        return 'answered';
      } catch {
        return 'network error';
      }
    });
    expect(outside).toBe('network error');
    await probe.close();
  });
});
