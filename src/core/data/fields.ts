/** Values of the data format read as written: times, lists, bytes in base64, and lists without repeats. */
import { badRequest } from '../http.js';
import { array, object, optional, required, string, type Json, type JsonObject } from '../validate.js';

/** An ISO-8601 time, kept as written. */
export function iso(value: unknown, path: string): string {
  const text = string(value, path);
  if (Number.isNaN(Date.parse(text))) throw badRequest(`${path} must be an ISO-8601 date, not ${JSON.stringify(text)}.`);
  return text;
}

/** A GroupedTimestamp, kept as written. */
export function grouped(value: unknown, path: string): JsonObject {
  const record = object(value, path);
  required(record, 'value', path, iso);
  optional(record, 'readable', path, string);
  return record;
}

/** A list's items, holes of a sparse array (possible from JavaScript callers) read as missing items. */
export const dense = (items: unknown[]): unknown[] => Array.from(items);

/** The items of one key of the data (none when it is absent). */
export function list(data: JsonObject, key: string): unknown[] {
  return dense(optional(data, key, 'data', array) ?? []);
}

/** What a value that is not JSON is, for a message: `NaN`, `a function`, `a Date`, `absent`. */
const whatItIs = (value: unknown) =>
  value === undefined
    ? 'absent'
    : typeof value === 'number'
      ? String(value)
      : typeof value === 'object'
        ? `a ${(value as object).constructor?.name ?? 'object'}`
        : `a ${typeof value}`;

/**
 * A JSON value, kept as written: null, a string, a finite number, a boolean, a list of them or a
 * plain object of them (a key whose value is undefined counts as absent, as JSON writes it).
 * Anything else (a function, a Date, NaN, a hole in a list) is a 400 naming where it is.
 */
export function json(value: unknown, path: string): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) {
    for (const [i, item] of dense(value).entries()) json(item, `${path}[${i}]`);
    return value as Json[];
  }
  const prototype = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (prototype === Object.prototype || prototype === null) {
    for (const [key, item] of Object.entries(value as object)) if (item !== undefined) json(item, `${path}.${key}`);
    return value as JsonObject;
  }
  throw badRequest(`${path} must be JSON (null, a string, a number, a boolean, a list or an object), not ${whatItIs(value)}.`);
}

/** Bytes as base64 (in chunks, so that a large value does not overflow the call stack). */
export const toBase64 = (bytes: Uint8Array) => {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};

/** Base64 as bytes; anything else a 400. */
export function fromBase64(value: unknown, path: string): Uint8Array {
  try {
    return Uint8Array.from(atob(string(value, path)), (c) => c.charCodeAt(0));
  } catch {
    throw badRequest(`${path} must be base64.`);
  }
}

/** The items, refused when two share a key (`data.<what> lists <key> twice`). */
export function unique<T>(items: T[], key: (item: T) => string, what: string): T[] {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) throw badRequest(`data.${what} lists ${k} twice.`);
    seen.add(k);
  }
  return items;
}
