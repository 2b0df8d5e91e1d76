/**
 * The package installed from git (a clone of this repository): `prepare`
 * builds dist/ with no engine warnings; the public types compile with
 * `skipLibCheck: false` and export no internals; `init --save` is refreshed by
 * every install; the Vite plugin serves the worker in dev and emits it in the
 * build, with no copy in public/, and the app runs in Chromium both ways.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createServer, preview, type PreviewServer, type ViteDevServer } from 'vite';
import { engine, launch, type BrowserContext } from './engine.js';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/.bin/tsc');
const run = (file: string, args: string[], cwd: string) =>
  execFileSync(file, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, INIT_CWD: cwd } });
/** stdout and stderr of an npm command together (npm warns on stderr). */
const npm = (args: string[], cwd: string) =>
  execFileSync('sh', ['-c', `npm ${args.map((a) => `'${a}'`).join(' ')} 2>&1`], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const version = (name: string) =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const TYPES = `import { startPiecesService, addAssets, reportExternalApplications, PiecesServiceError, type PiecesService, type StartOptions } from 'pieces-os-worker';
import { addPiecesRoutes, createPiecesWorker, startWorker, type WorkerOptions } from 'pieces-os-worker/worker';
import { createService, openStorage, OPERATIONS } from 'pieces-os-worker/core';
// @ts-expect-error internal: not exported
import { askWorker } from 'pieces-os-worker';
// @ts-expect-error internal: not exported
import type { PageRequest } from 'pieces-os-worker';
// @ts-expect-error internal: not exported
import type { ConversationRecord } from 'pieces-os-worker/core';

const options: StartOptions = { register: false, type: 'module', fallback: false };
const service: PiecesService = await startPiecesService(options);
const mode: 'worker' | 'page' = service.mode;
await addAssets([{ name: 'a.ts', text: 'x' }]);
await reportExternalApplications([{ name: 'Obsidian' }]);
const workerOptions: WorkerOptions = { bases: ['http://localhost:1000'] };
addPiecesRoutes(undefined, workerOptions);
createPiecesWorker(workerOptions).respond(new Request('http://localhost:1000/applications'));
void startWorker;
const core = createService({ storage: await openStorage() });
await core.handle(new Request('http://localhost:1000/applications'));
console.log(OPERATIONS.length, mode, PiecesServiceError);
`;

const MAIN = `import { startPiecesService } from 'pieces-os-worker';
const out = document.getElementById('out');
const service = await startPiecesService({ quiet: true });
const response = await fetch('http://localhost:1000/conversations/create', {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'COPILOT', name: 'from the app' }),
});
out.dataset.mode = service.mode;
out.dataset.status = String(response.status);
out.textContent = 'done';
`;

// The package and the example are engine-independent: built and run once, in Chromium.
describe.skipIf(engine.name !== 'chromium')('installed from git', () => {
  let app: string;
  let installLog: string;
  let context: BrowserContext;

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), 'pieces-git-'));
    const clone = join(work, 'pieces-os-worker');
    execFileSync('git', ['clone', '--quiet', root, clone]);
    app = join(work, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'an-app', private: true, type: 'module' }, null, 2)}\n`);
    installLog = npm(['install', '--no-audit', '--no-fund', '--prefer-offline', `git+file://${clone}`], app);
    npm(
      ['install', '--no-audit', '--no-fund', '--prefer-offline', `vite@${version('vite')}`, `@types/node@${version('@types/node')}`],
      app,
    );
    ({ context } = await launch());
  }, 300_000);

  afterAll(async () => {
    await context?.close();
  });

  it('builds dist/ through prepare, with no engine warnings', () => {
    const installed = join(app, 'node_modules/pieces-os-worker');
    for (const file of [
      'dist/index.js',
      'dist/worker.js',
      'dist/core.js',
      'dist/vite.js',
      'dist/pieces-os-worker.js',
      'dist/types/page/index.d.ts',
    ]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    expect(installLog).not.toContain('EBADENGINE');
  });

  it('type-checks the public API with skipLibCheck: false, internals not exported', () => {
    writeFileSync(join(app, 'src/api.ts'), TYPES);
    const strict = { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, skipLibCheck: false, noEmit: true };
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...strict, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] }, include: ['src'] }),
    );
    writeFileSync(
      join(app, 'vite.config.ts'),
      "import { defineConfig } from 'vite';\nimport { piecesOsWorker } from 'pieces-os-worker/vite';\n\nexport default defineConfig({ plugins: [piecesOsWorker()] });\n",
    );
    writeFileSync(
      join(app, 'tsconfig.node.json'),
      JSON.stringify({ compilerOptions: { ...strict, lib: ['ESNext'], types: ['node'] }, include: ['vite.config.ts'] }),
    );
    expect(() => run(tsc, ['-p', 'tsconfig.json'], app)).not.toThrow();
    expect(() => run(tsc, ['-p', 'tsconfig.node.json'], app)).not.toThrow();
  });

  it('init --save remembers the folder; the next install refreshes the copy', () => {
    const bin = join(app, 'node_modules/.bin/pieces-os-worker');
    const copy = join(app, 'static/pieces-os-worker.js');
    expect(run(bin, ['init', 'static', '--save'], app)).toContain('[pieces-os-worker] saved "static" in package.json');
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))['pieces-os-worker']).toEqual({ workerDirectory: ['static'] });
    writeFileSync(copy, '// an old copy');
    expect(npm(['rebuild', 'pieces-os-worker', '--foreground-scripts'], app)).toContain(
      '[pieces-os-worker] refreshed static/pieces-os-worker.js',
    );
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(join(app, 'node_modules/pieces-os-worker/dist/pieces-os-worker.js'), 'utf8'));
  });

  describe('the Vite plugin, with no copy in public/', () => {
    let dev: ViteDevServer;
    let built: PreviewServer;

    beforeAll(async () => {
      rmSync(join(app, 'static'), { recursive: true, force: true });
      writeFileSync(
        join(app, 'index.html'),
        '<!doctype html><html><body><p id="out"></p><script type="module" src="/main.js"></script></body></html>',
      );
      writeFileSync(join(app, 'main.js'), MAIN);
      const configFile = join(app, 'vite.config.ts');
      dev = await createServer({
        root: app,
        configFile,
        logLevel: 'warn',
        server: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
      });
      await dev.listen();
      await build({ root: app, configFile, logLevel: 'warn', build: { outDir: join(app, 'dist'), target: 'es2022' } });
      built = await preview({
        root: app,
        configFile,
        logLevel: 'warn',
        build: { outDir: join(app, 'dist') },
        preview: { port: await freePort(), strictPort: true, host: '127.0.0.1' },
      });
    }, 120_000);

    afterAll(async () => {
      await dev?.close();
      await built?.close();
    });

    const script = () => readFileSync(join(app, 'node_modules/pieces-os-worker/dist/pieces-os-worker.js'), 'utf8');

    it('serves the installed worker script in dev and emits it into the build', async () => {
      expect(existsSync(join(app, 'public/pieces-os-worker.js'))).toBe(false);
      const served = await fetch(new URL('/pieces-os-worker.js', dev.resolvedUrls!.local[0]));
      expect(served.headers.get('content-type')).toContain('javascript');
      expect(await served.text()).toBe(script());
      expect(readFileSync(join(app, 'dist/pieces-os-worker.js'), 'utf8')).toBe(script());
    });

    for (const which of ['dev', 'build'] as const) {
      it(`runs the app in Chromium from the ${which} server, in worker mode`, async () => {
        const url = which === 'dev' ? dev.resolvedUrls!.local[0]! : built.resolvedUrls!.local[0]!;
        const page = await context.newPage();
        await page.goto(url);
        await page.waitForSelector('#out[data-status]');
        expect(await page.getAttribute('#out', 'data-mode')).toBe('worker');
        expect(await page.getAttribute('#out', 'data-status')).toBe('200');
        await page.close();
      });
    }
  });
});
