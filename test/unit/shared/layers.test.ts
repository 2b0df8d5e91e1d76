// @vitest-environment node
/**
 * The layers hold: each folder of src/ is a TypeScript project that may import only the
 * projects it references (shared ← storage ← core ← stream, port ← host ← worker, page,
 * node), so `npm run typecheck` (tsc -b) fails on an import against the direction.
 * And within a folder, no modules import each other in a circle.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
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
  beforeAll(
    () =>
      void execFileSync(tsc, ['-b', join(root, 'src/node'), join(root, 'src/page'), join(root, 'src/worker')], {
        cwd: root,
        stdio: 'pipe',
      }),
    120_000,
  );

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

/** A relative `import … from`, `import type … from`, side-effect `import` or `export … from`, at the start of a line. */
const RELATIVE_IMPORT =
  /^[ \t]*(?:import[ \t]+[\w*{][^;]*?\bfrom[ \t]*|import[ \t]*|export[ \t]+(?:type[ \t]+)?[*{][^;]*?\bfrom[ \t]*)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Whether an import or export statement brings types only (`import type`, or braces naming only `type` items). */
function typeOnly(statement: string): boolean {
  if (/^\s*(import|export)\s+type\b/.test(statement)) return true;
  const items = /^\s*(?:import|export)\s*\{([^}]*)\}\s*from/
    .exec(statement)?.[1]
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return !!items?.length && items.every((item) => /^type\s/.test(item));
}

/**
 * The modules of `folder` (its .ts files) that import each other in a circle: the strongly
 * connected components of their imports of one another, of more than one module or a module
 * importing itself, each sorted by name. `types: false` leaves `import type` out.
 */
function cyclesIn(folder: string, { types = true } = {}): string[][] {
  const modules = readdirSync(folder).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'));
  const imports = new Map<string, string[]>();
  for (const name of modules) {
    const targets: string[] = [];
    for (const [statement, specifier] of readFileSync(join(folder, name), 'utf8').matchAll(RELATIVE_IMPORT)) {
      if (!types && typeOnly(statement)) continue;
      const target = resolve(folder, specifier!).replace(/\.js$/, '.ts');
      if (dirname(target) === folder && modules.includes(basename(target))) targets.push(basename(target));
    }
    imports.set(name, targets);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (name: string) => {
    index.set(name, index.size);
    low.set(name, index.get(name)!);
    stack.push(name);
    for (const next of imports.get(name)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(name, Math.min(low.get(name)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(name, Math.min(low.get(name)!, index.get(next)!));
    }
    if (low.get(name) !== index.get(name)) return;
    const component = stack.splice(stack.indexOf(name));
    if (component.length > 1 || imports.get(name)!.includes(name)) cycles.push(component.sort());
  };
  for (const name of modules) if (!index.has(name)) visit(name);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Every folder under src/ that holds modules, relative to src/. */
function folders(dir = join(root, 'src')): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const here = entries.some((e) => e.isFile() && e.name.endsWith('.ts')) ? [relative(join(root, 'src'), dir)] : [];
  return [...here, ...entries.filter((e) => e.isDirectory()).flatMap((e) => folders(join(dir, e.name)))];
}

/**
 * Cycles known today that go through `import type` only, left to remove: a type import is erased
 * when compiled, so it cannot make a module run before what it imports is initialised, but it
 * still ties the modules together. Any other cycle fails, and these may not grow.
 */
const KNOWN_TYPE_CYCLES: Record<string, string[][]> = {
  host: [['controls.ts', 'create-host.ts', 'page-api.ts']],
};

describe('no import cycle within a folder', () => {
  it.each(folders())('src/%s', (folder) => {
    const dir = join(root, 'src', folder);
    expect(cyclesIn(dir, { types: false })).toEqual([]);
    expect(cyclesIn(dir)).toEqual(KNOWN_TYPE_CYCLES[folder] ?? []);
  });

  it('the mirror is among the folders checked', () => {
    expect(folders()).toContain('host/mirror');
  });

  it('finds a cycle, through imports, type imports and re-exports written over several lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-cycle-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import {\n  b,\n  other,\n} from './b.js';\nexport const a = () => b + other;\n");
      writeFileSync(join(dir, 'b.ts'), "import type { C } from './c.js';\nexport const b: C = 1;\nexport const other = 2;\n");
      writeFileSync(join(dir, 'c.ts'), "export { a } from './a.js';\nexport type C = number;\n");
      writeFileSync(
        join(dir, 'd.ts'),
        "// import { d } from './d.js';\nimport { a } from './a.js';\nimport './e.js';\nexport const d = a;\n",
      );
      writeFileSync(join(dir, 'e.ts'), "import * as self from './e.js';\nexport const e = self;\n");
      writeFileSync(join(dir, 'f.ts'), "import { type C, a } from './c.js';\nimport { type D } from './g.js';\nexport const f: C = a();\n");
      writeFileSync(join(dir, 'g.ts'), "import { f } from './f.js';\nexport type D = typeof f;\n");
      expect(cyclesIn(dir)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts'], ['f.ts', 'g.ts']]);
      // Without type imports the circles through b and f are open (they need c's and g's types only); e still imports itself.
      expect(cyclesIn(dir, { types: false })).toEqual([['e.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
