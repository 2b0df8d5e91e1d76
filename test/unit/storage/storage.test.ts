import { describe, expect, it, vi } from 'vitest';
import { ConversationFromJSON, instanceOfConversation } from '@pieces.app/pieces-os-client';
import { openDB } from 'idb';
import { DatabaseVersionError, openStorage } from '../../../src/storage/idb/storage.js';
import { reconnectingStorage } from '../../../src/storage/reconnect.js';
import { cacheReads } from '../../../src/storage/read-cache.js';
import { DB_VERSION, UPGRADES, type PiecesDB } from '../../../src/storage/schema.js';
import { createService } from '../../../src/core/service.js';
import { MAX_MESSAGES_PER_CREATE } from '../../../src/core/models/conversation.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { BASE, dump, jsonPost, newAsset, setup } from '../support/harness.js';

let counter = 0;
const CONVERSATION = '11111111-1111-4111-8111-111111111111';
const MESSAGE = '22222222-2222-4222-8222-222222222222';
const freshName = () => `storage-${Date.now()}-${counter++}`;

describe('upgrades', () => {
  it('opens a database written by schema version 1 with nothing lost: assets indexed by name, conversations as JSON', async () => {
    const name = freshName();
    // A version-1 database, written by the version-1 upgrade step and filled with data.
    const v1 = await openDB<PiecesDB>(name, 1, { upgrade: (db, _old, _new, tx) => UPGRADES[0]!(db, tx as never) });
    await v1.put('assets', {
      id: '00000000-0000-4000-8000-000000000002',
      name: 'zeta.ts',
      language: 'ts',
      text: 'z',
      created: '2026-01-01T00:00:00.000Z',
    } as never);
    await v1.put('assets', {
      id: '00000000-0000-4000-8000-000000000001',
      name: 'alpha.py',
      language: 'py',
      text: 'a',
      created: '2026-01-01T00:00:00.000Z',
    } as never);
    await v1.add('changes', { conversation: '11111111-1111-4111-8111-111111111111' } as never);
    // Version 1 kept conversations and messages as objects.
    const conversation = {
      id: CONVERSATION,
      type: 'COPILOT',
      name: 'old',
      created: { value: '2026-01-01T00:00:00.000Z' },
      updated: { value: '2026-01-01T00:00:00.000Z' },
    };
    const message = {
      id: MESSAGE,
      role: 'USER',
      fragment: { string: { raw: 'kept' } },
      conversation: { id: CONVERSATION },
      created: conversation.created,
      updated: conversation.created,
    };
    await v1.put('conversations', { id: CONVERSATION, seq: 1, conversation, messageIds: [MESSAGE] } as never);
    await v1.put('messages', { id: MESSAGE, conversation: CONVERSATION, message } as never);
    await v1.put('meta', true, 'seeded');
    v1.close();
    const before = JSON.parse(await dump(name));

    const storage = await openStorage({ name });
    const after = JSON.parse(await dump(name));
    for (const store of ['applications', 'sessions', 'events', 'external']) expect(after[store]).toEqual(before[store]);
    // Meta gains the database's identity, nothing else changes.
    expect(after.meta).toEqual([['identity', await storage.identity()], ...before.meta]);
    // Version 7: each asset is whole: its record, its one format holding the text, classified by its language.
    type Old = { id: string; name: string; language: string; text: string; created: string };
    const formats = new Map(after.formats.map(([key, value]: [string, object]) => [key, value]));
    expect(
      after.assets.map(
        ([key, record]: [
          string,
          { id: string; name: string; created: string; updated: string; formats: string[]; original: string; preview: string },
        ]) => {
          const format = formats.get(record.original) as {
            asset: string;
            text: string;
            role: string;
            classification: { specific: string };
          };
          return [
            key,
            record.name,
            record.created,
            record.updated,
            record.formats,
            record.preview,
            format.asset,
            format.text,
            format.role,
            format.classification.specific,
          ];
        },
      ),
    ).toEqual(
      before.assets.map(([key, old]: [string, Old]) => {
        const record = after.assets.find(([k]: [string]) => k === key)[1];
        return [key, old.name, old.created, old.created, [record.original], record.original, old.id, old.text, 'BOTH', old.language];
      }),
    );
    expect(after.changes).toEqual([[1, { seq: 1, collection: 'conversation', id: CONVERSATION }]]);
    expect((await storage.listIds('asset')).ids).toEqual(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']);
    expect((await storage.listIds('conversation')).ids).toEqual([CONVERSATION]);
    // Conversations and messages now hold their wire JSON; the API answers exactly what version 1 stored.
    const service = createService({ storage });
    const listed = await (await service.handle(new Request(`${BASE}/conversations`))).json();
    expect(listed).toEqual({
      iterable: [{ ...conversation, messages: { iterable: [{ id: MESSAGE, reference: message }], indices: { [MESSAGE]: 0 } } }],
    });
    storage.close();
    const reopened = await openDB(name);
    expect(reopened.version).toBe(DB_VERSION);
    expect([...reopened.transaction('assets').store.indexNames]).toContain('by-name');
    reopened.close();
  });

  it('upgrades a version-3 database to one change log and whole nested models (step 4)', async () => {
    const name = freshName();
    const v3 = await openDB<PiecesDB>(name, 3, {
      upgrade: (db, old, _new, tx) => {
        for (let step = old; step < 3; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    const stamp = { value: '2026-01-01T00:00:00.000Z' };
    const conversation = {
      id: CONVERSATION,
      type: 'COPILOT',
      created: stamp,
      updated: stamp,
      anchors: { iterable: [{ id: 'an', reference: { id: 'an', type: 'FILE', fullpath: '/a.ts', created: stamp, updated: stamp } }] },
      annotations: {
        iterable: [{ id: 'ann', reference: { id: 'ann', type: 'COMMENT', text: 't', asset: 'as', created: stamp, updated: stamp } }],
      },
    };
    await v3.put('conversations', { id: CONVERSATION, seq: 1, json: JSON.stringify(conversation), messageIds: [] });
    await v3.add('changes', { conversation: CONVERSATION, deleted: true } as never);
    await v3.put('assets', {
      id: '00000000-0000-4000-8000-000000000009',
      name: 'a.ts',
      language: 'ts',
      text: 'x',
      created: stamp.value,
    } as never);
    await v3.put('meta', true, 'seeded');
    v3.close();
    const storage = await openStorage({ name });
    expect(await storage.changesSince(0)).toEqual({
      changes: [{ seq: 1, collection: 'conversation', id: CONVERSATION, deleted: true }],
      complete: true,
      seq: 1,
    });
    const upgraded = (await storage.getAsset('00000000-0000-4000-8000-000000000009'))!;
    expect(upgraded.record.original).toMatch(/^[0-9a-f-]{36}$/);
    expect(upgraded.formats.map((f) => [f.id, f.text, f.classification.specific])).toEqual([[upgraded.record.original, 'x', 'ts']]);
    const service = createService({ storage });
    const read = ConversationFromJSON(await (await service.handle(new Request(`${BASE}/conversation/${CONVERSATION}`))).json());
    expect(instanceOfConversation(read)).toBe(true);
    const anchorRead = read.anchors!.iterable[0]!.reference!;
    expect(anchorRead.points.iterable[0]!.reference).toMatchObject({ fullpath: '/a.ts', anchor: { id: 'an' } });
    expect(read.annotations!.iterable[0]!.reference!.asset).toEqual({ id: 'as' });
    storage.close();
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
    const service = createService({ storage: reconnectingStorage(() => openStorage({ name })) });
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
    // The earlier create (and the activity recording it).
    expect(t.changes.filter((c) => c.collection === 'conversation')).toHaveLength(1);
  });
});

describe('creates', () => {
  it('store nothing when one message fails after the others were issued', async () => {
    const name = freshName();
    const storage = await openStorage({ name });
    const before = await dump(name);
    const message = (id: string) => ({ id, conversation: CONVERSATION, json: '{}' });
    // The duplicate id fails inside IndexedDB, after the first message was added.
    await expect(
      storage.createConversation({ id: CONVERSATION, json: '{}', messageIds: [MESSAGE, MESSAGE] }, [message(MESSAGE), message(MESSAGE)]),
    ).rejects.toBeDefined();
    expect(await dump(name)).toBe(before);
    storage.close();
  });

  it(`take at most ${MAX_MESSAGES_PER_CREATE} messages: 413 past it, changing nothing`, async () => {
    const t = await setup();
    const messages = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'USER', fragment: { string: { raw: `m${i}` } } }));
    const before = await dump(t.databaseName);
    const refused = await t.fetch(
      `${BASE}/conversations/create`,
      jsonPost({ type: 'COPILOT', messages: messages(MAX_MESSAGES_PER_CREATE + 1) }),
    );
    expect(refused.status).toBe(413);
    expect(await refused.text()).toBe(
      `conversation.messages has ${MAX_MESSAGES_PER_CREATE + 1} messages; a create takes at most ${MAX_MESSAGES_PER_CREATE}. Create the conversation with fewer messages.`,
    );
    expect(await dump(t.databaseName)).toBe(before);
    const accepted = await t.fetch(
      `${BASE}/conversations/create?transferables=false`,
      jsonPost({ type: 'COPILOT', messages: messages(MAX_MESSAGES_PER_CREATE) }),
    );
    expect(accepted.status).toBe(200);
    const { id } = (await accepted.json()) as { id: string };
    const listed = (await (await t.fetch(`${BASE}/conversations`)).json()) as {
      iterable: Array<{ id: string; messages: { iterable: unknown[] } }>;
    };
    expect(listed.iterable.find((c) => c.id === id)!.messages.iterable).toHaveLength(MAX_MESSAGES_PER_CREATE);
  }, 60_000);
});

describe('the read cache', () => {
  it('serves repeated reads from memory and sees every write', async () => {
    const storage = cacheReads(await openStorage({ name: freshName() }), null);
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    try {
      expect((await storage.listIds('conversation')).ids).toEqual([]);
      expect((await storage.listIds('conversation')).ids).toEqual([]);
      expect(spy).toHaveBeenCalledTimes(1);
      const id = crypto.randomUUID();
      await storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
      expect((await storage.listIds('conversation')).ids).toEqual([id]);
    } finally {
      spy.mockRestore();
    }
  });

  it('serves meta values from memory, an absent one too, until a meta write here or any write of another connection', async () => {
    const name = freshName();
    const channel = `meta-${name}`;
    const storage = cacheReads(await openStorage({ name }), channel);
    const other = cacheReads(await openStorage({ name }), channel);
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    const reads = () => spy.mock.calls.filter(([stores, mode]) => [stores].flat().includes('meta') && mode !== 'readwrite').length;
    try {
      expect(await storage.getMeta('osId')).toBeUndefined();
      expect(await storage.getMeta('osId')).toBeUndefined();
      expect(await storage.getMeta('signedIn')).toBeUndefined();
      expect(await storage.getMeta('signedIn')).toBeUndefined();
      expect(reads()).toBe(2);
      await storage.setSignedIn(true);
      expect(await storage.getMeta('signedIn')).toBe(true);
      await storage.setMeta('osId', 'kept by an older version');
      expect(await storage.getMeta('osId')).toBe('kept by an older version');
      expect(await storage.ensureMeta('userId', () => 'u1')).toBe('u1');
      expect(await storage.getMeta('userId')).toBe('u1');
      const before = reads();
      expect(await storage.getMeta('userId')).toBe('u1');
      expect(reads()).toBe(before);
      // Another connection's write reaches this cache through the channel.
      await other.setMeta('userId', 'u2');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await storage.getMeta('userId')).toBe('u2');
    } finally {
      spy.mockRestore();
      storage.close();
      other.close();
    }
  });

  it('drops the cached conversation lists on conversation writes, keeps the id list in place, and stays equal to the database', async () => {
    const name = freshName();
    const raw = await openStorage({ name });
    const storage = cacheReads(raw, null);
    const all = async (s: typeof storage) =>
      JSON.stringify(
        [await s.listConversations({ messages: true }), await s.listConversations({ messages: false }), await s.listIds('conversation')],
        (_k, v) => (v instanceof Map ? [...v].sort() : v),
      );
    await all(storage);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = crypto.randomUUID();
      const message = { id: crypto.randomUUID(), conversation: id, json: '{"m":1}' };
      await storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [message.id] }, [message]);
      made.push(id);
    }
    await storage.deleteConversation(made[1]!);
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    try {
      expect((await storage.listIds('conversation')).ids).toEqual([made[0], made[2]]);
      expect((await storage.listIds('conversation')).seq).toBe(8);
      expect(spy).not.toHaveBeenCalled();
      const cached = await all(storage);
      expect(spy).toHaveBeenCalledTimes(2);
      expect(cached).toBe(await all(raw));
      spy.mockClear();
      await all(storage);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it('stays equal to the database through every conversation, message, asset and application write of the service', async () => {
    const name = freshName();
    const raw = await openStorage({ name });
    const storage = cacheReads(raw, null);
    const service = createService({ storage });
    const call = async (path: string, init?: RequestInit) => (await service.handle(new Request(`${BASE}${path}`, init))).text();
    const reads = async (s: typeof storage, ids: string[], messageIds: string[]) =>
      JSON.stringify(
        [
          await s.listConversations({ messages: true }),
          await s.listConversations({ messages: false }),
          ...(await Promise.all((['conversation', 'conversationMessage', 'asset', 'application'] as const).map((c) => s.listIds(c)))),
          ...(await Promise.all(ids.map((id) => s.getConversation(id)))),
          ...(await Promise.all(messageIds.map((id) => s.getMessage(id)))),
          await s.listAssets(),
          await s.listApplications(),
        ],
        (_k, v) => (v instanceof Map ? [...v].sort() : v),
      );
    const a = JSON.parse(
      await call(
        '/conversations/create',
        jsonPost({ type: 'COPILOT', name: 'a', messages: [{ role: 'USER', fragment: { string: { raw: 'x' } } }] }),
      ),
    );
    const b = JSON.parse(await call('/conversations/create', jsonPost({ type: 'COPILOT', name: 'b' })));
    const ids = [a.id, b.id];
    const first = a.messages.iterable[0].id;
    await reads(storage, ids, [first]);
    const added = JSON.parse(
      await call('/messages/create', jsonPost({ role: 'ASSISTANT', fragment: { string: { raw: 'y' } }, conversation: { id: a.id } })),
    );
    const messageIds = [first, added.id];
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
    await call('/message/update/value', jsonPost({ id: added.id, fragment: { string: { raw: 'z' } } }));
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
    await call(`/messages/${first}/delete`, { method: 'POST' });
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
    await call('/conversation/update', jsonPost({ ...b, name: 'renamed' }));
    await call(`/conversation/${b.id}/assets/associate/${SAMPLE_ASSETS[0]!.id}`, { method: 'POST' });
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
    await call('/connect', jsonPost({ application: { name: 'VS_CODE', version: '1', platform: 'LINUX' } }));
    await storage.putAssets([newAsset({ ...SAMPLE_ASSETS[0]!, name: 'renamed.ts' })]);
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
    await call(`/conversations/${a.id}/delete`, { method: 'POST' });
    expect(await reads(storage, ids, messageIds)).toBe(await reads(raw, ids, messageIds));
  });

  /** A cached storage with a small budget, its spied list reads, and a create of one conversation with one message of `text`. */
  async function budgeted(budget = 10_000) {
    const raw = await openStorage({ name: freshName() });
    const reads = vi.spyOn(raw, 'listConversations');
    const storage = cacheReads(raw, null, budget);
    const create = async (text: string) => {
      const id = crypto.randomUUID();
      const message = { id: crypto.randomUUID(), conversation: id, json: JSON.stringify({ text }) };
      await storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [message.id] }, [message]);
    };
    return { storage, reads, create, budget };
  }

  it('keeps conversation lists within its memory budget', async () => {
    const { storage, reads, create, budget } = await budgeted();
    await create('small');
    await storage.listConversations({ messages: true });
    await storage.listConversations({ messages: true });
    expect(reads).toHaveBeenCalledTimes(1);
    // A create that takes the list past the budget drops it; a list over the budget is never kept.
    await create('x'.repeat(budget));
    await storage.listConversations({ messages: true });
    await storage.listConversations({ messages: true });
    expect(reads).toHaveBeenCalledTimes(3);
    // The list without messages still fits, and is kept.
    await storage.listConversations({ messages: false });
    await storage.listConversations({ messages: false });
    expect(reads).toHaveBeenCalledTimes(4);
    storage.close();
  });

  it('frees the budget share of a list a write dropped', async () => {
    const { storage, reads, create, budget } = await budgeted();
    // A list of 60% of the budget, kept; dropped by a write; read again: kept again (twice the share would not fit).
    await create('x'.repeat(budget * 0.6));
    for (let round = 1; round <= 3; round++) {
      await storage.listConversations({ messages: true });
      await storage.listConversations({ messages: true });
      expect(reads).toHaveBeenCalledTimes(round);
      await create('');
    }
    storage.close();
  });

  it('does not keep reads of unknown ids', async () => {
    const raw = await openStorage({ name: freshName() });
    const getApplication = vi.spyOn(raw, 'getApplication');
    const storage = cacheReads(raw, null);
    const unknown = crypto.randomUUID();
    expect(await storage.getApplication(unknown)).toBeUndefined();
    expect(await storage.getApplication(unknown)).toBeUndefined();
    expect(await storage.getSession(unknown)).toBeUndefined();
    // Both reads of the unknown application reached the database.
    expect(getApplication).toHaveBeenCalledTimes(2);
    storage.close();
  });

  it('does not keep a read that overlapped a write', async () => {
    const storage = cacheReads(await openStorage({ name: freshName() }), null);
    const id = crypto.randomUUID();
    const [, read] = await Promise.all([
      storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []),
      storage.listIds('conversation'),
    ]);
    // Whatever the overlapping read saw, the next read sees the write.
    expect(read.ids.length).toBeLessThanOrEqual(1);
    expect((await storage.listIds('conversation')).ids).toEqual([id]);
  });

  it('is cleared by writes made through another connection', async () => {
    const name = freshName();
    const channel = `cache-test-${name}`;
    const one = cacheReads(await openStorage({ name }), channel);
    const two = cacheReads(await openStorage({ name }), channel);
    expect((await one.listIds('conversation')).ids).toEqual([]);
    const id = crypto.randomUUID();
    await two.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
    await vi.waitFor(async () => expect((await one.listIds('conversation')).ids).toEqual([id]));
    one.close();
    two.close();
  });

  it('tells the other connections once for the writes committed together (a group commit), and again for each later commit', async () => {
    const posted: unknown[] = [];
    const channel = { postMessage: (message: unknown) => posted.push(message), addEventListener() {}, removeEventListener() {} };
    const storage = cacheReads(await openStorage({ name: freshName() }), channel as unknown as BroadcastChannel);
    const create = () => {
      const id = crypto.randomUUID();
      return storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
    };
    // The first create is written alone, the four that arrive meanwhile in one transaction.
    await Promise.all([create(), create(), create(), create(), create()]);
    // Told right after the task that saw the commit (once its answers are out).
    await new Promise((resolve) => setTimeout(resolve));
    // Once per task that saw commits: the first create's and the group's (one, when both came before the timer).
    expect(posted.length).toBeGreaterThanOrEqual(1);
    expect(posted.length).toBeLessThanOrEqual(2);
    expect(new Set(posted)).toEqual(new Set(['written']));
    const before = posted.length;
    await create();
    await new Promise((resolve) => setTimeout(resolve));
    expect(posted).toHaveLength(before + 1);
    storage.close();
  });

  it('with several writers on one channel, a writer clears the others before its change announcement arrives', async () => {
    const name = freshName();
    const channelName = `cache-writers-${name}`;
    const tabs = [0, 1].map(() => new BroadcastChannel(channelName));
    const [a, b] = await Promise.all(tabs.map(async (channel) => cacheReads(await openStorage({ name }), channel)));
    const sockets = new BroadcastChannel(channelName);
    const seen: string[][] = [];
    // B's stream socket reads B's store as soon as it hears of A's change.
    const heard = new Promise<void>((resolve) => {
      sockets.onmessage = async (event) => {
        if ((event.data as { type?: string }).type !== 'change') return;
        seen.push((await b!.listIds('conversation')).ids);
        resolve();
      };
    });
    expect((await b!.listIds('conversation')).ids).toEqual([]);
    const id = crypto.randomUUID();
    const change = await a!.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
    tabs[0]!.postMessage({ type: 'change', change });
    await heard;
    expect(seen).toEqual([[id]]);
    sockets.close();
    a!.close();
    b!.close();
  });
});
