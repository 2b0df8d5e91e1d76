/**
 * The package as users get it: `npm pack`, installed into a fresh minimal
 * Vite app, set up by the README's steps (`pieces-os-worker init public`,
 * `startPiecesService()`), built and opened in the browser. With
 * PIECES_FAST_PATH=off the app passes `fastPath: false`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, preview, type PreviewServer } from 'vite';
import { launch, type BrowserContext, type Page } from './engine.js';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');
const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the packed package in a fresh Vite app', () => {
  let app: string;
  let server: PreviewServer;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    const packs = mkdtempSync(join(tmpdir(), 'pieces-pack-'));
    npm(['pack', '--pack-destination', packs], root);
    const tarball = join(packs, readdirSync(packs).find((f) => f.endsWith('.tgz'))!);

    app = mkdtempSync(join(tmpdir(), 'pieces-app-'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }));
    writeFileSync(
      join(app, 'index.html'),
      '<!doctype html><html><body><p id="out">starting</p><script type="module" src="/main.js"></script></body></html>',
    );
    writeFileSync(
      join(app, 'main.js'),
      `import { startPiecesService } from 'pieces-os-worker';
const out = document.getElementById('out');
await startPiecesService({ quiet: true${process.env.PIECES_FAST_PATH === 'off' ? ', fastPath: false' : ''} });
const created = await (await fetch('http://localhost:1000/conversations/create', {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'COPILOT', name: 'from the app' }),
})).json();
const first = await new Promise((resolve, reject) => {
  const socket = new WebSocket('ws://localhost:1000/conversations/stream/identifiers');
  socket.onmessage = (event) => { resolve(JSON.parse(event.data)); socket.close(); };
  socket.onerror = () => reject(new Error('stream failed'));
});
out.dataset.created = created.id;
out.dataset.streamed = first.iterable.map((i) => i.conversation.id).join(',');
out.textContent = 'done';
`,
    );
    npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], app);
    execFileSync(join(app, 'node_modules/.bin/pieces-os-worker'), ['init', 'public'], { cwd: app });
    await build({ root: app, configFile: false, logLevel: 'warn', build: { outDir: join(app, 'dist'), target: 'es2022' } });
    server = await preview({
      root: app,
      configFile: false,
      logLevel: 'warn',
      build: { outDir: join(app, 'dist') },
      preview: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
    });
    ({ context } = await launch());
    page = await context.newPage();
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  it('installs with types, the worker script and the init command', () => {
    const installed = join(app, 'node_modules/pieces-os-worker');
    for (const file of [
      'dist/index.js',
      'dist/worker.js',
      'dist/core.js',
      'dist/core.node.js',
      'dist/node.js',
      'dist/pieces-os-worker.js',
      'dist/types/page/index.d.ts',
      'dist/types/node/index.d.ts',
    ]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    expect(existsSync(join(app, 'public/pieces-os-worker.js'))).toBe(true);
  });

  it("answers the app's fetch and WebSocket from the installed worker", async () => {
    const address = server.httpServer.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    await page.goto(`http://127.0.0.1:${address.port}/`);
    await page.waitForSelector('#out[data-streamed]');
    const created = await page.getAttribute('#out', 'data-created');
    expect(created).toMatch(/^[0-9a-f-]{36}$/);
    expect((await page.getAttribute('#out', 'data-streamed'))!.split(',')).toEqual([created]);
  });

  it('runs pieces-os-worker/node and /core in plain Node: no global added, nothing printed, requests answered', () => {
    const script = `
      const before = new Set(Object.getOwnPropertyNames(globalThis));
      const { setupPiecesServer } = await import('pieces-os-worker/node');
      const { createService, openStorage } = await import('pieces-os-worker/core');
      const added = Object.getOwnPropertyNames(globalThis).filter((name) => !before.has(name) && name !== '__MSW_INTERCEPTORS_REGISTRY');
      const server = setupPiecesServer();
      server.listen();
      const ids = await (await fetch('http://localhost:1000/assets/identifiers')).json();
      const { request } = await import('node:http');
      const viaHttp = await new Promise((resolve, reject) =>
        request('http://localhost:39300/.well-known/health', (res) => res.on('data', (chunk) => resolve(String(chunk)))).on('error', reject).end());
      server.close();
      const core = createService({ storage: await openStorage() });
      const health = await core.handle(new Request('http://localhost:1000/.well-known/health'));
      process.stdout.write(JSON.stringify({ added, assets: ids.iterable.length, viaHttp, health: await health.text() }));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: '' },
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ added: [], assets: 4, viaHttp: 'ok', health: 'ok' });
  });

  it('serves on loopback from the installed command', async () => {
    const child = spawn(join(app, 'node_modules/.bin/pieces-os-worker'), ['serve', '--port', '0'], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          const match = /answering (http:\/\/\S+)/.exec(out);
          if (match) resolveUrl(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
      });
      const response = await fetch(`${url}/conversations/identifiers`);
      expect([response.status, await response.text()]).toEqual([200, '{"iterable":[]}']);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
