/** Serves the example app with the package's build, and launches Chromium, for the browser examples. */
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';

/** Serves examples/playwright/app: `pieces-os-worker` is the built page library, the worker script is at the root. */
export async function startApp(packageRoot: string): Promise<{ url: string; server: ViteDevServer }> {
  const dist = resolve(packageRoot, 'dist');
  const server = await createServer({
    configFile: false,
    root: resolve(import.meta.dirname, 'app'),
    publicDir: dist, // serves /pieces-os-worker.js
    resolve: { alias: { 'pieces-os-worker': resolve(dist, 'index.js') } },
    server: { host: '127.0.0.1', port: 0 },
    logLevel: 'warn',
  });
  await server.listen();
  const address = server.httpServer!.address();
  if (!address || typeof address === 'string') throw new Error('The app server has no port.');
  return { url: `http://127.0.0.1:${address.port}/`, server };
}

/** Debian's Chromium (or CHROME_PATH); with @playwright/test, use its own `page` fixture instead. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}
