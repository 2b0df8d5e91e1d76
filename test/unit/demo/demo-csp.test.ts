import { describe, expect, it } from 'vitest';
import { connectSources } from '../../../demo/csp.js';
import { DEFAULT_BASES, expandBase, webSocketBase } from '../../../src/shared/bases.js';

describe("the demo's connect-src", () => {
  it('allows the default bases, over HTTP and WebSocket, a port range port by port', () => {
    expect(connectSources(['http://localhost:1000', 'http://127.0.0.1:39300-39302'])).toBe(
      "connect-src 'self' http://localhost:1000 ws://localhost:1000 " +
        'http://127.0.0.1:39300 ws://127.0.0.1:39300 http://127.0.0.1:39301 ws://127.0.0.1:39301 http://127.0.0.1:39302 ws://127.0.0.1:39302',
    );
    const sources = connectSources(DEFAULT_BASES).split(' ').slice(1);
    const expected = DEFAULT_BASES.flatMap((base) => expandBase(base)).flatMap((base) => [base.origin, webSocketBase(base).origin]);
    expect(sources).toEqual(["'self'", ...expected]);
  });

  it('allows a base with a path as a prefix, over https and wss', () => {
    expect(connectSources(['https://api.example.test/pieces/'])).toBe(
      "connect-src 'self' https://api.example.test/pieces/ wss://api.example.test/pieces/",
    );
  });

  it('skips what is not an http(s) base, and cannot be made to end the directive', () => {
    expect(connectSources(['ftp://x.test', 'not a url', 'http://x.test/a;script-src *,b'])).toBe(
      "connect-src 'self' http://x.test/a%3Bscript-src%20*%2Cb/ ws://x.test/a%3Bscript-src%20*%2Cb/",
    );
  });
});
