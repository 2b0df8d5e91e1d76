/**
 * The generic path walked in a page: every kind it stores (create from a minimal seed built from
 * SHAPES → item → list → update → search → score → stream handshake → delete → 404) and every
 * association between two of them (associate → both sides list it → disassociate → neither does).
 * One page.evaluate per kind and the associations that hang on it. Used by materials.test.ts (under
 * the service worker, in every engine) and page-mode.test.ts (in the page).
 */
import { GENERIC_KINDS, GENERIC_RELATIONS } from '../../src/core/handlers/materials.js';
import { KINDS, type KindRow, type MaterialKind } from '../../src/shared/graph.js';
import { shapeOf } from '../../src/shared/shapes.js';
import { seedPlan, WALKED_KINDS, type SeedPlan } from '../material-seeds.js';

const BASE = 'http://localhost:1000';
const row = (kind: MaterialKind) => KINDS.find((r) => r.kind === kind)!;

/** How the page gets a record of a kind: made from its minimal seed where SHAPES has its Seeded model, else the first it lists (assets). */
type Source = { create: string; plan: SeedPlan } | { list: string };

export function sources(): Record<string, Source> {
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
  for (const r of WALKED_KINDS) add(r.kind);
  return out;
}

export interface Walk {
  base: string;
  sources: Record<string, Source>;
  /** Each kind's item path. */
  items: Record<string, string>;
  kind: { kind: string; item: string; snapshot: string; update: string; delete: string };
  /** The kind's other operations, called once each with their status kept (search, scores, stream: where the SDK has them), by SDK name. */
  more: { search?: Op; scores?: Op; stream?: Op; names: Record<'item' | 'snapshot' | 'update' | 'delete' | 'create', string> };
  relations: Array<{
    name: string;
    disassociateName: string;
    associate: string;
    disassociate: string;
    from: string;
    to: string;
    fromKey?: string;
    toKey?: string;
  }>;
}

type Op = { name: string; path: string };

/** What the page saw: each step's status and what the records listed; every operation's status by SDK name. */
interface Seen {
  kind: Record<string, unknown>;
  relations: Array<Record<string, unknown>>;
  statuses: Record<string, number>;
}

/** Runs in the page (serialised: it uses only its argument). */
export async function walk({ base, sources, items, kind, more, relations }: Walk): Promise<Seen> {
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
  const statuses: Record<string, number> = { [more.names.create]: 200 };
  const item = await call(fill(kind.item, [made.id]));
  const listed = (await call(kind.snapshot)).json.iterable.some((r: Json) => r.id === made.id);
  const update = await call(kind.update, { ...made, score: { manual: 7, automatic: 0 } });
  const reread = (await call(fill(kind.item, [made.id]))).json;
  statuses[more.names.item] = item.status;
  statuses[more.names.snapshot] = listed ? 200 : 0;
  statuses[more.names.update] = update.status;
  if (more.search) statuses[more.search.name] = (await call(more.search.path, { engines: { iterable: [{ query: 'sample' }] } })).status;
  if (more.scores) statuses[more.scores.name] = (await call(fill(more.scores.path, [made.id]), { [kind.kind]: { reuse: true } })).status;
  if (more.stream)
    statuses[more.stream.name] = (await fetch(base + more.stream.path, { headers: { 'X-Pieces-Stream': 'handshake' } })).status;
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
    statuses,
  };
  statuses[more.names.delete] = removed.status;

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
    statuses[relation.name] = associated;
    statuses[relation.disassociateName] = disassociated;
    seen.relations.push({ name: relation.name, associated, listed: listedBoth, disassociated, unlisted: await both() });
  }
  return seen;
}

/** The walk of one generic kind and the associations that hang on it (their first kind is this one). */
export function walkOf(kind: KindRow, known = sources()): Walk {
  const ops = kind.ops;
  const op = (o: { name: string; path: string } | undefined) => (o ? { name: o.name, path: o.path } : undefined);
  return {
    base: BASE,
    sources: known,
    items: Object.fromEntries(GENERIC_KINDS.map((r) => [r.kind, r.ops.item!.path])),
    kind: { kind: kind.kind, item: ops.item!.path, snapshot: ops.snapshot!.path, update: ops.update!.path, delete: ops.delete!.path },
    more: {
      search: op(ops.search),
      scores: op(ops.scores),
      stream: op(ops.stream),
      names: {
        item: ops.item!.name,
        snapshot: ops.snapshot!.name,
        update: ops.update!.name,
        delete: ops.delete!.name,
        create: ops.create!.name,
      },
    },
    relations: GENERIC_RELATIONS.filter((r) => r.from === kind.kind).map((r) => ({
      name: r.associate.name,
      disassociateName: r.disassociate.name,
      associate: r.associate.path,
      disassociate: r.disassociate.path,
      from: r.from,
      to: r.to,
      fromKey: r.fromKey,
      toKey: r.toKey,
    })),
  };
}
