#!/usr/bin/env node
// npm's `prepare` step: builds dist/, which the package's entry points and its CLI need.
//
// npm runs `prepare` after `npm install` / `npm ci` in this repository, when this folder is
// installed into an app (`npm install ./pieces-os-worker`, `npm install git+…`,
// `npm install github:…`) and before `npm pack`. The build needs the dev dependencies (Vite,
// TypeScript, Vitest's config). After an install of this repository, or in the clone npm makes
// for a git dependency, they are there: it builds. In a fresh clone installed as a folder, or
// packed, they are not: it installs this folder's own dependencies first (scripts off, so that
// this script does not run again), then builds.
//
// PIECES_SKIP_PREPARE=1 skips the whole step (dist/ is then not built). Plain Node, no
// dependencies: it runs before any are installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const say = (message) => process.stderr.write(`pieces-os-worker: ${message}\n`);

const skip = process.env.PIECES_SKIP_PREPARE;
if (skip && skip !== '0' && skip !== 'false') {
  say(`PIECES_SKIP_PREPARE=${skip}: dist/ is not built.`);
  process.exit(0);
}

/** Whether `name` resolves from this folder the way Node and `npm run` find it: in its node_modules or an ancestor's. */
function installed(name) {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true;
    if (dirname(dir) === dir) return false;
  }
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const needed = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})];
const missing = needed.filter((name) => !installed(name));

/**
 * The environment for the nested npm: the caller's, less the settings that say what or where
 * to install (an app's `--omit=dev`, `--global`, `--save`, its prefix, a workspace…), which
 * belong to the outer install, not to this folder's. Registry, cache, proxy, certificates and
 * log level are kept.
 */
function nestedEnv() {
  const outerOnly = new Set([
    'also',
    'audit',
    'dev',
    'dry_run',
    'fund',
    'global',
    'global_style',
    'ignore_scripts',
    'include',
    'include_workspace_root',
    'install_links',
    'install_strategy',
    'legacy_bundling',
    'local_prefix',
    'location',
    'omit',
    'only',
    'package_lock_only',
    'production',
    'workspace',
    'workspaces',
    'workspaces_update',
  ]);
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    const match = /^npm_config_(.*)$/i.exec(key);
    if (!match) continue;
    const setting = match[1].toLowerCase().replace(/-/g, '_');
    if (outerOnly.has(setting) || setting.startsWith('save')) delete env[key];
  }
  return env;
}

/** Runs npm with `args` in this folder; its output goes to stderr, so that `npm pack`'s stdout stays the tarball's name. */
function npm(args, env) {
  const execPath = process.env.npm_execpath;
  const [command, commandArgs] = execPath && /\.[cm]?js$/.test(execPath) ? [process.execPath, [execPath, ...args]] : ['npm', args];
  const result = spawnSync(command, commandArgs, {
    cwd: root,
    env,
    stdio: ['ignore', process.stderr, process.stderr],
    shell: command === 'npm' && process.platform === 'win32',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    say(`\`npm ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status || 1);
  }
}

const env = nestedEnv();
const started = Date.now();
if (missing.length > 0) {
  say(
    `installing this package's build dependencies (${missing.length} missing), then building dist/ ` +
      '(about 20–30 s, more on a slow network; PIECES_SKIP_PREPARE=1 skips it)…',
  );
  npm(['install', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-save'], env);
} else {
  say('building dist/ (a few seconds)…');
}
npm(['run', 'build'], env);
say(`dist/ built in ${Math.round((Date.now() - started) / 1000)} s.`);
