#!/usr/bin/env node
/**
 * Generates src/core/catalogue.ts: every operation of the Pieces OS SDK
 * (@pieces.app/pieces-os-client, its dist/apis/*.js), so that a request for a
 * Pieces OS path the service does not serve gets a 404 naming the operation.
 *
 *   node scripts/catalogue.mjs
 *
 * Compact form (it ships in the worker script): operations grouped by API
 * class (a line with the class name without its `Api` suffix, then one line
 * per operation sorted by path, a blank line between classes). An operation
 * line is `K[P]rest name`: the path is the first K `/`-separated segments of
 * the previous line's path followed by `rest`; `P` for POST (GET otherwise);
 * `{}` for each path parameter; in the name `*` stands for the camelCase of
 * the path's fixed segments (`^` for it capitalised).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeGenerated } from './generated.mjs';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('@pieces.app/pieces-os-client/package.json'));
const apis = join(root, 'dist/apis');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** camelCase of a path's fixed segments: `/assets/{asset}/formats` → `assetsFormats`. Kept equal to `stem` in catalogue.ts. */
const stem = (path) =>
  path
    .split('/')
    .filter((s) => s && !s.startsWith('{'))
    .flatMap((s) => s.split(/[_.-]/))
    .filter(Boolean)
    .map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w))
    .join('');

const groups = [];
for (const file of readdirSync(apis)
  .filter((f) => f.endsWith('Api.js'))
  .sort()) {
  const api = file.replace(/\.js$/, '');
  const source = readFileSync(join(apis, file), 'utf8');
  const operations = [];
  // Each operation: `async nameRaw(…) { … path: `/…`… method: 'GET', …`
  for (const [, name, rawPath, method] of source.matchAll(/async (\w+)Raw\([^)]*\)\s*\{[\s\S]*?path: `([^`]+)`[\s\S]*?method: '(\w+)'/g)) {
    if (method !== 'GET' && method !== 'POST') throw new Error(`${api}.${name}: method ${method} has no compact form`);
    const path = rawPath.replace(/\{\w+\}/g, '{}');
    const s = stem(path);
    const capital = s && s[0].toUpperCase() + s.slice(1);
    const short = s && name.includes(s) ? name.replace(s, '*') : capital && name.includes(capital) ? name.replace(capital, '^') : name;
    operations.push({ path, post: method === 'POST', short });
  }
  operations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let previous = [];
  const lines = operations.map(({ path, post, short }) => {
    const segments = path.split('/');
    let shared = 0;
    while (shared < segments.length && shared < previous.length && segments[shared] === previous[shared]) shared++;
    if (shared > 9) throw new Error(`${path}: more shared segments than one digit says`);
    previous = segments;
    return `${shared}${post ? 'P' : ''}${segments.slice(shared).join('/')} ${short}`;
  });
  if (lines.length) groups.push(`${api.replace(/Api$/, '')}\n${lines.join('\n')}`);
}
const catalogue = groups.join('\n\n');
const count = groups.reduce((n, g) => n + g.split('\n').length - 1, 0);
const out = `/**
 * Every operation of the Pieces OS API (SDK ${version}, ${count} operations), in the compact
 * form described in scripts/catalogue.mjs, which generates this file. Do not edit.
 */
const CATALOGUE = ${JSON.stringify(catalogue)};

const stem = (path: string) =>
  path
    .split('/')
    .filter((s) => s && !s.startsWith('{'))
    .flatMap((s) => s.split(/[_.-]/))
    .filter(Boolean)
    .map((w, i) => (i ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('');

interface Entry {
  method: string;
  parts: string[];
  /** \`Class.method\` */
  name: string;
}

let entries: Entry[] | undefined;

function decode(): Entry[] {
  return CATALOGUE.split('\\n\\n').flatMap((group) => {
    const [api, ...lines] = group.split('\\n');
    let previous: string[] = [];
    return lines.map((line) => {
      const [raw, short] = line.split(' ') as [string, string];
      const post = raw[1] === 'P';
      const rest = raw.slice(post ? 2 : 1);
      const parts = [...previous.slice(0, Number(raw[0])), ...(rest === '' ? [] : rest.split('/'))];
      previous = parts;
      const s = stem(parts.join('/'));
      const name = short.replace('*', s).replace('^', s && s[0]!.toUpperCase() + s.slice(1));
      return { method: post ? 'POST' : 'GET', parts, name: \`\${api}Api.\${name}\` };
    });
  });
}

/** How many segments of an entry's path are fixed (not \`{}\`), counted as routes count theirs. */
const fixed = (entry: Entry) => entry.parts.filter((p) => p && p !== '{}').length;

/** Every operation of the SDK: method, path (\`{}\` for a parameter) and \`Class.method\`. */
export function catalogueEntries(): Array<{ method: string; path: string; name: string }> {
  entries ??= decode();
  return entries.map(({ method, parts, name }) => ({ method, path: parts.join('/'), name }));
}

/** The SDK operations whose path \`path\` matches (\`{}\` segments match any non-empty segment), most specific first. */
function matching(path: string): Entry[] {
  entries ??= decode();
  const segments = path.split('/');
  return entries
    .filter(({ parts }) => parts.length === segments.length && parts.every((part, i) => (part === '{}' ? segments[i] !== '' : part === segments[i])))
    .sort((a, b) => fixed(b) - fixed(a));
}

/** The SDK operation (\`Class.method\`) for a method and path, if it is one (of another method when none has this one). */
export function knownOperation(method: string, path: string): string | undefined {
  const matches = matching(path);
  return (matches.find((m) => m.method === method.toUpperCase()) ?? matches[0])?.name;
}

/**
 * Whether the SDK spells out, as a path of its own, what a route with \`routeFixed\` fixed segments
 * reads as a parameter (\`/assets/draft\` against \`/assets/{asset}\`): then the path is that
 * operation's, not the route's.
 */
export function namedMoreExactly(path: string, routeFixed: number): boolean {
  const best = matching(path)[0];
  return best !== undefined && fixed(best) > routeFixed;
}
`;
writeGenerated(new URL('../src/core/catalogue.ts', import.meta.url), out, 'scripts/catalogue.mjs');
if (!process.argv.includes('--check')) console.log(`${count} operations written to src/core/catalogue.ts`);
