import { afterEach, describe, expect, inject, it } from 'vitest';
import { engine, launch, need, type BrowserContext, type Page } from './engine.js';

const contexts: BrowserContext[] = [];
afterEach(async () => {
  while (contexts.length) await contexts.pop()!.close();
});

async function start(profile?: string, options?: { restartable: true }) {
  const launched = await launch(profile, options);
  contexts.push(launched.context);
  const page = await launched.context.newPage();
  await page.goto(inject('demoUrl'));
  await page.waitForSelector('#status[data-state="ready"]');
  return { ...launched, page };
}

const createConversation = (page: Page, name: string) =>
  page.evaluate(async (n) => {
    const response = await fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'COPILOT', name: n, messages: [{ role: 'USER', fragment: { string: { raw: `${n} text` } } }] }),
    });
    return ((await response.json()) as { id: string }).id;
  }, name);

const conversations = (page: Page) =>
  page.evaluate(async () => {
    const response = await fetch('http://localhost:1000/conversations');
    const body = (await response.json()) as {
      iterable: Array<{
        id: string;
        name: string;
        messages: { iterable: Array<{ reference: { fragment: { string: { raw: string } } } }> };
      }>;
    };
    return body.iterable.map((c) => ({ id: c.id, name: c.name, text: c.messages.iterable[0]?.reference.fragment.string.raw }));
  });

/** The conversations snapshot as the demo reads it (`transferables=true`): its status and ids, or what the fetch threw. */
const snapshotIds = (page: Page) =>
  page.evaluate(async () => {
    try {
      const response = await fetch('http://localhost:1000/conversations?transferables=true');
      return { status: response.status, ids: ((await response.json()) as { iterable: Array<{ id: string }> }).iterable.map((c) => c.id) };
    } catch (error) {
      return { error: String(error) };
    }
  });

describe(`persistence and control in ${engine.name}`, () => {
  it('answers the first requests of the very first load, once startPiecesService resolves', async () => {
    const { page } = await start();
    const controlled = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? null);
    expect(controlled).toMatch(/\/pieces-os-worker\.js$/);
    const first = await page.evaluate(async () => (await fetch('http://localhost:39300/applications')).status);
    expect(first).toBe(200);
  });

  it('keeps data across a reload and a browser restart on the same profile', async (test) => {
    need(test, 'restart');
    const { context, page, profile } = await start(undefined, { restartable: true });
    const id = await createConversation(page, 'durable');

    await page.reload();
    await page.waitForSelector('#status[data-state="ready"]');
    expect(await conversations(page)).toEqual([{ id, name: 'durable', text: 'durable text' }]);

    await context.close();
    contexts.pop();
    const restarted = await start(profile, { restartable: true });
    expect(await conversations(restarted.page)).toEqual([{ id, name: 'durable', text: 'durable text' }]);
  });

  it("reads the kept snapshot after a browser restart on the same profile: in the demo, and by the page's fetch", async (test) => {
    need(test, 'restart');
    // The steps (WebKit: its small browser on a real profile, driven through WebKitWebDriver): the demo
    // open, a conversation with a message created by the page's fetch (34 KB: its kept body is a file of its own).
    const { context, page, profile } = await start(undefined, { restartable: true });
    const text = `kept ${'across a restart '.repeat(2_000)}`;
    const id = await page.evaluate(async (raw) => {
      const response = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'COPILOT', name: 'kept', messages: [{ role: 'USER', fragment: { string: { raw } } }] }),
      });
      return ((await response.json()) as { id: string }).id;
    }, text);
    // The demo reads the snapshot again for the change: its body is kept.
    await page.waitForFunction(() => document.querySelector('#conversation-list')?.textContent?.includes('kept'));
    expect(await snapshotIds(page)).toEqual({ status: 200, ids: [id] });
    await context.close();
    contexts.pop();

    const restarted = await start(profile, { restartable: true });
    await restarted.page.waitForFunction(() => document.querySelector('#conversation-list')?.textContent?.includes('kept'));
    expect(await restarted.page.textContent('#status')).toBe('Offline-ready');
    expect(await restarted.page.evaluate(() => document.querySelector<HTMLElement>('#error')!.hidden)).toBe(true);
    expect(await snapshotIds(restarted.page)).toEqual({ status: 200, ids: [id] });
    expect((await conversations(restarted.page)).map((c) => c.text)).toEqual([text]);
  });

  it('keeps data across a worker stop', async (test) => {
    need(test, 'stopWorkers');
    const { context, page } = await start();
    const id = await createConversation(page, 'durable');
    await context.stopWorkers();
    // The next fetch wakes the worker, which reopens the database.
    expect(await conversations(page)).toEqual([{ id, name: 'durable', text: 'durable text' }]);
  });

  it('takes control again after a hard reload, which loads the page past the worker', async (test) => {
    need(test, 'hardReload');
    const { context, page } = await start();
    const id = await createConversation(page, 'before hard reload');
    await context.hardReload(page);
    const navigation = await page.evaluate(
      () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).workerStart,
    );
    expect(navigation).toBe(0);
    await page.waitForSelector('#status[data-state="ready"]');
    expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
    expect((await conversations(page)).map((c) => c.id)).toEqual([id]);
  });
});
