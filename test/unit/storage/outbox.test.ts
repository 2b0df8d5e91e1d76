/**
 * The mirror's stores: an operation is queued in the outbox in the very transaction of the
 * local write that made it (both commit, or neither), and a database written before the
 * outbox existed (schema version 5) is upgraded in place, its data kept.
 */
import { describe, expect, it } from 'vitest';
import { openDB } from 'idb';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { DB_VERSION, STORES, UPGRADES, type OutboxEntry, type PiecesDB } from '../../../src/storage/schema.js';
import type { OutboxInput } from '../../../src/storage/storage.js';
import { createService } from '../../../src/core/service.js';
import { BASE, dump } from '../support/harness.js';

let counter = 0;
const freshName = () => `outbox-${Date.now()}-${counter++}`;
const CONVERSATION = '11111111-1111-4111-8111-111111111111';
const MESSAGE = '22222222-2222-4222-8222-222222222222';
const stamp = { value: '2026-01-01T00:00:00.000Z' };
const conversationRecord = (id: string) => ({ id, json: JSON.stringify({ id, type: 'COPILOT', created: stamp, updated: stamp }), messageIds: [] });
const queued = (operation: string, extra: Partial<OutboxInput> = {}): OutboxInput => ({ operation, params: {}, created: [], at: stamp.value, ...extra });

describe('the outbox, in the write’s own transaction', () => {
  it('queues an operation with each kind of write, in commit order, with what the write created', async () => {
    const storage = await openStorage({ name: freshName() });
    await storage.createConversation(conversationRecord(CONVERSATION), [], queued('conversationsCreateSpecificConversation', { created: [{ kind: 'conversation', id: CONVERSATION }] }));
    await storage.editConversation(
      { conversation: CONVERSATION },
      (current) => ({ record: { ...current.record, messageIds: [MESSAGE] }, putMessages: [{ id: MESSAGE, conversation: CONVERSATION, json: '{}' }] }),
      queued('messagesCreateSpecificMessage', { body: { conversation: { id: CONVERSATION } } }),
    );
    await storage.putApplication({ id: 'a', name: 'VS_CODE' }, queued('applicationsRegister'));
    await storage.recordEvent({ id: 'e', kind: 'interaction', at: stamp.value, payload: {} }, [], queued('applicationsUsageEngagementInteraction'));
    await storage.putSession({ id: 's', opened: stamp }, queued('applicationsSessionOpen'));
    await storage.closeSession('s', stamp, queued('applicationsSessionClose', { body: 's' }));
    await storage.putAssets([], queued('assetsCreateNewAsset'));
    await storage.deleteConversation(CONVERSATION, queued('conversationsDeleteSpecificConversation', { params: { conversation: CONVERSATION } }));
    const entries = await storage.outboxEntries();
    expect(entries.map((e) => [e.seq, e.operation, e.state])).toEqual([
      [1, 'conversationsCreateSpecificConversation', 'queued'],
      [2, 'messagesCreateSpecificMessage', 'queued'],
      [3, 'applicationsRegister', 'queued'],
      [4, 'applicationsUsageEngagementInteraction', 'queued'],
      [5, 'applicationsSessionOpen', 'queued'],
      [6, 'applicationsSessionClose', 'queued'],
      [7, 'assetsCreateNewAsset', 'queued'],
      [8, 'conversationsDeleteSpecificConversation', 'queued'],
    ]);
    expect(entries[0]!.created).toEqual([{ kind: 'conversation', id: CONVERSATION }]);
    storage.close();
  });

  it('a write that fails queues nothing, and an entry that cannot be stored undoes its write', async () => {
    const name = freshName();
    const storage = await openStorage({ name });
    await storage.createConversation(conversationRecord(CONVERSATION), []);
    const before = await dump(name);
    // The write fails (the id is taken): no entry.
    await expect(storage.createConversation(conversationRecord(CONVERSATION), [], queued('conversationsCreateSpecificConversation'))).rejects.toThrow();
    // The entry fails (a value IndexedDB cannot store): no write.
    const unstorable = queued('conversationUpdate', { body: { id: CONVERSATION, name: () => 'not JSON' } as never });
    await expect(storage.putApplication({ id: 'b', name: 'VS_CODE' }, unstorable)).rejects.toThrow();
    await expect(
      storage.editConversation({ conversation: CONVERSATION }, (current) => ({ record: { ...current.record, json: '{"changed":true}' } }), unstorable),
    ).rejects.toThrow();
    // Nothing of either happened: not the records, not the change log, not the outbox.
    expect(await dump(name)).toBe(before);
    expect(await storage.outboxEntries()).toEqual([]);
    // Deleting or closing what is not there queues nothing either.
    expect(await storage.deleteConversation('33333333-3333-4333-8333-333333333333', queued('conversationsDeleteSpecificConversation'))).toBeUndefined();
    expect(await storage.closeSession('nope', stamp, queued('applicationsSessionClose'))).toBeUndefined();
    expect(await storage.outboxEntries()).toEqual([]);
    storage.close();
  });

  it('queues creates written together (group commit) in their order, each with its own write', async () => {
    const storage = await openStorage({ name: freshName() });
    const ids = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await Promise.all(ids.map((id) => storage.createConversation(conversationRecord(id), [], queued('conversationsCreateSpecificConversation', { created: [{ kind: 'conversation', id }] }))));
    const entries = await storage.outboxEntries();
    expect(entries.map((e) => e.created[0]!.id)).toEqual(ids);
    expect((await storage.listIds('conversation')).ids).toEqual(ids);
    storage.close();
  });
});

describe('upgrade', () => {
  it('opens a version-5 database with data in place: every record kept, the outbox and id map added, writes queue', async () => {
    const name = freshName();
    const v5 = await openDB<PiecesDB>(name, 5, {
      upgrade: (db, old, _new, tx) => {
        for (let step = old; step < 5; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    const conversation = { id: CONVERSATION, type: 'COPILOT', name: 'from version 5', created: stamp, updated: stamp };
    const message = { id: MESSAGE, role: 'USER', fragment: { string: { raw: 'kept' } }, conversation: { id: CONVERSATION }, created: stamp, updated: stamp };
    const seq = await v5.add('changes', { collection: 'conversation', id: CONVERSATION });
    await v5.put('conversations', { id: CONVERSATION, seq, json: JSON.stringify(conversation), messageIds: [MESSAGE] });
    await v5.put('messages', { id: MESSAGE, conversation: CONVERSATION, json: JSON.stringify(message) });
    await v5.put('applications', { id: 'a', name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' });
    await v5.put('meta', true, 'seeded');
    await v5.put('meta', 'an identity', 'identity');
    expect([...v5.objectStoreNames]).not.toContain('outbox');
    v5.close();
    const before = JSON.parse(await dump(name));

    const storage = await openStorage({ name });
    const after = JSON.parse(await dump(name));
    for (const store of Object.keys(before)) expect(after[store], store).toEqual(before[store]);
    expect(after.outbox).toEqual([]);
    expect(after.idmap).toEqual([]);
    expect(await storage.identity()).toBe('an identity');
    const reopened = await openDB(name);
    expect(reopened.version).toBe(DB_VERSION);
    expect([...reopened.objectStoreNames].sort()).toEqual(Object.keys(STORES).sort());
    reopened.close();
    // The API answers what version 5 stored, and a write now queues.
    const service = createService({ storage });
    const listed = await (await service.handle(new Request(`${BASE}/conversations`))).json();
    expect(listed.iterable[0]).toEqual({ ...conversation, messages: { iterable: [{ id: MESSAGE, reference: message }], indices: { [MESSAGE]: 0 } } });
    await storage.deleteConversation(CONVERSATION, queued('conversationsDeleteSpecificConversation'));
    expect((await storage.outboxEntries()).map((e: OutboxEntry) => e.operation)).toEqual(['conversationsDeleteSpecificConversation']);
    storage.close();
  });
});
