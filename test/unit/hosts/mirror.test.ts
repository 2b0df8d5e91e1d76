// @vitest-environment node
/**
 * The mirror of a real Pieces OS, in the Node host, against an independent upstream
 * (test/upstream/pieces-os.ts: its own ids, order, names and identity, on a real port):
 * pass-through, answering and queueing while it is away, replay with ids rewritten, and
 * the faults of issue 24.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { OPERATIONS } from '../../../src/core/routes.js';
import { createNodeHost, type NodeHost } from '../../../src/node/host.js';
import { setupPiecesServer, WebSocket as ServedWebSocket } from '../../../src/node/index.js';
import { startUpstream, type IndependentPiecesOS } from '../../upstream/pieces-os.js';
import { checkBody } from '../support/response-check.js';

const BASE = 'http://localhost:1000';
const post = (body?: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});
const message = (conversation: string, raw: string, role = 'USER') => ({ role, fragment: { string: { raw } }, conversation: { id: conversation } });

const upstreams: IndependentPiecesOS[] = [];
const hosts: NodeHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) host.close();
  for (const upstream of upstreams.splice(0)) await upstream.stop();
  vi.restoreAllMocks();
});

async function upstreamOn(options: Parameters<typeof startUpstream>[0] = {}) {
  const upstream = await startUpstream(options);
  upstreams.push(upstream);
  return upstream;
}

function hostOf(upstream: IndependentPiecesOS, timeoutMs?: number) {
  const host = createNodeHost({ sampleAssets: false, mirror: { upstream: upstream.url, ...(timeoutMs ? { timeoutMs } : {}) } });
  hosts.push(host);
  const call = (path: string, init?: RequestInit) => host.fetch(BASE + path, init);
  const json = async <T = any>(path: string, init?: RequestInit): Promise<T> => {
    const response = await call(path, init);
    expect(response.status, `${init?.method ?? 'GET'} ${path}: ${response.status}`).toBeLessThan(300);
    return (response.status === 204 ? undefined : response.json()) as Promise<T>;
  };
  const status = () => host.service.mirrorStatus() as Promise<MirrorStatus>;
  /** Waits for the mirror to reach `state` (probing at once: what the page's permission step does). */
  const reach = async (state: MirrorStatus['state'], timeout = 10_000) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      // Probes at once (what the page's permission step does), rather than after the backoff.
      if (state !== 'down') await host.service.mirrorPermission({ granted: true });
      const now = await status();
      if (now.state === state && (state !== 'up' || now.outbox.length === 0)) return now;
      if (Date.now() > deadline) throw new Error(`the mirror stayed ${JSON.stringify(now)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return { host, call, json, status, reach };
}

/** Every conversation as the upstream holds it: id, name, message texts. */
const upstreamConversations = (upstream: IndependentPiecesOS) =>
  upstream
    .snapshot()
    .conversations.map((c) => ({ id: c.id as string, name: c.name as string | undefined, texts: (c.messages as any[]).map((m) => m.fragment.string.raw) }))
    .sort((a, b) => a.id.localeCompare(b.id));

/** Every conversation as the local copy holds it. */
async function localConversations(host: NodeHost) {
  const data = await host.service.exportData();
  return data.conversations
    .map((c) => ({ id: c.id, name: c.name, texts: c.messages.map((m) => (m.fragment as any).string.raw as string) }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Waits until `check` holds (the local copy follows the upstream's streams asynchronously). */
async function eventually(check: () => Promise<unknown> | unknown, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

describe('up, outbox empty', () => {
  it('passes every request through and answers with the upstream’s answer, byte for byte; unserved operations too', async () => {
    const upstream = await upstreamOn();
    const { call, reach } = hostOf(upstream);
    await reach('up');
    const created = await (await call('/conversations/create', post({ type: 'COPILOT', name: 'through', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] }))).json();
    for (const path of ['/conversations', '/conversations?transferables=false', '/applications', '/assets', '/.well-known/version', `/conversation/${created.id}`, '/os/device/information', '/no/such/path']) {
      const [ours, theirs] = await Promise.all([call(path), fetch(upstream.url + path)]);
      expect(ours.status, path).toBe(theirs.status);
      expect(await ours.text(), path).toBe(await theirs.text());
      expect(ours.headers.get('content-type'), path).toBe(theirs.headers.get('content-type'));
      expect(ours.headers.get('x-upstream'), path).toBe('independent');
    }
    // The upstream's ids, not this service's: its scheme.
    expect(created.id).toMatch(/-0000-5000-9000-/);
    // What it answers is what the SDK reads (the same wire shapes).
    const checks: Array<[string, string]> = [
      ['conversationsSnapshot', '/conversations'],
      ['applicationsSnapshot', '/applications'],
      ['assetsSnapshot', '/assets'],
      ['conversationGetSpecificConversation', `/conversation/${created.id}`],
      ['applicationsExternalSnapshot', '/applications/external'],
      ['userSnapshot', '/user'],
    ];
    for (const [operation, path] of checks) {
      const response = await call(path);
      expect(checkBody(operation, new URL(BASE + path), response.headers.get('content-type') ?? '', await response.text()), operation).toEqual([]);
    }
  });

  it('keeps the upstream’s records and the writes it took locally, under its ids, and answers from them once it goes away', async () => {
    const upstream = await upstreamOn();
    const { host, call, json, reach } = hostOf(upstream);
    await reach('up');
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'kept' }));
    const added = await json('/messages/create', post(message(conversation.id, 'kept too')));
    const session = await json('/applications/session/open', post());
    await eventually(async () => expect(await localConversations(host)).toEqual(upstreamConversations(upstream)));
    await upstream.stop();
    // Answered here now, from the copy.
    expect((await json(`/message/${added.id}`)).fragment.string.raw).toBe('kept too');
    expect((await json(`/conversation/${conversation.id}`)).name).toBe('kept');
    expect((await json(`/applications/sessions/${session.id}`)).id).toBe(session.id);
    expect(await (await call('/.well-known/version')).text()).not.toBe('12.1.0');
  });
});

describe('down', () => {
  it('answers from the local copy and queues each write, named with its arguments, in order', async () => {
    const upstream = await upstreamOn();
    const { json, status, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    const before = upstream.log.length;
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'offline' }));
    await json('/messages/create', post(message(conversation.id, 'first')));
    await json(`/conversation/${conversation.id}/rename`, post());
    const now = await reach('down');
    expect(now.outbox.map((q) => q.operation)).toEqual(['conversationsCreateSpecificConversation', 'messagesCreateSpecificMessage', 'conversationSpecificConversationRename']);
    expect(now.outbox[0]!.id).toBe(conversation.id);
    expect(upstream.log.length).toBe(before);
    expect((await json(`/conversation/${conversation.id}`)).name).toBe('first');
    expect((await status()).upstream).toBe(upstream.url);
  });
});

describe('back up', () => {
  it('replays the outbox in order with every local id rewritten (path, body, application header), re-keys the local records, and passes through again', async () => {
    const upstream = await upstreamOn();
    const { host, call, json, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const context = await json('/connect', post({ application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX' } }));
    const app = context.application.id as string;
    const headers = { application: app };
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'replayed', messages: [{ role: 'USER', fragment: { string: { raw: 'seeded' } } }] }, headers));
    const seededMessage = conversation.messages.iterable[0].id as string;
    const second = await json('/messages/create', post(message(conversation.id, 'second'), headers));
    await json('/message/update/value', post({ ...second, fragment: { string: { raw: 'second, edited' } } }, headers));
    await json(`/conversation/${conversation.id}/rename`, post(undefined, headers));
    await json('/applications/usage/engagement/interaction', post({ description: 'clicked' }, headers));
    const session = await json('/applications/session/open', post(undefined, headers));
    await json('/applications/session/close', post(session.id, headers));
    const locals = [app, conversation.id, seededMessage, second.id, session.id];

    const sentBefore = upstream.log.length;
    await upstream.start();
    await reach('up');
    const replayed = upstream.log.slice(sentBefore).filter((e) => e.method === 'POST' && e.path !== '/connect' || (e.path === '/connect' && JSON.stringify(e.body).includes('VS_CODE')));
    expect(replayed.map((e) => e.path.replace(/[0-9a-f-]{36}/g, '{id}'))).toEqual([
      '/connect',
      '/conversations/create',
      '/messages/create',
      '/message/update/value',
      '/conversation/{id}/rename',
      '/applications/usage/engagement/interaction',
      '/applications/session/open',
      '/applications/session/close',
    ]);
    // No local id reached the upstream: every one was rewritten.
    const sent = JSON.stringify(replayed);
    for (const id of locals) expect(sent).not.toContain(id);
    expect(replayed.every((e) => e.outcome === 200 || e.outcome === 204)).toBe(true);
    // Both sides hold the same conversations, under the upstream's ids, with the names it gave.
    await eventually(async () => expect(await localConversations(host)).toEqual(upstreamConversations(upstream)));
    expect(upstreamConversations(upstream)).toEqual([expect.objectContaining({ name: 'seeded', texts: ['seeded', 'second, edited'] })]);
    // Reads by the local ids keep working (rewritten), and go to the upstream again.
    const read = await (await call(`/conversation/${conversation.id}`)).json();
    expect(read.id).toBe(upstreamConversations(upstream)[0]!.id);
    expect((await call(`/message/${second.id}`)).headers.get('x-upstream')).toBe('independent');
  });

  it('announces the local id deleted and the upstream id added on the identifier streams; sockets stay open through down, up and the drain', async () => {
    const upstream = await upstreamOn();
    const server = setupPiecesServer({ sampleAssets: false, mirror: { upstream: upstream.url } });
    server.listen();
    try {
      const frames: Array<{ conversation: { id: string }; deleted?: true }> = [];
      const socket = new ServedWebSocket('ws://localhost:1000/conversations/stream/identifiers');
      let closed = false;
      socket.onclose = () => (closed = true);
      await new Promise<void>((resolve) => {
        socket.onmessage = (event) => {
          frames.push(...(JSON.parse(String(event.data)) as { iterable: typeof frames }).iterable);
          resolve();
        };
      });
      const waitState = async (state: string) => {
        for (let i = 0; i < 400 && (await server.mirrorStatus())!.state !== state; i++) await new Promise((r) => setTimeout(r, 25));
        expect((await server.mirrorStatus())!.state).toBe(state);
      };
      await fetch(`${BASE}/.well-known/health`);
      await waitState('up');
      const up = await (await fetch(`${BASE}/conversations/create`, post({ type: 'COPILOT', name: 'while up' }))).json();
      await eventually(() => expect(frames.some((f) => f.conversation.id === up.id)).toBe(true));
      await upstream.stop();
      const down = await (await fetch(`${BASE}/conversations/create`, post({ type: 'COPILOT', name: 'while down' }))).json();
      await eventually(() => expect(frames.some((f) => f.conversation.id === down.id && !f.deleted)).toBe(true));
      await upstream.start();
      // A request needs the upstream: the next probe finds it (within the backoff).
      await fetch(`${BASE}/conversations/identifiers`);
      await waitState('up');
      const theirs = upstreamConversations(upstream).find((c) => c.name === 'while down')!;
      await eventually(() => {
        const at = (id: string, deleted?: boolean) => frames.findIndex((f) => f.conversation.id === id && !!f.deleted === !!deleted);
        expect(at(down.id, true)).toBeGreaterThan(at(down.id));
        expect(at(theirs.id)).toBeGreaterThan(at(down.id));
      });
      // What the socket knows is what the upstream holds.
      const known = new Set<string>();
      for (const f of frames) f.deleted ? known.delete(f.conversation.id) : known.add(f.conversation.id);
      expect([...known].sort()).toEqual(upstreamConversations(upstream).map((c) => c.id));
      expect(closed).toBe(false);
      socket.close();
    } finally {
      server.close();
    }
  }, 30_000);

  it('collapses redundant work: a conversation created and deleted while down sends nothing', async () => {
    const upstream = await upstreamOn();
    const { json, reach } = hostOf(upstream);
    await reach('up');
    const kept = await json('/conversations/create', post({ type: 'COPILOT', name: 'existing' }));
    await upstream.stop();
    await reach('down');
    const gone = await json('/conversations/create', post({ type: 'COPILOT', name: 'short-lived' }));
    await json('/messages/create', post(message(gone.id, 'never sent')));
    await json(`/conversation/${gone.id}/rename`, post());
    await json(`/conversations/${gone.id}/delete`, post());
    // Work on a record the upstream has, made useless by its delete: only the delete goes.
    await json(`/conversation/${kept.id}/rename`, post());
    await json('/messages/create', post(message(kept.id, 'also useless')));
    await json(`/conversations/${kept.id}/delete`, post());
    const before = upstream.log.length;
    await upstream.start();
    await reach('up');
    const posts = upstream.log.slice(before).filter((e) => e.method === 'POST' && e.path !== '/connect');
    expect(posts.map((e) => e.path)).toEqual([`/conversations/${kept.id}/delete`]);
    expect(upstreamConversations(upstream)).toEqual([]);
  });
});

describe('faults', () => {
  it('a create whose answer was lost (committed, then the connection dropped) is looked for, not sent again', async () => {
    const upstream = await upstreamOn();
    const { host, json, reach } = hostOf(upstream);
    await reach('up');
    // While up: the upstream commits and drops the answer; the service answers itself and queues the create as sent.
    upstream.fault({ match: 'POST /conversations/create', action: { drop: 'after-commit' }, times: 1 });
    const answered = await json('/conversations/create', post({ type: 'COPILOT', name: 'lost answer', messages: [{ role: 'USER', fragment: { string: { raw: 'once' } } }] }));
    expect(answered.name).toBe('lost answer');
    // While replaying: committed, answer dropped, the upstream then away.
    await upstream.stop();
    await reach('down');
    await json('/conversations/create', post({ type: 'COPILOT', name: 'lost in the drain' }));
    upstream.fault({ match: 'POST /conversations/create', action: { drop: 'after-commit' }, times: 1 });
    await upstream.start();
    await reach('up');
    const names = upstreamConversations(upstream).map((c) => c.name).sort();
    expect(names).toEqual(['lost answer', 'lost in the drain']);
    expect(upstream.log.filter((e) => e.path === '/conversations/create').map((e) => e.outcome)).toEqual(['dropped', 'dropped']);
    await eventually(async () => expect(await localConversations(host)).toEqual(upstreamConversations(upstream)));
  });

  it('temporary errors (5xx, 429 with Retry-After, silence) stop the queue and retry; nothing is lost, duplicated or reordered', async () => {
    const upstream = await upstreamOn();
    const { json, reach, status } = hostOf(upstream, 400);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'patient' }));
    for (const text of ['one', 'two', 'three']) await json('/messages/create', post(message(conversation.id, text)));
    upstream.fault(
      { match: 'POST /messages/create', action: { status: 503 }, times: 1 },
      { match: 'POST /messages/create', action: { status: 429, retryAfter: 1 }, times: 1 },
      { match: 'POST /messages/create', action: { silent: true }, times: 1 },
    );
    await upstream.start();
    await reach('up', 20_000);
    expect(upstreamConversations(upstream)).toEqual([expect.objectContaining({ name: 'patient', texts: ['one', 'two', 'three'] })]);
    expect(upstream.log.filter((e) => e.path === '/messages/create').map((e) => e.outcome)).toEqual([503, 429, 'silent', 200, 200, 200]);
    expect((await status()).setAside).toEqual([]);
  }, 30_000);

  it('a permanent 4xx sets aside that record’s operations only, reported once; everything else drains', async () => {
    const upstream = await upstreamOn();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { json, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const refused = await json('/conversations/create', post({ type: 'COPILOT', name: 'refused' }));
    const fine = await json('/conversations/create', post({ type: 'COPILOT', name: 'fine' }));
    await json('/messages/create', post(message(refused.id, 'on the refused one')));
    await json('/messages/create', post(message(fine.id, 'on the fine one')));
    await json(`/conversation/${refused.id}/rename`, post());
    upstream.fault({ match: 'POST /conversations/create', action: { status: 422, body: 'No such conversation type here.' }, times: 1 });
    await upstream.start();
    const now = await reach('up');
    expect(now.setAside).toEqual([
      { operation: 'conversationsCreateSpecificConversation', id: refused.id, status: 422, message: 'No such conversation type here.' },
      expect.objectContaining({ operation: 'messagesCreateSpecificMessage', status: 422 }),
      expect.objectContaining({ operation: 'conversationSpecificConversationRename', id: refused.id, status: 422 }),
    ]);
    expect(upstreamConversations(upstream)).toEqual([expect.objectContaining({ name: 'fine', texts: ['on the fine one'] })]);
    const told = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('refused'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(refused.id);
  });

  it('an upstream wiped (another identity) gets the outbox replayed once, and the mirrored records of the old one are dropped', async () => {
    const upstream = await upstreamOn();
    const { host, json, reach } = hostOf(upstream);
    await reach('up');
    const old = await json('/conversations/create', post({ type: 'COPILOT', name: 'on the old one' }));
    await eventually(async () => expect((await localConversations(host)).map((c) => c.id)).toEqual([old.id]));
    await upstream.stop();
    await reach('down');
    await json('/conversations/create', post({ type: 'COPILOT', name: 'written offline' }));
    await json(`/conversation/${old.id}/rename`, post());
    upstream.wipe();
    await upstream.start();
    const now = await reach('up');
    expect(upstreamConversations(upstream).map((c) => c.name)).toEqual(['written offline']);
    // The rename of a record the new one never had is refused, and set aside.
    expect(now.setAside).toEqual([expect.objectContaining({ operation: 'conversationSpecificConversationRename', id: old.id, status: 404 })]);
    await eventually(async () => expect(await localConversations(host)).toEqual(upstreamConversations(upstream)));
  });
});

describe('the route table', () => {
  it('declares how every write it serves is queued and replayed', () => {
    const writes = OPERATIONS.filter((o) => o.method === 'POST' && !o.readOnly && !o.socket && !['question'].includes(o.name));
    expect(writes.filter((o) => !o.mirror).map((o) => o.name)).toEqual([]);
  });
});

