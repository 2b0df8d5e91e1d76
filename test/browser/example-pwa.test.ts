/**
 * examples/vite-pwa in Chromium: an app whose own service worker (Workbox
 * precaching, built by vite-plugin-pwa's injectManifest) carries the service
 * through addPiecesRoutes(), and whose page attaches to it with
 * startPiecesService({ register: false }); in development (the worker is
 * /dev-sw.js?dev-sw, an ES module) and from the production build.
 */
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createServer, preview, type PreviewServer, type ViteDevServer } from 'vite';
import { engine, launch, type BrowserContext } from './engine.js';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');
const example = join(root, 'examples/vite-pwa');
const configFile = join(example, 'vite.config.js');

// The package and the example are engine-independent: built and run once, in Chromium.
describe.skipIf(engine.name !== 'chromium')('the vite-plugin-pwa example', () => {
  let dev: ViteDevServer;
  let built: PreviewServer;

  beforeAll(async () => {
    // The package as `npm install` of `file:../..` leaves it: a link to this repository, built.
    await build({ configFile: join(root, 'vite.config.ts'), mode: 'lib', logLevel: 'warn' });
    const link = join(example, 'node_modules/pieces-os-worker');
    mkdirSync(join(example, 'node_modules'), { recursive: true });
    if (!existsSync(link)) symlinkSync(root, link, 'dir');
    dev = await createServer({
      configFile,
      root: example,
      logLevel: 'warn',
      server: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
    });
    await dev.listen();
    rmSync(join(example, 'dist'), { recursive: true, force: true });
    await build({ configFile, root: example, logLevel: 'warn' });
    built = await preview({
      configFile,
      root: example,
      logLevel: 'warn',
      preview: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
    });
  }, 180_000);

  afterAll(async () => {
    await dev?.close();
    await built?.close();
  });

  for (const which of ['development', 'production'] as const) {
    describe(which, () => {
      let context: BrowserContext;

      beforeAll(async () => {
        ({ context } = await launch());
      });

      afterAll(async () => {
        await context?.close();
      });

      it("answers the API from the app's own worker, on the first load and after a reload", async () => {
        const origin = (which === 'development' ? dev.resolvedUrls!.local[0]! : built.resolvedUrls!.local[0]!).replace(/\/$/, '');
        const page = await context.newPage();
        await page.goto(`${origin}/`);
        await page.waitForSelector('#out[data-created]');
        // One load: the dev server found every dependency (the worker's too) at start-up, so it
        // did not re-bundle and reload the page while the worker installed.
        expect(page.console.filter((line) => line.text === '[vite] connecting...').length).toBeLessThanOrEqual(1);
        expect(await page.getAttribute('#out', 'data-mode')).toBe('worker');
        expect(await page.getAttribute('#out', 'data-script')).toBe(
          which === 'development' ? `${origin}/dev-sw.js?dev-sw` : `${origin}/sw.js`,
        );
        const first = await page.getAttribute('#out', 'data-created');
        await page.reload();
        await page.waitForSelector('#out[data-created]');
        const second = await page.getAttribute('#out', 'data-created');
        expect(second).not.toBe(first);
        // Both conversations are in the worker's store, listed by the page.
        expect(await page.textContent('#conversations')).toContain(first!);
        expect(await page.textContent('#conversations')).toContain(second!);
        // A request the page library does not see (an iframe's own fetch; the page's go over the
        // fast path) goes through the worker's fetch handler: the app's Workbox router, which
        // carries the service's routes. Nothing listens on localhost:1000: the worker answers.
        const viaRouter = await page.evaluate(async () => {
          const frame = document.createElement('iframe');
          frame.srcdoc = '<!doctype html><title>frame</title>';
          const loaded = new Promise((resolve) => (frame.onload = resolve));
          document.body.append(frame);
          await loaded;
          const response = await (frame.contentWindow as unknown as typeof globalThis).fetch(
            'http://localhost:1000/conversations/identifiers',
          );
          return {
            status: response.status,
            ids: ((await response.json()) as { iterable: Array<{ id: string }> }).iterable.map((i) => i.id),
          };
        });
        expect(viaRouter).toMatchObject({ status: 200 });
        expect(viaRouter.ids).toEqual(expect.arrayContaining([first, second]));
        if (which === 'production') {
          // The app's precaching runs beside the service: its shell is in the cache.
          const cached = await page.evaluate(async () => (await caches.keys()).some((name) => name.includes('precache')));
          expect(cached).toBe(true);
        }
        await page.close();
      });
    });
  }
});
