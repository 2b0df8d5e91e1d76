// @vitest-environment node
/**
 * The page's interception layer (src/page/intercept.ts): requests under the bases are answered by
 * the service; every other fetch reaches the fetch the page had exactly as it was called, never
 * passing through the interception layer (which would build a Request of it and clone its body).
 * A fetch the service answers gets the service's own Response, as a network answer looks (its URL,
 * redirects, a failed connection, an abort), with no second Response made around it.
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
      expect(before.mock.calls).toEqual([
        ['https://app.example.test/api', init],
        [request, undefined],
        [new URL('https://app.example.test/third'), undefined],
      ]);
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
    const stop = interceptPageRequests(
      async () => new Response('service'),
      () => true,
    );
    try {
      await expect(fetch('not a url at all')).rejects.toThrow();
      expect(before).toHaveBeenCalledWith('not a url at all', undefined);
    } finally {
      stop();
    }
  });

  describe('a fetch the service answers', () => {
    const BASE = 'http://localhost:1000';
    /** Starts intercepting with `answer` for URLs under BASE; the page's own fetch answers the rest. */
    const intercepting = (answer: (request: Request) => Response | Promise<Response>) => {
      const before = vi.fn(
        async (input: RequestInfo | URL) => new Response(`network: ${input instanceof Request ? input.url : String(input)}`),
      );
      globalThis.fetch = before as unknown as typeof fetch;
      const seen: Request[] = [];
      const texts: Array<string | undefined> = [];
      const stop = interceptPageRequests(
        async (request, text) => {
          seen.push(request);
          texts.push(text);
          return answer(request);
        },
        (url) => url.origin === BASE,
      );
      return { before, seen, texts, stop };
    };

    it("is the service's own Response, its url the request's, with the request as sent", async () => {
      const made = new Response('{"ok":true}', { status: 201, headers: { 'Content-Type': 'application/json' } });
      const { seen, texts, stop } = intercepting(() => made);
      try {
        const response = await fetch(`${BASE}/conversations/create`, {
          method: 'POST',
          headers: { 'X-Test': 'yes' },
          body: '{"type":"COPILOT"}',
        });
        // A body given as a string comes with the request as that string (no need to read it back).
        expect(texts).toEqual(['{"type":"COPILOT"}']);
        // Not a copy the interception layer made of it (which reads the body through another stream).
        expect(response).toBe(made);
        expect(response.url).toBe(`${BASE}/conversations/create`);
        expect([response.status, response.redirected, await response.json()]).toEqual([201, false, { ok: true }]);
        expect(seen.map((r) => [r.method, r.url, r.headers.get('x-test')])).toEqual([['POST', `${BASE}/conversations/create`, 'yes']]);
        expect(await seen[0]!.text()).toBe('{"type":"COPILOT"}');
        // Any other body is the Request's to read.
        await fetch(`${BASE}/conversations/create`, { method: 'POST', body: new TextEncoder().encode('{}') });
        expect(texts[1]).toBeUndefined();
        expect(await seen[1]!.text()).toBe('{}');
      } finally {
        stop();
      }
    });

    it('fails as a dropped connection where the service answers Response.error(), and rejects a request fetch refuses as fetch does', async () => {
      const { seen, stop } = intercepting(() => Response.error());
      try {
        await expect(fetch(`${BASE}/applications`)).rejects.toThrow(TypeError);
        // Rejected, not thrown where fetch is called; the service never sees it.
        const refused = fetch(`${BASE}/applications`, { method: 'GET', body: 'a body' });
        await expect(refused).rejects.toThrow(TypeError);
        expect(seen).toHaveLength(1);
      } finally {
        stop();
      }
    });

    it("rejects with the caller's abort reason, before the service is asked or while it answers", async () => {
      let release = () => {};
      const { seen, stop } = intercepting(() => new Promise<Response>((resolve) => (release = () => resolve(new Response('late')))));
      try {
        const early = new AbortController();
        early.abort(new Error('not wanted'));
        await expect(fetch(`${BASE}/applications`, { signal: early.signal })).rejects.toThrow('not wanted');
        expect(seen).toHaveLength(0);
        const later = new AbortController();
        const pending = fetch(new Request(`${BASE}/applications`, { signal: later.signal }));
        await vi.waitFor(() => expect(seen).toHaveLength(1));
        later.abort(new Error('gone'));
        await expect(pending).rejects.toThrow('gone');
        release();
      } finally {
        stop();
      }
    });

    it('follows a redirect as fetch does: a POST answered 303 or 302 goes on as a GET, to the service or the network', async () => {
      const { before, seen, stop } = intercepting((request) => {
        const path = new URL(request.url).pathname;
        if (path === '/moved') return new Response(null, { status: 303, headers: { Location: '/here' } });
        if (path === '/elsewhere') return new Response(null, { status: 302, headers: { Location: 'https://app.example.test/there' } });
        return new Response(`service: ${request.method} ${path}`);
      });
      try {
        const response = await fetch(`${BASE}/moved`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: 'Bearer k' },
          body: '{}',
        });
        expect([await response.text(), response.url, response.redirected]).toEqual(['service: GET /here', `${BASE}/here`, true]);
        // The body's headers went with the body; the same origin keeps the credentials.
        expect([seen[1]!.headers.get('content-type'), seen[1]!.headers.get('authorization')]).toEqual([null, 'Bearer k']);
        const away = await fetch(`${BASE}/elsewhere`, { method: 'POST', headers: { Authorization: 'Bearer k' }, body: 'x' });
        expect([await away.text(), away.redirected]).toEqual(['network: https://app.example.test/there', true]);
        const sent = before.mock.calls.at(-1)![0] as unknown as Request;
        expect([sent.method, sent.headers.get('authorization')]).toEqual(['GET', null]);
      } finally {
        stop();
      }
    });

    it("refuses a redirect where the request says so, where its body would be sent again, and after 20; 'manual' gets it as it is", async () => {
      const { seen, stop } = intercepting((request) => {
        const path = new URL(request.url).pathname;
        if (path === '/loop') return new Response(null, { status: 302, headers: { Location: '/loop' } });
        return new Response(null, { status: 307, headers: { Location: '/next' } });
      });
      try {
        await expect(fetch(`${BASE}/keep`, { redirect: 'error' })).rejects.toThrow(TypeError);
        await expect(fetch(`${BASE}/keep`, { method: 'PUT', body: 'once' })).rejects.toThrow(/send the body again/);
        const manual = await fetch(`${BASE}/keep`, { redirect: 'manual' });
        expect([manual.status, manual.headers.get('location')]).toEqual([307, '/next']);
        seen.length = 0;
        await expect(fetch(`${BASE}/loop`)).rejects.toThrow(/too many redirects/);
        expect(seen).toHaveLength(21);
      } finally {
        stop();
      }
    });
  });
});
