/**
 * The Vite plugin: serves the worker script in development and emits it into the build, straight from
 * the installed package (docs/integrations.md, "The Vite plugin").
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';

export interface PiecesOsWorkerPluginOptions {
  /** File name of the worker script at the app's base; default `pieces-os-worker.js` (the page library's default URL). */
  fileName?: string;
}

/** The built worker script, next to this file in the package's dist/. */
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'pieces-os-worker.js');

export function piecesOsWorker(options: PiecesOsWorkerPluginOptions = {}): Plugin {
  const fileName = options.fileName ?? 'pieces-os-worker.js';
  let base = '/';
  return {
    name: 'pieces-os-worker',
    configResolved(config) {
      base = config.base.endsWith('/') ? config.base : `${config.base}/`;
    },
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        const path = (request.url ?? '').split('?')[0];
        if (path !== base + fileName) return next();
        response.setHeader('Content-Type', 'text/javascript');
        response.setHeader('Cache-Control', 'no-cache');
        // Read on every request: a reinstalled package is served at once.
        response.end(readFileSync(SCRIPT));
      });
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName, source: readFileSync(SCRIPT) });
    },
  };
}

export default piecesOsWorker;
