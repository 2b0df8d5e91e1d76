import { describe, expect, it, vi } from 'vitest';
import { openDB } from 'idb';
import { DatabaseVersionError, openStorage } from '../../src/storage/idb-storage.js';
import { lazyStorage } from '../../src/storage/lazy.js';
import { cacheReads } from '../../src/storage/read-cache.js';
import { DB_VERSION, UPGRADES, type PiecesDB } from '../../src/storage/schema.js';
import { createService } from '../../src/core/service.js';
import { BASE, dump, jsonPost, setup } from './harness.js';

let counter = 0;
const freshName = () => `storage-${Date.now()}-${counter++}`;

describe('upgrades', () => {
  it('opens a database written by schema version 1 with nothing lost, and adds the assets-by-name index', async () => {
    const name = freshName();
    // A version-1 database, written by the version-1 upgrade step and filled with data.
    const v1 = await openDB<PiecesDB>(name, 1, { upgrade: (db, _old, _new, tx) => UPGRADES[0]!(db, tx as never) });
    await v1.put('assets', { id: '00000000-0000-4000-8000-000000000002', name: 'zeta.ts', language: 'ts', text: 'z', created: '2026-01-01T00:00:00.000Z' });
    await v1.put('assets', { id: '00000000-0000-4000-8000-000000000001', name: 'alpha.py', language: 'py', text: 'a', created: '2026-01-01T00:00:00.000Z' });
    await v1.add('changes', { conversation: '11111111-1111-4111-8111-111111111111' });
    await v1.put('conversations', {
      id: '11111111-1111-4111-8111-111111111111',
      seq: 1,
      conversation: { id: '11111111-1111-4111-8111-111111111111', type: 'COPILOT', created: { value: '2026-01-01T00:00:00.000Z' }, updated: { value: '2026-01-01T00:00:00.000Z' } },
      messageIds: [],
    });
    await v1.put('meta', true, 'seeded');
    v1.close();
    const before = JSON.parse(await dump(name));

    const storage = await openStorage({ name });
    expect(JSON.parse(await dump(name))).toEqual(before);
    expect(await storage.listAssetIds()).toEqual(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']);
    expect((await storage.listConversationIds()).ids).toEqual(['11111111-1111-4111-8111-111111111111']);
    storage.close();
    const reopened = await openDB(name);
    expect(reopened.version).toBe(DB_VERSION);
    expect([...reopened.transaction('assets').store.indexNames]).toContain('by-name');
    reopened.close();
  });

  it('refuses a database written by a newer version with a clear error, and leaves it untouched', async () => {
    const name = freshName();
    const newer = await openDB(name, DB_VERSION + 5, { upgrade: (db) => db.createObjectStore('future').put('kept', 'k') });
    newer.close();
    const before = await dump(name);
    await expect(openStorage({ name })).rejects.toThrow(DatabaseVersionError);
    await expect(openStorage({ name })).rejects.toThrow(/written by a newer version of pieces-os-worker.*left untouched/);
    expect(await dump(name)).toBe(before);
    const db = await openDB(name);
    expect(db.version).toBe(DB_VERSION + 5);
    db.close();

    // The service says so on every request, as a real fault.
    const service = createService({ storage: lazyStorage(openStorage({ name })) });
    const response = await service.handle(new Request(`${BASE}/conversations`));
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/newer version of pieces-os-worker/);
  });
});

describe('storage full', () => {
  it('answers 507 when the browser refuses the write, and keeps earlier data intact', async () => {
    const t = await setup();
    const earlier = await t.conversations.conversationsCreateSpecificConversation({});
    const before = await dump(t.databaseName);
    const add = IDBObjectStore.prototype.add;
    let calls = 0;
    // The third add of the next write (its second message) hits the quota.
    const spy = vi.spyOn(IDBObjectStore.prototype, 'add').mockImplementation(function (this: IDBObjectStore, ...args) {
      if (++calls === 3) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return add.apply(this, args as Parameters<typeof add>);
    });
    try {
      const body = { type: 'COPILOT', messages: [1, 2, 3].map((i) => ({ role: 'USER', fragment: { string: { raw: `m${i}` } } })) };
      const response = await t.fetch(`${BASE}/conversations/create`, jsonPost(body));
      expect(response.status).toBe(507);
      expect(await response.text()).toMatch(/storage is full/);
    } finally {
      spy.mockRestore();
    }
    expect(await dump(t.databaseName)).toBe(before);
    expect((await t.conversations.conversationsIdentifiersSnapshot()).iterable.map((c) => c.id)).toEqual([earlier.id]);
    expect(t.changes).toHaveLength(1);
  });
});

describe('the read cache', () => {
  it('serves repeated reads from memory and sees every write', async () => {
    const storage = cacheReads(await openStorage({ name: freshName() }), null);
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    try {
      expect((await storage.listConversationIds()).ids).toEqual([]);
      expect((await storage.listConversationIds()).ids).toEqual([]);
      expect(spy).toHaveBeenCalledTimes(1);
      const id = crypto.randomUUID();
      await storage.createConversation({ id, conversation: { id }, messageIds: [] }, []);
      expect((await storage.listConversationIds()).ids).toEqual([id]);
    } finally {
      spy.mockRestore();
    }
  });

  it('does not keep a read that overlapped a write', async () => {
    const storage = cacheReads(await openStorage({ name: freshName() }), null);
    const id = crypto.randomUUID();
    const [, read] = await Promise.all([
      storage.createConversation({ id, conversation: { id }, messageIds: [] }, []),
      storage.listConversationIds(),
    ]);
    // Whatever the overlapping read saw, the next read sees the write.
    expect(read.ids.length).toBeLessThanOrEqual(1);
    expect((await storage.listConversationIds()).ids).toEqual([id]);
  });

  it('is cleared by writes made through another connection', async () => {
    const name = freshName();
    const channel = `cache-test-${name}`;
    const one = cacheReads(await openStorage({ name }), channel);
    const two = cacheReads(await openStorage({ name }), channel);
    expect((await one.listConversationIds()).ids).toEqual([]);
    const id = crypto.randomUUID();
    await two.createConversation({ id, conversation: { id }, messageIds: [] }, []);
    await vi.waitFor(async () => expect((await one.listConversationIds()).ids).toEqual([id]));
    one.close();
    two.close();
  });
});
