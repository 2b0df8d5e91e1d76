// @vitest-environment node
/**
 * The layers hold: each folder of src/ is a TypeScript project that may import only the
 * projects it references (shared ← storage ← core ← stream, port ← host ← worker, page,
 * node), so `npm run typecheck` (tsc -b) fails on an import against the direction.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const tsc = join(root, 'node_modules/.bin/tsc');

/** Type-checks the project of `layer` with one more file importing `target`; the compiler's errors, or '' when it compiles. */
function check(layer: string, target: string): string {
  const probe = join(root, 'src', layer, `__layer-probe-${process.pid}.ts`);
  writeFileSync(probe, `import * as probed from '${target}';\nexport const layerProbe = probed;\n`);
  try {
    execFileSync(tsc, ['-p', join(root, 'src', layer), '--noEmit'], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  } finally {
    rmSync(probe, { force: true });
  }
}

describe('the layers', () => {
  // The projects a layer references are read from their built declarations.
  beforeAll(() => void execFileSync(tsc, ['-b', join(root, 'src/node'), join(root, 'src/page'), join(root, 'src/worker')], { cwd: root, stdio: 'pipe' }), 120_000);

  it.each([
    ['shared', '../storage/storage.js'],
    ['storage', '../core/service.js'],
    ['core', '../host/create-host.js'],
    ['core', '../stream/shim.js'],
    ['stream', '../port/client.js'],
    ['port', '../stream/shim.js'],
    ['host', '../worker/pieces-worker.js'],
    ['node', '../page/index.js'],
    ['page', '../worker/start.js'],
    ['worker', '../node/host.js'],
  ])('%s may not import %s', (layer, target) => {
    expect(check(layer, target)).toMatch(/TS6307/);
  });

  it.each([
    ['storage', '../shared/uuid.js'],
    ['core', '../storage/storage.js'],
    ['host', '../core/service.js'],
    ['node', '../host/create-host.js'],
  ])('%s may import %s', (layer, target) => {
    expect(check(layer, target)).toBe('');
  });
});
