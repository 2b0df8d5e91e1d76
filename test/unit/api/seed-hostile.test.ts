/** seed() under hostile data: a clear message naming the field, and nothing changed; what it accepts exports and seeds again exactly. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setupPiecesServer } from '../../../src/node/index.js';

const valid = {
  version: 1,
  conversations: [
    {
      id: '66666666-6666-4666-8666-666666666666',
      type: 'COPILOT',
      name: 'A',
      created: { value: '2025-01-01T00:00:00Z' },
      messages: [{ id: '66666666-6666-4666-8666-000000000001', role: 'USER', fragment: { string: { raw: 'hi' } } }],
      deletedMessages: ['66666666-6666-4666-8666-000000000002'],
    },
  ],
  applications: [
    { id: '77777777-7777-4777-8777-777777777777', name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' },
  ],
  sessions: [{ id: '88888888-8888-4888-8888-888888888888', opened: { value: '2025-01-01T00:00:00Z' } }],
  events: [{ id: '99999999-9999-4999-8999-999999999999', kind: 'interaction', at: '2025-01-01T00:00:00Z', payload: { description: 'x' } }],
  assets: [{ id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', name: 'a.ts', text: 'export {}' }],
  externalApplications: [{ name: 'Obsidian', version: '1.5' }],
  materials: {
    person: [{ id: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc', type: { basic: { name: 'Ada' } }, created: { value: '2025-01-01T00:00:00Z' } }],
  },
};

type Path = Array<string | number>;

/** Every path to a value inside `value`. */
function paths(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [at];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [at, ...keys.flatMap((key) => paths((value as Record<string | number, unknown>)[key], [...at, key]))];
}

function replaced(value: unknown, path: Path, next: unknown): unknown {
  if (path.length === 0) return next;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  if (next === undefined) delete node[path.at(-1)!];
  else node[path.at(-1)!] = next;
  return copy;
}

const hostile = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string(),
  fc.constantFrom('', 'CHAT', 'not-a-uuid', 'yesterday', '__proto__', '2025-13-45T99:99:99Z'),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);

describe('seed() with hostile data', () => {
  it('an asset named like a property of every object (`__proto__`, `constructor`) is seeded as any other', async () => {
    const server = setupPiecesServer({ sampleAssets: false });
    for (const name of ['__proto__', 'constructor', 'x.toString']) {
      await server.reset();
      await server.seed({ assets: [{ name, text: 'plain words' }] } as never);
      const [asset] = (await server.exportData()).assets;
      expect(asset!.name).toBe(name);
    }
  });

  it('refuses with a message naming the data, changing nothing; what it accepts round-trips exactly', async () => {
    const server = setupPiecesServer({ sampleAssets: false });
    const all = paths(valid);
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...all), hostile, async (path, next) => {
        await server.reset();
        await server.seed({ conversations: [{ id: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', type: 'COPILOT', name: 'already there' }] });
        const before = JSON.stringify(await server.exportData());
        const data = replaced(valid, path, next);
        try {
          await server.seed(data as never);
        } catch (error) {
          refused++;
          expect((error as Error).message).toMatch(/^data\b/);
          expect(JSON.stringify(await server.exportData())).toBe(before);
          return;
        }
        accepted++;
        const exported = JSON.stringify(await server.exportData());
        await server.reset();
        await server.seed(JSON.parse(exported));
        expect(JSON.stringify(await server.exportData())).toBe(exported);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 120_000);
});
