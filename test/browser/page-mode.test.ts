/**
 * Page mode in Chromium: where no service worker can run, the demo still
 * answers every operation (fetch and XMLHttpRequest) and the stream, in the
 * page, with tabs of one origin sharing one store.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OPERATIONS } from '../../src/core/routes.js';
import { engine, launch, type BrowserContext, type Page } from './engine.js';
import type { Capability } from './driver.js';
import { WALKED_KINDS } from '../material-seeds.js';
import { HOST_CANNOT } from '../../src/core/handlers/host-cannot.js';
import { SAMPLE_ASSETS } from '../../src/core/fixtures/sample-assets.js';
import { linkWalk, linkWalkOf } from './link-walk.js';
import { sources, walk, walkOf } from './material-walk.js';
import { callEveryOperation, listen, socketIds, storeIds } from './pages.js';

async function openPageMode(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector('#status[data-state="ready"][data-mode="page"]');
  return page;
}

const SUCCESS = new Set([200, 204]);

function suite(name: string, capability: Capability, setup: () => Promise<{ context: BrowserContext; url: string }>, reason: RegExp) {
  describe.skipIf(engine.lacks(capability))(name, () => {
    let context: BrowserContext;
    let url: string;
    let a: Page;
    let b: Page;

    beforeAll(async () => {
      ({ context, url } = await setup());
      a = await openPageMode(context, url);
      b = await openPageMode(context, url);
    });

    afterAll(async () => {
      await context?.close();
    });

    it('says why it runs in the page', async () => {
      expect(await a.textContent('#status')).toMatch(reason);
      expect(await a.evaluate(() => navigator.serviceWorker?.controller ?? null)).toBeNull();
    });

    it('answers every operation, through fetch and XMLHttpRequest', async () => {
      const result = await callEveryOperation(a);
      // The generic path's operations: the graph table walked kind by kind (test/browser/material-walk.ts).
      const known = sources();
      for (const kind of WALKED_KINDS) Object.assign(result.statuses, (await a.evaluate(walk, walkOf(kind, known))).statuses);
      // The associations with a hand-written kind (test/browser/link-walk.ts).
      Object.assign(result.statuses, (await a.evaluate(linkWalk, linkWalkOf(known))).statuses);
      // What no host can do: answered 501 naming it, from the page as from every host.
      const cannot = new Set<string>(HOST_CANNOT.map((row) => row.name));
      for (const { name, method, path } of HOST_CANNOT) {
        const answer = await a.evaluate(
          async ({ method, path }) => {
            const response = await fetch(`http://localhost:1000${path}`, { method });
            return { status: response.status, text: await response.text() };
          },
          { method, path },
        );
        expect([answer.status, answer.text.includes(name)], name).toEqual([501, true]);
      }
      expect(Object.keys(result.statuses).sort()).toEqual(
        OPERATIONS.filter((o) => !cannot.has(o.name))
          .map((o) => o.name)
          .sort(),
      );
      for (const [operation, status] of Object.entries(result.statuses))
        expect(SUCCESS.has(status), `${operation} ${status} ${result.failures[operation] ?? ''}`).toBe(true);
      expect(result.listed).toContain(result.created);
      expect(result.remaining).not.toContain(result.deleted);
    });

    it('streams changes made in this tab and in another tab; both tabs read one store', async () => {
      await listen(a);
      await listen(b);
      const created = await b.evaluate(async () => {
        const response = await fetch('http://localhost:1000/conversations/create', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', name: 'from tab B' }),
        });
        return ((await response.json()) as { id: string }).id;
      });
      await expect.poll(() => socketIds(a), { timeout: 10_000 }).toContain(created);
      await expect.poll(() => socketIds(b), { timeout: 10_000 }).toContain(created);
      // Tab A's cached reads were cleared by tab B's write.
      expect(await storeIds(a)).toContain(created);
      await a.evaluate((id) => fetch(`http://localhost:1000/conversations/${id}/delete`, { method: 'POST' }), created);
      await expect.poll(() => socketIds(b), { timeout: 10_000 }).not.toContain(created);
      expect(await storeIds(b)).not.toContain(created);
      expect(await storeIds(a)).toEqual(await storeIds(b));
    });

    it('answers synchronous XMLHttpRequest discovery probes', async () => {
      const probe = await a.evaluate(() => {
        const request = new XMLHttpRequest();
        request.open('GET', 'http://localhost:39310/.well-known/health', false);
        request.send();
        return { status: request.status, text: request.responseText };
      });
      expect(probe).toEqual({ status: 200, text: 'ok' });
      // A synchronous request outside the bases still goes to the network.
      const own = await a.evaluate(() => {
        const request = new XMLHttpRequest();
        request.open('GET', location.href, false);
        request.send();
        return { status: request.status, html: request.responseText.includes('<html') };
      });
      expect(own).toEqual({ status: 200, html: true });
    });

    it('leaves requests outside the bases to the network', async () => {
      const outside = await a.evaluate(async () => {
        try {
          await fetch('http://localhost:1001/applications');
          return 'answered';
        } catch {
          return 'network error';
        }
      });
      expect(outside).toBe('network error');
    });

    it('reopens a database deleted under the tabs (as the worker does): no deleted data, the sample assets again, writes taken at once', async () => {
      const create = (page: Page, name: string) =>
        page.evaluate(async (name) => {
          const response = await fetch('http://localhost:1000/conversations/create', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ type: 'COPILOT', name }),
          });
          return { status: response.status, id: ((await response.json()) as { id: string }).id };
        }, name);
      const ghost = await create(a, 'before the wipe');
      expect(await storeIds(b)).toContain(ghost.id);
      // Every tab's connection lets go of the database when asked, so the deletion proceeds.
      const deleted = await b.evaluate(
        () =>
          new Promise<string>((resolve, reject) => {
            const request = indexedDB.deleteDatabase('pieces-os-worker');
            request.onsuccess = () => resolve('deleted');
            request.onerror = () => reject(request.error);
            request.onblocked = () => resolve('blocked');
          }),
      );
      expect(deleted).toBe('deleted');
      expect(await storeIds(a)).toEqual([]);
      // (The tabs made assets of their own before: the every-operation walk's.)
      const assets = await a.evaluate(() => fetch('http://localhost:1000/assets/identifiers').then((r) => r.json()));
      expect((assets as { iterable: Array<{ id: string }> }).iterable.map((asset) => asset.id).sort()).toEqual(
        SAMPLE_ASSETS.map((asset) => asset.id).sort(),
      );
      const after = await create(b, 'after the wipe');
      expect(after.status).toBe(200);
      expect(await storeIds(a)).toEqual([after.id]);
    });
  });
}

suite(
  'an insecure origin (a LAN-like host name on http://)',
  'loopbackHosts',
  async () => {
    const demo = new URL(inject('demoUrl'));
    const { context } = await launch(undefined, { loopbackHosts: ['pieces-lan.test'] });
    return { context, url: `http://pieces-lan.test:${demo.port}/` };
  },
  /not a secure context/,
);

suite(
  "Playwright's serviceWorkers: 'block'",
  'blockServiceWorkers',
  async () => {
    const { context } = await launch(undefined, { blockServiceWorkers: true });
    return { context, url: inject('demoUrl') };
  },
  // Chromium under Playwright: register() does nothing; Firefox: service workers turned off.
  /registration is blocked|offers no service workers here/,
);
