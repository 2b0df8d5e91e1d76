// @vitest-environment node
/**
 * The generic path (src/core/handlers/materials.ts), generated from the graph table: for every kind
 * with no hand-written store, create → read → list → update → stream frame → search → score →
 * delete → 404; for every association between two such kinds, associate → both sides list each
 * other → again (nothing written) → disassociate → delete either side unlists it; bad input a 400
 * naming the field with nothing changed; and every SDK operation of these kinds and associations
 * is a row of the route table. Every 2xx body and frame is checked against the SDK's models
 * (test/unit/support/response-check.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GENERIC_KINDS, GENERIC_RELATIONS, MATERIAL_OPERATIONS } from '../../../src/core/handlers/materials.js';
import { findRoute, OPERATIONS } from '../../../src/core/routes.js';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { createNodeHost, type NodeHost } from '../../../src/node/host.js';
import { KINDS, RELATIONS, type KindRow, type MaterialKind } from '../../../src/shared/graph.js';
import { shapeOf } from '../../../src/shared/shapes.js';
import { filledSeed, SAMPLE_TEXT, seedPlan, WALKED_KINDS } from '../../material-seeds.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

type Call = (path: string, init?: RequestInit) => Promise<Response>;
type Json = Record<string, any>;

const row = (kind: MaterialKind) => KINDS.find((r) => r.kind === kind)!;
const fill = (path: string, ids: Record<string, string>) =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? crypto.randomUUID());
const TEXT = SAMPLE_TEXT;

/** An id of an existing record of `kind` (made for the purpose where the kind is the generic path's or an anchor). */
async function existing(call: Call, kind: MaterialKind): Promise<string> {
  if (kind === 'asset') return ((await (await call('/assets')).json()) as Json).iterable[0].id;
  if (kind === 'anchor')
    return ((await (await call('/anchors/create', jsonPost({ type: 'FILE', fullpath: '/a/b.ts' }))).json()) as Json).id;
  return (await create(call, row(kind))).id;
}

/** A valid Seeded body of a kind: its required fields, those naming a record given one that exists. */
const seedOf = (call: Call, kind: KindRow): Promise<Json> => filledSeed(seedPlan(kind), (named) => existing(call, named));

async function create(call: Call, kind: KindRow): Promise<Json> {
  const response = await call(kind.ops.create!.path, jsonPost(await seedOf(call, kind)));
  expect(response.status, `${kind.ops.create!.name}: ${response.status} ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as Json;
}

const harness = async () => {
  const t = await setup();
  const call: Call = (path, init) => t.fetch(BASE + path, init);
  return { t, call };
};

describe.each(WALKED_KINDS.map((kind) => [kind.kind, kind] as const))('%s', (_name, kind) => {
  const ops = kind.ops;
  const param = (path: string) => /\{(\w+)\}/.exec(path)![1]!;
  const itemPath = (id: string) => fill(ops.item!.path, { [param(ops.item!.path)]: id });

  it('create → read → list → update → stream → search → score → delete → 404', async () => {
    const { t, call } = await harness();
    const made = await create(call, kind);
    expect(made.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.created.value).toBe(made.updated.value);
    expect(await (await call(itemPath(made.id))).json()).toEqual(made);
    expect(((await (await call(ops.snapshot!.path)).json()) as Json).iterable.map((r: Json) => r.id)).toContain(made.id);

    // Update: the whole model, with a new score; `updated` is the update's time, `created` kept.
    const sent = { ...made, score: { manual: 7, automatic: 0 } };
    const updated = (await (await call(ops.update!.path, jsonPost(sent))).json()) as Json;
    expect(updated.score).toEqual({ manual: 7, automatic: 0 });
    expect(updated.created).toEqual(made.created);
    expect(await (await call(itemPath(made.id))).json()).toEqual(updated);

    if (ops.stream) {
      const stream = sockets(t).open(`ws://localhost:1000${ops.stream.path}`);
      await until(() => stream.frames.length === 1, 'the first frame');
      // (StreamedIdentifier's wire key: workstream_summary for a workstream summary.)
      const key = kind.streamed ?? kind.kind;
      expect(JSON.parse(stream.frames[0]!).iterable).toContainEqual({ [key]: { id: made.id } });
    }
    if (ops.search) {
      const found = (await (await call(ops.search.path, jsonPost({ engines: { iterable: [{ query: TEXT }] } }))).json()) as Json;
      const text = JSON.stringify(made).includes(TEXT);
      expect(found.iterable.map((item: Json) => item.identifier)).toEqual(text ? [made.id] : []);
    }
    if (ops.scores) {
      const path = fill(ops.scores.path, { [param(ops.scores.path)]: made.id });
      expect((await call(path, jsonPost({ [kind.kind]: { reuse: true } }))).status).toBe(204);
      expect(((await (await call(itemPath(made.id))).json()) as Json).score).toMatchObject({ manual: 7, reuse: 1 });
    }

    const deletePath = fill(ops.delete!.path, { [param(ops.delete!.path)]: made.id });
    expect((await call(deletePath, { method: 'POST' })).status).toBe(204);
    const gone = await call(itemPath(made.id));
    expect(gone.status).toBe(404);
    expect(await gone.text()).toBe(`No ${kind.kind} with id ${made.id}.`);
    expect(((await (await call(ops.snapshot!.path)).json()) as Json).iterable).toEqual([]);
    const again = await call(deletePath, { method: 'POST' });
    expect([again.status, await again.text()]).toEqual([404, `No ${kind.kind} with id ${made.id}.`]);
  });

  it('bad input is a 400 naming the field, an unknown id a 404 naming the kind, and neither changes anything', async () => {
    const { t, call } = await harness();
    const made = await create(call, kind);
    const required = [
      ...(shapeOf(kind.seeded!) as unknown as { fields: Map<string, { key: string; required: boolean }> }).fields.values(),
    ].find((f) => f.required);
    const seed = await seedOf(call, kind);
    const settled = await dump(t.databaseName);
    if (required) {
      const { [required.key]: _left, ...rest } = seed;
      const response = await call(ops.create!.path, jsonPost(rest));
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(`${kind.seeded![0]!.toLowerCase()}${kind.seeded!.slice(1)}.${required.key}`);
    }
    const unknown = await call(ops.create!.path, jsonPost({ ...seed, notAField: 1 }));
    expect([unknown.status, await unknown.text()]).toEqual([400, expect.stringContaining('notAField')]);
    const stranger = crypto.randomUUID();
    const update = await call(ops.update!.path, jsonPost({ ...made, id: stranger }));
    expect([update.status, await update.text()]).toEqual([404, `No ${kind.kind} with id ${stranger}.`]);
    const badUpdate = await call(ops.update!.path, jsonPost({ ...made, created: 'yesterday' }));
    expect(badUpdate.status).toBe(400);
    const badId = await call(fill(ops.item!.path, { [param(ops.item!.path)]: 'not-an-id' }));
    expect(badId.status).toBe(400);
    if (ops.scores) {
      const path = fill(ops.scores.path, { [param(ops.scores.path)]: made.id });
      expect((await call(path, jsonPost({ [kind.kind]: { reuse: 'yes' } }))).status).toBe(400);
      expect((await call(fill(ops.scores.path, {}), jsonPost({ [kind.kind]: { reuse: true } }))).status).toBe(404);
    }
    expect(await dump(t.databaseName)).toBe(settled);
  });
});

describe.each(GENERIC_RELATIONS.map((relation) => [relation.associate.name, relation] as const))('%s', (_name, relation) => {
  it('both sides list each other, once; disassociate and delete unlist; an unknown side is a 404 naming its kind', async () => {
    const { t, call } = await harness();
    const from = await create(call, row(relation.from));
    const to = relation.from === relation.to ? await create(call, row(relation.to)) : await create(call, row(relation.to));
    const [fromParam, toParam] = relation.params;
    const path = (op: { path: string }, ids = { [fromParam]: from.id, [toParam]: to.id }) => fill(op.path, ids);
    const read = async (kind: MaterialKind, id: string) => {
      const item = row(kind).ops.item!;
      return (await (await call(fill(item.path, { [/\{(\w+)\}/.exec(item.path)![1]!]: id }))).json()) as Json;
    };
    const lists = (record: Json, key: string | undefined, id: string) =>
      key === undefined ? undefined : JSON.stringify(key.split('.').reduce((node: any, step) => node?.[step], record) ?? null).includes(id);

    expect((await call(path(relation.associate), { method: 'POST' })).status).toBe(204);
    if (relation.fromKey) expect(lists(await read(relation.from, from.id), relation.fromKey, to.id)).toBe(true);
    if (relation.toKey) expect(lists(await read(relation.to, to.id), relation.toKey, from.id)).toBe(true);

    // Again: nothing written, nothing announced.
    const changes = t.changes.length;
    const settled = await dump(t.databaseName);
    expect((await call(path(relation.associate), { method: 'POST' })).status).toBe(204);
    expect(t.changes.length).toBe(changes);
    expect(await dump(t.databaseName)).toBe(settled);

    // An unknown side: 404 naming its kind, nothing changed.
    const stranger = crypto.randomUUID();
    const noFrom = await call(path(relation.associate, { [fromParam]: stranger, [toParam]: to.id }), { method: 'POST' });
    expect([noFrom.status, await noFrom.text()]).toEqual([404, `No ${relation.from} with id ${stranger}.`]);
    const noTo = await call(path(relation.disassociate, { [fromParam]: from.id, [toParam]: stranger }), { method: 'POST' });
    expect([noTo.status, await noTo.text()]).toEqual([404, `No ${relation.to} with id ${stranger}.`]);
    expect(await dump(t.databaseName)).toBe(settled);

    expect((await call(path(relation.disassociate), { method: 'POST' })).status).toBe(204);
    if (relation.fromKey) expect(lists(await read(relation.from, from.id), relation.fromKey, to.id)).toBe(false);
    if (relation.toKey) expect(lists(await read(relation.to, to.id), relation.toKey, from.id)).toBe(false);

    // Deleting one side unlists it from the other.
    expect((await call(path(relation.associate), { method: 'POST' })).status).toBe(204);
    const remove = row(relation.to).ops.delete!;
    expect((await call(fill(remove.path, { [/\{(\w+)\}/.exec(remove.path)![1]!]: to.id }), { method: 'POST' })).status).toBe(204);
    if (relation.fromKey) expect(lists(await read(relation.from, from.id), relation.fromKey, to.id)).toBe(false);
  });
});

describe('the route table', () => {
  it('has every SDK operation of the generic kinds and of the associations between two of them, answered by the generic path', () => {
    const names = [
      ...GENERIC_KINDS.flatMap((kind) => Object.values(kind.ops).filter((op) => op.name !== 'tagsExists' && op.name !== 'websitesExists')),
      ...GENERIC_RELATIONS.flatMap((relation) => [
        { ...relation.associate, method: 'POST' },
        { ...relation.disassociate, method: 'POST' },
      ]),
    ];
    expect(names.length).toBeGreaterThan(100);
    for (const op of names) {
      expect(OPERATIONS.find((o) => o.name === op.name)?.api, op.name).toBe(op.api);
      expect(findRoute(op.method, fill(op.path, {}))?.operation.name, `${op.method} ${op.path}`).toBe(op.name);
    }
  });

  it('leaves the associations that touch a hand-written kind to their stores (a later round): none is a row of the generic path', () => {
    const generic = new Set(MATERIAL_OPERATIONS.map((o) => o.name));
    const touching = RELATIONS.filter((r) => !GENERIC_RELATIONS.includes(r));
    expect(touching.length + GENERIC_RELATIONS.length).toBe(RELATIONS.length);
    for (const relation of touching) expect(generic.has(relation.associate.name) || generic.has(relation.disassociate.name)).toBe(false);
  });
});

describe('the mirror', () => {
  const hosts: NodeHost[] = [];
  afterEach(() => {
    for (const host of hosts.splice(0)) host.close();
  });

  it('queues each write of the generic path once; an association made again queues nothing', async () => {
    // An upstream that never answers: every write is answered here and queued.
    const host = createNodeHost({ sampleAssets: false, mirror: { upstream: 'http://localhost:9' } });
    hosts.push(host);
    const call: Call = (path, init) => host.fetch(BASE + path, init);
    const status = () => host.service.mirrorStatus() as Promise<MirrorStatus>;
    for (let i = 0; i < 200 && (await status()).state !== 'down'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await status()).state).toBe('down');
    const person = await create(call, row('person'));
    const summary = await create(call, row('workstreamSummary'));
    const associate = `/person/${person.id}/workstream_summaries/associate/${summary.id}`;
    expect((await call(associate, { method: 'POST' })).status).toBe(204);
    expect((await call(associate, { method: 'POST' })).status).toBe(204);
    expect((await status()).outbox.map((q) => q.operation)).toEqual([
      'personsCreateNewPerson',
      'workstreamSummariesCreateNewWorkstreamSummary',
      'personAssociateWorkstreamSummary',
    ]);
  });
});

describe('references written with the record', () => {
  it('a seed that lists generic records is listed back by them in the same write; an unknown one is a 404 naming its kind, writing nothing', async () => {
    const { t, call } = await harness();
    const person = await create(call, row('person'));
    const summarySeed = { ...(await seedOf(call, row('workstreamSummary'))), persons: { iterable: [{ id: person.id }] } };
    const summary = (await (await call('/workstream_summaries/create', jsonPost(summarySeed))).json()) as Json;
    expect(summary.persons.iterable).toEqual([{ id: person.id }]);
    expect(((await (await call(`/person/${person.id}`)).json()) as Json).summaries.iterable).toEqual([{ id: summary.id }]);

    // SeededRange.summary (a ReferencedWorkstreamSummary) becomes Range.summaries, and the summary lists the range.
    const range = (await (await call('/ranges/create', jsonPost({ summary: { id: summary.id } }))).json()) as Json;
    expect(range.summaries.iterable).toEqual([{ id: summary.id }]);
    expect(((await (await call(`/workstream_summary/${summary.id}`)).json()) as Json).ranges.iterable).toEqual([{ id: range.id }]);

    const settled = await dump(t.databaseName);
    const stranger = crypto.randomUUID();
    const unknown = await call('/ranges/create', jsonPost({ summary: { id: stranger } }));
    expect([unknown.status, await unknown.text()]).toEqual([404, `No workstreamSummary with id ${stranger} (listed by the new range).`]);
    expect(await dump(t.databaseName)).toBe(settled);

    // Deleting the summary unlists it from the person and the range.
    expect((await call(`/workstream_summaries/${summary.id}/delete`, { method: 'POST' })).status).toBe(204);
    expect(((await (await call(`/person/${person.id}`)).json()) as Json).summaries.iterable).toEqual([]);
    expect(((await (await call(`/range/${range.id}`)).json()) as Json).summaries.iterable).toEqual([]);
  });

  it('an update that starts or stops listing a generic record changes that record too', async () => {
    const { call } = await harness();
    const person = await create(call, row('person'));
    const event = await create(call, row('workstreamEvent'));
    const listed = (await (
      await call('/person/update', jsonPost({ ...person, workstream_events: { iterable: [{ id: event.id }] } }))
    ).json()) as Json;
    expect(listed.workstream_events.iterable).toEqual([{ id: event.id }]);
    expect(((await (await call(`/workstream_event/${event.id}`)).json()) as Json).persons.iterable).toEqual([{ id: person.id }]);
    await call('/person/update', jsonPost({ ...listed, workstream_events: { iterable: [] } }));
    expect(((await (await call(`/workstream_event/${event.id}`)).json()) as Json).persons.iterable).toEqual([]);
    const stranger = crypto.randomUUID();
    const unknown = await call('/person/update', jsonPost({ ...listed, workstream_events: { iterable: [{ id: stranger }] } }));
    expect([unknown.status, await unknown.text()]).toEqual([404, `No workstreamEvent with id ${stranger} (person lists it).`]);
  });

  it('a record of a hand-written kind it names must exist (404 naming its kind, nothing written); it is listed as given', async () => {
    const { t, call } = await harness();
    const settled = await dump(t.databaseName);
    const stranger = crypto.randomUUID();
    const point = await call('/anchor_points/create', jsonPost({ type: 'FILE', fullpath: '/a/b.ts', anchor: stranger }));
    expect([point.status, await point.text()]).toEqual([404, `No anchor with id ${stranger} (listed by the new anchorPoint).`]);
    const sensitive = await call('/sensitives/create', jsonPost({ ...(await seedOf(call, row('sensitive'))), asset: stranger }));
    expect([sensitive.status, await sensitive.text()]).toEqual([404, `No asset with id ${stranger} (seededSensitive.asset).`]);
    expect(await dump(t.databaseName)).toBe(settled);
    const person = await create(call, row('person'));
    const unknown = await call('/person/update', jsonPost({ ...person, tags: { iterable: [{ id: stranger }] } }));
    expect([unknown.status, await unknown.text()]).toEqual([404, `No tag with id ${stranger} (person lists it).`]);
  });

  it("a hint's asset, mechanism and model: the asset listed, the mechanism keyed by it (the SDK's map of asset id to mechanism)", async () => {
    const { call } = await harness();
    const asset = await existing(call, 'asset');
    const hint = (await (
      await call('/hints/create', jsonPost({ type: 'SUGGESTED_QUERY', text: 'how', asset, mechanism: 'AUTOMATIC' }))
    ).json()) as Json;
    expect(hint).toMatchObject({
      assets: { iterable: [{ id: asset }] },
      mechanisms: { [asset]: 'AUTOMATIC' },
      type: 'SUGGESTED_QUERY',
      text: 'how',
    });
    expect(hint.score).toEqual({ manual: 0, automatic: 0 });
    // Searched without transferables: the items without their records.
    const found = (await (
      await call('/hints/search?transferables=false', jsonPost({ engines: { iterable: [{ query: 'how' }] } }))
    ).json()) as Json;
    expect(found).toEqual({ iterable: [{ exact: true, similarity: 1, identifier: hint.id }] });
  });
});
