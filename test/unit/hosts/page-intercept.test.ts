// @vitest-environment node
/**
 * The page's interception layer (src/page/intercept.ts): requests under the bases are answered by
 * the service; every other fetch reaches the fetch the page had exactly as it was called, never
 * passing through the interception layer (which would build a Request of it and clone its body).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { interceptPageRequests } from '../../../src/page/intercept.js';

const original = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = original;
});

describe("the page's interception", () => {
  it('answers what the service owns and hands every other fetch on untouched, its arguments as given', async () => {
    const before = vi.fn(async (..._args: unknown[]) => new Response('from the network'));
    globalThis.fetch = before as unknown as typeof fetch;
    const answered: string[] = [];
    const stop = interceptPageRequests(
      async (request) => {
        answered.push(`${request.method} ${request.url}`);
        return new Response('from the service');
      },
      (url) => url.origin === 'http://localhost:1000',
    );
    try {
      expect(await (await fetch('http://localhost:1000/applications')).text()).toBe('from the service');
      expect(await (await fetch(new URL('http://localhost:1000/user'))).text()).toBe('from the service');
      const init = { method: 'POST', body: 'a body' };
      expect(await (await fetch('https://app.example.test/api', init)).text()).toBe('from the network');
      const request = new Request('https://app.example.test/other');
      await fetch(request);
      await fetch(new URL('https://app.example.test/third'));
      expect(answered).toEqual(['GET http://localhost:1000/applications', 'GET http://localhost:1000/user']);
      // The page's own fetch got each call as made: the same string, init, Request and URL objects.
      expect(before.mock.calls).toEqual([['https://app.example.test/api', init], [request, undefined], [new URL('https://app.example.test/third'), undefined]]);
      expect(before.mock.calls[1]![0]).toBe(request);
    } finally {
      stop();
    }
    // Stopped: fetch is the page's own again.
    expect(globalThis.fetch).toBe(before);
  });

  it('lets a URL fetch cannot take fail as it would without the service', async () => {
    const before = vi.fn(async (input: unknown) => {
      new URL(String(input));
      return new Response('unreachable');
    });
    globalThis.fetch = before as unknown as typeof fetch;
    const stop = interceptPageRequests(async () => new Response('service'), () => true);
    try {
      await expect(fetch('not a url at all')).rejects.toThrow();
      expect(before).toHaveBeenCalledWith('not a url at all', undefined);
    } finally {
      stop();
    }
  });
});
