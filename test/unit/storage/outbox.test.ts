/**
 * The mirror's stores: an operation is queued in the outbox in the very transaction of the
 * local write that made it (both commit, or neither), every kind of write (conversations,
 * applications, assets and what hangs on them, anchors); an asset re-keyed to the upstream's
 * ids takes everything that names it along; and a database written before the outbox existed
 * (schema version 5) is upgraded in place, its data kept.
 */
import { describe, expect, it, vi } from 'vitest';
import { openDB } from 'idb';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { cacheReads } from '../../../src/storage/read-cache.js';
import { reconnectingStorage } from '../../../src/storage/reconnect.js';
import { DB_VERSION, STORES, UPGRADES, type OutboxEntry, type PiecesDB } from '../../../src/storage/schema.js';
import type { OutboxInput, Storage } from '../../../src/storage/storage.js';
import { RequestOutbox } from '../../../src/host/mirror/queueing.js';
import { createService } from '../../../src/core/service.js';
import { activity, parseSeed } from '../../../src/core/models/asset.js';
import { anchorRecord } from '../../../src/core/models/conversation.js';
import { BASE, dump } from '../support/harness.js';

let counter = 0;
const freshName = () => `outbox-${Date.now()}-${counter++}`;
const CONVERSATION = '11111111-1111-4111-8111-111111111111';
const MESSAGE = '22222222-2222-4222-8222-222222222222';
const stamp = { value: '2026-01-01T00:00:00.000Z' };
const conversationRecord = (id: string) => ({
  id,
  json: JSON.stringify({ id, type: 'COPILOT', created: stamp, updated: stamp }),
  messageIds: [],
});
/** `storage` as a request's writes see it, its operation queued by the first write that writes something. */
const queueing = (storage: Storage, operation: string, extra: Partial<OutboxInput> = {}) =>
  storage.queueing(new RequestOutbox({ operation, params: {}, created: [], at: stamp.value, ...extra }));

describe('the outbox, in the write’s own transaction', () => {
  it('queues an operation with each kind of write, in commit order, with what the write created', async () => {
    const storage = await openStorage({ name: freshName() });
    await queueing(storage, 'conversationsCreateSpecificConversation').createConversation(conversationRecord(CONVERSATION), []);
    await queueing(storage, 'messagesCreateSpecificMessage', { body: { conversation: { id: CONVERSATION } } }).editConversation(
      { conversation: CONVERSATION },
      (current) => ({
        record: { ...current.record, messageIds: [MESSAGE] },
        putMessages: [{ id: MESSAGE, conversation: CONVERSATION, json: '{}' }],
      }),
    );
    await queueing(storage, 'applicationsRegister').putApplication({ id: 'a', name: 'VS_CODE' });
    await queueing(storage, 'applicationsUsageEngagementInteraction').recordEvent(
      { id: 'e', kind: 'interaction', at: stamp.value, payload: {} },
      [],
    );
    await queueing(storage, 'applicationsSessionOpen').putSession({ id: 's', opened: stamp });
    await queueing(storage, 'applicationsSessionClose', { body: 's' }).closeSession('s', stamp);
    await queueing(storage, 'assetsCreateNewAsset').putAssets([], []);
    await queueing(storage, 'conversationsDeleteSpecificConversation', { params: { conversation: CONVERSATION } }).deleteConversation(
      CONVERSATION,
    );
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
    // What each write created, as the write reports it (an operation declared to create nothing lists nothing).
    expect(entries.map((e) => e.created)).toEqual([
      [{ kind: 'conversation', id: CONVERSATION }],
      [{ kind: 'conversationMessage', id: MESSAGE }],
      [{ kind: 'application', id: 'a' }],
      [],
      [{ kind: 'session', id: 's' }],
      [],
      [],
      [],
    ]);
    storage.close();
  });

  it('queues a request’s operation once, with its first write that writes something', async () => {
    const storage = await openStorage({ name: freshName() });
    const scope = new RequestOutbox({ operation: 'applicationsRegister', params: {}, created: [], at: stamp.value });
    const request = storage.queueing(scope);
    // Nothing to change: the operation waits for the next write.
    expect(await request.deleteConversation(CONVERSATION)).toBeUndefined();
    // A write that fails gives it back.
    await request.putApplication({ id: 'x', name: () => 'not storable' } as never).catch(() => {});
    expect(scope.queued).toBe(false);
    await request.putApplication({ id: 'a', name: 'VS_CODE' });
    expect(scope.queued).toBe(true);
    // The request's later writes are made, and queue nothing more.
    await request.putApplication({ id: 'b', name: 'VS_CODE' });
    await request.createConversation(conversationRecord(CONVERSATION), []);
    expect((await storage.outboxEntries()).map((e) => [e.operation, e.created])).toEqual([
      ['applicationsRegister', [{ kind: 'application', id: 'a' }]],
    ]);
    expect((await storage.listIds('conversation')).ids).toEqual([CONVERSATION]);
    // The storage itself queues nothing.
    await storage.putApplication({ id: 'c', name: 'VS_CODE' });
    expect(await storage.outboxEntries()).toHaveLength(1);
    storage.close();
  });

  it('a write that fails queues nothing, and an entry that cannot be stored undoes its write', async () => {
    const name = freshName();
    const storage = await openStorage({ name });
    await storage.createConversation(conversationRecord(CONVERSATION), []);
    const before = await dump(name);
    // The write fails (the id is taken): no entry.
    await expect(
      queueing(storage, 'conversationsCreateSpecificConversation').createConversation(conversationRecord(CONVERSATION), []),
    ).rejects.toThrow();
    // The entry fails (a value IndexedDB cannot store): no write.
    // One scope for every write below: a write that fails gives its operation back to the next.
    const unstorable = queueing(storage, 'conversationUpdate', { body: { id: CONVERSATION, name: () => 'not JSON' } as never });
    await expect(unstorable.putApplication({ id: 'b', name: 'VS_CODE' })).rejects.toThrow();
    // A create, its activity and its entry are one transaction: the entry fails, none is written.
    const other = '44444444-4444-4444-8444-444444444444';
    const created = activity(
      { now: () => new Date(stamp.value), newId: () => crypto.randomUUID() },
      { conversation: other, pair: 'conversationCreated', value: 'a_conversation_was_created' },
    );
    await expect(unstorable.createConversation(conversationRecord(other), [], [], created)).rejects.toThrow();
    await expect(
      unstorable.editConversation({ conversation: CONVERSATION }, (current) => ({
        record: { ...current.record, json: '{"changed":true}' },
      })),
    ).rejects.toThrow();
    // Nothing of either happened: not the records, not the change log, not the outbox.
    expect(await dump(name)).toBe(before);
    expect(await storage.outboxEntries()).toEqual([]);
    // Deleting or closing what is not there queues nothing either.
    expect(
      await queueing(storage, 'conversationsDeleteSpecificConversation').deleteConversation('33333333-3333-4333-8333-333333333333'),
    ).toBeUndefined();
    expect(await queueing(storage, 'applicationsSessionClose').closeSession('nope', stamp)).toBeUndefined();
    expect(await storage.outboxEntries()).toEqual([]);
    storage.close();
  });

  it('queues creates written together (group commit) in their order, each with its own write', async () => {
    const storage = await openStorage({ name: freshName() });
    const ids = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await Promise.all(
      ids.map((id) => queueing(storage, 'conversationsCreateSpecificConversation').createConversation(conversationRecord(id), [])),
    );
    const entries = await storage.outboxEntries();
    expect(entries.map((e) => e.created[0]!.id)).toEqual(ids);
    expect((await storage.listIds('conversation')).ids).toEqual(ids);
    storage.close();
  });
});

describe('a request’s view through the host’s wrappers (a reconnecting storage, each connection with its read cache)', () => {
  it('reads through the cache, drops what its write changed, and queues on the connection open when the write is made again', async () => {
    const name = freshName();
    const opened: boolean[] = [];
    const storage = reconnectingStorage(
      (hooks) => openStorage({ name, onLost: hooks.lost, onBlocked: hooks.blocked }).then((s) => cacheReads(s, null)),
      { onOpen: (_s, reopened) => opened.push(reopened) },
    );
    const request = (operation: string) => {
      const scope = new RequestOutbox({ operation, params: {}, created: [], at: stamp.value });
      return { scope, storage: storage.queueing(scope) };
    };
    await storage.putApplication({ id: 'a', name: 'VS_CODE' });
    expect((await storage.getApplication('a'))!.application.name).toBe('VS_CODE');
    const first = request('applicationUpdate');
    expect((await first.storage.getApplication('a'))!.application.name).toBe('VS_CODE');
    await first.storage.putApplication({ id: 'a', name: 'JETBRAINS' });
    // The cached read is dropped by the view's write, for the view and the storage alike.
    expect((await storage.getApplication('a'))!.application.name).toBe('JETBRAINS');
    expect((await first.storage.getApplication('a'))!.application.name).toBe('JETBRAINS');
    // The connection closes under the next request's write: made again on a new connection, queued there, once.
    const transaction = IDBDatabase.prototype.transaction;
    let failures = 1;
    vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (this: IDBDatabase, ...args) {
      if (failures-- > 0) throw new DOMException('The database connection is closing.', 'InvalidStateError');
      return transaction.apply(this, args as Parameters<typeof transaction>);
    });
    const second = request('applicationsRegister');
    try {
      await second.storage.putApplication({ id: 'b', name: 'VS_CODE' });
    } finally {
      vi.restoreAllMocks();
    }
    expect(opened).toEqual([false, true]);
    expect([first.scope.queued, second.scope.queued]).toEqual([true, true]);
    expect((await storage.outboxEntries()).map((e) => [e.operation, e.created])).toEqual([
      ['applicationUpdate', []],
      ['applicationsRegister', [{ kind: 'application', id: 'b' }]],
    ]);
    storage.close();
  });
});

const clock = { now: () => new Date(stamp.value), newId: () => crypto.randomUUID() };
const APPLICATION = {
  id: '44444444-4444-4444-8444-444444444444',
  name: 'VS_CODE',
  version: '1',
  platform: 'LINUX',
  onboarded: true,
  privacy: 'OPEN',
};
/** A whole new asset (record, formats, a DESCRIPTION, a tag and a website), as the create handler makes one. */
const newAsset = (raw: string) =>
  parseSeed(
    {
      asset: {
        application: APPLICATION,
        format: { fragment: { string: { raw } } },
        metadata: { tags: [{ text: `tag of ${raw}` }], websites: [{ url: `https://example.com/${raw}`, name: raw }] },
      },
    },
    clock,
    crypto.randomUUID(),
  ).asset;

describe('the second ring’s writes queue in their own transaction', () => {
  it('asset creates (group commit), edits, deletes, annotations and anchors: each queued with its write, in commit order', async () => {
    const storage = await openStorage({ name: freshName() });
    const assets = ['one', 'two', 'three'].map(newAsset);
    await Promise.all(assets.map((asset) => queueing(storage, 'assetsCreateNewAsset').createAsset(asset, [])));
    const [one, two] = assets as [ReturnType<typeof newAsset>, ReturnType<typeof newAsset>];
    await queueing(storage, 'assetUpdate').editAsset({ asset: one.record.id }, (current) => ({
      record: { ...current.record, name: 'renamed' },
    }));
    await queueing(storage, 'assetsDeleteAsset').deleteAsset(two.record.id, []);
    const standalone = { id: crypto.randomUUID(), created: stamp, updated: stamp, type: 'COMMENT', text: 'alone' };
    await queueing(storage, 'annotationsCreateNewAnnotation').putAnnotation(standalone);
    await queueing(storage, 'annotationsDeleteSpecificAnnotation').deleteAnnotation(standalone.id);
    const anchor = anchorRecord({ id: crypto.randomUUID(), type: 'FILE', created: stamp, updated: stamp, points: { iterable: [] } });
    await queueing(storage, 'anchorsCreateNewAnchor').editAnchor(
      anchor.id,
      () => ({}),
      () => ({ anchor }),
    );
    // An association: the anchor and the asset written with the entry.
    const changes = await queueing(storage, 'anchorAssociateAsset', { params: { anchor: anchor.id, asset: one.record.id } }).editAnchor(
      anchor.id,
      () => ({ assets: [one.record.id] }),
      (current, found) => ({ anchor: current!, assets: [{ ...found.assets.get(one.record.id)!, anchors: [anchor.id] }] }),
    );
    expect(changes.map((c) => [c.collection, c.id])).toEqual([
      ['anchor', anchor.id],
      ['asset', one.record.id],
    ]);
    expect((await storage.getAsset(one.record.id))!.anchors!.map((a) => a.id)).toEqual([anchor.id]);
    await queueing(storage, 'anchorsDeleteSpecificAnchor').editAnchor(
      anchor.id,
      () => ({}),
      () => ({ anchor: null }),
    );
    const entries = await storage.outboxEntries();
    expect(entries.map((e) => e.operation)).toEqual([
      'assetsCreateNewAsset',
      'assetsCreateNewAsset',
      'assetsCreateNewAsset',
      'assetUpdate',
      'assetsDeleteAsset',
      'annotationsCreateNewAnnotation',
      'annotationsDeleteSpecificAnnotation',
      'anchorsCreateNewAnchor',
      'anchorAssociateAsset',
      'anchorsDeleteSpecificAnchor',
    ]);
    // The creates of one group commit, queued in the order they were written.
    expect(entries.slice(0, 3).map((e) => e.created[0]!.id)).toEqual(assets.map((a) => a.record.id));
    storage.close();
  });

  it('a write that changes nothing queues nothing; an entry that cannot be stored undoes the write', async () => {
    const name = freshName();
    const storage = await openStorage({ name });
    const asset = newAsset('kept');
    await storage.createAsset(asset, []);
    const before = await dump(name);
    const unknown = '55555555-5555-4555-8555-555555555555';
    expect(await queueing(storage, 'assetUpdate').editAsset({ asset: unknown }, (current) => ({ record: current.record }))).toBeUndefined();
    expect(await queueing(storage, 'assetsDeleteAsset').deleteAsset(unknown, [])).toBeUndefined();
    // An annotation of an asset is deleted with the asset's edit, not on its own.
    expect(await queueing(storage, 'annotationsDeleteSpecificAnnotation').deleteAnnotation(asset.annotations[0]!.id)).toBeUndefined();
    await expect(
      queueing(storage, 'anchorsDeleteSpecificAnchor').editAnchor(
        unknown,
        () => ({}),
        () => {
          throw new Error('refused');
        },
      ),
    ).rejects.toThrow('refused');
    // An association already made (or not there to undo): nothing written, nothing queued.
    expect(
      await queueing(storage, 'anchorAssociateAsset').editAnchor(
        unknown,
        () => ({ assets: [asset.record.id] }),
        () => undefined,
      ),
    ).toEqual([]);
    const unstorable = queueing(storage, 'assetUpdate', { body: { id: asset.record.id, name: () => 'not JSON' } as never });
    await expect(
      unstorable.editAsset({ asset: asset.record.id }, (current) => ({ record: { ...current.record, name: 'changed' } })),
    ).rejects.toThrow();
    await expect(unstorable.createAsset(newAsset('new'), [])).rejects.toThrow();
    await expect(unstorable.deleteAsset(asset.record.id, [])).rejects.toThrow();
    const anchor = anchorRecord({ id: crypto.randomUUID(), type: 'FILE', created: stamp, updated: stamp, points: { iterable: [] } });
    await expect(
      unstorable.editAnchor(
        anchor.id,
        () => ({ assets: [asset.record.id] }),
        (_c, found) => ({ anchor, assets: [{ ...found.assets.get(asset.record.id)!, anchors: [anchor.id] }] }),
      ),
    ).rejects.toThrow();
    expect(await dump(name)).toBe(before);
    expect(await storage.outboxEntries()).toEqual([]);
    storage.close();
  });
});

describe('an asset re-keyed to the upstream’s ids', () => {
  it('takes its formats, annotations, tags, websites and activities along, in one transaction, announced as deleted and added', async () => {
    const storage = await openStorage({ name: freshName() });
    const asset = newAsset('moved');
    const made = activity(clock, { asset: asset.record.id, pair: 'assetCreated', value: 'an_asset_was_created' });
    await storage.createAsset(asset, [made]);
    const theirs = (n: number) => `abcdef00-0000-5000-9000-${String(n).padStart(12, '0')}`;
    const rekey = [
      { local: asset.record.id, upstream: theirs(1), kind: 'asset' as const },
      { local: asset.formats[0]!.id, upstream: theirs(2), kind: 'format' as const },
      { local: asset.annotations[0]!.id, upstream: theirs(3), kind: 'annotation' as const },
      { local: asset.tags[0]!.id, upstream: theirs(4), kind: 'tag' as const },
      { local: asset.websites[0]!.id, upstream: theirs(5), kind: 'website' as const },
    ];
    const changes = await storage.applyMirror({ rekey });
    // The local id deleted first, then only the upstream's id (added, and changed as its tags and websites moved).
    const assetChanges = changes.filter((c) => c.collection === 'asset').map((c) => [c.id, !!c.deleted]);
    expect(assetChanges[0]).toEqual([asset.record.id, true]);
    expect(new Set(assetChanges.slice(1).map((c) => JSON.stringify(c)))).toEqual(new Set([JSON.stringify([theirs(1), false])]));
    expect(changes.filter((c) => c.collection === 'activity').map((c) => c.id)).toEqual([made.id]);
    expect(await storage.getAsset(asset.record.id)).toBeUndefined();
    const whole = (await storage.getAsset(theirs(1)))!;
    expect(whole.record).toMatchObject({ formats: [theirs(2)], original: theirs(2), preview: theirs(2) });
    expect(whole.formats.map((f) => [f.id, f.asset])).toEqual([[theirs(2), theirs(1)]]);
    expect(whole.annotations.map((a) => [a.id, a.asset])).toEqual([[theirs(3), { id: theirs(1) }]]);
    expect(whole.tags.map((t) => [t.id, t.assets])).toEqual([[theirs(4), [theirs(1)]]]);
    expect(whole.websites.map((w) => [w.id, w.assets])).toEqual([[theirs(5), [theirs(1)]]]);
    const [kept] = await storage.listActivities();
    expect([kept!.asset, JSON.stringify(kept!.event)]).toEqual([theirs(1), JSON.stringify(made.event).replace(asset.record.id, theirs(1))]);
    // Nothing is left under a local id; the map knows every pair.
    expect(await storage.findAsset({ format: asset.formats[0]!.id })).toBeUndefined();
    expect(await storage.getTag(asset.tags[0]!.id)).toBeUndefined();
    expect((await storage.idPairs()).map((p) => p.local).sort()).toEqual(rekey.map((p) => p.local).sort());
    storage.close();
  });
});

describe('an asset and an anchor that list each other, re-keyed to the upstream’s ids', () => {
  it('keep listing each other under the new ids, whichever of them the upstream made', async () => {
    const storage = await openStorage({ name: freshName() });
    const theirs = (n: number) => `abcdef00-0000-5000-9000-${String(n).padStart(12, '0')}`;
    const [one, two] = [newAsset('one'), newAsset('two')];
    await storage.createAsset(one, []);
    await storage.createAsset(two, []);
    const anchor = anchorRecord({ id: crypto.randomUUID(), type: 'FILE', created: stamp, updated: stamp, points: { iterable: [] } });
    await storage.editAnchor(
      anchor.id,
      () => ({ assets: [one.record.id, two.record.id] }),
      (_current, found) => ({
        anchor: {
          ...anchor,
          json: JSON.stringify({ ...JSON.parse(anchor.json), assets: { iterable: [{ id: one.record.id }, { id: two.record.id }] } }),
        },
        assets: [...found.assets.values()].map((record) => ({ ...record, anchors: [anchor.id] })),
      }),
    );
    // Both re-keyed in one batch (asset one and the anchor); asset two stays local.
    await storage.applyMirror({
      rekey: [
        { local: one.record.id, upstream: theirs(1), kind: 'asset' },
        { local: anchor.id, upstream: theirs(9), kind: 'anchor' },
      ],
    });
    const moved = (await storage.getAsset(theirs(1)))!;
    expect(moved.record.anchors).toEqual([theirs(9)]);
    expect(moved.anchors!.map((a) => a.id)).toEqual([theirs(9)]);
    expect((await storage.getAsset(two.record.id))!.record.anchors).toEqual([theirs(9)]);
    const json = JSON.parse((await storage.getAnchor(theirs(9)))!.json) as { assets: { iterable: Array<{ id: string }> } };
    expect(json.assets.iterable.map((a) => a.id)).toEqual([theirs(1), two.record.id]);
    expect(await storage.getAnchor(anchor.id)).toBeUndefined();
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
    const message = {
      id: MESSAGE,
      role: 'USER',
      fragment: { string: { raw: 'kept' } },
      conversation: { id: CONVERSATION },
      created: stamp,
      updated: stamp,
    };
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
    expect(listed.iterable[0]).toEqual({
      ...conversation,
      messages: { iterable: [{ id: MESSAGE, reference: message }], indices: { [MESSAGE]: 0 } },
    });
    await queueing(storage, 'conversationsDeleteSpecificConversation').deleteConversation(CONVERSATION);
    expect((await storage.outboxEntries()).map((e: OutboxEntry) => e.operation)).toEqual(['conversationsDeleteSpecificConversation']);
    storage.close();
  });
});
