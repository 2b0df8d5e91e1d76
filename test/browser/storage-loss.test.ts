/**
 * What users and apps do to the database under a running worker: delete it
 * (an app's reset, DevTools), leave an empty one of the same name, write
 * while it goes away, hold an older version open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { launch, type BrowserContext, type Page } from './engine.js';
import { openDemo, storeIds } from './pages.js';

const contexts: BrowserContext[] = [];
afterEach(async () => {
  while (contexts.length) await contexts.pop()!.close();
});

async function demo() {
  const { context } = await launch();
  contexts.push(context);
  return openDemo(context);
}

const DB = 'pieces-os-worker';

const create = (page: Page, name: string) =>
  page.evaluate(async (name) => {
    const response = await fetch('http://localhost:1000/conversations/create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'COPILOT', name, messages: [{ role: 'USER', fragment: { string: { raw: name } } }] }),
    });
    return { status: response.status, body: await response.text() };
  }, name);

/** Deletes the database from the page; resolves once it is gone (the worker must let go of it). */
const deleteDatabase = (page: Page) =>
  page.evaluate(
    (name) =>
      new Promise<string>((resolve, reject) => {
        const request = indexedDB.deleteDatabase(name);
        request.onsuccess = () => resolve('deleted');
        request.onerror = () => reject(request.error);
      }),
    DB,
  );

const snapshot = (page: Page, path: string) =>
  page.evaluate(async (path) => {
    const response = await fetch(`http://localhost:1000${path}`);
    return { status: response.status, body: await response.text() };
  }, path);

describe('the database deleted under a running worker', () => {
  it('serves no deleted data, re-seeds the sample assets, and takes writes at once', async () => {
    const page = await demo();
    const ghost = JSON.parse((await create(page, 'before the wipe')).body) as { id: string };
    const assets = (await snapshot(page, '/assets/identifiers')).body;
    // Reads are in the worker's cache now.
    expect(await storeIds(page)).toContain(ghost.id);
    expect((await snapshot(page, '/conversations')).body).toContain(ghost.id);

    expect(await deleteDatabase(page)).toBe('deleted');

    expect(await storeIds(page)).toEqual([]);
    expect(JSON.parse((await snapshot(page, '/conversations')).body)).toEqual({ iterable: [] });
    expect((await snapshot(page, '/assets/identifiers')).body).toBe(assets);
    const after = await create(page, 'after the wipe');
    expect(after.status).toBe(200);
    expect(await storeIds(page)).toEqual([(JSON.parse(after.body) as { id: string }).id]);
  });

  it('answers every create made while it is deleted with 200 (kept) or 503, never 500', async () => {
    const page = await demo();
    const outcome = await page.evaluate(async (name) => {
      const post = (i: number) =>
        fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', name: `burst ${i}` }),
        }).then(async (r) => ({ status: r.status, id: r.ok ? ((await r.json()) as { id: string }).id : undefined }));
      const before = Promise.all(Array.from({ length: 50 }, (_, i) => post(i)));
      const deleted = new Promise((resolve, reject) => {
        const request = indexedDB.deleteDatabase(name);
        request.onsuccess = resolve;
        request.onerror = () => reject(request.error);
      });
      const during = Promise.all(Array.from({ length: 50 }, (_, i) => post(50 + i)));
      await deleted;
      return [...(await before), ...(await during)];
    }, DB);
    for (const { status } of outcome) expect([200, 503]).toContain(status);
    const stored = await storeIds(page);
    const acknowledged = outcome.flatMap((o) => (o.id ? [o.id] : []));
    // What is stored now was acknowledged; what was acknowledged after the deletion is stored.
    for (const id of stored) expect(acknowledged).toContain(id);
  });

  it('copes with an empty database of the same name made after the wipe (a stray indexedDB.open)', async () => {
    const page = await demo();
    await create(page, 'before');
    // Deleted and opened again at once by someone else: an empty database at version 1.
    const version = await page.evaluate(
      (name) =>
        new Promise<number>((resolve, reject) => {
          indexedDB.deleteDatabase(name);
          const request = indexedDB.open(name);
          request.onsuccess = () => {
            const version = request.result.version;
            request.result.close();
            resolve(version);
          };
          request.onerror = () => reject(request.error);
        }),
      DB,
    );
    expect(version).toBe(1);
    const after = await create(page, 'after');
    expect(after.status).toBe(200);
    expect((await snapshot(page, '/conversations')).status).toBe(200);
    expect(await storeIds(page)).toEqual([(JSON.parse(after.body) as { id: string }).id]);
  });
});

describe('an upgrade blocked by an older connection', () => {
  it('answers 503 saying what blocks it, and proceeds as soon as that connection closes', async () => {
    const page = await demo();
    // Deleted, then at once an older version's connection (version 2) that stays open when asked to close
    // (in one task: the worker cannot open the database again in between).
    await page.evaluate(
      (name) =>
        new Promise<void>((resolve, reject) => {
          indexedDB.deleteDatabase(name);
          const request = indexedDB.open(name, 2);
          request.onupgradeneeded = () => request.result.createObjectStore('meta');
          request.onsuccess = () => {
            (window as unknown as { older: IDBDatabase }).older = request.result;
            resolve();
          };
          request.onerror = () => reject(request.error);
        }),
      DB,
    );
    const blocked = await snapshot(page, '/conversations/identifiers');
    expect(blocked.status).toBe(503);
    expect(blocked.body).toMatch(/cannot be upgraded from version 2 to \d+: another connection to it is still open/);
    const waiting = snapshot(page, '/conversations/identifiers');
    await page.evaluate(() => (window as unknown as { older: IDBDatabase }).older.close());
    expect((await waiting).status).toBe(200);
    expect((await create(page, 'after the upgrade')).status).toBe(200);
  });
});
