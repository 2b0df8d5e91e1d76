/**
 * The create form of a material kind, derived from its Seeded model's shape in the graph table
 * (SHAPES): a required field of a plain type gets an input (text, number, a checkbox, an enum's
 * choice list), a required model a fieldset of its own required fields, and a field naming one
 * record of another kind a choice of that kind's records; an optional field of a plain type gets
 * an input left empty. What the form cannot say (lists, maps, optional models) goes in a JSON
 * textarea whose keys are added to the seed. The seed is checked against the shape before it is
 * sent: a missing or wrong field is named here, and nothing is sent.
 */
import { checkShape, KINDS, shapeOf, type FieldType, type KindRow, type MaterialKind } from 'pieces-os-worker/core';
import { h } from './dom.js';

/** Models nested deeper than this are left to the JSON textarea. */
const DEPTH = 3;

type Json = Record<string, unknown>;

/** A kind's model name as the service names a body of it in messages: SeededPerson → seededPerson. */
const lower = (model: string) => model[0]!.toLowerCase() + model.slice(1);

const labelFor = (path: string[]) => path[path.length - 1]!;
const idFor = (path: string[]) => `material-field-${path.join('-')}`;

/** The records a reference field chooses from: its kind's, read when the form is built. */
export type RecordChoices = (kind: MaterialKind) => Promise<Array<{ id: string; label: string }>>;

/** One input of the form: where its value goes, and how it is read. */
interface Input {
  path: string[];
  required: boolean;
  read(): unknown;
}

/** The inputs of one field (none where the form leaves it to the JSON textarea). */
function fieldInputs(key: string, type: FieldType, required: boolean, path: string[], depth: number, inputs: Input[]): Node | undefined {
  const at = [...path, key];
  const id = idFor(at);
  if (type === 's' || type === 'n' || type === 'd') {
    const input = h('input', {
      id,
      ...(type === 'n' ? { type: 'number', step: 'any' } : {}),
      ...(required ? { required: '' } : {}),
      ...(type === 'd' ? { value: new Date().toISOString(), placeholder: 'an ISO-8601 date-time' } : {}),
    });
    inputs.push({ path: at, required, read: () => (input.value === '' ? undefined : type === 'n' ? Number(input.value) : input.value) });
    return h('label', {}, labelFor(at), input);
  }
  if (type === 'b') {
    // An optional boolean is left to the JSON textarea: an unticked box would say false.
    if (!required) return undefined;
    const input = h('input', { id, type: 'checkbox' });
    inputs.push({ path: at, required, read: () => input.checked });
    return h('label', { class: 'check' }, input, labelFor(at));
  }
  if (typeof type !== 'object' || !('ref' in type)) return undefined;
  const shape = shapeOf(type.ref);
  if (shape?.kind === 'enum') {
    const select = h('select', { id }, ...(required ? [] : [h('option', { value: '' }, '—')]));
    for (const value of shape.values) select.append(h('option', { value }, value));
    if (required) select.value = [...shape.values].find((v) => v !== 'UNKNOWN') ?? '';
    inputs.push({ path: at, required, read: () => select.value || undefined });
    return h('label', {}, labelFor(at), select);
  }
  if (shape?.kind !== 'model' || !required || depth >= DEPTH) return undefined;
  const children = [...shape.fields.values()]
    .filter((field) => field.required && field.key !== 'schema')
    .map((field) => fieldInputs(field.key, field.type, true, at, depth + 1, inputs));
  // A required model with no required field of its own is sent empty.
  inputs.push({ path: at, required, read: () => ({}) });
  return h('fieldset', { class: 'stack' }, h('legend', {}, `${labelFor(at)} (${type.ref})`), ...children);
}

/** A field naming one record of another kind: a choice of that kind's records (by id, or as `{ id }`). */
function referenceInput(
  key: string,
  reference: { kind: MaterialKind; id?: true },
  required: boolean,
  choices: RecordChoices,
  inputs: Input[],
) {
  const select = h('select', { id: idFor([key]) }, h('option', { value: '' }, required ? 'reading…' : '—'));
  void choices(reference.kind).then((records) => {
    select.replaceChildren(
      ...(required ? [] : [h('option', { value: '' }, '—')]),
      ...records.map((record) => h('option', { value: record.id }, record.label)),
    );
    if (required && !records.length) select.append(h('option', { value: '' }, `no ${reference.kind} yet`));
  });
  inputs.push({ path: [key], required, read: () => (select.value ? (reference.id ? select.value : { id: select.value }) : undefined) });
  return h('label', {}, `${key} (${reference.kind})`, select);
}

export interface MaterialForm {
  /** The form's fields, to show. */
  fields: Node[];
  /** The seed the form and the extra JSON make, checked against the Seeded model; throws an Error naming what is wrong. */
  seed(extra: string): Json;
}

/** The create form of a kind (its `seeded` model's shape). */
export function materialForm(row: KindRow, choices: RecordChoices): MaterialForm {
  const seeded = row.seeded!;
  const shape = shapeOf(seeded);
  if (shape?.kind !== 'model') throw new Error(`The graph table has no shape for ${seeded}.`);
  const inputs: Input[] = [];
  const fields: Node[] = [];
  for (const field of shape.fields.values()) {
    if (field.key === 'schema') continue;
    const reference = row.seeds?.[field.key];
    const node =
      reference && !reference.many && !reference.model && KINDS.some((k) => k.kind === reference.kind && k.ops.snapshot)
        ? referenceInput(field.key, reference, field.required, choices, inputs)
        : reference?.many
          ? undefined
          : fieldInputs(field.key, field.type, field.required, [], 0, inputs);
    if (node) fields.push(node);
  }
  return {
    fields,
    seed(extra) {
      const seed: Json = {};
      // Outer models first (their `{}`), then the fields inside them.
      for (const input of [...inputs].sort((a, b) => a.path.length - b.path.length)) {
        const value = input.read();
        if (value === undefined) continue;
        let node = seed;
        for (const step of input.path.slice(0, -1)) node = (node[step] ??= {}) as Json;
        node[input.path[input.path.length - 1]!] ??= value;
      }
      if (extra.trim()) {
        let more: unknown;
        try {
          more = JSON.parse(extra);
        } catch (error) {
          throw new Error(`More fields: not JSON (${(error as Error).message}).`);
        }
        if (typeof more !== 'object' || more === null || Array.isArray(more))
          throw new Error('More fields: a JSON object of fields, please.');
        Object.assign(seed, more);
      }
      const wrong = checkShape(seeded, seed, lower(seeded));
      if (wrong) throw new Error(`Not sent: ${wrong}.`);
      return seed;
    },
  };
}
