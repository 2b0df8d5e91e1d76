#!/usr/bin/env node
// pieces-os-worker init <public dir>: copies the worker script into the folder an app serves statically.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = 'pieces-os-worker.js';
const source = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist', SCRIPT);
const [command, folder] = process.argv.slice(2);

if (command !== 'init' || !folder) {
  console.error(`Usage: pieces-os-worker init <public dir>

Copies ${SCRIPT} into <public dir>, the folder your app serves at its root
(public/ for Vite, Next.js and Create React App), so that
startPiecesService() can register it at /${SCRIPT}.`);
  process.exit(command === '--help' || command === '-h' ? 0 : 1);
}
if (!existsSync(source)) {
  console.error(`pieces-os-worker: ${source} is missing; build the package first (npm run build).`);
  process.exit(1);
}
const target = resolve(folder);
mkdirSync(target, { recursive: true });
copyFileSync(source, join(target, SCRIPT));
console.log(`pieces-os-worker: copied ${SCRIPT} to ${relative(process.cwd(), join(target, SCRIPT)) || SCRIPT}`);
console.log(`Register it in your app:

  import { startPiecesService } from 'pieces-os-worker';
  await startPiecesService();`);
