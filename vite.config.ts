/**
 * One config, four builds, chosen by mode:
 *   vite build --mode worker  → dist/pieces-os-worker.js (self-contained classic script)
 *   vite build --mode lib     → dist/index.js (ESM page library), dist/worker.js, dist/core.js
 *   vite build --mode node    → dist/node.js and dist/core.node.js (Node: no browser globals read)
 *   vite [serve|build]        → the demo (root demo/, static files from public/)
 * Vitest reads the `test` block.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { BuildEnvironmentOptions, Plugin, UserConfig } from 'vite';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/** Where the examples' package build goes (not dist/, which the package test rebuilds meanwhile). */
export const EXAMPLES_BUILD = resolve(import.meta.dirname, 'node_modules/.cache/pieces-os-worker-examples');

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };
const define = { __PIECES_VERSION__: JSON.stringify(version) };
/**
 * The demo and the test pages: PIECES_FAST_PATH=off builds them with `fastPath: false`
 * (the browser suite then proves the fetch path alone serves everything).
 */
export const pageDefine = { ...define, __PIECES_FAST_PATH__: JSON.stringify(process.env.PIECES_FAST_PATH !== 'off') };

/** The production builds of the package: workbox-routing's asserts and logs compiled out. */
const packageBuild = (build: BuildEnvironmentOptions): UserConfig => ({
  define: { ...define, 'process.env.NODE_ENV': JSON.stringify('production') },
  publicDir: false,
  build: { outDir: 'dist', emptyOutDir: false, target: 'es2022', ...build },
});

/**
 * The files whose pages send requests through the page library to the worker, and whose answers
 * therefore depend on the path they take (the fast path, or the worker's fetch handler): a
 * PIECES_FAST_PATH=off run runs only these. The others test what does not take that path (page
 * mode, the loopback server, the examples' own builds, the demo's UI) or what lies behind it (the
 * store, its kept snapshots and index, the mirror), the same either way.
 */
const FETCH_PATH_FILES = [
  'bodies',
  'clients',
  'copilot',
  'copilot-stream',
  'fast-path',
  'materials',
  'package',
  'reliability',
  'snippets',
  'stale-sockets',
  'start-ups',
  'startup',
  'stream',
  'worker',
].map((name) => `test/browser/${name}.test.ts`);

/**
 * The browser suite, once per engine: the same test files over the driver of
 * the engine PIECES_BROWSER names. One engine at a time (groupOrder), one file at a time.
 */
const browserProject = {
  environment: 'node',
  include: process.env.PIECES_FAST_PATH === 'off' ? FETCH_PATH_FILES : ['test/browser/**/*.test.ts'],
  globalSetup: ['test/browser/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  fileParallelism: false,
};

/**
 * The Node entries. idb's IndexedDB globals are bound to fake-indexeddb's
 * classes: storage runs in memory, and no global is read or patched.
 */
export const nodeBuild = (outDir: string): UserConfig => {
  const fake = (name: string): [string, string] => ['fake-indexeddb', name];
  const idbGlobals = ['IDBCursor', 'IDBDatabase', 'IDBIndex', 'IDBKeyRange', 'IDBObjectStore', 'IDBRequest', 'IDBTransaction', 'indexedDB'];
  return {
    define: { ...define, 'process.env.NODE_ENV': JSON.stringify('production') },
    publicDir: false,
    build: {
      outDir,
      emptyOutDir: false,
      target: 'node20',
      ssr: true,
      lib: {
        entry: {
          node: resolve(import.meta.dirname, 'src/node/index.ts'),
          'core.node': resolve(import.meta.dirname, 'src/core/index.ts'),
        },
        formats: ['es'],
      },
      rolldownOptions: {
        external: [/^node:/, 'ws', 'fake-indexeddb', /^@mswjs\/interceptors/, 'mock-socket'],
        transform: { inject: Object.fromEntries(idbGlobals.map((name) => [name, fake(name)])) },
      },
    },
    ssr: { noExternal: ['idb'] },
  };
};

/**
 * The demo's choice lists of SDK enumerations, filled in the HTML as served, so
 * that they are there at first paint: `<select data-enum="PlatformEnum"
 * data-selected="LINUX"></select>` gets one option per value of that enumeration
 * of the SDK (the values as the SDK 4.1.0 has them, in its order).
 */
function sdkEnumChoices(): Plugin {
  const require = createRequire(import.meta.url);
  const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return {
    name: 'demo-sdk-enum-choices',
    transformIndexHtml: (html) =>
      html.replace(/(<select\b[^>]*\bdata-enum="([^"]*)"[^>]*>)\s*<\/select>/g, (_all, open: string, name: string) => {
        if (!/^\w+Enum$/.test(name)) throw new Error(`data-enum="${name}" is not an SDK enumeration name.`);
        const values = Object.values(require(`@pieces.app/pieces-os-client/dist/models/${name}.js`)[name] as Record<string, string>);
        const selected = /\bdata-selected="([^"]*)"/.exec(open)?.[1];
        const options = values.map(
          (value) => `<option value="${escapeHtml(value)}"${value === selected ? ' selected' : ''}>${escapeHtml(value)}</option>`,
        );
        return `${open}${options.join('')}</select>`;
      }),
  };
}

function examplesProject(name: string, test: TestProjectInlineConfiguration['test']): TestProjectInlineConfiguration {
  return {
    extends: true,
    resolve: { alias: [{ find: /^pieces-os-worker\/node$/, replacement: resolve(EXAMPLES_BUILD, name, 'dist/node.js') }] },
    test: { name, globalSetup: ['examples/global-setup.ts'], ...test },
  };
}

export default defineConfig(({ mode }) => {
  if (mode === 'worker') {
    return packageBuild({
      minify: true,
      lib: {
        entry: resolve(import.meta.dirname, 'src/worker/sw.ts'),
        formats: ['iife'],
        name: 'PiecesOsWorker',
        fileName: () => 'pieces-os-worker.js',
      },
    });
  }
  if (mode === 'node') return nodeBuild('dist');
  if (mode === 'lib') {
    return packageBuild({
      lib: {
        entry: {
          index: resolve(import.meta.dirname, 'src/page/index.ts'),
          worker: resolve(import.meta.dirname, 'src/worker/index.ts'),
          core: resolve(import.meta.dirname, 'src/core/index.ts'),
          vite: resolve(import.meta.dirname, 'src/vite/index.ts'),
        },
        formats: ['es'],
      },
      rollupOptions: {
        external: [
          /^node:/,
          'vite',
          /^workbox-routing/,
          'idb',
          'mock-socket',
          /^eventsource-parser/,
          /^@mswjs\/interceptors/,
          /^fake-indexeddb/,
        ],
      },
    });
  }
  return {
    root: resolve(import.meta.dirname, 'demo'),
    publicDir: resolve(import.meta.dirname, 'public'),
    define: pageDefine,
    plugins: [sdkEnumChoices()],
    // The demo imports the package by its name, as an app does: here, its sources.
    resolve: {
      alias: [
        { find: /^pieces-os-worker$/, replacement: resolve(import.meta.dirname, 'src/page/index.ts') },
        { find: /^pieces-os-worker\/core$/, replacement: resolve(import.meta.dirname, 'src/core/index.ts') },
      ],
    },
    build: { outDir: resolve(import.meta.dirname, 'dist/demo'), emptyOutDir: true, target: 'es2022' },
    server: { host: '127.0.0.1' },
    // Any host name: the insecure-origin tests reach the demo under another name.
    preview: { host: '127.0.0.1', allowedHosts: true },
    test: {
      root: import.meta.dirname,
      projects: [
        {
          extends: true,
          test: {
            name: 'unit',
            environment: 'happy-dom',
            include: ['test/unit/**/*.test.ts'],
            setupFiles: ['test/unit/support/setup.ts'],
            // Two shared cores run every file at once: a time limit guards against hangs, never measures speed.
            testTimeout: 30_000,
          },
        },
        // The examples of the README, as a user runs them: `pieces-os-worker/node` is the
        // package's build, made by examples/global-setup.ts into a folder of each project.
        ...(['node', 'jsdom', 'happy-dom'] as const).map((environment) =>
          examplesProject(`examples-${environment}`, { environment, include: ['examples/vitest/**/*.test.ts'] }),
        ),
        // The Playwright, loopback-server and Jest examples: real Chromium, the real CLI, Jest itself.
        examplesProject('examples-e2e', {
          environment: 'node',
          include: ['examples/playwright/**/*.test.ts', 'examples/serve/**/*.test.ts', 'examples/jest/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        }),
        {
          // Chromium (Debian's, or CHROME_PATH) driven by playwright-core: see test/browser/engine.ts.
          extends: true,
          test: { ...browserProject, name: 'browser', env: { PIECES_BROWSER: 'chromium' }, sequence: { groupOrder: 1 } },
        },
        {
          // Firefox ESR (Debian's, or FIREFOX_PATH) driven by puppeteer-core over WebDriver BiDi.
          extends: true,
          test: { ...browserProject, name: 'browser-firefox', env: { PIECES_BROWSER: 'firefox' }, sequence: { groupOrder: 2 } },
        },
        {
          // WebKitGTK's MiniBrowser (Debian's webkit2gtk-driver) under Xvfb, driven by selenium-webdriver.
          extends: true,
          test: { ...browserProject, name: 'browser-webkit', env: { PIECES_BROWSER: 'webkit' }, sequence: { groupOrder: 3 } },
        },
        {
          // npm run bench (BENCH=smoke for the short version); not part of npm test.
          extends: true,
          test: {
            name: 'bench',
            environment: 'node',
            include: ['test/bench/**/*.bench.ts'],
            testTimeout: 30 * 60_000,
            fileParallelism: false,
          },
        },
      ],
    },
  };
});
