/** Group commit: concurrent creates share a transaction, each acknowledged after its commit, each all or nothing. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHANGE_LOG_LIMIT, openStorage } from '../../../src/storage/idb/storage.js';

let counter = 0;
const freshName = () => `group-commit-${Date.now()}-${counter++}`;
const uuid = (n: number, kind = 1) => `${String(kind).repeat(8)}-0000-4000-8000-${String(n).padStart(12, '0')}`;

const conversation = (n: number, messageIds: string[]) => ({
  id: uuid(n),
  json: JSON.stringify({ id: uuid(n), name: `c${n}` }),
  messageIds,
});
const message = (id: string, owner: number) => ({ id, conversation: uuid(owner), json: JSON.stringify({ id }) });

/** Counts read-write transactions on the conversations store. */
function countWrites() {
  const original = IDBDatabase.prototype.transaction;
  const spy = vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    return original.apply(this, args);
  });
  return () => spy.mock.calls.filter(([stores, mode]) => mode === 'readwrite' && [stores].flat().includes('conversations')).length;
}

afterEach(() => vi.restoreAllMocks());

describe('group commit', () => {
  it('writes creates that arrive together in one transaction, and acknowledges each after it', async () => {
    const storage = await openStorage({ name: freshName() });
    const writes = countWrites();
    // The first is written at once; the four that arrive meanwhile go together.
    const done = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => storage.createConversation(conversation(n, [uuid(n, 2)]), [message(uuid(n, 2), n)])),
    );
    expect(writes()).toBe(2);
    // Each create has its own changes, in commit order, the conversation's first.
    expect(done.map((changes) => changes.map((c) => c.id))).toEqual([1, 2, 3, 4, 5].map((n) => [uuid(n), uuid(n, 2)]));
    const seqs = done.flatMap((changes) => changes.map((c) => c.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect((await storage.listIds('conversation')).ids).toEqual([1, 2, 3, 4, 5].map((n) => uuid(n)));
    storage.close();
  });

  it('writes a create and the activity that records it in one transaction; after the first, in one round of requests', async () => {
    const storage = await openStorage({ name: freshName() });
    const activity = (n: number) => ({
      id: uuid(n, 5),
      created: '2026-01-01T00:00:00.000Z',
      order: `2026-01-01T00:00:00.000Z|${n}`,
      event: { conversation: { conversation: { id: uuid(n) } } },
      application: { id: 'app' },
      mechanism: 'MANUAL',
    });
    // The first create learns the log's keys; the next ones give the keys themselves (no request waits for another).
    await storage.createConversation(conversation(1, [uuid(1, 2)]), [message(uuid(1, 2), 1)], [], activity(1));
    const writes = countWrites();
    const add = vi.spyOn(IDBObjectStore.prototype, 'add');
    const changes = await storage.createConversation(conversation(2, [uuid(2, 2)]), [message(uuid(2, 2), 2)], [], activity(2));
    expect(writes()).toBe(1);
    // Every change row was added with its key, the conversation with its snapshot order.
    const given = add.mock.calls
      .filter(([value]) => (value as { seq?: number }).seq !== undefined)
      .map(([value]) => (value as { seq: number }).seq);
    expect(given).toEqual([...changes.map((c) => c.seq), changes[0]!.seq]);
    expect(changes.map((c) => [c.collection, c.id])).toEqual([
      ['conversation', uuid(2)],
      ['conversationMessage', uuid(2, 2)],
      ['activity', uuid(2, 5)],
    ]);
    expect((await storage.listActivities()).map((a) => a.id)).toEqual([uuid(1, 5), uuid(2, 5)]);
    storage.close();
  });

  it("a key another writer took since is found at commit: the create is written again with the log's keys, nothing lost or doubled", async () => {
    const name = freshName();
    const mine = await openStorage({ name });
    const other = await openStorage({ name });
    await mine.createConversation(conversation(1, []), []);
    // Another connection (a second worker during an update, a tab in page mode) logs changes meanwhile.
    await other.createConversation(conversation(2, [uuid(2, 2)]), [message(uuid(2, 2), 2)]);
    const writes = countWrites();
    const third = await mine.createConversation(conversation(3, []), []);
    // The guess, then the write with the log's keys.
    expect(writes()).toBe(2);
    const { changes } = await mine.changesSince(0);
    expect(changes.map((c) => c.id)).toEqual([uuid(1), uuid(2), uuid(2, 2), uuid(3)]);
    expect(changes.map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    expect(third[0]!.seq).toBe(4);
    expect((await mine.listIds('conversation')).ids).toEqual([1, 2, 3].map((n) => uuid(n)));
    // And the next guess is right again.
    await mine.createConversation(conversation(4, []), []);
    expect(writes()).toBe(3);
    mine.close();
    other.close();
  });

  it('a failing create fails alone: the others of its group are written, it leaves nothing', async () => {
    const storage = await openStorage({ name: freshName() });
    await storage.createConversation(conversation(9, [uuid(9, 2)]), [message(uuid(9, 2), 9)]);
    const before = await storage.changesSince(0);
    const writes = countWrites();
    const outcomes = await Promise.allSettled([
      storage.createConversation(conversation(1, [uuid(1, 2)]), [message(uuid(1, 2), 1)]),
      storage.createConversation(conversation(2, [uuid(2, 2)]), [message(uuid(2, 2), 2)]),
      // Its message id is taken: its add fails, in the middle of the group.
      storage.createConversation(conversation(3, [uuid(9, 2)]), [message(uuid(9, 2), 3)]),
      storage.createConversation(conversation(4, [uuid(4, 2)]), [message(uuid(4, 2), 4)]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // One alone, one group that failed, then its three members one by one.
    expect(writes()).toBe(5);
    expect((await storage.listIds('conversation')).ids).toEqual([9, 1, 2, 4].map((n) => uuid(n)));
    expect(await storage.getConversation(uuid(3))).toBeUndefined();
    expect(JSON.parse((await storage.getMessage(uuid(9, 2)))!.json)).toEqual({ id: uuid(9, 2) });
    const after = await storage.changesSince(0);
    const added = after.changes.slice(before.changes.length).map((c) => c.id);
    expect(added).toEqual([uuid(1), uuid(1, 2), uuid(2), uuid(2, 2), uuid(4), uuid(4, 2)]);
    storage.close();
  });

  it('keeps the last CHANGE_LOG_LIMIT changes of the log, pruned as creates commit, and says when it no longer reaches back', async () => {
    const storage = await openStorage({ name: freshName() });
    const big = (n: number) => {
      const ids = Array.from({ length: CHANGE_LOG_LIMIT / 2 }, (_, i) => uuid(n * 100_000 + i, 3));
      return storage.createConversation(
        conversation(n, ids),
        ids.map((id) => message(id, n)),
      );
    };
    // Two creates of 5,000 messages and a small one, together: 10,003 changes.
    const done = await Promise.all([big(1), big(2), storage.createConversation(conversation(3, []), [])]);
    const last = done.at(-1)!.at(-1)!.seq;
    const { changes, complete, seq } = await storage.changesSince(0);
    expect(seq).toBe(last);
    expect(changes).toHaveLength(CHANGE_LOG_LIMIT);
    expect(changes[0]!.seq).toBe(last - CHANGE_LOG_LIMIT + 1);
    expect(complete).toBe(false);
    expect((await storage.changesSince(last - CHANGE_LOG_LIMIT)).complete).toBe(true);
    expect((await storage.listIds('conversation')).ids).toEqual([1, 2, 3].map((n) => uuid(n)));
    storage.close();
  });

  it('can be turned off: one transaction per create', async () => {
    const storage = await openStorage({ name: freshName(), groupCommit: false });
    const writes = countWrites();
    await Promise.all([1, 2, 3].map((n) => storage.createConversation(conversation(n, []), [])));
    expect(writes()).toBe(3);
    storage.close();
  });
});
