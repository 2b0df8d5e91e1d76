/**
 * Small, explicit validators for untrusted JSON. Each failure is a 400 whose
 * message names the field (`path`) and what was expected.
 */
import { badRequest, clip } from './http.js';
import type { Json, JsonObject } from '../shared/json.js';

/** A value as JSON, cut short when long (for messages). */
const shown = (value: unknown) => clip(JSON.stringify(value) ?? 'nothing');

export type { Json, JsonObject } from '../shared/json.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const describe = (value: unknown) =>
  value === undefined ? 'absent' : value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

export function object(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw badRequest(`${path} must be a JSON object, not ${describe(value)}.`);
  return value;
}

export function string(value: unknown, path: string): string {
  if (typeof value !== 'string') throw badRequest(`${path} must be a string, not ${describe(value)}.`);
  return value;
}

export function number(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${path} must be a number, not ${describe(value)}.`);
  return value;
}

export function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw badRequest(`${path} must be true or false, not ${describe(value)}.`);
  return value;
}

export function array(value: unknown, path: string): Json[] {
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array, not ${describe(value)}.`);
  return value;
}

export function uuid(value: unknown, path: string): string {
  if (!isUuid(value)) throw badRequest(`${path} must be a UUID, not ${shown(value)}.`);
  return value.toLowerCase();
}

export function oneOf<T extends string>(value: unknown, allowed: readonly T[], path: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw badRequest(`${path} must be one of ${allowed.join(', ')}; got ${shown(value)}.`);
  }
  return value as T;
}

export function required<T>(object: JsonObject, key: string, path: string, check: (v: unknown, p: string) => T): T {
  if (!(key in object) || object[key] === null) throw badRequest(`${path}.${key} is required.`);
  return check(object[key], `${path}.${key}`);
}

/** Checks an optional field: absent or null gives undefined. */
export function optional<T>(object: JsonObject, key: string, path: string, check: (v: unknown, p: string) => T): T | undefined {
  const value = object[key];
  return value === undefined || value === null ? undefined : check(value, `${path}.${key}`);
}

/** A GroupedTimestamp: `{value: ISO-8601, readable?}`. */
export function timestamp(value: unknown, path: string): { value: string; readable?: string } {
  const record = object(value, path);
  knownKeys(record, ['schema', 'value', 'readable'], path, 'GroupedTimestamp');
  const schema = optional(record, 'schema', path, embeddedSchema);
  const iso = required(record, 'value', path, string);
  const time = Date.parse(iso);
  if (Number.isNaN(time)) throw badRequest(`${path}.value must be an ISO-8601 date, not ${shown(iso)}.`);
  const readable = optional(record, 'readable', path, string);
  return { ...(schema ? { schema } : {}), value: new Date(time).toISOString(), ...(readable === undefined ? {} : { readable }) };
}

export function integerArray(value: unknown, path: string): number[] {
  return array(value, path).map((item, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item)) {
      throw badRequest(`${path}[${i}] must be an integer key code, not ${describe(item)}.`);
    }
    return item;
  });
}

/** Refuses keys that are not fields of the model, so that every stored field is one the SDK reads back. */
export function knownKeys(record: JsonObject, keys: readonly string[], path: string, model: string): void {
  for (const key of Object.keys(record)) {
    if (!keys.includes(key)) throw badRequest(`${path}.${key} is not a field of ${model} (its fields: ${keys.join(', ')}).`);
  }
}

/** An EmbeddedModelSchema: `{migration: number, semantic: "UNKNOWN" | "MAJOR_0_MINOR_0_PATCH_1"}`. */
export function embeddedSchema(value: unknown, path: string): { migration: number; semantic: string } {
  const record = object(value, path);
  knownKeys(record, ['migration', 'semantic'], path, 'EmbeddedModelSchema');
  return {
    migration: required(record, 'migration', path, number),
    semantic: required(record, 'semantic', path, (v, p) => oneOf(v, ['UNKNOWN', 'MAJOR_0_MINOR_0_PATCH_1'], p)),
  };
}

/**
 * JSON text of a record to store: a `null` sent for an optional field means
 * "absent", so the key is left out (the SDK's models have no null fields to serve).
 */
export const storedJson = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (v === null ? undefined : v));

/** The fields of `record` that are neither undefined nor null. */
export function defined<T extends Record<string, unknown>>(record: T): { [K in keyof T]: Exclude<T[K], undefined | null> } {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && v !== null)) as never;
}

/** Refuses keys the service assigns itself, so that nothing sent is silently replaced. */
export function noServerKeys(record: JsonObject, keys: readonly string[], path: string): void {
  for (const key of keys) {
    if (key in record && record[key] !== null) {
      throw badRequest(`${path}.${key} is assigned by the service and cannot be sent.`);
    }
  }
}
