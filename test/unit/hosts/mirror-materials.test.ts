// @vitest-environment node
/**
 * The mirror and the generic path's materials (persons, workstream summaries: the graph table's
 * kinds with no hand-written store), in the Node host against the independent upstream
 * (test/upstream/pieces-os.ts): a write the upstream took is kept here under its id; one made
 * while it is away is replayed and re-keyed, with what lists it; a change another client makes
 * on the upstream reaches the local copy through the kind's identifier stream.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { SUMMARIZER } from '../../material-seeds.js';
import { closeMirrorHosts, hostOf, upstreamOn } from '../support/mirror-host.js';

const post = (body?: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});
const PERSON = (name: string) => ({ type: { basic: { name } } });
/** The local copy follows the upstream's streams asynchronously: how long to wait for it. */
const settled = { timeout: 10_000, interval: 25 };
const ids = (list: any): string[] => (list?.iterable ?? []).map((item: { id: string }) => item.id);

afterEach(closeMirrorHosts);

async function setup() {
  const upstream = await upstreamOn();
  const { host, call, json, status, reach } = hostOf(upstream);
  /** The local copy, read from storage (not through the mirror). */
  const local = async (kind: 'person' | 'workstreamSummary'): Promise<any[]> => (await host.service.exportData()).materials[kind] ?? [];
  /** Another client of the upstream. */
  const other = async (path: string, init?: RequestInit) => {
    const response = await fetch(upstream.url + path, init);
    expect(response.status, `upstream ${path}`).toBeLessThan(300);
    return response.status === 204 ? undefined : response.json();
  };
  return { upstream, host, call, json, status, reach, local, other };
}

describe('the generic path through the mirror', () => {
  it('keeps a person created while the upstream answers under its id: read here once it is away', async () => {
    const { upstream, call, json, reach } = await setup();
    await reach('up');
    const made = await json('/persons/create', post(PERSON('Ada')));
    expect(upstream.snapshot().persons.map((p: any) => p.id)).toEqual([made.id]);
    const renamed = await json('/person/update', post({ ...made, type: { basic: { name: 'Ada L.' } } }));
    await upstream.stop();
    const read = await call(`/person/${made.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(renamed);
    expect(ids(await json('/persons'))).toEqual([made.id]);
  });

  it('replays a person and a summary listing it made while away, re-keyed with what lists them', async () => {
    const { upstream, json, reach, local } = await setup();
    await reach('up');
    await upstream.stop();
    await reach('down');
    const person = await json('/persons/create', post(PERSON('Grace')));
    const summary = await json(
      '/workstream_summaries/create',
      post({ name: 'the week', model: SUMMARIZER, persons: { iterable: [{ id: person.id }] } }),
    );
    expect(ids((await json(`/person/${person.id}`)).summaries)).toEqual([summary.id]);
    await upstream.start();
    await reach('up');
    const [theirPerson] = upstream.snapshot().persons as any[];
    const [theirSummary] = upstream.snapshot().summaries as any[];
    expect(theirPerson.id).not.toBe(person.id);
    expect(ids(theirSummary.persons)).toEqual([theirPerson.id]);
    // Here: the records under the upstream's ids, each listing the other's.
    const [person2] = await local('person');
    const [summary2] = await local('workstreamSummary');
    expect(person2!.id).toBe(theirPerson.id);
    expect(summary2!.id).toBe(theirSummary.id);
    expect(ids(summary2.persons)).toEqual([theirPerson.id]);
    expect(ids(person2.summaries)).toEqual([theirSummary.id]);
    // Read by its local id.
    expect((await json(`/person/${person.id}`)).id).toBe(theirPerson.id);
  });

  it('makes a person whose answer was lost once: found on the upstream, not sent again', async () => {
    const { upstream, json, reach, local } = await setup();
    await reach('up');
    // The upstream makes the person, and the answer never comes back.
    upstream.fault({ match: 'POST /persons/create', action: { drop: 'after-commit' }, times: 1 });
    const made = await json('/persons/create', post(PERSON('Ada')));
    await reach('up');
    const theirs = upstream.snapshot().persons as any[];
    expect(theirs.map((p) => p.type.basic.name)).toEqual(['Ada']);
    expect(upstream.received().filter((line) => line === 'POST /persons/create')).toHaveLength(1);
    await vi.waitFor(async () => expect((await local('person')).map((p) => p.id)).toEqual([theirs[0].id]), settled);
    expect((await json(`/person/${made.id}`)).id).toBe(theirs[0].id);
  });

  it('replays an association made while away once', async () => {
    const { upstream, json, reach, local } = await setup();
    await reach('up');
    const a = await json('/persons/create', post(PERSON('A')));
    const b = await json('/persons/create', post(PERSON('B')));
    await upstream.stop();
    await reach('down');
    await json(`/person/${a.id}/persons/associate/${b.id}`, post());
    // Made already: nothing more to queue.
    await json(`/person/${a.id}/persons/associate/${b.id}`, post());
    await upstream.start();
    await reach('up');
    const sent = upstream.received().filter((line) => line.includes('/persons/associate/'));
    expect(sent).toEqual([`POST /person/${a.id}/persons/associate/${b.id}`]);
    const theirs = new Map((upstream.snapshot().persons as any[]).map((p) => [p.id, p]));
    expect(ids(theirs.get(a.id).persons)).toEqual([b.id]);
    expect(ids(theirs.get(b.id).persons)).toEqual([a.id]);
    const here = new Map((await local('person')).map((p) => [p.id, p]));
    expect(ids(here.get(a.id)!.persons)).toEqual([b.id]);
  });

  it('replays an association with a record of a hand-written kind made while away once', async () => {
    const { upstream, json, reach } = await setup();
    await reach('up');
    const person = await json('/persons/create', post(PERSON('A')));
    const annotation = await json('/annotations/create', post({ type: 'COMMENT', text: 'x' }));
    await upstream.stop();
    await reach('down');
    await json(`/person/${person.id}/annotations/associate/${annotation.id}`, post());
    // Made already: nothing more to queue.
    await json(`/person/${person.id}/annotations/associate/${annotation.id}`, post());
    expect(ids((await json(`/annotation/${annotation.id}`)).persons)).toEqual([person.id]);
    await upstream.start();
    await reach('up');
    const sent = upstream.received().filter((line) => line.includes('/annotations/associate/'));
    expect(sent).toEqual([`POST /person/${person.id}/annotations/associate/${annotation.id}`]);
    const theirs = (upstream.snapshot().persons as any[]).find((p) => p.id === person.id);
    expect(ids(theirs.annotations)).toEqual([annotation.id]);
  });

  it('keeps both sides of an association the upstream took', async () => {
    const { upstream, json, reach, local } = await setup();
    await reach('up');
    const a = await json('/persons/create', post(PERSON('A')));
    const s = await json('/workstream_summaries/create', post({ name: 'the day', model: SUMMARIZER }));
    await json(`/person/${a.id}/workstream_summaries/associate/${s.id}`, post());
    // Read again from the upstream after the answer went out.
    await vi.waitFor(async () => expect(ids((await local('person'))[0].summaries)).toEqual([s.id]), settled);
    await upstream.stop();
    expect(ids((await json(`/person/${a.id}`)).summaries)).toEqual([s.id]);
    expect(ids((await json(`/workstream_summary/${s.id}`)).persons)).toEqual([a.id]);
    expect((await local('workstreamSummary')).map((r) => r.id)).toEqual([s.id]);
  });

  it('keeps an association the upstream took when it cannot be read again (the upstream went away)', async () => {
    const { upstream, json, reach, local } = await setup();
    await reach('up');
    const a = await json('/persons/create', post(PERSON('A')));
    const b = await json('/persons/create', post(PERSON('B')));
    await vi.waitFor(async () => expect((await local('person')).length).toBe(2), settled);
    // The upstream takes the association, then answers nothing more.
    upstream.fault({ match: 'GET /person/', action: { status: 503 } });
    await json(`/person/${a.id}/persons/associate/${b.id}`, post());
    await upstream.stop();
    expect(ids((await json(`/person/${a.id}`)).persons)).toEqual([b.id]);
    expect(ids((await json(`/person/${b.id}`)).persons)).toEqual([a.id]);
  });

  it('follows what another client of the upstream creates and deletes', async () => {
    const { other, reach, local } = await setup();
    await reach('up');
    const made = (await other('/persons/create', post(PERSON('elsewhere')))) as { id: string };
    await vi.waitFor(async () => expect((await local('person')).map((p) => p.id)).toEqual([made.id]), settled);
    await other(`/persons/${made.id}/delete`, post());
    await vi.waitFor(async () => expect(await local('person')).toEqual([]), settled);
  });
});

describe('applyMirror and materials', () => {
  it('re-keys a material in its place, and every material listing it lists the new id', async () => {
    const storage = await openStorage({ name: `mirror-materials-${crypto.randomUUID()}` });
    const person = (id: string, summaries: string[] = []) => ({
      kind: 'person' as const,
      id,
      value: { id, type: {}, summaries: { iterable: summaries.map((s) => ({ id: s })) } },
    });
    await storage.applyMirror({ put: { materials: [person('p-1'), person('p-2')] } });
    await storage.applyMirror({
      put: {
        materials: [{ kind: 'workstreamSummary', id: 's-1', value: { id: 's-1', name: 'w', persons: { iterable: [{ id: 'p-1' }] } } }],
      },
    });
    const changes = await storage.applyMirror({ rekey: [{ local: 'p-1', upstream: 'P-1', kind: 'person' }] });
    expect((await storage.listMaterials('person')).map((p) => p.id)).toEqual(['P-1', 'p-2']);
    expect((await storage.getMaterial('person', 'P-1'))!.value.id).toBe('P-1');
    expect(ids((await storage.getMaterial('workstreamSummary', 's-1'))!.value.persons)).toEqual(['P-1']);
    expect(changes.map(({ collection, id, deleted }) => [collection, id, !!deleted])).toEqual([
      ['person', 'p-1', true],
      ['person', 'P-1', false],
      ['workstreamSummary', 's-1', false],
    ]);
    // Gone from the upstream: removed; replaced whole: only what the upstream has.
    await storage.applyMirror({ remove: [{ kind: 'workstreamSummary', id: 's-1' }] });
    expect(await storage.listMaterials('workstreamSummary')).toEqual([]);
    await storage.applyMirror({ put: { materials: [person('p-3')] }, replace: { kinds: ['person'], keep: [] } });
    expect((await storage.listMaterials('person')).map((p) => p.id)).toEqual(['p-3']);
    storage.close();
  });
});
