/**
 * The demo's `connect-src`, derived from the bases it answers. index.html's
 * static policy lets the page connect to any http(s) and ws(s) URL; before its
 * first request the demo adds a second policy that allows only its own origin
 * and its bases. A browser enforces every policy of a page, so the narrower
 * one decides.
 */
import { expandBase, type Base } from 'pieces-os-worker/core';

/**
 * `connect-src 'self'` plus each base (a path as a prefix) in its http(s) and
 * ws(s) forms; a port range is listed port by port, as CSP has no ranges.
 */
export function connectSources(bases: readonly string[]): string {
  const sources = ["'self'"];
  for (const raw of bases) {
    let expanded: Base[];
    try {
      expanded = expandBase(raw);
    } catch {
      continue; // startPiecesService reports a base that is not an http(s) URL.
    }
    for (const base of expanded) addBase(sources, base);
  }
  return `connect-src ${sources.join(' ')}`;
}

function addBase(sources: string[], base: Base) {
  // A path is a prefix when it ends with '/'; ';' and ',' would end the source list.
  const path = base.path ? `${base.path.replace(/;/g, '%3B').replace(/,/g, '%2C')}/` : '';
  // The WebSocket form of an http(s) base: ws(s) on the same host.
  for (const origin of [base.origin, base.origin.replace(/^http/, 'ws')]) {
    const source = origin + path;
    if (!sources.includes(source)) sources.push(source);
  }
}

/** Adds the policy for `bases` to the page: call it before the first request. */
export function restrictConnections(bases: readonly string[]): void {
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = connectSources(bases);
  document.head.append(meta);
}
