/** The benchmark's pages (test/bench/pages) and the worker script, built into a site of their own, served with cross-origin isolation. */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { build, preview, type PreviewServer } from 'vite';
import type { BrowserContext, Page } from 'playwright-core';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');

export interface SiteOptions {
  /** The pages to build, by name (`ours` is the page library as an app uses it). */
  pages?: string[];
  /** Files copied beside them: name in the site → path. */
  files?: Record<string, string>;
  /** Minified builds (default); a profile reads unminified names. */
  minify?: boolean;
}

/** Builds the worker script and the pages into a new temporary folder; returns it. */
export async function buildSite(name: string, { pages = ['ours'], files = {}, minify = true }: SiteOptions = {}): Promise<string> {
  await build({
    configFile: resolve(root, 'vite.config.ts'),
    mode: 'worker',
    logLevel: 'warn',
    ...(minify ? {} : { build: { minify: false } }),
  });
  const outDir = join(mkdtempSync(join(tmpdir(), `pieces-bench-${name}-`)), 'site');
  const from = resolve(import.meta.dirname, 'pages');
  await build({
    configFile: false,
    root: from,
    logLevel: 'warn',
    define: { __PIECES_VERSION__: JSON.stringify('bench') },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      minify,
      rollupOptions: { input: Object.fromEntries(pages.map((page) => [page, join(from, `${page}.html`)])) },
    },
  });
  copyFileSync(resolve(root, 'dist/pieces-os-worker.js'), join(outDir, 'pieces-os-worker.js'));
  for (const [target, source] of Object.entries(files)) copyFileSync(source, join(outDir, target));
  return outDir;
}

/** Serves a built site on a free loopback port, cross-origin isolated (the pages get 5 µs timers instead of 100 µs). */
export async function serveSite(outDir: string): Promise<{ server: PreviewServer; origin: string }> {
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
  const server = await preview({
    configFile: false,
    root: dirname(outDir),
    logLevel: 'warn',
    build: { outDir: basename(outDir) },
    preview: { port: await freePort(), strictPort: true, host: '127.0.0.1', headers: isolation },
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

/** Opens a bench page and waits until it says it is ready. */
export async function openReady(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector('#status:text("ready")', { timeout: 30_000 });
  return page;
}

/**
 * Opens a bench page as the second page of its origin, the first one left open: the worker then
 * runs in the renderer process of the page that started it, and this page reaches it across
 * processes, as every page after an app's first does (a worker started for the fast-path page and
 * read through its fetch handler from another). In Chromium that crossing costs about 0.3 ms per
 * fetch on these machines, so a floor compared with such a page is opened the same way.
 */
export async function openBehind(context: BrowserContext, url: string): Promise<Page> {
  await openReady(context, url);
  return openReady(context, url);
}

/** Times `count` sequential GETs of `url` inside the page, each answer read whole; each duration in ms. */
export const timeReads = (page: Page, url: string, count: number) =>
  page.evaluate(
    async ({ url, count }) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        await (await fetch(url)).text();
        times.push(performance.now() - start);
      }
      return times;
    },
    { url, count },
  );
