/**
 * Sockets and the page's status never look live while stale: the worker
 * stopped in the middle of a burst of writes, the database wiped under an
 * open socket, the worker unregistered and the site's data cleared.
 */
import { describe, expect, it } from 'vitest';
import { need } from './engine.js';
import { contextPerTest, listen, openDemo, socketIds, storeIds } from './pages.js';

const newContext = contextPerTest();

declare global {
  interface Window {
    closeCodes: number[];
    pillStates: string[];
  }
}

describe('a socket while the worker is stopped mid-burst', () => {
  it('ends with exactly the store, still open, within a few seconds of the last write', async (test) => {
    need(test, 'stopWorkers');
    const context = await newContext();
    const reader = await openDemo(context);
    const writer = await openDemo(context);
    await listen(reader);
    await reader.evaluate(() => {
      window.closeCodes = [];
      window.streamSocket!.addEventListener('close', (event) => window.closeCodes.push((event as CloseEvent).code));
    });
    const writing = writer.evaluate(async () => {
      let next = 0;
      const post = async () => {
        while (next < 200) {
          const i = next++;
          await fetch('http://localhost:1000/conversations/create', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ type: 'COPILOT', name: `burst ${i}` }),
          }).catch(() => undefined);
        }
      };
      await Promise.all(Array.from({ length: 4 }, post));
    });
    let finished = false;
    void writing.finally(() => (finished = true));
    // Up to 6 stops, 300 ms apart, then the burst ends on its own: on a slow engine a stop every
    // 300 ms until the end would make the burst's time that engine's restart time × 200.
    let stops = 0;
    while (!finished && stops < 6) {
      await new Promise((r) => setTimeout(r, 300));
      if (finished) break;
      await context.stopWorkers();
      stops++;
    }
    await writing;
    const written = Date.now();
    expect(stops).toBeGreaterThan(0);
    const stored = await storeIds(reader);
    // No announcement is needed: the socket's sequence check finds what it missed.
    await expect.poll(() => socketIds(reader), { timeout: 15_000, interval: 20 }).toEqual(stored);
    console.info(
      `worker stopped ${stops} times during 200 creates from another tab; ${stored.length} stored; the socket had them all ${Date.now() - written} ms after the last write`,
    );
    expect(await socketIds(reader)).toEqual(stored);
    expect(await reader.evaluate(() => [window.streamSocket!.readyState, window.closeCodes])).toEqual([1, []]);
  });
});

describe('a socket on a database that is wiped', () => {
  it('closes with 4001; the demo reconnects and shows the new, empty database as live', async () => {
    const context = await newContext();
    const page = await openDemo(context);
    await page.evaluate(async () => {
      await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"type":"COPILOT","name":"ghost"}',
      });
    });
    await page.waitForFunction(() => document.querySelector('#conversation-count')?.textContent === '1');
    await listen(page);
    await page.evaluate(() => {
      window.closeCodes = [];
      window.streamSocket!.addEventListener('close', (event) => window.closeCodes.push((event as CloseEvent).code));
    });
    await page.evaluate(
      () =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.deleteDatabase('pieces-os-worker');
          request.onsuccess = () => resolve();
          request.onerror = () => reject(request.error);
        }),
    );
    await page.waitForFunction(() => window.closeCodes.length > 0, undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => window.closeCodes)).toEqual([4001]);
    // The demo's own socket closed the same way; it reconnected to the new database.
    await page.waitForFunction(() => document.querySelector('#conversation-count')?.textContent === '0', undefined, { timeout: 15_000 });
    await page.waitForSelector('#stream-state[data-state="open"]');
    expect(await listen(page)).toEqual([]);
  });
});

describe('the page when its worker is unregistered and the site data cleared (as Clear-Site-Data does)', () => {
  it('says lost, starts the service again, says recovered, and works', async () => {
    const context = await newContext();
    const page = await openDemo(context);
    await page.evaluate(() => {
      window.pillStates = [];
      const pill = document.querySelector('#status')!;
      new MutationObserver(() => window.pillStates.push(`${pill.getAttribute('data-state')}: ${pill.textContent}`)).observe(pill, {
        attributes: true,
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration();
      await registration!.unregister();
      await new Promise<void>((resolve) => {
        const request = indexedDB.deleteDatabase('pieces-os-worker');
        request.onsuccess = request.onerror = request.onblocked = () => resolve();
      });
    });
    // Lost (the registration is gone), then recovered after it (the worker registered again).
    // The wiped database alone may say recovered before the loss is seen: only what follows the loss counts.
    await page.waitForFunction(
      () => {
        const lost = window.pillStates.findIndex((s) => s.startsWith('lost: Worker lost: the worker was unregistered'));
        return lost >= 0 && window.pillStates.slice(lost).some((s) => /^ready: .*recovered/.test(s));
      },
      undefined,
      { timeout: 20_000 },
    );
    expect(await page.getAttribute('#status', 'data-state')).toBe('ready');
    const status = await page.evaluate(async () => {
      const response = await fetch('http://localhost:1000/conversations/create', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"type":"COPILOT"}',
      });
      return response.status;
    });
    expect(status).toBe(200);
    await page.waitForSelector('#stream-state[data-state="open"]');
  });
});
