/**
 * Builds the worker and the demo once, and serves the demo on 127.0.0.1 for
 * the whole browser suite. Tests read the URL from `inject('demoUrl')`.
 *
 * What the suite makes in the temporary folder (browser profiles, which tests
 * reopen across restarts, builds, packed apps) goes in one folder of the run,
 * removed when the run ends: several gigabytes a run otherwise.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { build, preview } from 'vite';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');

declare module 'vitest' {
  export interface ProvidedContext {
    demoUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // Read by tmpdir() in the test files' processes, which start after this.
  const scratch = mkdtempSync(join(tmpdir(), 'pieces-run-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  const configFile = resolve(root, 'vite.config.ts');
  mkdirSync(resolve(root, 'public'), { recursive: true });
  // A worker that reports another version, for the version-mismatch test.
  await build({ configFile, mode: 'worker', logLevel: 'warn', define: { __PIECES_VERSION__: JSON.stringify('0.0.0-stale') } });
  copyFileSync(resolve(root, 'dist/pieces-os-worker.js'), resolve(root, 'public/pieces-os-worker-stale.js'));
  await build({ configFile, mode: 'worker', logLevel: 'warn' });
  copyFileSync(resolve(root, 'dist/pieces-os-worker.js'), resolve(root, 'public/pieces-os-worker.js'));
  // The demo is built outside dist/, which the package test rebuilds.
  const outDir = join(mkdtempSync(join(tmpdir(), 'pieces-demo-')), 'demo');
  await build({ configFile, logLevel: 'warn', build: { outDir } });
  // The client-flow page (the SDK 4.1.0 on window), served under the worker's scope at /clients/.
  await build({
    configFile,
    logLevel: 'warn',
    root: resolve(root, 'test/browser/clients'),
    base: '/clients/',
    publicDir: false,
    build: { outDir: join(outDir, 'clients'), emptyOutDir: true, chunkSizeWarningLimit: 4096 },
  });
  // A React app built like Pieces's example web app (the SDK's default base, localhost:1000), at /snippets-app/.
  await build({
    configFile,
    logLevel: 'warn',
    root: resolve(root, 'test/browser/snippets-app'),
    base: '/snippets-app/',
    publicDir: false,
    build: { outDir: join(outDir, 'snippets-app'), emptyOutDir: true, chunkSizeWarningLimit: 4096 },
  });
  // A blank page of the demo's origin with no Content-Security-Policy, for requests the demo's policy would refuse.
  writeFileSync(join(outDir, 'probe.html'), '<!doctype html><title>probe</title>\n');
  const server = await preview({
    configFile,
    logLevel: 'warn',
    build: { outDir },
    preview: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
    plugins: [
      {
        // What a site's "log out and forget me" answer does: /clear-site-data answers with Clear-Site-Data.
        name: 'clear-site-data',
        configurePreviewServer(preview) {
          preview.middlewares.use('/clear-site-data', (_request, response) => {
            response.setHeader('Clear-Site-Data', '"storage"');
            response.setHeader('Content-Type', 'text/plain');
            response.end('cleared');
          });
        },
      },
    ],
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('The demo server has no port.');
  project.provide('demoUrl', `http://127.0.0.1:${address.port}/`);
  return async () => {
    await server.close();
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  };
}
