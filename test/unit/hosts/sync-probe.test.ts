/** The page's answer to synchronous XHR discovery probes. */
import { afterEach, describe, expect, it } from 'vitest';
import { installSyncProbes } from '../../../src/page/sync-probe.js';
import { PIECES_OS_VERSION } from '../../../src/shared/version.js';

/** Stands in for the browser's XMLHttpRequest: records what reaches the network. */
class FakeXHR extends EventTarget {
  static sent: string[] = [];
  url = '';
  readyState = 0;
  onreadystatechange: (() => void) | null = null;
  open(_method: string, url: string) {
    this.url = url;
    this.readyState = 1;
  }
  send() {
    FakeXHR.sent.push(this.url);
  }
}

const target = { XMLHttpRequest: FakeXHR as unknown as typeof XMLHttpRequest, location: { href: 'http://127.0.0.1:5173/' } };
let available = true;
const uninstall = installSyncProbes({ target, isServiceAvailable: () => available });
afterEach(() => {
  FakeXHR.sent = [];
  available = true;
});

const probe = (url: string, method = 'GET', async = false) => {
  const xhr = new target.XMLHttpRequest();
  const events: string[] = [];
  for (const type of ['readystatechange', 'load', 'loadend']) xhr.addEventListener(type, () => events.push(type));
  xhr.open(method, url, async);
  xhr.send();
  return { xhr, events };
};

describe('synchronous probes', () => {
  it('answers health on every port of 39300-39333, on localhost and 127.0.0.1, without the network', () => {
    for (const host of ['localhost', '127.0.0.1']) {
      for (const port of [39300, 39316, 39333]) {
        const { xhr, events } = probe(`http://${host}:${port}/.well-known/health`);
        expect(xhr.status).toBe(200);
        expect(xhr.readyState).toBe(4);
        expect(xhr.responseText).toBe('ok');
        expect(xhr.getResponseHeader('Content-Type')).toBe('text/plain; charset=utf-8');
        expect(events).toEqual(['readystatechange', 'load', 'loadend']);
      }
    }
    expect(probe('http://localhost:39300/.well-known/version').xhr.responseText).toBe(PIECES_OS_VERSION);
    expect(probe('http://localhost:39300/.well-known/health', 'HEAD').xhr.responseText).toBe('');
    expect(FakeXHR.sent).toEqual([]);
  });

  it('leaves asynchronous requests, other paths, other hosts and other methods to the network', () => {
    probe('http://localhost:39300/.well-known/health', 'GET', true);
    probe('http://localhost:39300/conversations');
    probe('http://localhost:39299/.well-known/health');
    probe('http://example.test/.well-known/health');
    probe('http://localhost:39300/.well-known/health', 'POST');
    expect(FakeXHR.sent).toHaveLength(5);
  });

  it('lets the probe fail as a refused connection when no service worker answers', () => {
    available = false;
    const { xhr } = probe('http://localhost:39300/.well-known/health');
    expect(FakeXHR.sent).toEqual(['http://localhost:39300/.well-known/health']);
    expect(xhr.readyState).toBe(1);
  });

  it('restores the native methods when uninstalled', () => {
    const patched = target.XMLHttpRequest.prototype.send;
    uninstall();
    expect(target.XMLHttpRequest.prototype.send).not.toBe(patched);
    probe('http://localhost:39300/.well-known/health');
    expect(FakeXHR.sent).toHaveLength(1);
    installSyncProbes({ target, isServiceAvailable: () => available });
  });
});
