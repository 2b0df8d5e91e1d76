/**
 * Every operation that reads a request body refuses one over the limit with a 413 and changes
 * nothing: each reads its body through the one limited reader (src/core/http.ts). The limit is set
 * low here, so the check costs nothing; the browser matrix (test/browser/bodies.test.ts) posts
 * 16 MiB and one byte to a few operations through the page and the worker.
 */
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/core/routes.js';
import { APP, MODEL, VALID } from '../../post-bodies.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';

const LIMIT = 1024;

describe('a body one byte over the limit', () => {
  it(`is refused 413 by every operation that reads one (${Object.keys(VALID).length}), changing nothing`, async () => {
    const t = await setup({ maxBodyBytes: LIMIT });
    // The operations that find the records their path names before reading the body: those records exist.
    expect((await t.fetch(`${BASE}/applications/register`, jsonPost(APP))).status).toBe(200);
    const conversation = (await (await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: 'COPILOT' }))).json()) as { id: string };
    const ids: Record<string, string> = { model: MODEL, application: APP.id, conversation: conversation.id };
    const before = await dump(t.databaseName);
    const answers: string[] = [];
    for (const name of Object.keys(VALID)) {
      const operation = OPERATIONS.find((o) => o.name === name)!;
      const path = operation.path.replace(/\{(\w+)\}/g, (_all, param: string) => ids[param] ?? crypto.randomUUID());
      const response = await t.fetch(BASE + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: ' '.repeat(LIMIT + 1),
      });
      const text = await response.text();
      if (response.status !== 413 || !text.includes(`larger than the limit of ${LIMIT} bytes`))
        answers.push(`${name}: ${response.status} ${text}`);
    }
    expect(answers).toEqual([]);
    expect(await dump(t.databaseName)).toBe(before);
  });
});
