/**
 * One config, three builds, chosen by mode:
 *   vite build --mode worker  → dist/pieces-os-worker.js (self-contained classic script)
 *   vite build --mode lib     → dist/index.js (ESM page library)
 *   vite [serve|build]        → the demo (root demo/, static files from public/)
 * Vitest reads the `test` block.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BuildEnvironmentOptions, UserConfig } from 'vite';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };
const define = { __PIECES_VERSION__: JSON.stringify(version) };

/** The production builds of the package: workbox-routing's asserts and logs compiled out. */
const packageBuild = (build: BuildEnvironmentOptions): UserConfig => ({
  define: { ...define, 'process.env.NODE_ENV': JSON.stringify('production') },
  publicDir: false,
  build: { outDir: 'dist', emptyOutDir: false, target: 'es2022', ...build },
});

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
  if (mode === 'lib') {
    return packageBuild({
      lib: {
        entry: {
          index: resolve(import.meta.dirname, 'src/page/index.ts'),
          worker: resolve(import.meta.dirname, 'src/worker/index.ts'),
          core: resolve(import.meta.dirname, 'src/core/index.ts'),
        },
        formats: ['es'],
      },
      rollupOptions: { external: ['workbox-routing', 'idb', 'mock-socket'] },
    });
  }
  return {
    root: resolve(import.meta.dirname, 'demo'),
    publicDir: resolve(import.meta.dirname, 'public'),
    define,
    build: { outDir: resolve(import.meta.dirname, 'dist/demo'), emptyOutDir: true, target: 'es2022' },
    server: { host: '127.0.0.1' },
    preview: { host: '127.0.0.1' },
    test: {
      root: import.meta.dirname,
      projects: [
        {
          extends: true,
          test: {
            name: 'unit',
            environment: 'happy-dom',
            include: ['test/unit/**/*.test.ts'],
            setupFiles: ['test/unit/setup.ts'],
            // Two shared cores run every file at once: a time limit guards against hangs, never measures speed.
            testTimeout: 30_000,
          },
        },
        {
          // Real Chromium (Debian's, or CHROME_PATH) driven by playwright-core: see test/browser/engine.ts.
          extends: true,
          test: {
            name: 'browser',
            env: { PIECES_BROWSER: 'chromium' },
            environment: 'node',
            include: ['test/browser/**/*.test.ts'],
            globalSetup: ['test/browser/global-setup.ts'],
            testTimeout: 60_000,
            hookTimeout: 120_000,
            fileParallelism: false,
          },
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
