/**
 * The associations with a hand-written kind (src/core/handlers/links.ts) walked in a page: for each,
 * both records made (a generic kind's from its minimal seed, as material-walk.ts does; a hand-written
 * kind's through its create, or a tag or website through an asset created with one), associated and
 * disassociated, each status kept by SDK name. Used by page-mode.test.ts's every-operation walk.
 */
import { LINK_OPERATIONS, LINK_RELATIONS } from '../../src/core/handlers/links.js';
import { OPERATIONS } from '../../src/core/routes.js';
import { sources } from './material-walk.js';

export interface LinkWalk {
  base: string;
  sources: ReturnType<typeof sources>;
  relations: Array<{ name: string; disassociateName: string; associate: string; disassociate: string; from: string; to: string }>;
}

/** The walk of every association routed to links.ts (the few written by hand are called by pages.ts). */
export function linkWalkOf(known = sources()): LinkWalk {
  const routed = new Set(OPERATIONS.map((operation) => operation.handler));
  const mine = new Set(LINK_OPERATIONS.filter((operation) => routed.has(operation.handler)).map((operation) => operation.name));
  return {
    base: 'http://localhost:1000',
    sources: known,
    relations: LINK_RELATIONS.filter((r) => mine.has(r.associate.name)).map((r) => ({
      name: r.associate.name,
      disassociateName: r.disassociate.name,
      associate: r.associate.path,
      disassociate: r.disassociate.path,
      from: r.from,
      to: r.to,
    })),
  };
}

/** Runs in the page (serialised: it uses only its argument). */
export async function linkWalk({ base, sources, relations }: LinkWalk): Promise<{ statuses: Record<string, number> }> {
  type Json = Record<string, any>;
  const call = async (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const response = await fetch(base + path, {
      method,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as Json;
  };
  const application = (await call('/applications')).iterable[0];
  // A name not used before (crypto's UUIDs are only in secure contexts; the walk also runs on a LAN-like origin).
  let made = 0;
  const unique = () => `${Date.now().toString(36)}-${(made++).toString(36)}-${Math.random().toString(36).slice(2)}`;
  const asset = (tags: boolean) =>
    call('/assets/create', {
      type: 'SEEDED_ASSET',
      asset: {
        application,
        format: { fragment: { string: { raw: 'linked' } } },
        ...(tags ? { metadata: { tags: [{ text: unique() }], websites: [{ url: `https://${unique()}.test`, name: 'w' }] } } : {}),
      },
    });
  const own: Record<string, () => Promise<string>> = {
    asset: async () => (await asset(false)).id,
    tag: async () => (await asset(true)).tags.iterable[0].id,
    website: async () => (await asset(true)).websites.iterable[0].id,
    conversation: async () => (await call('/conversations/create', { type: 'COPILOT' })).id,
    conversationMessage: async () =>
      (
        await call('/messages/create', {
          role: 'USER',
          fragment: { string: { raw: 'linked' } },
          conversation: { id: await own.conversation!() },
        })
      ).id,
    anchor: async () => (await call('/anchors/create', { type: 'FILE', fullpath: `/linked/${unique()}.ts` })).id,
    annotation: async () => (await call('/annotations/create', { type: 'COMMENT', text: 'linked' })).id,
  };
  async function idOf(kind: string): Promise<string> {
    if (own[kind]) return own[kind]();
    const source = sources[kind]!;
    if ('list' in source) return (await call(source.list)).iterable[0].id;
    const seed: Json = structuredClone(source.plan.seed);
    for (const need of source.plan.needs) {
      const id = await idOf(need.kind);
      seed[need.key] = need.as === 'id' ? id : { id };
    }
    return (await call(source.create, seed)).id;
  }
  const fill = (path: string, ids: string[]) => {
    let i = 0;
    return path.replace(/\{\w+\}/g, () => ids[i++]!);
  };
  const statuses: Record<string, number> = {};
  for (const relation of relations) {
    const ids = [await idOf(relation.from), await idOf(relation.to)];
    await call(fill(relation.associate, ids), undefined, 'POST');
    statuses[relation.name] = 204;
    await call(fill(relation.disassociate, ids), undefined, 'POST');
    statuses[relation.disassociateName] = 204;
  }
  return { statuses };
}
