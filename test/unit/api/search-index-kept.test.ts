/**
 * The assets' search index kept in the database: a service started again on the same
 * database loads it and the changes made since (from the change log) instead of reading and
 * indexing every asset, and ranks exactly as the service that kept it.
 */
import { describe, expect, it, vi } from 'vitest';
import { createService } from '../../../src/core/service.js';
import { KEEP_INDEX_AFTER_MS } from '../../../src/core/copilot/corpus.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { BASE, application, jsonPost, sampleData } from '../support/harness.js';

let counter = 0;
const APP = application({ name: 'OS_SERVER' });
const seed = (raw: string) => jsonPost({ type: 'SEEDED_ASSET', asset: { application: APP, format: { fragment: { string: { raw } } } } });

async function started(name: string) {
  const storage = await openStorage({ name, initialData: sampleData() });
  const service = createService({ storage });
  const call = async (path: string, init?: RequestInit) => {
    const response = await service.handle(new Request(`${BASE}${path}`, init));
    expect(response.status, path).toBeLessThan(300);
    return response.json();
  };
  return { storage, service, call };
}

describe('the kept search index', () => {
  it('is loaded by a service started again, with the changes made after it was kept, and ranks the same', async () => {
    const name = `kept-index-${Date.now()}-${counter++}`;
    const first = await started(name);
    for (const text of ['retry with backoff', 'retry once', 'backoff table', 'nothing here']) await first.call('/assets/create', seed(text));
    const before = await first.call('/search/neural_code?query=retry%20backoff');
    await new Promise((resolve) => setTimeout(resolve, KEEP_INDEX_AFTER_MS + 300));
    expect(await first.storage.getSearchIndex('assets')).toMatchObject({ seq: expect.any(Number) });
    // Written after the index was kept: the next start reads these from the change log.
    const later = await first.call('/assets/create', seed('backoff and retry, later'));
    const gone = before.iterable.find((s: { identifier: string }) => s.identifier)!.identifier as string;
    await first.service.handle(new Request(`${BASE}/assets/${gone}/delete`, { method: 'POST' }));
    first.storage.close();

    const second = await started(name);
    const listAssets = vi.spyOn(second.storage, 'listAssets');
    const after = await second.call('/search/neural_code?query=retry%20backoff');
    expect(listAssets).not.toHaveBeenCalled();
    const ids = after.iterable.map((s: { identifier: string }) => s.identifier);
    expect(ids).toContain(later.id);
    expect(ids).not.toContain(gone);

    // A service that indexes every asset afresh ranks exactly the same.
    await second.storage.putSearchIndex('assets', { seq: 0, value: null });
    const third = createService({ storage: second.storage });
    const fresh = await (await third.handle(new Request(`${BASE}/search/neural_code?query=retry%20backoff`))).json();
    expect(after).toEqual(fresh);
    second.storage.close();
  });
});
