// After pieces-os-worker is installed into an app: refresh the worker script in
// every folder saved with `pieces-os-worker init <dir> --save`. Never fails the install.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

try {
  const app = process.env.INIT_CWD;
  const source = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/pieces-os-worker.js');
  const manifest = app && join(app, 'package.json');
  if (manifest && existsSync(manifest) && existsSync(source)) {
    const folders = JSON.parse(readFileSync(manifest, 'utf8'))['pieces-os-worker']?.workerDirectory ?? [];
    for (const folder of folders) {
      const target = resolve(app, folder);
      mkdirSync(target, { recursive: true });
      copyFileSync(source, join(target, 'pieces-os-worker.js'));
      console.log(`[pieces-os-worker] refreshed ${join(folder, 'pieces-os-worker.js')}`);
    }
  }
} catch (error) {
  console.warn(`[pieces-os-worker] could not refresh the worker script: ${error?.message ?? error}`);
}
