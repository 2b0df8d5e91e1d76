/**
 * The generic path over the whole graph table, in one page of the demo's origin under the
 * service worker: every kind it stores (create from a minimal seed built from SHAPES → item →
 * list → update → delete → 404) and every association between two of them (associate → both
 * sides list it → disassociate → neither does). One page.evaluate per kind and the associations
 * that hang on it, so the walk costs a few round trips to the browser, not hundreds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERIC_KINDS, GENERIC_RELATIONS } from '../../src/core/handlers/materials.js';
import { KINDS, type MaterialKind } from '../../src/shared/graph.js';
import { shapeOf } from '../../src/shared/shapes.js';
import { seedPlan, type SeedPlan } from '../material-seeds.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { openDemo } from './pages.js';

const BASE = 'http://localhost:1000';
const row = (kind: MaterialKind) => KINDS.find((r) => r.kind === kind)!;

/** How the page gets a record of a kind: made from its minimal seed where SHAPES has its Seeded model, else the first it lists (assets). */
type Source = { create: string; plan: SeedPlan } | { list: string };

function sources(): Record<string, Source> {
  const out: Record<string, Source> = {};
  const add = (kind: MaterialKind) => {
    if (out[kind]) return;
    const r = row(kind);
    if (r.seeded && r.ops.create && shapeOf(r.seeded)?.kind === 'model') {
      const plan = seedPlan(r);
      out[kind] = { create: r.ops.create.path, plan };
      for (const need of plan.needs) add(need.kind);
    } else out[kind] = { list: r.ops.snapshot!.path };
  };
  for (const r of GENERIC_KINDS) add(r.kind);
  return out;
}

interface Walk {
  base: string;
  sources: Record<string, Source>;
  /** Each kind's item path. */
  items: Record<string, string>;
  kind: { kind: string; item: string; snapshot: string; update: string; delete: string };
  relations: Array<{ name: string; associate: string; disassociate: string; from: string; to: string; fromKey?: string; toKey?: string }>;
}

/** What the page saw: each step's status and what the records listed. */
interface Seen {
  kind: Record<string, unknown>;
  relations: Array<Record<string, unknown>>;
}

/** Runs in the page (serialised: it uses only its argument). */
async function walk({ base, sources, items, kind, relations }: Walk): Promise<Seen> {
  type Json = Record<string, any>;
  const call = async (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const response = await fetch(base + path, {
      method,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      json: (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as Json,
    };
  };
  const fill = (path: string, ids: string[]) => {
    let i = 0;
    return path.replace(/\{\w+\}/g, () => ids[i++]!);
  };
  async function idOf(of: string): Promise<string> {
    const source = sources[of]!;
    if ('list' in source) return (await call(source.list)).json.iterable[0].id;
    return (await create(of)).id;
  }
  async function create(of: string): Promise<Json> {
    const source = sources[of] as { create: string; plan: { seed: Json; needs: Array<{ key: string; kind: string; as: string }> } };
    const seed: Json = structuredClone(source.plan.seed);
    for (const need of source.plan.needs) {
      const id = await idOf(need.kind);
      seed[need.key] = need.as === 'id' ? id : { id };
    }
    const made = await call(source.create, seed);
    if (made.status !== 200) throw new Error(`${source.create}: ${made.status} ${made.text}`);
    return made.json;
  }
  const read = async (of: string, id: string) => (await call(fill(items[of]!, [id]))).json;
  const lists = (record: Json, key: string | undefined, id: string) =>
    key === undefined ? null : JSON.stringify(key.split('.').reduce((node: any, step) => node?.[step], record) ?? null).includes(id);

  const made = await create(kind.kind);
  const item = await call(fill(kind.item, [made.id]));
  const listed = (await call(kind.snapshot)).json.iterable.some((r: Json) => r.id === made.id);
  const update = await call(kind.update, { ...made, score: { manual: 7, automatic: 0 } });
  const reread = (await call(fill(kind.item, [made.id]))).json;
  const removed = await call(fill(kind.delete, [made.id]), undefined, 'POST');
  const gone = await call(fill(kind.item, [made.id]));
  const seen: Seen = {
    kind: {
      item: item.status,
      same: JSON.stringify(item.json) === JSON.stringify(made),
      listed,
      update: update.status,
      score: reread.score,
      created: reread.created.value === made.created.value,
      delete: removed.status,
      gone: [gone.status, gone.text === `No ${kind.kind} with id ${made.id}.`],
      unlisted: !(await call(kind.snapshot)).json.iterable.some((r: Json) => r.id === made.id),
    },
    relations: [],
  };

  for (const relation of relations) {
    const from = await create(relation.from);
    const to = await create(relation.to);
    const both = async () => [
      lists(await read(relation.from, from.id), relation.fromKey, to.id),
      lists(await read(relation.to, to.id), relation.toKey, from.id),
    ];
    const associated = (await call(fill(relation.associate, [from.id, to.id]), undefined, 'POST')).status;
    const listedBoth = await both();
    const disassociated = (await call(fill(relation.disassociate, [from.id, to.id]), undefined, 'POST')).status;
    seen.relations.push({ name: relation.name, associated, listed: listedBoth, disassociated, unlisted: await both() });
  }
  return seen;
}

describe(`the graph table's generic path in ${engine.name}`, () => {
  let context: BrowserContext;
  let page: Page;
  const known = sources();
  const items = Object.fromEntries(GENERIC_KINDS.map((r) => [r.kind, r.ops.item!.path]));

  beforeAll(async () => {
    ({ context } = await launch());
    page = await openDemo(context);
  });

  afterAll(async () => {
    await context?.close();
  });

  it.each(GENERIC_KINDS.map((r) => [r.kind, r] as const))('%s: round trip, and the associations that hang on it', async (_name, kind) => {
    const relations = GENERIC_RELATIONS.filter((r) => r.from === kind.kind).map((r) => ({
      name: r.associate.name,
      associate: r.associate.path,
      disassociate: r.disassociate.path,
      from: r.from,
      to: r.to,
      fromKey: r.fromKey,
      toKey: r.toKey,
    }));
    const ops = kind.ops;
    const seen = await page.evaluate(walk, {
      base: BASE,
      sources: known,
      items,
      kind: { kind: kind.kind, item: ops.item!.path, snapshot: ops.snapshot!.path, update: ops.update!.path, delete: ops.delete!.path },
      relations,
    });
    expect(seen.kind).toEqual({
      item: 200,
      same: true,
      listed: true,
      update: 200,
      score: { manual: 7, automatic: 0 },
      created: true,
      delete: 204,
      gone: [404, true],
      unlisted: true,
    });
    expect(seen.relations).toEqual(
      relations.map((r) => {
        const sides = [r.fromKey === undefined ? null : true, r.toKey === undefined ? null : true];
        return {
          name: r.name,
          associated: 204,
          listed: sides,
          disassociated: 204,
          unlisted: sides.map((s) => (s === null ? null : false)),
        };
      }),
    );
  });
});
