import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { conversationJson } from '../../../src/core/models/conversation.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { blobsOutliveRecords, MAX_OUTSIDE_WHOLE } from '../../../src/storage/idb/snapshots.js';
import type { ConversationRecord, MessageRecord, SnapshotSegment } from '../../../src/storage/schema.js';
import { isPartition, planSnapshot, SEGMENT_END, SEGMENT_SIZE, WHOLE } from '../../../src/storage/snapshot-plan.js';
import type { Change, Storage } from '../../../src/storage/storage.js';
import { application, BASE, jsonPost, seeded, setup } from '../support/harness.js';

const textOf = async (body: Blob | string) => (typeof body === 'string' ? body : body.text());
const segment = (start: number, end: number, built: number, ids: string[]): SnapshotSegment => ({
  variant: 0,
  start,
  end,
  built,
  ids,
  body: ids.join(','),
});
const change = (seq: number, id: string, deleted?: true): Change => ({
  seq,
  collection: 'conversation',
  id,
  ...(deleted ? { deleted } : {}),
});

describe('planSnapshot', () => {
  const kept = [segment(0, 10, 20, ['a', 'b']), segment(10, 30, 25, ['c']), segment(30, SEGMENT_END, 40, ['d', 'e'])];

  it('keeps every segment when nothing changed since it was built', () => {
    expect(planSnapshot(kept, [change(15, 'a'), change(40, 'e')], true)).toEqual(kept.map((s) => ({ kept: s })));
  });

  it('rebuilds a segment one of whose conversations changed or was deleted after it was built', () => {
    expect(planSnapshot(kept, [change(26, 'c')], true)).toEqual([{ kept: kept[0] }, { stale: { start: 10, end: 30 } }, { kept: kept[2] }]);
    expect(planSnapshot(kept, [change(21, 'b', true)], true)).toEqual([
      { stale: { start: 0, end: 10 } },
      { kept: kept[1] },
      { kept: kept[2] },
    ]);
  });

  it('extends the segment whose range holds a conversation created after it was built, unless one of its own changed', () => {
    expect(planSnapshot(kept, [change(41, 'f')], true)).toEqual([{ kept: kept[0] }, { kept: kept[1] }, { extend: kept[2] }]);
    expect(planSnapshot(kept, [change(41, 'f'), change(42, 'f'), change(43, 'g', true)], true)).toEqual([
      { kept: kept[0] },
      { kept: kept[1] },
      { extend: kept[2] },
    ]);
    expect(planSnapshot(kept, [change(41, 'f'), change(42, 'e')], true)).toEqual([
      { kept: kept[0] },
      { kept: kept[1] },
      { stale: { start: 30, end: SEGMENT_END } },
    ]);
    // Created and deleted since: nothing to show, nothing to rebuild.
    expect(planSnapshot(kept, [change(26, 'x', true)], true)).toEqual(kept.map((s) => ({ kept: s })));
  });

  it('merges adjacent stale ranges', () => {
    expect(planSnapshot(kept, [change(26, 'c'), change(41, 'd')], true)).toEqual([
      { kept: kept[0] },
      { stale: { start: 10, end: SEGMENT_END } },
    ]);
  });

  it('rebuilds everything when the log no longer reaches back, or the segments do not cover every position once', () => {
    const all = [{ stale: { start: 0, end: SEGMENT_END } }];
    expect(planSnapshot(kept, [], false)).toEqual(all);
    expect(planSnapshot([], [], true)).toEqual(all);
    expect(planSnapshot([kept[0]!, kept[2]!], [], true)).toEqual(all);
    expect(planSnapshot([kept[1]!, kept[2]!], [], true)).toEqual(all);
    expect(planSnapshot([kept[0]!, kept[1]!], [], true)).toEqual(all);
    expect(planSnapshot([kept[0]!, segment(5, 30, 25, ['c']), kept[2]!], [], true)).toEqual(all);
    expect(isPartition(kept)).toBe(true);
  });
});

/** The snapshot body as encoded from the records alone, without segments. */
async function fromRecords(storage: Storage, withMessages: boolean): Promise<string> {
  const { conversations, messages } = await storage.listConversations({ messages: withMessages });
  return `{"iterable":[${conversations.map((c) => conversationJson(c, messages)).join(',')}]}`;
}

const segmentsOf = async (databaseName: string) => {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(databaseName);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const rows = await new Promise<SnapshotSegment[]>((resolve, reject) => {
    const request = db.transaction('snapshots').objectStore('snapshots').getAll();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  db.close();
  return rows;
};

/** Waits for the segments a read keeps to be written (they are written after it answers). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * Waits until the kept segments of `variant` are as new as the last conversation change: the pass
 * after the last write has kept what it made stale.
 */
async function keptUp(databaseName: string, variant: 0 | 1 = 1) {
  await vi.waitFor(
    async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const request = indexedDB.open(databaseName);
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
      });
      const read = <T>(store: string) =>
        new Promise<T[]>((resolve, reject) => {
          const request = db.transaction(store).objectStore(store).getAll();
          request.onsuccess = () => resolve(request.result as T[]);
          request.onerror = () => reject(request.error);
        });
      const [segments, changes] = [await read<SnapshotSegment>('snapshots'), await read<Change>('changes')];
      db.close();
      const last = Math.max(...changes.filter((c) => c.collection === 'conversation').map((c) => c.seq));
      expect(Math.max(...segments.filter((s) => s.variant === variant && s.start !== WHOLE).map((s) => s.built))).toBeGreaterThanOrEqual(
        last,
      );
    },
    { timeout: 10_000, interval: 10 },
  );
}

describe.each(['text', 'Blobs'])('snapshots kept ready to send (bodies stored as %s)', (kind) => {
  beforeEach(async () => {
    // Node's own Blob survives a structured clone; the unit tests' global Blob (happy-dom's) does not.
    if (kind === 'Blobs') vi.stubGlobal('Blob', (await import('node:buffer')).Blob);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('serves from kept segments; after a write re-encodes only the segments it made stale, kept at once without a read', async () => {
    const t = await setup({ sampleAssets: false });
    const big = 'x'.repeat(SEGMENT_SIZE / 4);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) })).id);
    const encode = vi.fn(conversationJson);
    const read = async () => new Blob([await t.storage.conversationsSnapshot(true, encode)]).text();
    expect(await read()).toBe(await fromRecords(t.storage, true));
    expect(encode).toHaveBeenCalledTimes(12);
    await settle();
    const kept = (await segmentsOf(t.databaseName)).filter((s) => s.variant === 1 && s.start !== WHOLE);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.every((s) => (kind === 'Blobs' ? s.body instanceof Blob : typeof s.body === 'string'))).toBe(true);
    // Nothing changed: nothing encoded.
    encode.mockClear();
    expect(await read()).toBe(await fromRecords(t.storage, true));
    expect(encode).not.toHaveBeenCalled();
    // A message added to the first conversation: its segment only, encoded and kept after the write; the read encodes nothing.
    encode.mockClear();
    await t.fetch(
      `${BASE}/messages/create`,
      jsonPost({ role: 'USER', fragment: { string: { raw: 'added' } }, conversation: { id: ids[0] } }),
    );
    // Where bodies are text no pass runs (it would read every body): the read encodes it.
    if (kind === 'Blobs') await keptUp(t.databaseName);
    const byPass = encode.mock.calls.length;
    const body = await read();
    expect(body).toBe(await fromRecords(t.storage, true));
    expect(body).toContain('"raw":"added"');
    const first = kept.find((s) => s.start === 0)!;
    expect(encode.mock.calls.map(([record]) => record.id)).toEqual(first.ids);
    if (kind === 'Blobs') expect(encode.mock.calls.length).toBe(byPass);
    // New conversations: only they are encoded, appended to the last segment (or cut after it once it is full).
    const created: string[] = [];
    for (let i = 0; i < 6; i++) {
      encode.mockClear();
      created.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`new ${i}`, [big]) })).id);
      if (kind === 'Blobs') await keptUp(t.databaseName);
      expect(await read()).toBe(await fromRecords(t.storage, true));
      expect(encode.mock.calls.map(([record]) => record.id)).toEqual([created.at(-1)]);
      await settle();
    }
    const after = (await segmentsOf(t.databaseName)).filter((s) => s.variant === 1 && s.start !== WHOLE);
    expect(after.length).toBeGreaterThan(kept.length);
    expect(after.flatMap((s) => s.ids)).toEqual([...ids, ...created]);
    // And a change to one of them: the segment that holds it is encoded afresh.
    encode.mockClear();
    await t.fetch(
      `${BASE}/messages/create`,
      jsonPost({ role: 'USER', fragment: { string: { raw: 'late' } }, conversation: { id: created.at(-1) } }),
    );
    if (kind === 'Blobs') await keptUp(t.databaseName);
    expect(await read()).toBe(await fromRecords(t.storage, true));
    const holder = after.find((s) => s.ids.includes(created.at(-1)!))!;
    expect(encode.mock.calls.map(([record]) => record.id)).toEqual(holder.ids);
  });

  it('rebuilds a kept segment whose body cannot be read (a lost Blob file) and answers the right data; bodies are kept as text from then on', async () => {
    const t = await setup({ sampleAssets: false });
    const big = 'y'.repeat(SEGMENT_SIZE / 3);
    for (let i = 0; i < 8; i++)
      await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) });
    const encode = vi.fn(conversationJson);
    const read = async () => new Blob([await t.storage.conversationsSnapshot(true, encode)]).text();
    expect(await read()).toBe(await fromRecords(t.storage, true));
    await settle();
    const kept = (await segmentsOf(t.databaseName)).filter((s) => s.variant === 1 && s.start !== WHOLE);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    // The middle segment's body becomes unreadable behind the service's back (and the whole body holding it is gone).
    const broken = kept[1]!;
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(t.databaseName);
      request.onsuccess = () => {
        const tx = request.result.transaction('snapshots', 'readwrite');
        tx.objectStore('snapshots').put({ ...broken, body: {} });
        tx.objectStore('snapshots').delete([1, WHOLE]);
        tx.oncomplete = () => {
          request.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
    // A connection that read the segment before keeps it as read: a new one (a restarted worker) checks it.
    const restarted = await openStorage({ name: t.databaseName });
    encode.mockClear();
    expect(await new Blob([await restarted.conversationsSnapshot(true, encode)]).text()).toBe(await fromRecords(t.storage, true));
    expect(encode).toHaveBeenCalled();
    await settle();
    const rebuilt = (await segmentsOf(t.databaseName)).filter((s) => s.variant === 1 && s.start !== WHOLE);
    expect(rebuilt.flatMap((s) => s.ids)).toEqual(kept.flatMap((s) => s.ids));
    // Kept as text once a stored Blob was lost: nothing the engine can lose again.
    expect(rebuilt.every((s) => typeof s.body === 'string')).toBe(true);
    // Read again: from the kept segments, nothing encoded.
    encode.mockClear();
    expect(await new Blob([await restarted.conversationsSnapshot(true, encode)]).text()).toBe(await fromRecords(t.storage, true));
    expect(encode).not.toHaveBeenCalled();
    restarted.close();
  });

  it('serves a stable variant from its whole body (one Blob), without reading the segments, until a conversation changes', async () => {
    const t = await setup({ sampleAssets: false });
    const big = 'z'.repeat(SEGMENT_SIZE / 3);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) })).id);
    const encode = vi.fn(conversationJson);
    const read = async (storage: Storage = t.storage) => textOf(await storage.conversationsSnapshot(true, encode));
    const wholes = async () => (await segmentsOf(t.databaseName)).filter((s) => s.start === WHOLE);
    // Encoded, then kept in segments and whole, by the read that encoded it.
    expect(await read()).toBe(await fromRecords(t.storage, true));
    await settle();
    if (kind === 'text') {
      // Text bodies are joined in memory, from one record or many alike: no whole body is kept.
      expect(await wholes()).toEqual([]);
      return;
    }
    const [whole] = await wholes();
    expect(whole).toMatchObject({ variant: 1, ids: [] });
    expect(whole!.body).toBeInstanceOf(Blob);
    expect(await (whole!.body as Blob).text()).toBe(await fromRecords(t.storage, true));
    // A new connection (a restarted worker) answers from it alone: no segment read, nothing encoded.
    const restarted = await openStorage({ name: t.databaseName });
    const getAll = vi.spyOn(IDBObjectStore.prototype, 'getAll');
    const segmentReads = () => getAll.mock.contexts.filter((store) => (store as IDBObjectStore).name === 'snapshots').length;
    encode.mockClear();
    expect(await read(restarted)).toBe(await fromRecords(t.storage, true));
    expect(segmentReads()).toBe(0);
    expect(encode).not.toHaveBeenCalled();
    // Changes of other records leave it true.
    await t.fetch(`${BASE}/applications/register`, jsonPost(application()));
    expect(await read(restarted)).toBe(await fromRecords(t.storage, true));
    expect(segmentReads()).toBe(0);
    // A conversation renamed: its segment encoded afresh after the write, the rest served from the whole body.
    await t.fetch(
      `${BASE}/conversation/update`,
      jsonPost({ ...(await (await t.fetch(`${BASE}/conversation/${ids[5]}`)).json()), name: 'renamed' }),
    );
    await keptUp(t.databaseName);
    expect(encode.mock.calls.map(([record]) => record.id)).toContain(ids[5]);
    expect(encode.mock.calls.length).toBeLessThan(ids.length);
    getAll.mockClear();
    encode.mockClear();
    const body = await read(restarted);
    expect(body).toBe(await fromRecords(t.storage, true));
    expect(body).toContain('"name":"renamed"');
    expect(segmentReads()).toBe(1);
    expect(encode).not.toHaveBeenCalled();
    restarted.close();
  });

  it.skipIf(kind === 'text')(
    'keeps the variants read up to date after each write, without a read: a new connection encodes nothing',
    async () => {
      const t = await setup({ sampleAssets: false });
      const big = 'v'.repeat(SEGMENT_SIZE / 3);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++)
        ids.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) })).id);
      const encode = vi.fn(conversationJson);
      expect(await textOf(await t.storage.conversationsSnapshot(true, encode))).toBe(await fromRecords(t.storage, true));
      expect(await textOf(await t.storage.conversationsSnapshot(false, encode))).toBe(await fromRecords(t.storage, false));
      await settle();
      // Writes of every kind, and no read: each is followed by a pass that keeps what it made stale.
      await t.fetch(
        `${BASE}/messages/create`,
        jsonPost({ role: 'USER', fragment: { string: { raw: 'added' } }, conversation: { id: ids[1] } }),
      );
      await t.fetch(`${BASE}/conversations/${ids[6]}/delete`, { method: 'POST' });
      await t.fetch(
        `${BASE}/conversation/update`,
        jsonPost({ ...(await (await t.fetch(`${BASE}/conversation/${ids[10]}`)).json()), name: 'renamed' }),
      );
      await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('late', [big]) });
      await keptUp(t.databaseName, 1);
      await keptUp(t.databaseName, 0);
      // A new connection (a restarted worker): every variant answered from what is kept, nothing encoded.
      const restarted = await openStorage({ name: t.databaseName });
      encode.mockClear();
      const full = await textOf(await restarted.conversationsSnapshot(true, encode));
      expect(full).toBe(await fromRecords(t.storage, true));
      expect(full).toContain('"raw":"added"');
      expect(full).toContain('"name":"renamed"');
      expect(full).not.toContain(ids[6]);
      expect(await textOf(await restarted.conversationsSnapshot(false, encode))).toBe(await fromRecords(t.storage, false));
      expect(encode).not.toHaveBeenCalled();
      restarted.close();
    },
  );

  it.skipIf(kind === 'text')(
    `sends the segments the whole body holds as slices of it, and writes it again once more than ${MAX_OUTSIDE_WHOLE} segments lie outside it`,
    async () => {
      const t = await setup({ sampleAssets: false });
      const big = 'u'.repeat(SEGMENT_SIZE / 2);
      const ids: string[] = [];
      for (let i = 0; i < 2 * (MAX_OUTSIDE_WHOLE + 4); i++)
        ids.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) })).id);
      const encode = vi.fn(conversationJson);
      expect(await textOf(await t.storage.conversationsSnapshot(true, encode))).toBe(await fromRecords(t.storage, true));
      const whole = async () => (await segmentsOf(t.databaseName)).find((s) => s.variant === 1 && s.start === WHOLE)!;
      const first = await vi.waitFor(async () => (await whole()) ?? Promise.reject(new Error('no whole body yet')));
      const segments = (await segmentsOf(t.databaseName)).filter((s) => s.variant === 1 && s.start !== WHOLE);
      expect(segments.length).toBeGreaterThan(MAX_OUTSIDE_WHOLE + 1);
      // One conversation of each segment changed in turn: the whole body stays as written while at most
      // MAX_OUTSIDE_WHOLE segments lie outside it, every read true.
      for (const [n, segment] of segments.slice(0, MAX_OUTSIDE_WHOLE + 1).entries()) {
        await t.fetch(
          `${BASE}/messages/create`,
          jsonPost({ role: 'USER', fragment: { string: { raw: `edit ${n}` } }, conversation: { id: segment.ids[0] } }),
        );
        await keptUp(t.databaseName);
        const body = await textOf(await t.storage.conversationsSnapshot(true, encode));
        expect(body).toBe(await fromRecords(t.storage, true));
        const now = await whole();
        if (n < MAX_OUTSIDE_WHOLE) expect(now.built).toBe(first.built);
        else
          await vi.waitFor(async () => {
            const rewritten = await whole();
            expect(rewritten.built).toBeGreaterThan(first.built);
            expect(await (rewritten.body as Blob).text()).toBe(body);
          });
      }
    },
  );

  it.skipIf(kind === 'text')('drops a whole body that cannot be read (a lost Blob file) and answers from the segments', async () => {
    const t = await setup({ sampleAssets: false });
    const big = 'w'.repeat(SEGMENT_SIZE / 3);
    for (let i = 0; i < 8; i++)
      await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) });
    const read = async (storage: Storage = t.storage) => textOf(await storage.conversationsSnapshot(true, conversationJson));
    await read();
    await settle();
    await read();
    await settle();
    const [whole] = (await segmentsOf(t.databaseName)).filter((s) => s.start === WHOLE);
    expect(whole).toBeDefined();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(t.databaseName);
      request.onsuccess = () => {
        const tx = request.result.transaction('snapshots', 'readwrite');
        tx.objectStore('snapshots').put({ ...whole, body: {} });
        tx.oncomplete = () => {
          request.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
    const restarted = await openStorage({ name: t.databaseName });
    expect(await read(restarted)).toBe(await fromRecords(t.storage, true));
    await settle();
    expect((await segmentsOf(t.databaseName)).filter((s) => s.start === WHOLE)).toEqual([]);
    restarted.close();
  });

  it('never serves a deleted, renamed or emptied conversation from a kept segment (both variants, every write of the service)', async () => {
    const t = await setup();
    const check = async () => {
      for (const withMessages of [true, false]) {
        // Through the service; with Node's Blob stubbed in, from the storage (happy-dom's Response does not read Node's Blob).
        // Twice: the second read finds every segment kept, and keeps the whole body (Blobs), which the next write must make stale.
        for (let again = 0; again < 2; again++) {
          const served =
            kind === 'Blobs'
              ? await textOf(await t.storage.conversationsSnapshot(withMessages, conversationJson))
              : await (await t.fetch(`${BASE}/conversations?transferables=${withMessages}`)).text();
          expect(served).toBe(await fromRecords(t.storage, withMessages));
          await settle();
        }
      }
      // The id list, from the kept segments and the ranges changed since.
      expect((await t.storage.listIds('conversation')).ids).toEqual(
        (await t.storage.listConversations({ messages: false })).conversations.map((c) => c.id),
      );
      await settle();
    };
    const made = [];
    await check();
    for (let i = 0; i < 4; i++)
      made.push(await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, ['one', 'two']) }));
    await check();
    await t.fetch(`${BASE}/conversations/${made[1]!.id}/delete`, { method: 'POST' });
    // The id list first, while the segments are stale.
    expect((await t.storage.listIds('conversation')).ids).toEqual([made[0]!.id, made[2]!.id, made[3]!.id]);
    await check();
    await t.fetch(`${BASE}/conversation/update`, jsonPost({ ...made[2], name: 'renamed' }));
    await check();
    const message = made[3]!.messages.iterable[0]!.id;
    await t.fetch(`${BASE}/messages/${message}/delete`, { method: 'POST' });
    await check();
    await t.fetch(
      `${BASE}/message/update/value`,
      jsonPost({ id: made[3]!.messages.iterable[1]!.id, fragment: { string: { raw: 'edited' } } }),
    );
    await check();
    await t.fetch(`${BASE}/conversations/create/from_asset/${(await t.assets.assetsIdentifiersSnapshot()).iterable![0]!.id}`, {
      method: 'POST',
    });
    await check();
    const exported = await t.service.exportData();
    await t.service.reset();
    await check();
    expect(JSON.parse(await textOf(await t.storage.conversationsSnapshot(true, conversationJson))).iterable).toEqual([]);
    await t.service.seed(exported);
    await check();
    await t.service.seed(exported);
    await check();
  });
});

describe('snapshot segment bodies', () => {
  it('stores segment bodies as Blobs where they survive a structured clone', async () => {
    // Node's own Blob (the unit tests' global Blob is happy-dom's, which does not survive a clone).
    const { Blob: NodeBlob } = await import('node:buffer');
    vi.stubGlobal('Blob', NodeBlob);
    try {
      const name = `snapshots-${Date.now()}-blobs`;
      const storage = await openStorage({ name });
      const id = crypto.randomUUID();
      await storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
      const body = await storage.conversationsSnapshot(false, conversationJson);
      await settle();
      const kept = await segmentsOf(name);
      expect(kept[0]!.body).toBeInstanceOf(NodeBlob);
      expect(body).toBeInstanceOf(NodeBlob);
      const again = await storage.conversationsSnapshot(false, conversationJson);
      expect(again).toBeInstanceOf(NodeBlob);
      expect(await textOf(again)).toBe(await textOf(body));
      expect(JSON.parse(await textOf(again)).iterable[0].id).toBe(id);
      storage.close();
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('stores segment bodies as text where the database refuses Blobs', async () => {
    const { Blob: NodeBlob } = await import('node:buffer');
    vi.stubGlobal('Blob', NodeBlob);
    const name = `snapshots-${Date.now()}`;
    const storage = await openStorage({ name });
    const id = crypto.randomUUID();
    const message: MessageRecord = { id: crypto.randomUUID(), conversation: id, json: '{"m":1}' };
    const record: Omit<ConversationRecord, 'seq'> = { id, json: JSON.stringify({ id }), messageIds: [message.id] };
    await storage.createConversation(record, [message]);
    const put = IDBObjectStore.prototype.put;
    const refuse = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      value: unknown,
      key?: IDBValidKey,
    ) {
      // As WebKit's private sessions do: the put is taken, the transaction fails as it commits.
      if ((value as { body?: unknown })?.body instanceof NodeBlob) this.transaction.abort();
      return put.call(this, value, key);
    });
    try {
      const first = await new Blob([await storage.conversationsSnapshot(true, conversationJson)]).text();
      await settle();
      const kept = await segmentsOf(name);
      expect(kept).toHaveLength(1);
      expect(typeof kept[0]!.body).toBe('string');
      expect(await new Blob([await storage.conversationsSnapshot(true, conversationJson)]).text()).toBe(first);
      expect(JSON.parse(first).iterable[0].messages.iterable[0]).toEqual({ id: message.id, reference: { m: 1 } });
    } finally {
      refuse.mockRestore();
      storage.close();
      vi.unstubAllGlobals();
    }
  });

  it('serves snapshots encoded for each read where no segment can be stored (quota)', async () => {
    const name = `snapshots-${Date.now()}-quota`;
    const storage = await openStorage({ name });
    const id = crypto.randomUUID();
    await storage.createConversation({ id, json: JSON.stringify({ id }), messageIds: [] }, []);
    const put = IDBObjectStore.prototype.put;
    const full = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      value: unknown,
      key?: IDBValidKey,
    ) {
      if (this.name === 'snapshots') throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.call(this, value, key);
    });
    try {
      const encode = vi.fn(conversationJson);
      for (let i = 0; i < 2; i++)
        expect(
          JSON.parse(await textOf(await storage.conversationsSnapshot(false, encode))).iterable.map((c: { id: string }) => c.id),
        ).toEqual([id]);
      await settle();
      expect(await segmentsOf(name)).toEqual([]);
      expect(encode).toHaveBeenCalledTimes(2);
    } finally {
      full.mockRestore();
      storage.close();
    }
  });
});

describe('kept Blobs where a Blob read from the database dies with its record (WebKit)', () => {
  const WEBKIT = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15';
  beforeEach(async () => {
    vi.stubGlobal('Blob', (await import('node:buffer')).Blob);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('tells WebKit by its user agent', () => {
    expect(blobsOutliveRecords(WEBKIT)).toBe(false);
    // Chrome on iOS is WebKit too.
    expect(
      blobsOutliveRecords(
        'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/140.0 Mobile/15E148 Safari/604.1',
      ),
    ).toBe(false);
    expect(
      blobsOutliveRecords('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'),
    ).toBe(true);
    expect(blobsOutliveRecords('Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0')).toBe(true);
    expect(blobsOutliveRecords('')).toBe(true);
  });

  it('drops what a database kept as Blobs before the first read, and keeps bodies as text from then on', async () => {
    const t = await setup({ sampleAssets: false });
    const big = 'x'.repeat(SEGMENT_SIZE / 4);
    for (let i = 0; i < 12; i++)
      await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(`c${i}`, [big]) });
    await new Blob([await t.storage.conversationsSnapshot(true, conversationJson)]).text();
    await settle();
    expect((await segmentsOf(t.databaseName)).some((s) => s.body instanceof Blob)).toBe(true);
    t.storage.close();

    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(WEBKIT);
    const storage = await openStorage({ name: t.databaseName, initialData: {} });
    const body = await new Blob([await storage.conversationsSnapshot(true, conversationJson)]).text();
    expect(body).toBe(await fromRecords(storage, true));
    await settle();
    const kept = await segmentsOf(t.databaseName);
    expect(kept.filter((s) => s.variant === 1).length).toBeGreaterThan(0);
    expect(kept.every((s) => typeof s.body === 'string')).toBe(true);
    storage.close();
  });
});
