/**
 * The generic materials store (kinds with no hand-written store): records read and listed in
 * creation order, `editMaterials` as one transaction that logs one change per record and queues
 * its request's operation with the records it created, identifier lists and changes per kind,
 * dump → wipe → load, and an upgrade from the version before it that keeps every record.
 */
import { describe, expect, it } from 'vitest';
import { openDB } from 'idb';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { cacheReads } from '../../../src/storage/read-cache.js';
import { reconnectingStorage } from '../../../src/storage/reconnect.js';
import { DB_VERSION, STORES, UPGRADES, type CreatedId, type PiecesDB } from '../../../src/storage/schema.js';
import type { GenericKind, MaterialRecord } from '../../../src/storage/schema.js';
import { materialKey, type OutboxInput, type OutboxScope, type Storage } from '../../../src/storage/storage.js';
import { dump } from '../support/harness.js';

let counter = 0;
const freshName = () => `materials-${Date.now()}-${counter++}`;
const stamp = { value: '2026-01-01T00:00:00.000Z' };

const person = (id: string, name: string, summaries: string[] = []) => ({
  kind: 'person' as const,
  id,
  value: {
    id,
    type: { basic: { name } },
    created: stamp,
    updated: stamp,
    ...(summaries.length ? { workstreamSummaries: { iterable: summaries.map((s) => ({ id: s })) } } : {}),
  },
});
const summary = (id: string, name: string) => ({
  kind: 'workstreamSummary' as const,
  id,
  value: { id, name, created: stamp, updated: stamp },
});

/** Writes the records, as a create does (nothing read first). */
const create = (storage: Storage, ...records: Array<Omit<MaterialRecord, 'seq'>>) => storage.editMaterials([], () => ({ put: records }));

/** A request's scope that records what it queued (the operation, and the records its write created). */
function scopeOf(operation: string) {
  const queued: Array<OutboxInput> = [];
  let taken = false;
  const scope: OutboxScope = {
    take() {
      if (taken) return undefined;
      taken = true;
      return {
        entry: (created: readonly CreatedId[]) => {
          const entry = { operation, params: {}, at: stamp.value, created: [...created] };
          queued.push(entry);
          return entry;
        },
        settle: (done) => {
          taken = done;
        },
      };
    },
  };
  return { scope, queued };
}

describe('materials', () => {
  it('reads what is created, and lists each kind in creation order', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p2', 'second'));
    await create(storage, summary('s1', 'a summary'), person('p1', 'first'));
    await create(storage, person('p0', 'third'));
    expect((await storage.getMaterial('person', 'p1'))?.value).toEqual(person('p1', 'first').value);
    expect(await storage.getMaterial('workstreamSummary', 'p1')).toBeUndefined();
    expect(await storage.getMaterial('person', 'nobody')).toBeUndefined();
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p2', 'p1', 'p0']);
    expect((await storage.listMaterials('workstreamSummary')).map((m) => m.id)).toEqual(['s1']);
    expect(await storage.listMaterials('hint')).toEqual([]);
    // An update keeps the record's place.
    await storage.editMaterials([{ kind: 'person', id: 'p2' }], (found) => {
      const stored = found.get('person/p2')!;
      return { put: [{ ...stored, value: { ...stored.value, updated: { value: '2026-02-01T00:00:00.000Z' } } }] };
    });
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p2', 'p1', 'p0']);
    expect((await storage.getMaterial('person', 'p2'))?.value.updated).toEqual({ value: '2026-02-01T00:00:00.000Z' });
    storage.close();
  });

  it('changes nothing when the edit throws, and nothing (no change logged) when it returns undefined', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p1', 'kept'));
    const { seq } = await storage.changesSince(0);
    await expect(
      storage.editMaterials([{ kind: 'person', id: 'p1' }], () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    // A throw after the reads of `more` too.
    await expect(
      storage.editMaterials(
        [{ kind: 'person', id: 'p1' }],
        () => {
          throw new Error('refused again');
        },
        () => [{ kind: 'workstreamSummary', id: 's1' }],
      ),
    ).rejects.toThrow('refused again');
    const none = await storage.editMaterials([{ kind: 'person', id: 'p1' }], () => undefined);
    expect(none.changes).toEqual([]);
    expect(none.found.get('person/p1')?.value).toEqual(person('p1', 'kept').value);
    expect((await storage.changesSince(seq)).changes).toEqual([]);
    expect((await storage.listMaterials('person')).map((m) => m.value)).toEqual([person('p1', 'kept').value]);
    storage.close();
  });

  it('writes a whole edit or none of it: a put and a delete in one edit, undone together when a write fails', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p1', 'kept'), summary('s1', 'kept'));
    const { seq } = await storage.changesSince(0);
    // A record whose value names another id is refused: nothing of the edit is written.
    await expect(
      storage.editMaterials([], () => ({
        put: [person('p2', 'new'), { ...summary('s2', 'x'), value: { id: 'other' } }],
        delete: [{ kind: 'person', id: 'p1' }],
      })),
    ).rejects.toThrow(/value.id/);
    // A record the database cannot store fails its put, after the delete and the changes were issued: all undone.
    await expect(
      storage.editMaterials([], () => ({
        put: [person('p2', 'new'), { ...summary('s2', 'x'), value: { id: 's2', unstorable: (() => 0) as never } }],
        delete: [{ kind: 'person', id: 'p1' }],
      })),
    ).rejects.toThrow();
    expect((await storage.changesSince(seq)).changes).toEqual([]);
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p1']);
    expect((await storage.listMaterials('workstreamSummary')).map((m) => m.id)).toEqual(['s1']);
    storage.close();
  });

  it('applies two concurrent edits of the same record both (each reads what the other wrote)', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p1', 'one'));
    const associate = (summaryId: string) =>
      storage.editMaterials([{ kind: 'person', id: 'p1' }], (found) => {
        const stored = found.get('person/p1')!;
        const listed = (stored.value.workstreamSummaries as { iterable: Array<{ id: string }> } | undefined)?.iterable ?? [];
        return { put: [{ ...stored, value: { ...stored.value, workstreamSummaries: { iterable: [...listed, { id: summaryId }] } } }] };
      });
    await Promise.all([associate('s1'), associate('s2')]);
    const ids = ((await storage.getMaterial('person', 'p1'))!.value.workstreamSummaries as { iterable: Array<{ id: string }> }).iterable;
    expect(ids.map((s) => s.id).sort()).toEqual(['s1', 's2']);
    storage.close();
  });

  it('reads what `more` names from what was found, and a delete logs a deleted change of its kind', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, summary('s1', 'one'), summary('s2', 'two'), person('p1', 'one', ['s1', 's2', 'gone']));
    const { seq } = await storage.changesSince(0);
    let seen: string[] = [];
    const result = await storage.editMaterials(
      [{ kind: 'person', id: 'p1' }],
      (found) => {
        seen = [...found.keys()];
        return { delete: [{ kind: 'person', id: 'p1' }] };
      },
      (found) =>
        (found.get('person/p1')!.value.workstreamSummaries as { iterable: Array<{ id: string }> }).iterable.map(({ id }) => ({
          kind: 'workstreamSummary' as const,
          id,
        })),
    );
    // Only what exists is found.
    expect(seen).toEqual(['person/p1', 'workstreamSummary/s1', 'workstreamSummary/s2']);
    expect([...result.found.keys()]).toEqual(seen);
    expect(result.changes.map(({ seq: _seq, ...change }) => change)).toEqual([{ collection: 'person', id: 'p1', deleted: true }]);
    expect((await storage.changesSince(seq)).changes).toEqual(result.changes);
    expect(await storage.getMaterial('person', 'p1')).toBeUndefined();
    // Deleting what is not stored changes and logs nothing.
    const again = await storage.editMaterials([], () => ({ delete: [{ kind: 'person', id: 'p1' }] }));
    expect(again.changes).toEqual([]);
    storage.close();
  });

  it('gives ids and changes per kind (listIds, changesSince), also through the read cache', async () => {
    const storage = cacheReads(await openStorage({ name: freshName() }), null);
    await create(storage, person('p1', 'one'));
    expect(await storage.listIds('person')).toEqual({ ids: ['p1'], seq: expect.any(Number) });
    const start = (await storage.listIds('person')).seq;
    const created = await create(storage, summary('s1', 'one'), person('p2', 'two'));
    // The cached list follows the write.
    const listed = await storage.listIds('person');
    expect(listed.ids).toEqual(['p1', 'p2']);
    expect(listed.seq).toBe(created.changes.at(-1)!.seq);
    expect((await storage.listIds('workstreamSummary')).ids).toEqual(['s1']);
    expect((await storage.listIds('hint')).ids).toEqual([]);
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p1', 'p2']);
    expect(((await storage.getMaterial('person', 'p2')) as MaterialRecord).seq).toBe(created.changes[1]!.seq);
    const persons = await storage.changesSince(start, 'person');
    expect(persons.changes.map((c) => [c.collection, c.id])).toEqual([['person', 'p2']]);
    expect((await storage.changesSince(start, 'workstreamSummary')).changes.map((c) => c.id)).toEqual(['s1']);
    // The cache drops the material reads a write can have changed.
    await storage.editMaterials([], () => ({ delete: [{ kind: 'person', id: 'p1' }] }));
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p2']);
    expect(await storage.getMaterial('person', 'p1')).toBeUndefined();
    expect((await storage.listIds('person')).ids).toEqual(['p2']);
    storage.close();
  });

  it('queues one outbox entry, with the records it created in put order, when it writes; none when there is nothing to change', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p1', 'stored'));
    const nothing = scopeOf('personsSpecificPersonUpdate');
    await storage.queueing(nothing.scope).editMaterials([{ kind: 'person', id: 'unknown' }], () => undefined);
    expect(nothing.queued).toEqual([]);
    expect(await storage.outboxEntries()).toEqual([]);

    const write = scopeOf('personsCreateNewPerson');
    const view = storage.queueing(write.scope);
    await view.editMaterials([{ kind: 'person', id: 'p1' }], (found) => ({
      put: [summary('s1', 'new'), found.get('person/p1')!, person('p2', 'new')],
    }));
    // A later write of the same request queues nothing more.
    await view.editMaterials([], () => ({ put: [person('p3', 'later')] }));
    const entries = await storage.outboxEntries();
    expect(entries.map((e) => [e.operation, e.created])).toEqual([
      [
        'personsCreateNewPerson',
        [
          { kind: 'workstreamSummary', id: 's1' },
          { kind: 'person', id: 'p2' },
        ],
      ],
    ]);
    // A failed write queues nothing and leaves the operation to the next write of the request.
    const failing = scopeOf('personsDeletePerson');
    const failingView = storage.queueing(failing.scope);
    await expect(
      failingView.editMaterials([], () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow();
    expect(await storage.outboxEntries()).toHaveLength(1);
    await failingView.editMaterials([], () => ({ delete: [{ kind: 'person', id: 'p3' }] }));
    expect((await storage.outboxEntries()).map((e) => [e.operation, e.created])).toEqual([
      ['personsCreateNewPerson', expect.any(Array)],
      ['personsDeletePerson', []],
    ]);
    storage.close();
  });

  it("is forwarded by the reconnecting storage, a request's queueing view included", async () => {
    const name = freshName();
    const storage = reconnectingStorage(async () => cacheReads(await openStorage({ name }), null));
    const write = scopeOf('personsCreateNewPerson');
    const { changes } = await storage.queueing(write.scope).editMaterials([], () => ({ put: [person('p1', 'one')] }));
    expect(changes.map((c) => [c.collection, c.id])).toEqual([['person', 'p1']]);
    expect(write.queued.map((e) => e.created)).toEqual([[{ kind: 'person', id: 'p1' }]]);
    expect((await storage.getMaterial('person', 'p1'))?.value).toEqual(person('p1', 'one').value);
    expect((await storage.listMaterials('person')).map((m) => m.id)).toEqual(['p1']);
    storage.close();
  });

  it('dumps, wipes and loads back the same records, in the same order', async () => {
    const storage = await openStorage({ name: freshName() });
    await create(storage, person('p2', 'b'), summary('s1', 'x'));
    await create(storage, person('p1', 'a', ['s1']));
    const dumped = await storage.dumpData();
    expect(dumped.materials?.map(materialKey)).toEqual(['person/p2', 'person/p1', 'workstreamSummary/s1']);
    const { seq } = await storage.changesSince(0);
    // Replacing with nothing wipes them, each logged as deleted.
    const wiped = await storage.loadData({ ...dumped, materials: [] }, { replace: true });
    expect(wiped.filter((c) => c.collection !== 'user').map((c) => [c.collection, c.id, c.deleted])).toEqual(
      expect.arrayContaining([
        ['person', 'p2', true],
        ['person', 'p1', true],
        ['workstreamSummary', 's1', true],
      ]),
    );
    expect(await storage.listMaterials('person')).toEqual([]);
    const loaded = await storage.loadData(dumped, { replace: true });
    expect(loaded.filter((c) => c.collection === 'person').map((c) => [c.id, c.deleted])).toEqual([
      ['p2', undefined],
      ['p1', undefined],
    ]);
    expect(await storage.dumpData()).toEqual(dumped);
    expect((await storage.listIds('person')).ids).toEqual(['p2', 'p1']);
    expect((await storage.changesSince(seq, 'workstreamSummary')).changes.map((c) => [c.id, c.deleted])).toEqual([
      ['s1', true],
      ['s1', undefined],
    ]);
    // Loading without replacing keeps what is stored, and a stored record its place.
    await storage.loadData(
      { ...empty(), materials: [person('p3', 'c'), { ...person('p2', 'b'), value: { id: 'p2', changed: true } }] },
      {
        replace: false,
      },
    );
    expect((await storage.listMaterials('person')).map((m) => [m.id, m.value.changed ?? false])).toEqual([
      ['p2', true],
      ['p1', false],
      ['p3', false],
    ]);
    storage.close();
  });

  it('opens a database of the version before materials with every record kept, and stores materials then', async () => {
    const name = freshName();
    const before = DB_VERSION - 1;
    // Records of every store, written by a storage of this version.
    const old = await openStorage({ name: `${name}-source` });
    await old.putApplication({ id: 'a', name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' });
    await old.createConversation(
      { id: 'c', json: JSON.stringify({ id: 'c', type: 'COPILOT', created: stamp, updated: stamp }), messageIds: ['m'] },
      [{ id: 'm', conversation: 'c', json: JSON.stringify({ id: 'm', role: 'USER', created: stamp, updated: stamp }) }],
    );
    await old.editModelStates(() => [{ id: 'model', record: { id: 'model', downloaded: true } }]);
    await old.setMeta('osId', 'an os');
    const data = await old.dumpData();
    old.close();
    const previous = await openDB<PiecesDB>(name, before, {
      upgrade: (db, from, _new, tx) => {
        for (let step = from; step < before; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    expect([...previous.objectStoreNames]).not.toContain('materials');
    const seq = await previous.add('changes', { collection: 'conversation', id: 'c' });
    const { conversation, messages } = data.conversations[0]!;
    await previous.put('conversations', { ...conversation, seq });
    for (const message of messages) await previous.put('messages', message);
    for (const application of data.applications) await previous.put('applications', application);
    for (const model of data.models) await previous.put('models', model);
    await previous.put('outbox', {
      seq: 1,
      operation: 'applicationsRegister',
      params: {},
      created: [{ kind: 'application', id: 'a' }],
      state: 'queued',
      at: stamp.value,
    });
    await previous.put('idmap', { local: 'x', upstream: 'y', kind: 'application' });
    await previous.put('meta', true, 'seeded');
    await previous.put('meta', 'an identity', 'identity');
    previous.close();
    const kept = JSON.parse(await dump(name));

    const storage = await openStorage({ name });
    const after = JSON.parse(await dump(name));
    for (const store of Object.keys(kept)) expect(after[store], store).toEqual(kept[store]);
    expect(after.materials).toEqual([]);
    expect(await storage.identity()).toBe('an identity');
    const reopened = await openDB(name);
    expect(reopened.version).toBe(DB_VERSION);
    expect([...reopened.objectStoreNames].sort()).toEqual(Object.keys(STORES).sort());
    reopened.close();
    await create(storage, person('p1', 'new'));
    expect((await storage.listIds('person' satisfies GenericKind)).ids).toEqual(['p1']);
    expect((await storage.getConversation('c'))?.messages.map((m) => m.id)).toEqual(['m']);
    storage.close();
  });
});

function empty() {
  return {
    applications: [],
    sessions: [],
    events: [],
    conversations: [],
    assets: [],
    formats: [],
    annotations: [],
    tags: [],
    websites: [],
    activities: [],
    external: [],
    anchors: [],
    models: [],
  };
}
