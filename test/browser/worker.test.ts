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
