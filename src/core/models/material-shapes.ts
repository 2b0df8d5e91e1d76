/**
 * The fields of an SDK model the graph table carries (`shapeOf`, src/shared/shapes.ts), each type
 * in the table's compact spelling (`s`, `n`, `b`, `d`, a model or enum name, `T[]`, `T{}`): what a
 * create copies from a Seeded model into its record, and which required fields it fills itself.
 */
import { shapeOf, type FieldType } from '../../shared/shapes.js';

export interface FieldShape {
  type: string;
  required: boolean;
}

const spelled = (type: FieldType): string =>
  typeof type === 'string' ? type : 'ref' in type ? type.ref : 'array' in type ? `${spelled(type.array)}[]` : `${spelled(type.map)}{}`;

const cache = new Map<string, ReadonlyMap<string, FieldShape> | undefined>();

/** A model's fields by wire key; undefined for an enum or a name the table does not carry. */
export function fieldsOf(model: string): ReadonlyMap<string, FieldShape> | undefined {
  if (cache.has(model)) return cache.get(model);
  const shape = shapeOf(model);
  const fields =
    shape?.kind === 'model'
      ? new Map([...shape.fields.values()].map((field) => [field.key, { type: spelled(field.type), required: field.required }]))
      : undefined;
  cache.set(model, fields);
  return fields;
}
