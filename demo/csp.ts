/**
 * The demo's `connect-src`, derived from the bases it answers. index.html's
 * static policy lets the page connect to any http(s) and ws(s) URL; before its
 * first request the demo adds a second policy that allows only its own origin
 * and its bases. A browser enforces every policy of a page, so the narrower
 * one decides.
 */
import { parseBase, webSocketBase } from '../src/core/bases.js';

/** `connect-src 'self'` plus each base (a path as a prefix) in its http(s) and ws(s) forms. */
export function connectSources(bases: readonly string[]): string {
  const sources = ["'self'"];
  for (const raw of bases) {
    let base;
    try {
      base = parseBase(raw);
    } catch {
      continue; // startPiecesService reports a base that is not an http(s) URL.
    }
    // A path is a prefix when it ends with '/'; ';' and ',' would end the source list.
    const path = base.path ? `${base.path.replace(/;/g, '%3B').replace(/,/g, '%2C')}/` : '';
    for (const { origin } of [base, webSocketBase(base)]) {
      const source = origin + path;
      if (!sources.includes(source)) sources.push(source);
    }
  }
  return `connect-src ${sources.join(' ')}`;
}

/** Adds the policy for `bases` to the page: call it before the first request. */
export function restrictConnections(bases: readonly string[]): void {
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = connectSources(bases);
  document.head.append(meta);
}
