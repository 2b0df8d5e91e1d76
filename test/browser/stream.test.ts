import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { listen, openDemo, socketIds, storeIds } from './pages.js';

function create(page: Page, count: number) {
  return page.evaluate(async (n) => {
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const response = await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', name: `tab B ${i}` }),
        });
        ids.push(((await response.json()) as { id: string }).id);
      }),
    );
    return ids;
  }, count);
}

describe(`the stream across tabs in ${engine.name}`, () => {
  let context: BrowserContext;
  let a: Page;
  let b: Page;

  beforeAll(async () => {
    ({ context } = await launch());
    a = await openDemo(context);
    b = await openDemo(context);
  });

  afterAll(async () => {
    await context?.close();
  });

  it('delivers writes made in tab B to the socket in tab A, deletes as deleted:true', async () => {
    await listen(a);
    expect(await a.evaluate(() => window.streamSocket instanceof WebSocket)).toBe(true);
    await a.waitForFunction(() => window.streamMessages.length === 1);
    const [id] = await create(b, 1);
    await a.waitForFunction((wanted) => window.streamMessages.flat().some((i) => i.conversation.id === wanted), id);
    await b.evaluate((conversation) => fetch(`http://localhost:1000/conversations/${conversation}/delete`, { method: 'POST' }), id!);
    await a.waitForFunction((wanted) => window.streamMessages.flat().some((i) => i.conversation.id === wanted && i.deleted), id);
    const messages = await a.evaluate(() => window.streamMessages);
    expect(messages.slice(1)).toEqual([[{ conversation: { id } }], [{ conversation: { id }, deleted: true }]]);
  });

  it('a socket opened while another tab writes 20 conversations ends with exactly the snapshot ids', async () => {
    const writing = create(b, 20);
    await listen(a);
    const written = await writing;
    const expected = await storeIds(a);
    expect(expected).toEqual(expect.arrayContaining(written));
    await a.waitForFunction((n) => {
      const ids = new Set<string>();
      for (const item of window.streamMessages.flat()) ids.add(item.conversation.id);
      return ids.size >= n;
    }, expected.length);
    const ids = await socketIds(a);
    expect([...ids].sort()).toEqual([...expected].sort());
    const all = (await a.evaluate(() => window.streamMessages)).flat().map((i) => i.conversation.id);
    expect(new Set(all).size).toBe(all.length);
  });
});
