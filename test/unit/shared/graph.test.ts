// @vitest-environment node
/**
 * The material graph (src/shared/graph.ts, written by scripts/graph.mjs; npm run lint checks the file
 * is what the script writes) holds what the SDK says: its operations are the catalogue's, its relations
 * are every association the SDK names, the fields it names are the models' own (read by the strict
 * checker's loader), and its shapes validate bodies as the SDK's models do.
 */
import { describe, expect, it } from 'vitest';
import { catalogueEntries } from '../../../src/core/catalogue.js';
import { KINDS, type KindRow, type MaterialKind, RELATIONS } from '../../../src/shared/graph.js';
import { checkShape, type FieldType, shapeOf } from '../../../src/shared/shapes.js';
import { type FieldType as SdkFieldType, shape } from '../support/sdk-shape.js';

const catalogue = new Map(catalogueEntries().map((entry) => [entry.name, entry]));
const kind = (name: MaterialKind): KindRow => KINDS.find((k) => k.kind === name)!;

/** The model a dotted wire path of `model` ends on, read by the strict checker's loader. */
function fieldAt(model: string, dotted: string): SdkFieldType {
  let type: SdkFieldType = { kind: 'ref', name: model };
  for (const key of dotted.split('.')) {
    if (type.kind !== 'ref') throw new Error(`${model}.${dotted}: ${key} is under a ${type.kind}`);
    const found = shape(type.name);
    if (found.kind !== 'model' || !found.fields.has(key)) throw new Error(`${type.name} has no field ${key} (${model}.${dotted})`);
    type = found.fields.get(key)!.type;
  }
  return type;
}

/** The kind a field's model lists or references: a Flattened… list of Referenced…, a collection of whole records, one Referenced… or the record itself. */
function kindListed(type: SdkFieldType): { kind: MaterialKind; many: boolean } | undefined {
  if (type.kind !== 'ref') return undefined;
  const byModel = (name: string) =>
    KINDS.find(
      (k) =>
        name === k.model ||
        name === `Referenced${k.model}` ||
        name === `Flattened${k.model}` ||
        (k.model === 'Model' && name === 'ReferencedModel'),
    );
  const found = shape(type.name);
  const iterable = found.kind === 'model' ? found.fields.get('iterable')?.type : undefined;
  if (iterable?.kind === 'array' && iterable.of.kind === 'ref') {
    const listed = byModel(iterable.of.name);
    return listed && { kind: listed.kind, many: true };
  }
  const one = byModel(type.name);
  return one && { kind: one.kind, many: false };
}

describe('KINDS', () => {
  it('names every kind of the SDK’s StreamedIdentifier', () => {
    const streamed = shape('StreamedIdentifier');
    if (streamed.kind !== 'model') throw new Error('StreamedIdentifier is a model');
    const keys = [...streamed.fields.keys()].filter((key) => key !== 'deleted' && key !== 'schema');
    expect(keys.length).toBeGreaterThan(15);
    expect(KINDS.flatMap((k) => k.streamed ?? []).sort()).toEqual(keys.sort());
    for (const row of KINDS) {
      if (!row.streamed) continue;
      // The field holds a Referenced… of the kind's model, and the kind is its name in camelCase.
      expect(kindListed(fieldAt('StreamedIdentifier', row.streamed)), row.kind).toEqual({ kind: row.kind, many: false });
      expect(
        row.streamed.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()),
        row.kind,
      ).toBe(row.kind);
    }
  });

  it('names SDK operations as the catalogue has them: class, name, method and path', () => {
    let count = 0;
    for (const row of KINDS) {
      for (const [role, op] of Object.entries(row.ops)) {
        const entry = catalogue.get(`${op.api}.${op.name}`);
        expect(entry, `${row.kind} ${role}: ${op.api}.${op.name}`).toBeDefined();
        expect({ method: entry!.method, path: entry!.path }, `${row.kind} ${role}`).toEqual({
          method: op.method,
          path: op.path.replace(/\{\w+\}/g, '{}'),
        });
        count++;
      }
    }
    expect(count).toBeGreaterThan(100);
  });

  it('gives each operation the answer its role says (the item and create answer the model, the snapshot its collection)', () => {
    for (const row of KINDS) {
      expect(shape(row.model).kind, row.kind).toBe('model');
      if (row.plural) expect(fieldAt(row.plural, 'iterable'), row.kind).toEqual({ kind: 'array', of: { kind: 'ref', name: row.model } });
      if (row.seeded) expect(row.ops.create, row.kind).toBeDefined();
      // Every generic kind can be created, read, listed and deleted; updated, but a backup (the SDK has no update of one).
      if (!row.own)
        expect(Object.keys(row.ops), row.kind).toEqual(
          expect.arrayContaining(['snapshot', 'item', 'create', 'delete', ...(row.kind === 'backup' ? [] : ['update'])]),
        );
    }
  });

  it('lists reference fields that are the model’s own, of the kind they say', () => {
    for (const row of KINDS) {
      for (const [key, ref] of Object.entries(row.references)) {
        expect(kindListed(fieldAt(row.model, key)), `${row.model}.${key}`).toEqual({ kind: ref.kind, many: ref.many });
      }
    }
    expect(kind('person').references.workstream_events).toEqual({ kind: 'workstreamEvent', many: true });
    expect(kind('conversation').references['grounding.temporal.workstreams']).toEqual({ kind: 'range', many: true });
  });

  it('lists the Seeded model’s fields that name other records, and the model field each lands in', () => {
    for (const row of KINDS.filter((k) => !k.own && k.seeded)) {
      for (const [key, seed] of Object.entries(row.seeds ?? {})) {
        const type = fieldAt(row.seeded!, key);
        if (seed.id) expect({ type, key }, `${row.seeded}.${key}`).toEqual({ type: { kind: 'string' }, key: kind(seed.kind).streamed });
        else expect(kindListed(type), `${row.seeded}.${key}`).toEqual({ kind: seed.kind, many: seed.many });
        if (seed.into) expect(row.references[seed.into]?.kind, `${row.model}.${seed.into}`).toBe(seed.kind);
      }
    }
    expect(kind('person').seeds?.asset).toEqual({ kind: 'asset', many: false, id: true, into: 'assets' });
  });
});

describe('RELATIONS', () => {
  const associations = catalogueEntries().filter((entry) => /\/(dis)?associate\/\{\}$/.test(entry.path));

  it('has one row for each associate/disassociate pair of the catalogue, each operation once', () => {
    expect(associations.length).toBeGreaterThan(200);
    expect(RELATIONS.length * 2).toBe(associations.length);
    const named = RELATIONS.flatMap((r) => [r.associate, r.disassociate]).map((op) => `${op.api}.${op.name}`);
    expect(new Set(named).size).toBe(named.length);
    expect(named.sort()).toEqual(associations.map((entry) => entry.name).sort());
    for (const r of RELATIONS) {
      for (const op of [r.associate, r.disassociate])
        expect(catalogue.get(`${op.api}.${op.name}`)?.path).toBe(op.path.replace(/\{\w+\}/g, '{}'));
      expect(r.params).toEqual([...r.associate.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      // The `from` side is the kind whose item path the operation hangs on.
      expect(r.associate.path.startsWith(`${kind(r.from).ops.item!.path}/`), r.associate.name).toBe(true);
    }
  });

  it('names fields of the models that list the other side', () => {
    for (const r of RELATIONS) {
      expect(r.fromKey ?? r.toKey, r.associate.name).toBeDefined();
      if (r.fromKey)
        expect(kindListed(fieldAt(kind(r.from).model, r.fromKey)), `${r.associate.name} fromKey`).toEqual({ kind: r.to, many: true });
      if (r.toKey)
        expect(kindListed(fieldAt(kind(r.to).model, r.toKey)), `${r.associate.name} toKey`).toEqual({ kind: r.from, many: true });
    }
  });

  it('represents the nested associations by the field the SDK model has', () => {
    const byName = (name: string) => RELATIONS.find((r) => r.associate.name === name);
    expect(byName('conversationGroundingMessagesAssociateMessage')).toMatchObject({
      from: 'conversation',
      to: 'conversationMessage',
      fromKey: 'grounding.messages',
    });
    expect(byName('rangeAssociateConversationGroundingTemporalRangeWorkstreams')).toMatchObject({
      from: 'range',
      to: 'conversation',
      fromKey: 'conversations',
      toKey: 'grounding.temporal.workstreams',
    });
    expect(byName('workstreamPatternEngineSourceAssociateConversation')).toMatchObject({ toKey: 'grounding.sources' });
    expect(byName('personAssociateWorkstreamSummary')).toMatchObject({
      from: 'person',
      to: 'workstreamSummary',
      fromKey: 'summaries',
      toKey: 'persons',
    });
  });
});

describe('SHAPES', () => {
  /** A shape type in the strict checker's form. */
  const asSdk = (type: FieldType): SdkFieldType | 'object' =>
    type === 's'
      ? { kind: 'string' }
      : type === 'n'
        ? { kind: 'number' }
        : type === 'b'
          ? { kind: 'boolean' }
          : type === 'd'
            ? { kind: 'date' }
            : type === 'o'
              ? 'object'
              : 'ref' in type
                ? { kind: 'ref', name: type.ref }
                : 'array' in type
                  ? { kind: 'array', of: asSdk(type.array) as SdkFieldType }
                  : { kind: 'map', of: asSdk(type.map) as SdkFieldType };

  it('holds the model and Seeded model of every generic kind, as the SDK declares them', () => {
    const roots = KINDS.filter((k) => !k.own).flatMap((k) => [k.model, ...(k.seeded ? [k.seeded] : [])]);
    const seen = new Set<string>();
    const visit = (name: string): void => {
      if (seen.has(name)) return;
      seen.add(name);
      const ours = shapeOf(name);
      const sdk = shape(name);
      expect(ours, name).toBeDefined();
      expect(ours!.kind, name).toBe(sdk.kind);
      if (ours!.kind === 'enum' && sdk.kind === 'enum') expect([...ours!.values], name).toEqual([...sdk.values]);
      if (ours!.kind !== 'model' || sdk.kind !== 'model') return;
      expect([...ours!.fields.keys()], name).toEqual([...sdk.fields.keys()]);
      for (const [key, f] of ours!.fields) {
        const theirs = sdk.fields.get(key)!;
        expect({ required: f.required, nullable: f.nullable }, `${name}.${key}`).toEqual({
          required: theirs.required,
          nullable: theirs.nullable,
        });
        // A Referenced… model's `reference` is kept as any object.
        if (f.type === 'o') expect(`${name}.${key}`).toMatch(/^Referenced\w+\.reference$/);
        else expect(asSdk(f.type), `${name}.${key}`).toEqual(theirs.type);
        const visitType = (type: SdkFieldType): void => {
          if (type.kind === 'ref') visit(type.name);
          else if (type.kind === 'array' || type.kind === 'map') visitType(type.of);
        };
        if (f.type !== 'o') visitType(theirs.type);
      }
    };
    for (const root of roots) visit(root);
    expect(seen.size).toBeGreaterThan(50);
  });
});

describe('checkShape', () => {
  const valid = {
    type: { basic: { name: 'Ada Lovelace', email: 'ada@example.com', sourced: 'GIT_HUB' } },
    mechanism: 'MANUAL',
    access: { scoped: 'OWNER', deleted: { value: '2026-01-02T03:04:05.000Z' } },
    anchors: { iterable: [{ id: 'a1' }, { id: 'a2', reference: { id: 'a2' } }] },
  };

  it('accepts a valid SeededPerson', () => {
    expect(checkShape('SeededPerson', valid, 'seededPerson')).toBeUndefined();
    expect(checkShape('SeededPerson', { type: {} }, 'seededPerson')).toBeUndefined();
    // An optional field given null is taken as left out, as the SDK's ToJSON writes it.
    expect(checkShape('SeededPerson', { ...valid, asset: null }, 'seededPerson')).toBeUndefined();
  });

  it('rejects a value that is not one of the enumeration, naming the path', () => {
    expect(checkShape('SeededPerson', { ...valid, mechanism: 'BY_HAND' }, 'seededPerson')).toMatch(
      /^seededPerson\.mechanism: the string "BY_HAND" is not a MechanismEnum \(one of .*MANUAL/,
    );
    expect(checkShape('SeededPerson', { ...valid, access: { scoped: 'owner' } }, 'seededPerson')).toMatch(
      /^seededPerson\.access\.scoped: /,
    );
  });

  it('rejects an unknown key, naming the path', () => {
    expect(checkShape('SeededPerson', { ...valid, nickname: 'Ada' }, 'seededPerson')).toBe(
      'seededPerson.nickname: unknown key (SeededPerson has no nickname)',
    );
    expect(checkShape('SeededPerson', { ...valid, type: { basic: { name: 'Ada', age: 36 } } }, '$')).toBe(
      '$.type.basic.age: unknown key (PersonBasicType has no age)',
    );
  });

  it('rejects a missing required field, naming the path', () => {
    const { type: _, ...untyped } = valid;
    expect(checkShape('SeededPerson', untyped, 'seededPerson')).toBe('seededPerson.type: missing (required by SeededPerson)');
    expect(checkShape('SeededPerson', { ...valid, anchors: {} }, 'seededPerson')).toBe(
      'seededPerson.anchors.iterable: missing (required by FlattenedAnchors)',
    );
    expect(checkShape('SeededPerson', { ...valid, anchors: { iterable: [{ reference: {} }] } }, 'seededPerson')).toBe(
      'seededPerson.anchors.iterable[0].id: missing (required by ReferencedAnchor)',
    );
  });

  it('rejects wrong types: a string for an object, a number for a string, a bad date, null where it is required', () => {
    expect(checkShape('SeededPerson', 'Ada', 'seededPerson')).toBe('seededPerson: expected a SeededPerson object, got the string "Ada"');
    expect(checkShape('SeededPerson', { type: { basic: { name: 7 } } }, 'p')).toBe('p.type.basic.name: expected a string, got number 7');
    expect(checkShape('SeededPerson', { ...valid, access: { deleted: { value: 'yesterday' } } }, 'p')).toMatch(
      /^p\.access\.deleted\.value: expected an ISO-8601 date-time/,
    );
    expect(checkShape('SeededPerson', { type: null }, 'p')).toBe('p.type: null is not a value of SeededPerson.type');
    expect(checkShape('SeededPerson', { ...valid, anchors: { iterable: {} } }, 'p')).toBe(
      'p.anchors.iterable: expected an array, got an object',
    );
  });
});
