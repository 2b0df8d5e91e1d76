/**
 * Storage going away under the service: the database deleted or replaced by
 * another connection, a connection that fails, an empty database of the same
 * name, an upgrade blocked by an older connection.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDB, deleteDB } from 'idb';
import { createService } from '../../../src/core/service.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { reconnectingStorage, type ReconnectOptions } from '../../../src/storage/reconnect.js';
import { cacheReads } from '../../../src/storage/read-cache.js';
import { DB_VERSION, STORES, UPGRADES, type PiecesDB } from '../../../src/storage/schema.js';
import { BASE, jsonPost, sampleData } from '../support/harness.js';

let counter = 0;
const freshName = () => `loss-${Date.now()}-${counter++}`;

/** The service as the worker wires it: a reopening storage, each connection with its read cache. */
function workerService(name: string, options: ReconnectOptions = {}) {
  const opened: boolean[] = [];
  const storage = reconnectingStorage(
    (hooks) =>
      openStorage({ name, initialData: sampleData(), onLost: hooks.lost, onBlocked: hooks.blocked }).then((s) => cacheReads(s, null)),
    { ...options, onOpen: (_s, reopened) => opened.push(reopened) },
  );
  const service = createService({ storage });
  const call = (path: string, init?: RequestInit) => service.handle(new Request(`${BASE}${path}`, init));
  const ids = async (path: string) => ((await (await call(path)).json()) as { iterable: { id: string }[] }).iterable.map((i) => i.id);
  const create = (name = 'c') =>
    call('/conversations/create', jsonPost({ type: 'COPILOT', name, messages: [{ role: 'USER', fragment: { string: { raw: name } } }] }));
  return { storage, service, call, ids, create, opened };
}

const deleteDatabase = (name: string) =>
  new Promise<void>((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the database deleted under the service', () => {
  it('serves nothing that was deleted, re-seeds the sample assets and takes writes on the new database', async () => {
    const name = freshName();
    const t = workerService(name);
    const first = (await (await t.create('before')).json()) as { id: string };
    // Every read is cached now.
    expect(await t.ids('/conversations/identifiers')).toEqual([first.id]);
    const snapshot = await (await t.call('/conversations')).text();
    expect(snapshot).toContain(first.id);
    const assets = await t.ids('/assets/identifiers');
    const identity = await t.storage.identity();

    await deleteDatabase(name);

    expect(await t.ids('/conversations/identifiers')).toEqual([]);
    expect(await (await t.call('/conversations')).json()).toEqual({ iterable: [] });
    expect((await t.ids('/assets/identifiers')).sort()).toEqual(assets.sort());
    expect(await t.storage.identity()).not.toBe(identity);
    const second = await t.create('after');
    expect(second.status).toBe(200);
    const { id } = (await second.json()) as { id: string };
    expect(await t.ids('/conversations/identifiers')).toEqual([id]);
    expect(t.opened).toEqual([false, true]);
    t.storage.close();
  });

  it('never ranks deleted material: the copilot reads a replaced database afresh', async () => {
    const name = freshName();
    const t = workerService(name);
    await t.service.addAssets([{ name: 'zebra.go', text: 'func crossing() { /* zebra */ }' }]);
    const relevant = async () => {
      const response = await t.call('/qgpt/relevance', jsonPost({ query: 'zebra crossing', options: { database: true } }));
      return ((await response.json()) as { relevant: { iterable: unknown[] } }).relevant.iterable.length;
    };
    expect(await relevant()).toBeGreaterThan(0);
    await deleteDatabase(name);
    expect(await relevant()).toBe(0);
    t.storage.close();
  });

  it('answers writes made while the database is deleted with 200 on the new database or a 503, never a 500', async () => {
    const name = freshName();
    const t = workerService(name);
    await t.create('warm-up');
    const deleting = deleteDatabase(name);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => t.create(`during ${i}`)));
    await deleting;
    const statuses = responses.map((r) => r.status);
    for (const status of statuses) expect([200, 503]).toContain(status);
    const created = await Promise.all(responses.filter((r) => r.ok).map(async (r) => ((await r.json()) as { id: string }).id));
    // Every acknowledged create is stored (in whichever database is there now), nothing else.
    const stored = await t.ids('/conversations/identifiers');
    for (const id of stored) expect(created).toContain(id);
    const fresh = workerService(name);
    expect(await fresh.ids('/conversations/identifiers')).toEqual(stored);
    t.storage.close();
    fresh.storage.close();
  });
});

describe('a connection that fails', () => {
  it('is replaced when a transaction reports the connection closing, and the call is made again', async () => {
    const name = freshName();
    const t = workerService(name);
    await t.create('warm-up');
    const transaction = IDBDatabase.prototype.transaction;
    let failures = 1;
    vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (this: IDBDatabase, ...args) {
      if (failures-- > 0) throw new DOMException('The database connection is closing.', 'InvalidStateError');
      return transaction.apply(this, args as Parameters<typeof transaction>);
    });
    const response = await t.create('retried');
    expect(response.status).toBe(200);
    expect(t.opened).toEqual([false, true]);
    expect(await t.ids('/conversations/identifiers')).toHaveLength(2);
    t.storage.close();
  });

  it('answers 503 with the reason when the new connection fails too, and recovers once it works', async () => {
    const name = freshName();
    const t = workerService(name);
    await t.create('warm-up');
    const transaction = IDBDatabase.prototype.transaction;
    let broken = true;
    vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (this: IDBDatabase, ...args) {
      if (broken) throw new DOMException('The database connection is closing.', 'InvalidStateError');
      return transaction.apply(this, args as Parameters<typeof transaction>);
    });
    for (const response of [await t.create('refused'), await t.call('/conversations')]) {
      expect(response.status).toBe(503);
      expect(response.headers.get('Retry-After')).toBe('1');
      expect(await response.text()).toMatch(/database went away.*connection is closing.*nothing was written/i);
    }
    broken = false;
    expect((await t.create('accepted')).status).toBe(200);
    expect(await t.ids('/conversations/identifiers')).toHaveLength(2);
    t.storage.close();
  });
});

describe('a database of the same name that is not ours', () => {
  it.each([
    ['empty at version 1 (a stray indexedDB.open after a wipe)', 1, []],
    ['empty at the current version', DB_VERSION, []],
    ['at an older version with stores missing', DB_VERSION - 1, ['meta']],
  ])('is rebuilt when %s', async (_label, version, stores) => {
    const name = freshName();
    const stray = await openDB(name, version, {
      upgrade: (db) => {
        for (const store of stores) db.createObjectStore(store);
      },
    });
    stray.close();
    const t = workerService(name);
    const response = await t.create('works');
    expect(response.status).toBe(200);
    expect((await t.ids('/assets/identifiers')).length).toBe(SAMPLE_ASSETS.length);
    t.storage.close();
    const db = await openDB(name);
    expect(db.version).toBe(DB_VERSION);
    expect([...db.objectStoreNames].sort()).toEqual(Object.keys(STORES).sort());
    db.close();
  });

  it('is rebuilt when it appears empty while the service runs', async () => {
    const name = freshName();
    const t = workerService(name);
    await t.create('before');
    await deleteDB(name);
    (await openDB(name)).close();
    expect((await t.create('after')).status).toBe(200);
    expect(await t.ids('/conversations/identifiers')).toHaveLength(1);
    t.storage.close();
  });

  it('has every store of the layout once built (STORES lists them all)', async () => {
    const name = freshName();
    (await openStorage({ name })).close();
    const db = await openDB(name);
    expect([...db.objectStoreNames].sort()).toEqual(Object.keys(STORES).sort());
    db.close();
  });
});

describe('an upgrade blocked by an older connection', () => {
  it('answers 503 naming what blocks it after a bounded wait, and proceeds once the other connection closes', async () => {
    const name = freshName();
    // An older version's connection that does not close when asked.
    const older = await openDB<PiecesDB>(name, DB_VERSION - 1, {
      upgrade: (db, oldVersion, _new, tx) => {
        for (let step = oldVersion; step < DB_VERSION - 1; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    const t = workerService(name, { blockedWaitMs: 20 });
    const blocked = await t.call('/conversations/identifiers');
    expect(blocked.status).toBe(503);
    expect(await blocked.text()).toMatch(
      new RegExp(`cannot be upgraded from version ${DB_VERSION - 1} to ${DB_VERSION}: another connection .* is still open`),
    );
    older.close();
    // The upgrade goes on once it is let through (a call meanwhile may still be told 503).
    await expect.poll(async () => (await t.call('/conversations/identifiers')).status, { timeout: 10_000 }).toBe(200);
    expect((await t.create('after')).status).toBe(200);
    t.storage.close();
  });
});

describe('the database identity', () => {
  it('is made on the first start and kept across opens', async () => {
    const name = freshName();
    const one = await openStorage({ name });
    const identity = await one.identity();
    expect(identity).toMatch(/^[0-9a-f-]{36}$/);
    one.close();
    const two = await openStorage({ name });
    expect(await two.identity()).toBe(identity);
    two.close();
    await deleteDB(name);
    const three = await openStorage({ name });
    expect(await three.identity()).not.toBe(identity);
    three.close();
  });
});
