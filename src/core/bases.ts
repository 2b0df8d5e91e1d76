/** Base URLs: where the service answers. */
export const DEFAULT_BASES = ['http://localhost:1000', 'http://localhost:39300'] as const;

export interface Base {
  origin: string;
  /** Path prefix without a trailing slash ('' for an origin). */
  path: string;
}

export function parseBase(base: string): Base {
  const url = new URL(base);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`A base must be an http(s) URL, not ${base}.`);
  }
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
}

/** The WebSocket form of a base: `ws://` for `http://`, `wss://` for `https://`. */
export function webSocketBase(base: Base): Base {
  return { origin: base.origin.replace(/^http/, 'ws'), path: base.path };
}
