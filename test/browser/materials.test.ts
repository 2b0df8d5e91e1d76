/**
 * The generic path over the whole graph table, in one page of the demo's origin under the
 * service worker, in every engine: the walk of test/browser/material-walk.ts per kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WALKED_KINDS } from '../material-seeds.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import { sources, walk, walkOf } from './material-walk.js';
import { openDemo } from './pages.js';

describe(`the graph table's generic path in ${engine.name}`, () => {
  let context: BrowserContext;
  let page: Page;
  const known = sources();

  beforeAll(async () => {
    ({ context } = await launch());
    page = await openDemo(context);
  });

  afterAll(async () => {
    await context?.close();
  });

  it.each(WALKED_KINDS.map((r) => [r.kind, r] as const))('%s: round trip, and the associations that hang on it', async (_name, kind) => {
    const plan = walkOf(kind, known);
    const relations = plan.relations;
    const seen = await page.evaluate(walk, plan);
    for (const [name, status] of Object.entries(seen.statuses)) expect([200, 204], name).toContain(status);
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
