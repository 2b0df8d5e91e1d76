/**
 * Requests outside the bases skip the worker where the browser has static routes
 * (`InstallEvent.addRoutes`, Chromium 123+): they go to the network with no fetch event, so
 * the app's own requests neither wait for this worker nor start it when it is stopped.
 * Elsewhere every request still reaches the fetch handler, which lets them pass.
 */
import { expandBase } from '../shared/bases.js';
import type { ExtendableEventLike } from './sw-types.js';

/** A URLPattern's parts, as `addRoutes` takes them. */
export interface UrlPatternInit {
  protocol: string;
  hostname: string;
  port?: string;
}

/** `InstallEvent.addRoutes`'s rule: what matches no base goes to the network. */
export interface NetworkRule {
  condition: { not: { or: Array<{ urlPattern: UrlPatternInit }> } };
  source: 'network';
}

/** Characters URLPattern reads as syntax, escaped to stand for themselves. */
const escapePattern = (part: string) => part.replace(/[\\:*(){}+?]/g, '\\$&');

/**
 * The patterns that cover every base: one per host and port, ports that share all but
 * their last digit (three or more of them) as one wildcard (`3930*`), the paths not
 * looked at. A superset of the bases: what it lets through still meets the fetch handler.
 */
export function basePatterns(bases: readonly string[]): UrlPatternInit[] {
  const ports = new Map<string, Set<string>>();
  for (const { origin } of bases.flatMap(expandBase)) {
    const url = new URL(origin);
    const host = `${url.protocol}//${url.hostname}`;
    if (!ports.has(host)) ports.set(host, new Set());
    ports.get(host)!.add(url.port);
  }
  const patterns: UrlPatternInit[] = [];
  for (const [host, set] of ports) {
    const url = new URL(host);
    const base = { protocol: url.protocol.slice(0, -1), hostname: escapePattern(url.hostname) };
    const tens = new Map<string, string[]>();
    for (const port of set) {
      // '' (the protocol's default port) and one-digit ports are named as they are.
      if (port.length < 2) patterns.push({ ...base, port });
      else tens.set(port.slice(0, -1), [...(tens.get(port.slice(0, -1)) ?? []), port]);
    }
    for (const [ten, group] of tens) {
      if (group.length >= 3) patterns.push({ ...base, port: `${ten}*` });
      else for (const port of group) patterns.push({ ...base, port });
    }
  }
  return patterns;
}

/** The rule that sends every request under no base to the network. */
export const networkRule = (bases: readonly string[]): NetworkRule => ({
  condition: { not: { or: basePatterns(bases).map((urlPattern) => ({ urlPattern })) } },
  source: 'network',
});

/** Adds the rule during `install`, where the browser has static routes; a refusal leaves every request to the fetch handler. */
export function routeOthersToNetwork(event: ExtendableEventLike, bases: readonly string[]): void {
  const addRoutes = (event as ExtendableEventLike & { addRoutes?: (rules: NetworkRule) => Promise<void> }).addRoutes;
  if (typeof addRoutes !== 'function') return;
  try {
    event.waitUntil(addRoutes.call(event, networkRule(bases)).catch(() => {}));
  } catch {
    // A browser that throws rather than rejects: the fetch handler still sees every request.
  }
}
