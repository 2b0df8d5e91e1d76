import { describe, expect, it } from 'vitest';
import { connectSources } from '../../demo/csp.js';
import { DEFAULT_BASES } from '../../src/core/bases.js';

describe("the demo's connect-src", () => {
  it('allows the default bases, over HTTP and WebSocket', () => {
    expect(connectSources(DEFAULT_BASES)).toBe(
      "connect-src 'self' http://localhost:1000 ws://localhost:1000 http://localhost:39300 ws://localhost:39300",
    );
  });

  it('allows a base with a path as a prefix, over https and wss', () => {
    expect(connectSources(['https://api.example.test/pieces/'])).toBe("connect-src 'self' https://api.example.test/pieces/ wss://api.example.test/pieces/");
  });

  it('skips what is not an http(s) base, and cannot be made to end the directive', () => {
    expect(connectSources(['ftp://x.test', 'not a url', 'http://x.test/a;script-src *,b'])).toBe(
      "connect-src 'self' http://x.test/a%3Bscript-src%20*%2Cb/ ws://x.test/a%3Bscript-src%20*%2Cb/",
    );
  });
});
