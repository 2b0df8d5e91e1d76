/**
 * Builds the lab page and serves it with the worker scripts the start-up
 * tests need: the current and a stale build, a missing one, an HTML page
 * where the script should be, a worker that is not ours, and an app's own
 * module worker that is only valid with its query (as vite-plugin-pwa's
 * `/dev-sw.js?dev-sw`).
 */
import { readFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { build } from 'vite';
import { freePort } from '../free-port.js';

const root = resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

export interface Lab {
  origin: string;
  port: number;
  /** Which build `/switch.js` serves. */
  serve(which: 'stale' | 'current'): void;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html', '.css': 'text/css' };

export async function startLab(): Promise<Lab> {
  const outDir = join(mkdtempSync(join(tmpdir(), 'pieces-lab-')), 'lab');
  await build({
    configFile: false,
    root: resolve(import.meta.dirname, 'lab'),
    logLevel: 'warn',
    define: {
      __PIECES_VERSION__: JSON.stringify(version),
      __PIECES_FAST_PATH__: JSON.stringify(process.env.PIECES_FAST_PATH !== 'off'),
      'process.env.NODE_ENV': JSON.stringify('production'),
    },
    build: { outDir, target: 'es2022', emptyOutDir: true },
  });
  // Built by the browser suite's global setup.
  const current = readFileSync(join(root, 'public/pieces-os-worker.js'));
  const stale = readFileSync(join(root, 'public/pieces-os-worker-stale.js'));
  const html = readFileSync(join(outDir, 'index.html'));
  let switched: Buffer = stale;

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://lab');
    const send = (status: number, type: string, body: string | Buffer) => {
      response.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-cache' });
      response.end(body);
    };
    switch (url.pathname) {
      case '/pieces-os-worker.js':
        return send(200, 'text/javascript', current);
      case '/switch.js':
        return send(200, 'text/javascript', switched);
      case '/missing.js':
        return send(404, 'text/plain', 'Not found');
      case '/other-sw.js':
        return send(
          200,
          'text/javascript',
          "self.addEventListener('install', () => self.skipWaiting());\nself.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));\n",
        );
      case '/app-sw.js':
        // A module worker, valid only with its own query (HTML otherwise, as a dev server's fallback).
        if (!url.searchParams.has('dev-sw')) return send(200, 'text/html', html);
        return send(200, 'text/javascript', "import '/pieces-os-worker.js';\n");
    }
    if (url.pathname.startsWith('/assets/')) {
      try {
        return send(200, TYPES[extname(url.pathname)] ?? 'application/octet-stream', readFileSync(join(outDir, url.pathname)));
      } catch {
        return send(404, 'text/plain', 'Not found');
      }
    }
    // Every other path: the lab page (a single-page app's fallback).
    return send(200, 'text/html', html);
  });
  const listenOn = await freePort();
  await new Promise<void>((done) => server.listen(listenOn, '127.0.0.1', done));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('The lab server has no port.');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    port: address.port,
    serve: (which) => void (switched = which === 'stale' ? stale : current),
    close: () => new Promise((done) => server.close(() => done())),
  };
}
