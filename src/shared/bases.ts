/**
 * Base URLs: where the service answers. A port range may be written compactly
 * (`http://localhost:39300-39333`); matching a URL is O(1).
 */

/**
 * Every address a real client probes for a local Pieces OS: port 1000 (the
 * SDK's default `basePath`), 5323 (older Linux builds) and 39300–39333 (current
 * Pieces OS), on `localhost` and `127.0.0.1`.
 */
export const DEFAULT_BASES: readonly string[] = ['localhost', '127.0.0.1'].flatMap((host) =>
  [1000, 5323, '39300-39333'].map((port) => `http://${host}:${port}`),
);

export interface Base {
  origin: string;
  /** Path prefix without a trailing slash ('' for an origin). */
  path: string;
}

const RANGE = /^([a-z][a-z0-9+.-]*:\/\/(?:\[[^\]]*\]|[^/:?#]*)):(\d+)-(\d+)(.*)$/i;

/** The largest range written compactly; more is surely a typo. */
const MAX_RANGE = 1024;

function parseOne(base: string): Base {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError(`A base must be an http(s) URL, not ${JSON.stringify(base)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`A base must be an http(s) URL, not ${base}.`);
  }
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
}

/** Expands one base, which may name a port range (`http://host:39300-39333/prefix`). */
export function expandBase(base: string): Base[] {
  const range = RANGE.exec(base.trim());
  if (!range) return [parseOne(base.trim())];
  const [, head, from, to, rest] = range as unknown as [string, string, string, string, string];
  const first = Number(from);
  const last = Number(to);
  if (first > last || last > 65535 || last - first >= MAX_RANGE) {
    throw new TypeError(`The port range in ${base} must go up, within 0–65535 and at most ${MAX_RANGE} ports.`);
  }
  const bases: Base[] = [];
  for (let port = first; port <= last; port++) bases.push(parseOne(`${head}:${port}${rest}`));
  return bases;
}

/** The WebSocket form of a base: `ws://` for `http://`, `wss://` for `https://`. */
export function webSocketBase(base: Base): Base {
  return { origin: base.origin.replace(/^http/, 'ws'), path: base.path };
}

export interface BaseMatch {
  base: Base;
  /** The path under the base ('' for the base itself). */
  path: string;
}

/**
 * Matches URLs against a list of bases in O(1): a Map by origin, then the few
 * path prefixes of that origin (longest first).
 */
export interface BaseMatcher {
  /** The bases, written compactly as configured. */
  readonly list: readonly string[];
  match(url: URL): BaseMatch | null;
}

export function baseMatcher(list: readonly string[], transform: (base: Base) => Base = (b) => b): BaseMatcher {
  const byOrigin = new Map<string, Base[]>();
  for (const base of list.flatMap(expandBase).map(transform)) {
    const bases = byOrigin.get(base.origin) ?? [];
    if (!bases.some((b) => b.path === base.path)) bases.push(base);
    bases.sort((a, b) => b.path.length - a.path.length);
    byOrigin.set(base.origin, bases);
  }
  return {
    list: [...list],
    match(url) {
      const bases = byOrigin.get(url.origin);
      if (!bases) return null;
      for (const base of bases) {
        if (base.path === '') return { base, path: url.pathname };
        if (url.pathname === base.path) return { base, path: '' };
        if (url.pathname.startsWith(`${base.path}/`)) return { base, path: url.pathname.slice(base.path.length) };
      }
      return null;
    },
  };
}
