/** Runs the Jest example (conversations.test.mjs) with Jest itself, against this project's build of the package. */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, inject, it } from 'vitest';

it('passes under Jest (node environment, native ESM)', () => {
  const jest = resolve(import.meta.dirname, '../../node_modules/jest/bin/jest.js');
  const run = spawnSync(process.execPath, ['--experimental-vm-modules', jest, '-c', resolve(import.meta.dirname, 'jest.config.mjs')], {
    encoding: 'utf8',
    env: { ...process.env, PIECES_PACKAGE_ROOT: inject('packageRoot'), NODE_ENV: 'test' },
  });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/Tests:\s+4 passed, 4 total/);
});
