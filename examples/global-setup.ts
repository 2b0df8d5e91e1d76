/**
 * Builds the package for a project of examples, laid out as installed
 * (`dist/`, the CLI in `src/cli/`), into the project's own folder: dist/ of the
 * repository is rebuilt by the package test meanwhile. The browser examples also
 * get the worker script and the page library.
 */
import { cpSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { build } from 'vite';
import { EXAMPLES_BUILD, nodeBuild } from '../vite.config.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding this project's build of the package (its dist/ and src/cli/). */
    packageRoot: string;
  }
}

export default async function setup(project: TestProject) {
  const root = resolve(EXAMPLES_BUILD, project.name);
  const outDir = resolve(root, 'dist');
  await build({ configFile: false, logLevel: 'warn', ...nodeBuild(outDir) });
  if (project.name === 'examples-e2e') {
    const configFile = resolve(import.meta.dirname, '../vite.config.ts');
    for (const mode of ['worker', 'lib']) await build({ configFile, mode, logLevel: 'warn', build: { outDir } });
    cpSync(resolve(import.meta.dirname, '../src/cli'), resolve(root, 'src/cli'), { recursive: true });
  }
  project.provide('packageRoot', root);
}
