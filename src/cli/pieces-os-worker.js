#!/usr/bin/env node
// pieces-os-worker init <public dir> [--save]: copies the worker script into the folder an app serves statically.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = 'pieces-os-worker.js';
const source = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist', SCRIPT);
const args = process.argv.slice(2);
const save = args.includes('--save');
const [command, folder] = args.filter((arg) => arg !== '--save');

if (command !== 'init' || !folder) {
  console.error(`Usage: pieces-os-worker init <public dir> [--save]

Copies ${SCRIPT} into <public dir>, the folder your app serves at its root
(public/ for Vite, Next.js and Create React App), so that
startPiecesService() can register it at /${SCRIPT}.

--save  remembers the folder in package.json ("pieces-os-worker": {"workerDirectory": [...]})
        so that every npm install of pieces-os-worker copies the script there again.

With Vite, the plugin needs no copy at all:
  import { piecesOsWorker } from 'pieces-os-worker/vite';   // plugins: [piecesOsWorker()]`);
  process.exit(command === '--help' || command === '-h' ? 0 : 1);
}
if (!existsSync(source)) {
  console.error(`[pieces-os-worker] ${source} is missing; build the package first (npm run build).`);
  process.exit(1);
}
const target = resolve(folder);
mkdirSync(target, { recursive: true });
copyFileSync(source, join(target, SCRIPT));
console.log(`[pieces-os-worker] copied ${SCRIPT} to ${relative(process.cwd(), join(target, SCRIPT)) || SCRIPT}`);

if (save) {
  const manifest = resolve('package.json');
  if (!existsSync(manifest)) {
    console.error('[pieces-os-worker] --save: no package.json in this folder; run init from your app\'s root.');
    process.exit(1);
  }
  const text = readFileSync(manifest, 'utf8');
  const json = JSON.parse(text);
  const entry = relative(process.cwd(), target).split('\\').join('/') || '.';
  const config = (json['pieces-os-worker'] ??= {});
  const folders = new Set([...(config.workerDirectory ?? []), entry]);
  config.workerDirectory = [...folders];
  const indent = text.match(/^(\s+)"/m)?.[1] ?? '  ';
  writeFileSync(manifest, JSON.stringify(json, null, indent) + (text.endsWith('\n') ? '\n' : ''));
  console.log(`[pieces-os-worker] saved "${entry}" in package.json: every install of pieces-os-worker refreshes the copy.`);
}
console.log(`Register it in your app:

  import { startPiecesService } from 'pieces-os-worker';
  await startPiecesService();`);
