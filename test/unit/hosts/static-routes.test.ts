/** The worker's static route: every request under no base goes to the network (see src/worker/static-routes.ts). */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BASES } from '../../../src/shared/bases.js';
import { basePatterns, networkRule, routeOthersToNetwork } from '../../../src/worker/static-routes.js';
import type { ExtendableEventLike } from '../../../src/worker/sw-types.js';

describe('the static route around the worker', () => {
  it('covers the default bases with a pattern per host and port, a run of ports as one wildcard per ten', () => {
    const ports = (hostname: string) =>
      basePatterns(DEFAULT_BASES)
        .filter((pattern) => pattern.hostname === hostname)
        .map((pattern) => pattern.port);
    for (const hostname of ['localhost', '127.0.0.1'])
      expect(ports(hostname)).toEqual(['1000', '5323', '3930*', '3931*', '3932*', '3933*']);
    expect(basePatterns(DEFAULT_BASES).every((pattern) => pattern.protocol === 'http')).toBe(true);
  });

  it('names few ports one by one, a default port as empty, and escapes what URLPattern reads as syntax', () => {
    expect(basePatterns(['http://[::1]:1000', 'http://[::1]:1001/api', 'https://pieces.example/base', 'http://h:8'])).toEqual([
      { protocol: 'http', hostname: '[\\:\\:1]', port: '1000' },
      { protocol: 'http', hostname: '[\\:\\:1]', port: '1001' },
      { protocol: 'https', hostname: 'pieces.example', port: '' },
      { protocol: 'http', hostname: 'h', port: '8' },
    ]);
  });

  it('is a network rule for whatever matches none of them', () => {
    const rule = networkRule(['http://localhost:1000']);
    expect(rule).toEqual({
      condition: { not: { or: [{ urlPattern: { protocol: 'http', hostname: 'localhost', port: '1000' } }] } },
      source: 'network',
    });
  });

  it('is added during install where the browser has addRoutes, and a refusal or its absence changes nothing', async () => {
    const waited: Array<Promise<unknown>> = [];
    const added: unknown[] = [];
    const event = (addRoutes?: (rules: unknown) => Promise<void>) =>
      ({
        waitUntil: (promise: Promise<unknown>) => waited.push(promise),
        ...(addRoutes ? { addRoutes } : {}),
      }) as unknown as ExtendableEventLike;
    routeOthersToNetwork(
      event(async (rules) => void added.push(rules)),
      DEFAULT_BASES,
    );
    expect(added).toEqual([networkRule(DEFAULT_BASES)]);
    routeOthersToNetwork(
      event(() => Promise.reject(new TypeError('too many conditions'))),
      DEFAULT_BASES,
    );
    routeOthersToNetwork(
      event(() => {
        throw new TypeError('not now');
      }),
      DEFAULT_BASES,
    );
    routeOthersToNetwork(event(), DEFAULT_BASES);
    // The install never fails for it.
    await expect(Promise.all(waited)).resolves.toHaveLength(2);
  });
});
