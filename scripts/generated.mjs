/**
 * Writes a generated file, or with `--check` (npm run lint) fails when the file is not what its
 * script would write: a generated file is never edited by hand and never falls behind the SDK.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Writes `text` to `url` (a file of this repository), or checks it is there already. */
export function writeGenerated(url, text, script) {
  const path = fileURLToPath(url);
  if (!process.argv.includes('--check')) return writeFileSync(url, text);
  let current = '';
  try {
    current = readFileSync(url, 'utf8');
  } catch {}
  if (current !== text) {
    console.error(`${path} is not what ${script} writes: run node ${script}.`);
    process.exit(1);
  }
}
