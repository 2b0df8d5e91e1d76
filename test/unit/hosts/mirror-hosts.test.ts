// @vitest-environment node
/**
 * The mirror as each host shows it: the loopback server's `GET /__pieces/mirror` and its
 * refusal to mirror itself, finding the upstream (`'auto'`), the copilot stream going to the
 * upstream's own socket, and the page's `watchService` hearing each status change.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as WsSocket } from 'ws';
import { startLoopbackServer } from '../../../src/node/serve.js';
import { setupPiecesServer, WebSocket as ServedWebSocket } from '../../../src/node/index.js';
import { discoveryCandidates, Upstream, type WebSocketLike } from '../../../src/host/mirror/upstream.js';
import { CopilotBridge } from '../../../src/host/mirror/copilot.js';
import { framesOf } from '../../../src/core/event-frames.js';
import { watchService } from '../../../src/page/state.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { freePort } from '../../free-port.js';
import { startUpstream, type IndependentPiecesOS } from '../../upstream/pieces-os.js';

/** The header every control request of the loopback server carries. */
const CONTROL = { 'X-Pieces-Control': '1' };

const upstreams: IndependentPiecesOS[] = [];
afterEach(async () => {
  for (const upstream of upstreams.splice(0)) await upstream.stop();
});

describe('the loopback server', () => {
  it('tells the mirror’s status at GET /__pieces/mirror, and passes requests through', async () => {
    const upstream = await startUpstream();
    upstreams.push(upstream);
    const server = await startLoopbackServer({ port: 0, sampleAssets: false, mirror: { upstream: upstream.url } });
    try {
      const read = await fetch(`${server.url}/applications`);
      expect(read.headers.get('x-upstream')).toBe('independent');
      const status = (await (await fetch(`${server.url}/__pieces/mirror`, { headers: CONTROL })).json()) as MirrorStatus;
      expect(status).toEqual({ state: 'up', upstream: upstream.url, outbox: [], setAside: [], lastError: null });
      expect(await server.mirrorStatus()).toEqual(status);
      expect((await fetch(`${server.url}/__pieces/mirror`, { method: 'POST', headers: CONTROL })).status).toBe(405);
      // A control like the others: not without the header.
      expect((await fetch(`${server.url}/__pieces/mirror`)).status).toBe(403);
    } finally {
      await server.close();
    }
    // Without a mirror: null.
    const plain = await startLoopbackServer({ port: 0 });
    try {
      expect(await (await fetch(`${plain.url}/__pieces/mirror`, { headers: CONTROL })).json()).toBeNull();
    } finally {
      await plain.close();
    }
  });

  it('refuses to mirror itself (its own address, or a bad URL), leaving nothing listening', async () => {
    const port = await freePort();
    await expect(startLoopbackServer({ port, mirror: { upstream: `http://localhost:${port}` } })).rejects.toThrow(
      `mirror.upstream http://localhost:${port} is this service's own address`,
    );
    await expect(fetch(`http://127.0.0.1:${port}/.well-known/health`)).rejects.toThrow();
    await expect(startLoopbackServer({ port, mirror: { upstream: 'localhost:39300' } })).rejects.toThrow(
      'mirror.upstream must be a Pieces OS base URL (http://localhost:39300) or \'auto\', not "localhost:39300".',
    );
  });
});

describe("'auto'", () => {
  it('looks where clients look (39300–39333, 1000, 5323), never at the service’s own address, and takes the first that answers in that order', async () => {
    const all = discoveryCandidates();
    expect(all[0]).toBe('http://localhost:39300');
    expect(all.slice(-2)).toEqual(['http://localhost:1000', 'http://localhost:5323']);
    expect(all).toHaveLength(36);
    expect(discoveryCandidates(['http://127.0.0.1:39301'])).not.toContain('http://localhost:39301');
    const asked: string[] = [];
    const answering = new Set(['http://localhost:39305', 'http://localhost:1000']);
    const upstream = new Upstream(
      {
        fetch: async (url) => {
          const base = String(url).replace('/.well-known/health', '');
          asked.push(base);
          if (!answering.has(base)) throw new TypeError('fetch failed');
          return new Response('ok');
        },
      },
      1_000,
    );
    expect(await upstream.discover(all)).toBe('http://localhost:39305');
    // All at once: one round of probes, not one after another.
    expect(asked.sort()).toEqual([...all].sort());
    answering.clear();
    expect(await upstream.discover(all)).toBeNull();
  });
});

describe('the copilot stream', () => {
  it('goes to the upstream’s own socket while it answers', async () => {
    const upstream = await startUpstream();
    upstreams.push(upstream);
    const server = setupPiecesServer({ sampleAssets: false, mirror: { upstream: upstream.url } });
    server.listen();
    try {
      // The first request that is not discovery waits for the first probe.
      await (await fetch('http://localhost:1000/applications')).text();
      expect((await server.mirrorStatus())!.state).toBe('up');
      const frames = await new Promise<
        Array<{ status: string; request?: string; question?: { answers: { iterable: Array<{ text: string }> } } }>
      >((resolve, reject) => {
        const socket = new ServedWebSocket('ws://localhost:1000/qgpt/stream');
        const got: Array<{ status: string }> = [];
        socket.onopen = () => socket.send(JSON.stringify({ request: 'r1', question: { query: 'hello?', relevant: { iterable: [] } } }));
        socket.onmessage = (event) => {
          got.push(JSON.parse(String(event.data)));
          if (got.at(-1)!.status === 'COMPLETED') {
            socket.close();
            resolve(got as never);
          }
        };
        socket.onerror = () => reject(new Error('the copilot socket failed'));
      });
      expect(frames.map((f) => f.status)).toEqual(['IN-PROGRESS', 'IN-PROGRESS', 'IN-PROGRESS', 'COMPLETED']);
      expect(frames.map((f) => f.question?.answers.iterable[0]?.text ?? '').join('')).toBe('The upstream answers: hello?');
      expect(frames.every((f) => f.request === 'r1')).toBe(true);
    } finally {
      server.close();
    }
  });

  it('answers with the upstream’s frames as frames (nothing encoded to be parsed again), and closes its socket when the reader stops', async () => {
    const sockets: Array<WebSocketLike & { sent: string[]; closed: boolean }> = [];
    const bridge = new CopilotBridge(() => {
      const socket = {
        readyState: 0,
        onopen: null,
        onmessage: null,
        onclose: null,
        onerror: null,
        sent: [] as string[],
        closed: false,
        send: (data: string) => socket.sent.push(data),
        close: () => {
          socket.closed = true;
          (socket as { readyState: number }).readyState = 3;
        },
      } as WebSocketLike & { sent: string[]; closed: boolean };
      sockets.push(socket);
      queueMicrotask(() => {
        (socket as { readyState: number }).readyState = 1;
        socket.onopen?.({});
      });
      return socket;
    });
    const frame = (status: string, text = '') => JSON.stringify({ request: 'r1', status, text });
    // To the end: every frame, in order, then the stream ends and the socket is closed.
    const answer = await bridge.answer('ws://upstream/qgpt/stream', '{"request":"r1","question":{}}');
    expect(answer.headers.get('Content-Type')).toBe('text/event-stream; charset=utf-8');
    expect(sockets[0]!.sent).toEqual(['{"request":"r1","question":{}}']);
    const frames = framesOf(answer)!;
    expect(frames).toBeDefined();
    sockets[0]!.onmessage!({ data: frame('IN-PROGRESS', 'a') });
    sockets[0]!.onmessage!({ data: frame('IN-PROGRESS', 'b') });
    expect(await frames.next()).toEqual([frame('IN-PROGRESS', 'a'), frame('IN-PROGRESS', 'b')]);
    sockets[0]!.onmessage!({ data: frame('COMPLETED') });
    expect(await frames.next()).toEqual([frame('COMPLETED')]);
    expect(await frames.next()).toBeNull();
    expect(sockets[0]!.closed).toBe(true);
    // The reader stops first (the page's socket closed): the upstream's socket is closed.
    const stopped = await bridge.answer('ws://upstream/qgpt/stream', '{"request":"r2","question":{}}');
    sockets[1]!.onmessage!({ data: frame('IN-PROGRESS', 'a') });
    await stopped.body!.cancel();
    expect(sockets[1]!.closed).toBe(true);
  });

  it('the upstream’s identifier streams are followed with one socket per collection', async () => {
    const upstream = await startUpstream();
    upstreams.push(upstream);
    const server = setupPiecesServer({ sampleAssets: false, mirror: { upstream: upstream.url } });
    server.listen();
    try {
      // The first request that is not discovery waits for the first probe.
      await (await fetch('http://localhost:1000/applications')).text();
      // A change made on the upstream by another client reaches the local copy through its stream.
      const other = new WsSocket(`${upstream.url.replace('http', 'ws')}/conversations/stream/identifiers`);
      await new Promise((resolve) => other.once('message', resolve));
      other.close();
      const made = (await (
        await fetch(`${upstream.url}/conversations/create`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"COPILOT","name":"from the desktop app"}',
        })
      ).json()) as { id: string };
      await expect.poll(async () => (await server.exportData()).conversations.map((c) => c.id), { timeout: 5_000 }).toEqual([made.id]);
    } finally {
      server.close();
    }
  });
});

describe('watchService', () => {
  it('fires mirrorchange with the status on each announcement', async () => {
    const watch = watchService({ version: { worker: 'x' } }, async () => ({ version: { worker: 'x' } }));
    const heard: MirrorStatus[] = [];
    watch.addEventListener('mirrorchange', (event) => heard.push((event as CustomEvent<MirrorStatus>).detail));
    const channel = new BroadcastChannel(CHANGES_CHANNEL);
    const status: MirrorStatus = {
      state: 'draining',
      upstream: 'http://localhost:39300',
      outbox: [{ seq: 1, operation: 'messagesCreateSpecificMessage' }],
      setAside: [],
      lastError: null,
    };
    channel.postMessage({ type: 'mirror', status });
    channel.postMessage({ type: 'mirror', status: { ...status, state: 'up', outbox: [] } });
    await expect.poll(() => heard.length).toBe(2);
    expect(heard.map((s) => [s.state, s.outbox.length])).toEqual([
      ['draining', 1],
      ['up', 0],
    ]);
    expect(watch.mirror?.state).toBe('up');
    channel.close();
    watch.stop();
  });
});

describe('setupPiecesServer', () => {
  it('close() leaves no socket to the upstream open; the next request picks up again', async () => {
    const upstream = await startUpstream();
    upstreams.push(upstream);
    const server = setupPiecesServer({ sampleAssets: false, mirror: { upstream: upstream.url } });
    server.listen();
    await (await fetch('http://localhost:1000/applications')).text();
    // Following the upstream: a socket per collection it streams (6 of the hand-written kinds, persons and workstream summaries).
    await expect.poll(() => upstream.openStreams(), { timeout: 5_000 }).toBe(8);
    server.close();
    await expect.poll(() => upstream.openStreams(), { timeout: 5_000 }).toBe(0);
    expect((await server.fetch('http://localhost:1000/applications')).headers.get('x-upstream')).toBe('independent');
    await expect.poll(() => upstream.openStreams(), { timeout: 5_000 }).toBe(8);
    server.close();
  });
});
