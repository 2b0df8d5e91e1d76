/**
 * The loopback server against real web pages: a page on a loopback origin (a local dev server) can
 * call the API but cannot use the controls (fetch, no-cors, a form, a preflighted header) or read
 * them; a page of another site can neither read nor change anything (simple requests included), and
 * cannot reach the server under a DNS-rebinding name.
 */
import 'fake-indexeddb/auto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../../src/node/serve.js';
import { freePort } from '../free-port.js';
import { launch, need, type BrowserContext, type Page } from './engine.js';

describe('a running loopback server, from web pages of other sites', () => {
  let server: LoopbackServer;
  let site: Server;
  let context: BrowserContext;
  let page: Page;
  let before: string;
  let sitePort: number;

  beforeAll(async () => {
    server = await startLoopbackServer({ port: await freePort() });
    await server.seed({ conversations: [{ type: 'COPILOT', name: 'the user data' }] });
    before = JSON.stringify(await server.exportData());
    ({ context } = await launch(undefined, { loopbackHosts: ['rebound.test', 'another.test'] }));
    // A page on a loopback origin of its own (a local dev server), and the same server as another site.
    sitePort = await freePort();
    site = createServer((_request, response) => response.end('<!doctype html><title>another site</title><body></body>'));
    await new Promise<void>((resolve) => site.listen(sitePort, '127.0.0.1', resolve));
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${sitePort}/`);
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
    site?.close();
  });

  it('a page on a loopback origin can call the API, as it can a running Pieces OS', async () => {
    const names = await page.evaluate(async (url) => {
      const response = await fetch(`${url}/conversations`);
      return ((await response.json()) as { iterable: Array<{ name: string }> }).iterable.map((c) => c.name);
    }, server.url);
    expect(names).toEqual(['the user data']);
  });

  it('cannot use or read the controls: fetch, no-cors, a preflighted header, a form post', async () => {
    const outcomes = await page.evaluate(async (url) => {
      const attempt = (init?: RequestInit, path = '/__pieces/reset') =>
        fetch(`${url}${path}`, init).then(
          (r) => (r.type === 'opaque' ? 'opaque' : `${r.status}`),
          () => 'network error',
        );
      const results = {
        post: await attempt({ method: 'POST' }),
        noCors: await attempt({ method: 'POST', mode: 'no-cors' }),
        json: await attempt({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }),
        header: await attempt({ method: 'POST', headers: { 'X-Pieces-Control': '1' } }),
        seed: await attempt(
          { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"conversations":[]}' },
          '/__pieces/seed',
        ),
        read: await fetch(`${url}/__pieces/export`, { headers: { 'X-Pieces-Control': '1' } }).then(
          (r) => r.text(),
          () => 'network error',
        ),
        readSimple: await fetch(`${url}/__pieces/export`).then(
          (r) => r.text(),
          () => 'network error',
        ),
      };
      // A form post to the controls, in a frame (a navigation carries no CORS at all).
      const frame = document.createElement('iframe');
      frame.name = 'target';
      document.body.append(frame);
      const form = Object.assign(document.createElement('form'), { method: 'POST', action: `${url}/__pieces/reset`, target: 'target' });
      document.body.append(form);
      const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
      form.submit();
      await loaded;
      return results;
    }, server.url);
    // None reached a control: refused (403), or stopped by the browser before it was sent.
    for (const [how, outcome] of Object.entries(outcomes)) expect(['403', 'opaque', 'network error'], how).toContain(outcome);
    expect(outcomes.read).toBe('network error');
    expect(outcomes.readSimple).toBe('network error');
    expect(JSON.stringify(await server.exportData())).toBe(before);
  });

  it('a page of another site can neither read nor change anything: reads, a simple delete, a rename, both sockets', async (test) => {
    need(test, 'loopbackHosts');
    const another = await context.newPage();
    await another.goto(`http://another.test:${sitePort}/`);
    const [conversation] = (await server.exportData()).conversations!;
    const outcomes = await another.evaluate(
      async ({ url, id }) => {
        const attempt = (path: string, init?: RequestInit) =>
          fetch(`${url}${path}`, init).then(
            (r) => (r.type === 'opaque' ? 'opaque' : `${r.status}`),
            () => 'network error',
          );
        const socket = (path: string) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`${url.replace('http', 'ws')}${path}`);
            ws.onopen = () => {
              ws.close();
              resolve('open');
            };
            ws.onerror = () => resolve('refused');
          });
        return {
          read: await attempt('/conversations'),
          delete: await attempt(`/conversations/${id}/delete`, { method: 'POST', mode: 'no-cors' }),
          rename: await attempt(`/conversation/${id}/rename`, { method: 'POST', mode: 'no-cors' }),
          create: await attempt('/conversations/create', {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'Content-Type': 'text/plain' },
            body: '{"type":"COPILOT","name":"planted"}',
          }),
          stream: await socket('/conversations/stream/identifiers'),
          copilot: await socket('/qgpt/stream'),
        };
      },
      { url: server.url, id: conversation!.id },
    );
    // A read is refused (no CORS answer for another site), a simple request leaves nothing behind.
    expect(outcomes).toEqual({
      read: 'network error',
      delete: 'opaque',
      rename: 'opaque',
      create: 'opaque',
      stream: 'refused',
      copilot: 'refused',
    });
    expect(JSON.stringify(await server.exportData())).toBe(before);
    await another.close();
  });

  it('cannot reach it under a DNS-rebinding name: HTTP, the controls and sockets are refused', async (test) => {
    need(test, 'loopbackHosts');
    const rebound = await context.newPage();
    const url = `http://rebound.test:${server.port}`;
    // The attacker's page, now served "from" the rebound name: a same-origin request for it.
    await rebound.goto(`${url}/.well-known/health`);
    expect(await rebound.evaluate(() => document.body.textContent)).toMatch(/not allowed/);
    const outcomes = await rebound.evaluate(async (url) => {
      const status = (path: string, init?: RequestInit) =>
        fetch(`${url}${path}`, init).then(
          (r) => r.status,
          () => 0,
        );
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/conversations/stream/identifiers`);
        ws.onopen = () => resolve('open');
        ws.onerror = () => resolve('refused');
      });
      return {
        api: await status('/conversations'),
        export: await status('/__pieces/export', { headers: { 'X-Pieces-Control': '1' } }),
        reset: await status('/__pieces/reset', { method: 'POST', headers: { 'X-Pieces-Control': '1' } }),
        socket,
      };
    }, url);
    expect(outcomes).toEqual({ api: 403, export: 403, reset: 403, socket: 'refused' });
    expect(JSON.stringify(await server.exportData())).toBe(before);
  });
});
