/**
 * Builds the package for a project of examples, into its own folder (dist/ is
 * rebuilt by the package test meanwhile): the Node build, and for the browser
 * examples the worker script and the page library.
 */
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { build } from 'vite';
import { EXAMPLES_BUILD, nodeBuild } from '../vite.config.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding this project's build of the package. */
    packageBuild: string;
  }
}

export default async function setup(project: TestProject) {
  const outDir = resolve(EXAMPLES_BUILD, project.name);
  await build({ configFile: false, logLevel: 'warn', ...nodeBuild(outDir) });
  if (project.name === 'examples-e2e') {
    const configFile = resolve(import.meta.dirname, '../vite.config.ts');
    for (const mode of ['worker', 'lib']) await build({ configFile, mode, logLevel: 'warn', build: { outDir } });
  }
  project.provide('packageBuild', outDir);
}
