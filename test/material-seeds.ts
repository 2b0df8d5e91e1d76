/**
 * Minimal valid Seeded bodies of the graph table's kinds, built from SHAPES (src/shared/graph.ts):
 * each required field sampled from its type, and the fields that name a record of another kind
 * left for the caller to fill with one that exists. Shared by the generic path's unit test
 * (test/unit/api/materials.test.ts) and its browser walk (test/browser/materials.test.ts), which
 * fills them in the page.
 */
import type { KindRow, MaterialKind } from '../src/shared/graph.js';
import { shapeOf, type FieldType } from '../src/shared/shapes.js';
import { GENERIC_KINDS, MATERIAL_OPERATIONS } from '../src/core/handlers/materials.js';
import { OPERATIONS } from '../src/core/routes.js';

const generic = (op: { name: string } | undefined) =>
  op !== undefined && OPERATIONS.some((o) => o.name === op.name && MATERIAL_OPERATIONS.some((m) => m.handler === o.handler));
/**
 * The kinds the generic path serves whole, walked by its tests: those whose create and delete no
 * row of the route table answers in its place (a backup's, a share's and a distribution's are
 * their area's: test/unit/api/store-kinds.test.ts).
 */
export const WALKED_KINDS: readonly KindRow[] = GENERIC_KINDS.filter((kind) => generic(kind.ops.create) && generic(kind.ops.delete));

/** The text every sampled string field holds (what a search of a sampled record finds). */
export const SAMPLE_TEXT = 'sample text';

/** A value of a field type that its shape allows (required fields only, an enum's first value but UNKNOWN). */
export function sample(type: FieldType, seen: string[] = []): unknown {
  if (type === 's') return SAMPLE_TEXT;
  if (type === 'n') return 1;
  if (type === 'b') return false;
  if (type === 'd') return new Date().toISOString();
  if (type === 'o') return {};
  if ('array' in type) return [];
  if ('map' in type) return {};
  const shape = shapeOf(type.ref);
  if (!shape) throw new Error(`no shape for ${type.ref}`);
  if (shape.kind === 'enum') return [...shape.values].find((v) => v !== 'UNKNOWN');
  if (seen.includes(type.ref)) return {};
  return Object.fromEntries([...shape.fields.values()].filter((f) => f.required).map((f) => [f.key, sample(f.type, [...seen, type.ref])]));
}

/** A required seed field that names a record of `kind` (the table's `seeds`): a bare id (`as: 'id'`) or a `{ id }`. */
export interface SeedNeed {
  key: string;
  kind: MaterialKind;
  as: 'id' | 'reference';
}

/** A kind's minimal seed: `seed` has every required field but those `needs` names, which take an existing record's id. */
export interface SeedPlan {
  seed: Record<string, unknown>;
  needs: SeedNeed[];
}

export function seedPlan(row: KindRow): SeedPlan {
  const shape = row.seeded ? shapeOf(row.seeded) : undefined;
  if (shape?.kind !== 'model') throw new Error(`no shape for the Seeded model of ${row.kind}`);
  const plan: SeedPlan = { seed: {}, needs: [] };
  for (const field of shape.fields.values()) {
    if (!field.required) continue;
    // A field naming a record (not holding one whole, nor a list): an id of one that exists.
    const named = row.seeds?.[field.key];
    if (named && !named.model && !named.many) plan.needs.push({ key: field.key, kind: named.kind, as: named.id ? 'id' : 'reference' });
    else plan.seed[field.key] = sample(field.type);
  }
  return plan;
}

/** The seed of a plan with each need given the id `idOf` its kind answers. */
export async function filledSeed(plan: SeedPlan, idOf: (kind: MaterialKind) => Promise<string>): Promise<Record<string, any>> {
  const seed: Record<string, unknown> = structuredClone(plan.seed);
  for (const need of plan.needs) {
    const id = await idOf(need.kind);
    seed[need.key] = need.as === 'id' ? id : { id };
  }
  return seed;
}

/** A Model (a required field of SeededWorkstreamSummary: what made the summary), for tests that make summaries. */
export const SUMMARIZER = {
  id: 'e1b5e5d0-52b4-4d3c-9e43-2d4a8f0b6a11',
  version: '1',
  created: { value: '2026-01-01T00:00:00.000Z' },
  name: 'summarizer',
  cloud: false,
  type: 'BALANCED',
  usage: 'CODE_GENERATION',
};
