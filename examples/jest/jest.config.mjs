// Jest (ESM, no transform) for examples/jest: `pieces-os-worker/node` is the package build named by PIECES_PACKAGE_ROOT.
import { resolve } from 'node:path';

const root = process.env.PIECES_PACKAGE_ROOT;
if (!root) throw new Error('PIECES_PACKAGE_ROOT must name a build of the package (examples/jest/jest.test.ts sets it).');

export default {
  rootDir: import.meta.dirname,
  testEnvironment: 'node',
  testMatch: ['**/*.test.mjs'],
  transform: {},
  moduleNameMapper: { '^pieces-os-worker/node$': resolve(root, 'dist/node.js') },
};
