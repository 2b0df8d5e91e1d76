/**
 * Conversations snapshots kept ready to send (src/storage/snapshots.ts) in a real
 * engine: stored in the database as segments, served from them, and never stale
 * after writes or a worker restart.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engine, launch, need, type BrowserContext, type Page } from './engine.js';
import { contextPerTest, openDemo } from './pages.js';

/**
 * The files in which the engine keeps the IndexedDB Blobs of a profile: Chromium's
 * `*.indexeddb.blob` folders, Firefox's `idb/*.files` folders, WebKit's `*.blob` files.
 */
function blobFiles(profile: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, inBlobFolder: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory())
        walk(path, inBlobFolder || entry.name.endsWith('.indexeddb.blob') || (entry.name.endsWith('.files') && dir.endsWith('idb')));
      else if (inBlobFolder || (entry.name.endsWith('.blob') && dir.includes('indexeddb'))) found.push(path);
    }
  };
  walk(profile, false);
  return found;
}

const newContext = contextPerTest();

type Conversation = {
  id: string;
  name: string;
  messages: { iterable: Array<{ id: string; reference?: { fragment: { string: { raw: string } } } }> };
};

/** Both snapshots, the id list and each conversation read alone, as the page sees them. */
const readAll = (page: Page) =>
  page.evaluate(async () => {
    const get = async (path: string) => {
      const response = await fetch(`http://localhost:1000${path}`);
      if (!response.ok) throw new Error(`${path} answered ${response.status}`);
      return response.json();
    };
    const full = (await get('/conversations')) as { iterable: Conversation[] };
    const light = (await get('/conversations?transferables=false')) as { iterable: Conversation[] };
    const ids = ((await get('/conversations/identifiers')) as { iterable: Array<{ id: string }> }).iterable.map((i) => i.id);
    const alone = (await Promise.all(ids.map((id) => get(`/conversation/${id}`)))) as Conversation[];
    return { full: full.iterable, light: light.iterable, ids, alone };
  });

/** What the snapshots store holds: segments per variant, and how their bodies are kept. */
const storedSegments = (page: Page) =>
  page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open('pieces-os-worker');
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const rows = await new Promise<Array<{ variant: number; start: number; ids: string[]; body: unknown }>>((resolve, reject) => {
      const request = db.transaction('snapshots').objectStore('snapshots').getAll();
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    db.close();
    return rows.map((row) => ({
      variant: row.variant,
      start: row.start,
      ids: row.ids,
      kind: row.body instanceof Blob ? 'Blob' : typeof row.body,
    }));
  });

/**
 * Reads both snapshots again (every segment kept now) until each variant of more than one
 * segment is also kept whole (where bodies are Blobs); whether they were.
 */
async function keptWhole(page: Page, ids: string[]): Promise<boolean> {
  let stored = await storedSegments(page);
  if (!stored.some((s) => s.kind === 'Blob')) return false;
  const several = [0, 1].filter((variant) => stored.filter((s) => s.variant === variant && s.start >= 0).length > 1);
  const whole = () => several.every((variant) => stored.some((s) => s.variant === variant && s.start === -1 && s.kind === 'Blob'));
  for (let tries = 0; tries < 50 && !whole(); tries++) {
    await expectTrue(page, ids);
    stored = await storedSegments(page);
  }
  return several.length > 0 && whole();
}

async function write(page: Page, path: string, body?: unknown) {
  return page.evaluate(
    async ({ path, body }) => {
      const response = await fetch(`http://localhost:1000${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
      return response.status === 204 ? null : response.json();
    },
    { path, body },
  );
}

/** The snapshots agree with the conversations read one by one, and list `expected` in order. */
async function expectTrue(page: Page, expected: string[]) {
  const { full, light, ids, alone } = await readAll(page);
  expect(ids).toEqual(expected);
  expect(full).toEqual(alone);
  expect(light.map((c) => c.id)).toEqual(expected);
  expect(light.map((c) => c.messages.iterable.map((m) => m.id))).toEqual(alone.map((c) => c.messages.iterable.map((m) => m.id)));
  expect(light.every((c) => c.messages.iterable.every((m) => m.reference === undefined))).toBe(true);
  return full;
}

describe(`snapshots kept ready to send in ${engine.name}`, () => {
  async function filled(count: number) {
    const context = await newContext();
    const page = await openDemo(context);
    const ids: string[] = [];
    const create = async (i: number) => {
      // Large enough that the snapshot with messages spans several segments.
      const messages = Array.from({ length: 3 }, (_, m) => ({
        role: m % 2 ? 'ASSISTANT' : 'USER',
        fragment: { string: { raw: `${i}.${m} ${'é lorem ipsum '.repeat(300)}` } },
      }));
      ids.push(((await write(page, '/conversations/create', { type: 'COPILOT', name: `c${i}`, messages })) as { id: string }).id);
    };
    for (let i = 0; i < count; i++) await create(i);
    return { context, page, ids, create };
  }

  it('keeps both snapshots as segments and serves them true through creates, edits and deletes', async (test) => {
    const { page, ids, create } = await filled(40);
    await expectTrue(page, ids);
    // Kept once answered.
    let stored = await storedSegments(page);
    for (let tries = 0; tries < 50 && new Set(stored.map((s) => s.variant)).size < 2; tries++) stored = await storedSegments(page);
    const full = stored.filter((s) => s.variant === 1);
    expect(full.length).toBeGreaterThan(1);
    expect(full.flatMap((s) => s.ids)).toEqual(ids);
    expect(stored.filter((s) => s.variant === 0).flatMap((s) => s.ids)).toEqual(ids);
    // Bodies are Blobs where the engine stores them (text where it refuses them).
    const kinds = new Set(stored.map((s) => s.kind));
    expect(kinds.size).toBe(1);
    expect(['Blob', 'string']).toContain([...kinds][0]);
    test.annotate(`segment bodies stored as ${[...kinds][0]} (${full.length} segments with messages)`);
    // Read again, nothing changed: each variant is kept whole too (Blobs), and must not be served once stale.
    if ([...kinds][0] === 'Blob') expect(await keptWhole(page, ids)).toBe(true);

    // Writes in the middle, at the end, and deletions: never served stale.
    const middle = ids[20]!;
    await write(page, '/messages/create', { role: 'USER', fragment: { string: { raw: 'added late' } }, conversation: { id: middle } });
    await write(page, `/conversations/${ids[3]}/delete`);
    ids.splice(3, 1);
    await create(40);
    const after = await expectTrue(page, ids);
    expect(after.find((c) => c.id === middle)!.messages.iterable.at(-1)!.reference!.fragment.string.raw).toBe('added late');
    expect(after.map((c) => c.id)).not.toContain(undefined);
  });

  describe('kept Blobs the engine lost', () => {
    const contexts: BrowserContext[] = [];
    afterEach(async () => {
      while (contexts.length) await contexts.pop()!.close();
    });
    const start = async (profile?: string) => {
      const launched = await launch(profile, { restartable: true });
      contexts.push(launched.context);
      return { ...launched, page: await openDemo(launched.context) };
    };

    it.for([
      ['as the engine leaves them (WebKit loses them)', false],
      ['deleted from the profile', true],
    ] as const)(
      'after a browser restart, with the kept Blob files %s: answers the right data, rebuilding what cannot be read',
      async ([, deleteFiles], test) => {
        need(test, 'restart');
        const first = await start();
        const ids: string[] = [];
        for (let i = 0; i < 8; i++) {
          const messages = [{ role: 'USER', fragment: { string: { raw: `${i} ${'kept across a restart '.repeat(400)}` } } }];
          ids.push(((await write(first.page, '/conversations/create', { type: 'COPILOT', name: `r${i}`, messages })) as { id: string }).id);
        }
        await expectTrue(first.page, ids);
        let stored = await storedSegments(first.page);
        for (let tries = 0; tries < 50 && new Set(stored.map((s) => s.variant)).size < 2; tries++)
          stored = await storedSegments(first.page);
        // Each variant kept whole as well (where bodies are Blobs): one more file to lose.
        const whole = await keptWhole(first.page, ids);
        if (whole) await test.annotate('kept whole too');
        await contexts.pop()!.close();
        // What a browser may do to the files behind stored Blobs (WebKit loses them on restart; eviction, a crash):
        // here they are deleted, in every engine, between two runs of the browser.
        const lost = deleteFiles ? blobFiles(first.profile) : [];
        if (deleteFiles && stored.some((s) => s.kind === 'Blob')) expect(lost.length).toBeGreaterThan(0);
        for (const file of lost) rmSync(file);
        if (deleteFiles) await test.annotate(`${lost.length} Blob files deleted`);
        const second = await start(first.profile);
        const full = await expectTrue(second.page, ids);
        expect(full.map((c) => c.name)).toEqual(ids.map((_, i) => `r${i}`));
        // Rebuilt and kept again, as text: nothing the engine can lose again.
        let after = await storedSegments(second.page);
        for (let tries = 0; tries < 50 && after.filter((s) => s.variant === 1).flatMap((s) => s.ids).length < ids.length; tries++)
          after = await storedSegments(second.page);
        expect(after.filter((s) => s.variant === 1).flatMap((s) => s.ids)).toEqual(ids);
        if (lost.length) expect(after.every((s) => s.kind === 'string')).toBe(true);
      },
    );
  });

  it('serves the kept segments true after the worker stopped, with writes in between', async (test) => {
    need(test, 'stopWorkers');
    const { context, page, ids } = await filled(10);
    await expectTrue(page, ids);
    await context.stopWorkers();
    await expectTrue(page, ids);
    await write(page, `/conversations/${ids[0]}/delete`);
    ids.shift();
    await context.stopWorkers();
    await expectTrue(page, ids);
  });
});
