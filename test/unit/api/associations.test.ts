// @vitest-environment node
/**
 * Every association with a hand-written kind on a side (src/core/handlers/links.ts), generated from
 * the graph table: make both records, associate → both sides list it (item snapshot, and the
 * collection snapshot where the kind has one routed) → again (nothing logged) → disassociate →
 * neither lists it → associate again → delete one side → the other no longer lists it. Every 2xx
 * body is checked against the SDK's models (test/unit/support/response-check.ts).
 */
import { describe, expect, it } from 'vitest';
import { LINK_OPERATIONS, LINK_RELATIONS } from '../../../src/core/handlers/links.js';
import { listed } from '../../../src/core/models/material-links.js';
import { findRoute } from '../../../src/core/routes.js';
import { KINDS, type MaterialKind, type RelationRow } from '../../../src/shared/graph.js';
import type { StoredData } from '../../../src/storage/storage.js';
import { filledSeed, seedPlan } from '../../material-seeds.js';
import { parseData } from '../../../src/core/data.js';
import { BASE, jsonPost, seeded, setup } from '../support/harness.js';

const testClock = { now: () => new Date(), newId: () => crypto.randomUUID() };

type Json = Record<string, any>;
type Harness = Awaited<ReturnType<typeof setup>>;

const row = (kind: MaterialKind) => KINDS.find((r) => r.kind === kind)!;
const paramOf = (path: string) => /\{(\w+)\}/.exec(path)![1]!;
const fill = (path: string, ids: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name]!);
const NONE: StoredData = {
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

async function ok(t: Harness, path: string, init?: RequestInit): Promise<Response> {
  const response = await t.fetch(BASE + path, init);
  expect(response.status, `${path}: ${await response.clone().text()}`).toBeLessThan(300);
  return response;
}
const json = async (t: Harness, path: string, init?: RequestInit) => (await (await ok(t, path, init)).json()) as Json;

/** A new record of `kind`: through its create where one is routed, else (tags, websites) stored as data. */
async function make(t: Harness, kind: MaterialKind): Promise<string> {
  const now = new Date().toISOString();
  switch (kind) {
    case 'asset':
      return (
        await json(
          t,
          '/assets/create',
          jsonPost({ type: 'SEEDED_ASSET', asset: { application: await appOf(t), format: { fragment: { string: { raw: 'x' } } } } }),
        )
      ).id;
    case 'conversation':
      return (await json(t, '/conversations/create', jsonPost(seeded('c')))).id;
    case 'conversationMessage': {
      const conversation = await make(t, 'conversation');
      return (
        await json(
          t,
          '/messages/create',
          jsonPost({ role: 'USER', fragment: { string: { raw: 'x' } }, conversation: { id: conversation } }),
        )
      ).id;
    }
    case 'anchor':
      return (await json(t, '/anchors/create', jsonPost({ type: 'FILE', fullpath: `/a/${crypto.randomUUID()}.ts` }))).id;
    case 'annotation':
      return (await json(t, '/annotations/create', jsonPost({ type: 'COMMENT', text: 'x' }))).id;
    case 'tag':
    case 'website': {
      const id = crypto.randomUUID();
      const base = { id, created: now, updated: now, assets: [] };
      await t.storage.loadData(
        kind === 'tag'
          ? { ...NONE, tags: [{ ...base, text: `t${id}`, category: 'UNKNOWN' }] }
          : { ...NONE, websites: [{ ...base, url: `https://${id}.example`, name: 'w' }] },
        { replace: false },
      );
      return id;
    }
    default: {
      const seed = await filledSeed(seedPlan(row(kind)), (named) => make(t, named));
      return (await json(t, row(kind).ops.create!.path, jsonPost(seed))).id;
    }
  }
}

async function appOf(t: Harness): Promise<Json> {
  const apps = await json(t, '/applications');
  return apps.iterable[0] ?? (await json(t, '/applications/register', jsonPost({ name: 'VS_CODE', version: '1', platform: 'MACOS' })));
}

/** The ids `kind/id` lists under `key`, in its item snapshot and (where routed) its collection snapshot. */
async function listedBy(t: Harness, kind: MaterialKind, id: string, key: string | undefined): Promise<string[][]> {
  if (!key) return [];
  const { ops, references } = row(kind);
  const many = references[key]?.many ?? true;
  const item = await json(t, fill(ops.item!.path, { [paramOf(ops.item!.path)]: id }));
  const seen = [listed(item, key, many)];
  if (ops.snapshot && findRoute('GET', ops.snapshot.path)) {
    const all = await json(t, ops.snapshot.path);
    seen.push(
      listed(
        all.iterable.find((r: Json) => r.id === id),
        key,
        many,
      ),
    );
  }
  return seen;
}

const relationName = (relation: RelationRow) => relation.associate.name;

describe.each(
  LINK_RELATIONS.filter((r) =>
    LINK_OPERATIONS.some(
      (op) =>
        op.name === r.associate.name &&
        findRoute('POST', fill(r.associate.path, { [r.params[0]]: 'a', [r.params[1]]: 'b' }))?.operation.handler === op.handler,
    ),
  ).map((r) => [relationName(r), r] as const),
)('%s', (_name, relation) => {
  it('associate → both list → again → disassociate → associate → delete one side', async () => {
    const t = await setup();
    const a = await make(t, relation.from);
    const b = relation.from === relation.to && relation.params[0] === relation.params[1] ? a : await make(t, relation.to);
    const ids = { [relation.params[0]]: a, [relation.params[1]]: b };
    const lists = async (linked: boolean) => {
      for (const seen of await listedBy(t, relation.from, a, relation.fromKey))
        expect(seen.includes(b), `${relation.from} lists ${relation.to}`).toBe(linked);
      for (const seen of await listedBy(t, relation.to, b, relation.toKey))
        expect(seen.includes(a), `${relation.to} lists ${relation.from}`).toBe(linked);
    };
    await lists(false);
    await ok(t, fill(relation.associate.path, ids), { method: 'POST' });
    await lists(true);
    const logged = t.changes.length;
    await ok(t, fill(relation.associate.path, ids), { method: 'POST' });
    expect(t.changes.length, 'a repeat logs nothing').toBe(logged);
    await ok(t, fill(relation.disassociate.path, ids), { method: 'POST' });
    await lists(false);
    await ok(t, fill(relation.associate.path, ids), { method: 'POST' });
    // Deleting one side unlists it from the other.
    // (A side whose delete is routed.)
    const deletable = (kind: MaterialKind) => {
      const path = row(kind).ops.delete?.path;
      return !!path && !!findRoute('POST', fill(path, { [paramOf(path)]: a }));
    };
    const sides = [
      { gone: relation.to, goneId: b, kept: relation.from, keptId: a, key: relation.fromKey },
      { gone: relation.from, goneId: a, kept: relation.to, keptId: b, key: relation.toKey },
    ].filter((side) => side.key && deletable(side.gone) && side.goneId !== side.keptId);
    const side = sides[0];
    if (!side) return;
    const del = row(side.gone).ops.delete!;
    await ok(t, fill(del.path, { [paramOf(del.path)]: side.goneId }), { method: 'POST' });
    for (const seen of await listedBy(t, side.kept, side.keptId, side.key))
      expect(seen, `${side.kept} unlists the ${side.gone} deleted`).not.toContain(side.goneId);
  });
});

it('a missing side is a 404 naming its kind and id', async () => {
  const t = await setup();
  const person = await make(t, 'person');
  const missing = crypto.randomUUID();
  const response = await t.fetch(`${BASE}/asset/${missing}/persons/associate/${person}`, { method: 'POST' });
  expect(response.status).toBe(404);
  expect(await response.text()).toContain(`No asset with id ${missing}`);
});

describe('kept', () => {
  /** An asset, a tag and a conversation associated with a person, and the conversation grounded on a range. */
  async function associated(t: Harness) {
    const [asset, tag, conversation, person, range] = (await Promise.all(
      (['asset', 'tag', 'conversation', 'person', 'range'] as const).map((kind) => make(t, kind)),
    )) as [string, string, string, string, string];
    for (const path of [
      `/asset/${asset}/persons/associate/${person}`,
      `/tag/${tag}/persons/associate/${person}`,
      `/conversation/${conversation}/grounding/temporal_range/workstreams/associate/${range}`,
    ])
      await ok(t, path, { method: 'POST' });
    return { asset, tag, conversation, person, range };
  }
  async function expectListed(t: Harness, ids: Awaited<ReturnType<typeof associated>>) {
    expect(await listedBy(t, 'asset', ids.asset, 'persons')).toEqual([[ids.person], [ids.person]]);
    expect(await listedBy(t, 'tag', ids.tag, 'persons')).toEqual([[ids.person], [ids.person]]);
    expect(await listedBy(t, 'conversation', ids.conversation, 'grounding.temporal.workstreams')).toEqual([[ids.range], [ids.range]]);
    const person = await json(t, `/person/${ids.person}`);
    expect(listed(person, 'assets', true)).toEqual([ids.asset]);
    expect(listed(person, 'tags', true)).toEqual([ids.tag]);
    expect(listed(await json(t, `/range/${ids.range}`), 'conversations', true)).toEqual([ids.conversation]);
  }

  it('across a restart of the host', async () => {
    const t = await setup();
    const ids = await associated(t);
    t.storage.close();
    await expectListed(await setup({ databaseName: t.databaseName }), ids);
  });

  it('in export and import', async () => {
    const t = await setup();
    const ids = await associated(t);
    const data = JSON.parse(JSON.stringify(await t.service.exportData()));
    const fresh = await setup({ sampleAssets: false });
    await fresh.storage.loadData(parseData(data, testClock), { replace: true });
    await expectListed(fresh, ids);
  });
});

it('an annotation deleted through its asset is unlisted from what lists it', async () => {
  const t = await setup();
  const asset = await make(t, 'asset');
  const person = await make(t, 'person');
  const annotation = (await json(t, '/annotations/create', jsonPost({ type: 'COMMENT', text: 'x', asset }))).id;
  await ok(t, `/person/${person}/annotations/associate/${annotation}`, { method: 'POST' });
  expect(listed(await json(t, `/person/${person}`), 'annotations', true)).toEqual([annotation]);
  await ok(t, `/annotations/${annotation}/delete`, { method: 'POST' });
  expect(listed(await json(t, `/person/${person}`), 'annotations', true)).toEqual([]);
});
