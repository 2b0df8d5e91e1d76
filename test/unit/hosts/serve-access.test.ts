// @vitest-environment node
/**
 * The loopback server answers only its owner: Host names it, the controls take no request a web
 * page can send cross-site, and no client can take it down (resets, half-open and slow clients on
 * every socket and HTTP path). Cross-origin pages in a real browser: test/browser/serve-access.test.ts.
 */
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { OPERATIONS } from '../../../src/core/routes.js';
import { SOCKETS } from '../../../src/core/stream-wire.js';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';
import { raw } from '../support/raw-http.js';

const CONTROL = { 'X-Pieces-Control': '1', 'Content-Type': 'application/json' };

describe('the loopback server answers only its owner', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0, sampleAssets: false });
  });
  afterAll(() => server.close());

  it('refuses a request whose Host is not its address, localhost or an IP address (DNS rebinding), HTTP and WebSocket', async () => {
    for (const host of [
      `127.0.0.1:${server.port}`,
      `localhost:${server.port}`,
      'localhost',
      `app.localhost:${server.port}`,
      `[::1]:${server.port}`,
      `10.0.0.7:${server.port}`,
    ]) {
      expect((await raw(server, '/.well-known/health', { headers: { Host: host } })).status, host).toBe(200);
    }
    for (const host of [`evil.test:${server.port}`, 'evil.test', 'localhost.evil.test', '127.0.0.1.nip.io']) {
      const refused = await raw(server, '/conversations', { headers: { Host: host } });
      expect(refused.status, host).toBe(403);
      expect(refused.body).toMatch(/is not allowed .*--allowed-hosts/);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    }
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/conversations/stream/identifiers`, {
      headers: { Host: `evil.test:${server.port}` },
    });
    const outcome = await new Promise<string>((resolve) => {
      socket.on('open', () => resolve('open'));
      socket.on('unexpected-response', (_request, response) => resolve(String(response.statusCode)));
      socket.on('error', () => resolve('error'));
    });
    expect(outcome).toBe('403');
  });

  it('allows the names it is given, and any with allowedHosts: true', async () => {
    const named = await startLoopbackServer({ port: 0, sampleAssets: false, allowedHosts: ['pieces.test', '.dev.test'] });
    const any = await startLoopbackServer({ port: 0, sampleAssets: false, allowedHosts: true });
    try {
      for (const [host, status] of [
        ['pieces.test', 200],
        ['a.dev.test', 200],
        ['dev.test', 200],
        ['other.test', 403],
      ] as const) {
        expect((await raw(named, '/.well-known/health', { headers: { Host: host } })).status, host).toBe(status);
      }
      expect((await raw(any, '/.well-known/health', { headers: { Host: 'anything.test' } })).status).toBe(200);
    } finally {
      await named.close();
      await any.close();
    }
  });

  it('runs a control only for a request no web page can send cross-site, and changes nothing otherwise', async () => {
    await server.seed({ conversations: [{ type: 'COPILOT', name: 'kept' }] });
    const before = JSON.stringify(await server.exportData());
    const attempts: Array<{ method: string; headers: Record<string, string>; body?: string }> = [
      // A cross-site fetch or form post: carries an Origin.
      { method: 'POST', headers: { ...CONTROL, Origin: 'https://evil.test' } },
      { method: 'POST', headers: { Origin: 'null', 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=1' },
      // A simple request without the control header (no Origin, as a navigation or an old client).
      { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '' },
    ];
    for (const attempt of attempts) {
      const refused = await raw(server, '/__pieces/reset', attempt);
      expect(refused.status, JSON.stringify(attempt.headers)).toBe(403);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    }
    const read = await raw(server, '/__pieces/export', { headers: { Origin: 'https://evil.test', 'X-Pieces-Control': '1' } });
    expect(read.status).toBe(403);
    expect(read.body).not.toContain('kept');
    // The preflight of a cross-site request with the control header is refused too.
    const preflight = await raw(server, '/__pieces/reset', {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://evil.test',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-pieces-control',
      },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(JSON.stringify(await server.exportData())).toBe(before);
    // The owner's own clients (curl, a test in Python): the header, no Origin.
    const exported = await raw(server, '/__pieces/export', { headers: { 'X-Pieces-Control': '1' } });
    expect(exported.status).toBe(200);
    expect(exported.headers['access-control-allow-origin']).toBeUndefined();
    expect(exported.body).toContain('kept');
  });

  it('lets the pages of allowed origins use the controls, and only them', async () => {
    const allowed = await startLoopbackServer({ port: 0, sampleAssets: false, allowedOrigins: ['http://localhost:5173'] });
    try {
      const preflight = await raw(allowed, '/__pieces/reset', {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://localhost:5173',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'x-pieces-control',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:5173');
      expect(String(preflight.headers['access-control-allow-headers'])).toContain('x-pieces-control');
      const reset = await raw(allowed, '/__pieces/reset', { method: 'POST', headers: { ...CONTROL, Origin: 'http://localhost:5173' } });
      expect([reset.status, reset.headers['access-control-allow-origin']]).toEqual([204, 'http://localhost:5173']);
      expect(
        (await raw(allowed, '/__pieces/reset', { method: 'POST', headers: { ...CONTROL, Origin: 'http://localhost:5174' } })).status,
      ).toBe(403);
    } finally {
      await allowed.close();
    }
  });

  it('answers the API to pages of loopback origins with their origin, and refuses other sites (403)', async () => {
    const answered = await raw(server, '/conversations', { headers: { Origin: 'http://localhost:5173' } });
    expect(answered.status).toBe(200);
    expect(answered.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    const refused = await raw(server, '/conversations', { headers: { Origin: 'https://app.example' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatch(/--allowed-origins https:\/\/app\.example/);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });
});

/** Opens a TCP connection to the server. */
const tcp = (server: LoopbackServer) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });

/** What the server answered on a raw connection, until it closed it (or `ms` passed). */
const readAll = (socket: Socket, ms = 3000) =>
  new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
    setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, ms);
  });

describe('no client can take the loopback server down', () => {
  let server: LoopbackServer;
  const socketPaths = [...Object.keys(SOCKETS), '/not/a/socket', '/conversations'];
  const httpPaths = [
    ...new Set(OPERATIONS.map((o) => `${o.method} ${o.path.replace(/\{\w+\}/g, '0f8fad5b-d9cb-469f-a165-70867728950e')}`)),
    'POST /__pieces/seed',
    'GET /nothing',
  ];
  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0 });
  });
  afterAll(() => server.close());

  const alive = async () => expect((await fetch(`${server.url}/.well-known/health`)).status).toBe(200);

  it('survives a Python websocket-client that opens an unserved socket and resets the connection (it once ended the process)', async () => {
    const script = `
import socket, struct, websocket
try:
    websocket.create_connection("ws://127.0.0.1:${server.port}/not/a/socket", timeout=5)
except Exception as error:
    print("refused:", type(error).__name__)
s = socket.create_connection(("127.0.0.1", ${server.port}))
s.sendall(b"GET /not/a/socket HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n")
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
ws = websocket.create_connection("ws://127.0.0.1:${server.port}/conversations/stream/identifiers", timeout=5)
print("first frame:", ws.recv()[:14])
ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
ws.sock.close()
`;
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script], { timeout: 20_000 });
    expect(stdout).toContain('refused: WebSocketBadStatusException');
    expect(stdout).toContain('first frame: {"iterable":[');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await alive();
  });

  it('survives resets and half-open connections on every socket path, while other clients are answered', async () => {
    const steady = new WebSocket(`ws://127.0.0.1:${server.port}/conversations/stream/identifiers`);
    const frames: string[] = [];
    steady.on('message', (data) => frames.push(String(data)));
    await new Promise((resolve) => steady.once('open', resolve));
    for (const path of socketPaths) {
      const handshake = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
      // Reset right after the handshake is sent, and right after half of it.
      const reset = await tcp(server);
      reset.write(handshake);
      reset.resetAndDestroy();
      const cut = await tcp(server);
      cut.write(handshake.slice(0, handshake.length / 2));
      cut.resetAndDestroy();
      // Half-open: the handshake, then the end of what the client sends; the server still answers and closes.
      const half = await tcp(server);
      half.end(handshake);
      const answered = await readAll(half, 1500);
      expect(answered, path).toMatch(/^HTTP\/1\.1 (101|404|426|400)/);
      // A socket that opens, sends a garbage frame, then resets.
      if (SOCKETS[path]) {
        const garbage = await tcp(server);
        garbage.write(handshake);
        await new Promise((resolve) => garbage.once('data', resolve));
        garbage.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
        garbage.resetAndDestroy();
      }
    }
    await alive();
    // The steady client was not disturbed: still open and fed.
    const created = await fetch(`${server.url}/conversations/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"type":"COPILOT"}',
    });
    const { id } = (await created.json()) as { id: string };
    await expect.poll(() => frames.some((frame) => frame.includes(id))).toBe(true);
    expect(steady.readyState).toBe(WebSocket.OPEN);
    steady.close();
  });

  it('survives resets mid-request, half-open and malformed requests on every HTTP path', async () => {
    for (const line of httpPaths) {
      const [method, path] = line.split(' ') as [string, string];
      const body = `{"type":"COPILOT","name":"${'x'.repeat(2000)}"}`;
      const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Pieces-Control: 1\r\nContent-Length: ${body.length}\r\n\r\n`;
      // Reset in the middle of the body.
      const reset = await tcp(server);
      reset.write(head + body.slice(0, 100));
      await new Promise((resolve) => setTimeout(resolve, 5));
      reset.resetAndDestroy();
      // Half-open: the whole request, then FIN (the server may answer, or close its side too).
      const half = await tcp(server);
      half.end(head + body);
      expect(await readAll(half, 3000), line).toMatch(/^(HTTP\/1\.1 \d{3} [\s\S]*)?$/);
      // And a whole request on a connection that stays open is answered.
      const whole = await tcp(server);
      whole.write(head + body);
      const answered = await new Promise<string>((resolve) => whole.once('data', (chunk) => resolve(String(chunk))));
      expect(answered, line).toMatch(/^HTTP\/1\.1 \d{3} /);
      whole.destroy();
    }
    // Malformed: an absolute-form target, a garbage request line, a bad header.
    for (const garbage of [
      'GET http://evil.test/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      'NOT HTTP AT ALL\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n',
    ]) {
      const socket = await tcp(server);
      socket.write(garbage);
      expect(await readAll(socket, 2000)).toMatch(/^HTTP\/1\.1 (400|404) /);
    }
    await alive();
  });

  it('keeps answering others while a client sends its request one byte at a time', async () => {
    const slow = await tcp(server);
    const request = 'GET /conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    let sent = 0;
    const dripping = setInterval(() => {
      if (sent < request.length) slow.write(request[sent++]!);
    }, 50);
    try {
      // Meanwhile, 50 requests from another client are answered.
      for (let i = 0; i < 50; i++) expect((await fetch(`${server.url}/applications`)).status).toBe(200);
      expect(sent).toBeLessThan(request.length);
    } finally {
      clearInterval(dripping);
      slow.destroy();
    }
    await alive();
  });
});
