/**
 * The SDK's model shapes as the service carries them (SHAPES in graph.ts, generated from the SDK by
 * scripts/graph.mjs), and a strict check of a request body against one: required keys, types, enum
 * values and unknown keys, through nested models, arrays and maps.
 */
import { SHAPES } from './graph.js';

/** A field type: 's' string, 'n' number, 'b' boolean, 'd' ISO-8601 date-time, 'o' any object, a model or enum name, or an array or map of one. */
export type FieldType = 's' | 'n' | 'b' | 'd' | 'o' | { ref: string } | { array: FieldType } | { map: FieldType };

export interface ShapeField {
  /** The key on the wire. */
  key: string;
  required: boolean;
  /** `null` is a value of this field (`T | null` in the SDK). */
  nullable: boolean;
  type: FieldType;
}

export type Shape =
  | { kind: 'model'; name: string; fields: ReadonlyMap<string, ShapeField> }
  | { kind: 'enum'; name: string; values: ReadonlySet<string> };

let shapes: Map<string, Shape> | undefined;

function parseType(text: string): FieldType {
  if (text.endsWith('[]')) return { array: parseType(text.slice(0, -2)) };
  if (text.endsWith('{}')) return { map: parseType(text.slice(0, -2)) };
  return text === 's' || text === 'n' || text === 'b' || text === 'd' || text === 'o' ? text : { ref: text };
}

function decode(): Map<string, Shape> {
  const out = new Map<string, Shape>();
  for (const line of SHAPES.split('\n')) {
    const equals = line.indexOf('=');
    const space = line.indexOf(' ');
    if (equals > 0 && (space < 0 || equals < space)) {
      const name = line.slice(0, equals);
      out.set(name, { kind: 'enum', name, values: new Set(line.slice(equals + 1).split('|')) });
      continue;
    }
    const name = space < 0 ? line : line.slice(0, space);
    const fields = new Map<string, ShapeField>();
    if (space > 0) {
      for (const text of line.slice(space + 1).split(',')) {
        const [left, right] = text.split(':') as [string, string];
        const required = !left.endsWith('?');
        const key = required ? left : left.slice(0, -1);
        const nullable = right.endsWith('|null');
        fields.set(key, { key, required, nullable, type: parseType(nullable ? right.slice(0, -'|null'.length) : right) });
      }
    }
    out.set(name, { kind: 'model', name, fields });
  }
  return out;
}

/** The shape of an SDK model or enum the material graph uses, if SHAPES has it. */
export function shapeOf(name: string): Shape | undefined {
  shapes ??= decode();
  return shapes.get(name);
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'string'
        ? `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
        : isObject(value)
          ? 'an object'
          : `${typeof value} ${String(value)}`;

/**
 * The first way `value` is not a `model` (an SDK model or enum SHAPES has), as a message that
 * starts with the path of the offending value (`path` is the value's own: 'seededPerson',
 * giving 'seededPerson.type: …'), or undefined when it is one. A null in an optional field is
 * taken as the field left out, as the SDK's own `ToJSON` writes an unset field it was given.
 */
export function checkShape(model: string, value: unknown, path: string): string | undefined {
  return checkRef(model, value, path);
}

function checkRef(name: string, value: unknown, path: string): string | undefined {
  const shape = shapeOf(name);
  if (!shape) throw new Error(`No shape for ${name}: scripts/graph.mjs did not collect it.`);
  if (shape.kind === 'enum') {
    return typeof value === 'string' && shape.values.has(value)
      ? undefined
      : `${path}: ${describe(value)} is not a ${name} (one of ${[...shape.values].join(', ')})`;
  }
  if (!isObject(value)) return `${path}: expected a ${name} object, got ${describe(value)}`;
  for (const key of Object.keys(value)) if (!shape.fields.has(key)) return `${path}.${key}: unknown key (${name} has no ${key})`;
  for (const field of shape.fields.values()) {
    const child = `${path}.${field.key}`;
    const v = value[field.key];
    if (v === undefined || (v === null && !field.required && !field.nullable)) {
      if (field.required) return `${child}: missing (required by ${name})`;
    } else if (v === null) {
      if (!field.nullable) return `${child}: null is not a value of ${name}.${field.key}`;
    } else {
      const wrong = checkType(field.type, v, child);
      if (wrong) return wrong;
    }
  }
  return undefined;
}

function checkType(type: FieldType, value: unknown, path: string): string | undefined {
  switch (type) {
    case 's':
      return typeof value === 'string' ? undefined : `${path}: expected a string, got ${describe(value)}`;
    case 'b':
      return typeof value === 'boolean' ? undefined : `${path}: expected a boolean, got ${describe(value)}`;
    case 'n':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : `${path}: expected a number, got ${describe(value)}`;
    case 'o':
      return isObject(value) ? undefined : `${path}: expected an object, got ${describe(value)}`;
    case 'd':
      return typeof value === 'string' && ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : `${path}: expected an ISO-8601 date-time, got ${describe(value)}`;
  }
  if ('ref' in type) return checkRef(type.ref, value, path);
  if ('array' in type) {
    if (!Array.isArray(value)) return `${path}: expected an array, got ${describe(value)}`;
    for (const [i, item] of value.entries()) {
      const wrong = checkType(type.array, item, `${path}[${i}]`);
      if (wrong) return wrong;
    }
    return undefined;
  }
  if (!isObject(value)) return `${path}: expected an object (a map), got ${describe(value)}`;
  for (const [key, item] of Object.entries(value)) {
    const wrong = checkType(type.map, item, `${path}[${JSON.stringify(key)}]`);
    if (wrong) return wrong;
  }
  return undefined;
}
