/**
 * Runtime overrides: answers that replace, delay or fail the service's own
 * answers, for testing loading and error states. Plain data (no functions), so
 * that they travel from a page to its worker.
 */
import { badRequest, reply } from './http.js';
import { compilePath, OPERATIONS, type OperationName, type PathMatcher } from './routes.js';
import { isObject } from './validate.js';

export interface Override {
  /** The operation to match, by its SDK name (e.g. `conversationsSnapshot`). */
  operation?: OperationName;
  /** Or the path under a base to match; `{name}` segments match any one segment (e.g. `/conversations/{id}/delete`). */
  path?: string;
  /** Only requests with this method (default: any). */
  method?: string;
  /** Answer with this status instead of the service's answer. */
  status?: number;
  /** The body of that answer: a string is sent as text/plain, anything else as JSON. */
  body?: unknown;
  /** Headers of that answer. */
  headers?: Record<string, string>;
  /** Wait this many milliseconds before answering (alone: then the service's own answer). */
  delay?: number;
  /** Fail as a network error (fetch rejects with a TypeError), as when no server listens. */
  networkError?: boolean;
  /** Apply to the first matching request only. */
  once?: boolean;
}

interface Active {
  override: Override;
  matchPath: PathMatcher | null;
}

const KEYS = new Set(['operation', 'path', 'method', 'status', 'body', 'headers', 'delay', 'networkError', 'once']);
const NAMES: ReadonlySet<string> = new Set(OPERATIONS.map((operation) => operation.name));

/** Checks an override, with a message naming what is wrong. */
export function parseOverride(value: unknown, at = 'override'): Override {
  if (!isObject(value)) throw badRequest(`${at} must be an object such as { operation: 'conversationsSnapshot', status: 500 }.`);
  const override = value as Override;
  for (const key of Object.keys(value)) {
    if (!KEYS.has(key)) throw badRequest(`${at} has an unknown key "${key}"; use ${[...KEYS].join(', ')}.`);
  }
  const { operation, path, method, status, body, headers, delay, networkError, once } = override;
  if (operation === undefined && path === undefined) throw badRequest(`${at} needs an operation name or a path to match.`);
  if (operation !== undefined && (typeof operation !== 'string' || !NAMES.has(operation))) {
    const near = typeof operation === 'string' ? nearest(operation) : undefined;
    throw badRequest(
      `${at}.operation must name an operation (e.g. conversationsSnapshot); got ${JSON.stringify(operation)}.${near ? ` Did you mean ${near}?` : ''}`,
    );
  }
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw badRequest(`${at}.path must be a path under a base starting with /; got ${JSON.stringify(path)}.`);
  }
  if (method !== undefined && (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))) {
    throw badRequest(`${at}.method must be an HTTP method such as GET; got ${JSON.stringify(method)}.`);
  }
  if (status !== undefined && (!Number.isInteger(status) || status < 200 || status > 599)) {
    throw badRequest(`${at}.status must be an HTTP status from 200 to 599; got ${JSON.stringify(status)}.`);
  }
  if (body !== undefined && status === undefined) throw badRequest(`${at}.body needs a status.`);
  if (headers !== undefined && (!isObject(headers) || !Object.values(headers).every((v) => typeof v === 'string'))) {
    throw badRequest(`${at}.headers must be an object of strings.`);
  }
  if (headers !== undefined && status === undefined) throw badRequest(`${at}.headers needs a status.`);
  if (delay !== undefined && (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0)) {
    throw badRequest(`${at}.delay must be a number of milliseconds, 0 or more; got ${JSON.stringify(delay)}.`);
  }
  if (networkError !== undefined && typeof networkError !== 'boolean') throw badRequest(`${at}.networkError must be true or false.`);
  if (networkError && status !== undefined) throw badRequest(`${at} cannot both fail with a network error and answer a status.`);
  if (once !== undefined && typeof once !== 'boolean') throw badRequest(`${at}.once must be true or false.`);
  if (status === undefined && !networkError && delay === undefined) {
    throw badRequest(`${at} changes nothing: give a status, a delay or networkError: true.`);
  }
  return { ...override, ...(method ? { method: method.toUpperCase() } : {}) };
}

/** The operation name closest to a misspelt one (at most a third of its letters apart), if any. */
function nearest(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of NAMES) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** What an override does to one request. */
export interface Outcome {
  delay: number;
  /** The answer to give instead of the service's; undefined to let the service answer. */
  response?: () => Response;
}

/** The overrides in force, newest first. */
export class Overrides {
  #active: Active[] = [];

  /** Adds overrides in front of those already in force (the first given is tried first). */
  use(overrides: readonly unknown[]): void {
    const parsed = overrides.map((override, i) => parseOverride(override, overrides.length > 1 ? `override ${i + 1}` : 'override'));
    this.#active = [
      ...parsed.map((override) => ({ override, matchPath: override.path ? compilePath(override.path) : null })),
      ...this.#active,
    ];
  }

  reset(): void {
    this.#active = [];
  }

  /** Puts back overrides kept from before a restart, behind those in force; malformed ones are dropped. */
  restore(kept: readonly unknown[]): void {
    for (const override of kept) {
      try {
        const parsed = parseOverride(override);
        this.#active.push({ override: parsed, matchPath: parsed.path ? compilePath(parsed.path) : null });
      } catch {
        // Not an override (written by another version): nothing to restore.
      }
    }
  }

  /** The overrides in force, newest first. */
  list(): Override[] {
    return this.#active.map(({ override }) => override);
  }

  get size(): number {
    return this.#active.length;
  }

  /** The outcome for a request to `path` answered by `operation` (if any); a `once` override is used up. */
  take(method: string, path: string, operation: OperationName | undefined): Outcome | undefined {
    const index = this.#active.findIndex(
      ({ override, matchPath }) =>
        (override.method === undefined || override.method === method) &&
        (override.operation !== undefined ? override.operation === operation : !!matchPath?.(path)),
    );
    if (index < 0) return undefined;
    const { override } = this.#active[index]!;
    if (override.once) this.#active.splice(index, 1);
    const delay = override.delay ?? 0;
    if (override.networkError) return { delay, response: () => Response.error() };
    if (override.status === undefined) return { delay };
    const { status, body, headers } = override;
    const bodiless = status === 204 || status === 205 || status === 304;
    return {
      delay,
      response: () => reply(bodiless ? undefined : body, { status, headers, type: typeof body === 'string' ? 'text' : 'json' }),
    };
  }
}
