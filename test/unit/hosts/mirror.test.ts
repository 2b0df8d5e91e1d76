// @vitest-environment node
/**
 * The mirror of a real Pieces OS, in the Node host, against an independent upstream
 * (test/upstream/pieces-os.ts: its own ids, order, names and identity, on a real port):
 * pass-through, answering and queueing while it is away, replay with ids rewritten, and
 * the faults of issue 24.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OPERATIONS, type WriteOperationName } from '../../../src/core/routes.js';
import { createService } from '../../../src/core/service.js';
import { LINK_WRITES, MATERIAL_WRITES, WRITES, type MirrorSpec } from '../../../src/host/mirror/writes.js';
import type { NodeHost } from '../../../src/node/host.js';
import { setupPiecesServer, WebSocket as ServedWebSocket } from '../../../src/node/index.js';
import type { IndependentPiecesOS } from '../../upstream/pieces-os.js';
import { checkBody } from '../support/response-check.js';
import { closeMirrorHosts, hostOf, upstreamOn } from '../support/mirror-host.js';

const BASE = 'http://localhost:1000';
const post = (body?: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});
const message = (conversation: string, raw: string, role = 'USER') => ({
  role,
  fragment: { string: { raw } },
  conversation: { id: conversation },
});

afterEach(async () => {
  await closeMirrorHosts();
  vi.restoreAllMocks();
});

/** Every conversation as the upstream holds it: id, name, message texts. */
const upstreamConversations = (upstream: IndependentPiecesOS) =>
  upstream
    .snapshot()
    .conversations.map((c) => ({
      id: c.id as string,
      name: c.name as string | undefined,
      texts: (c.messages as any[]).map((m) => m.fragment.string.raw),
    }))
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
    const created = await (
      await call(
        '/conversations/create',
        post({ type: 'COPILOT', name: 'through', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] }),
      )
    ).json();
    for (const path of [
      '/conversations',
      '/conversations?transferables=false',
      '/applications',
      '/assets',
      '/.well-known/version',
      `/conversation/${created.id}`,
      '/os/device/information',
      '/no/such/path',
    ]) {
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
      expect(
        checkBody(operation, new URL(BASE + path), response.headers.get('content-type') ?? '', await response.text()),
        operation,
      ).toEqual([]);
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
    expect(now.outbox.map((q) => q.operation)).toEqual([
      'conversationsCreateSpecificConversation',
      'messagesCreateSpecificMessage',
      'conversationSpecificConversationRename',
    ]);
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
    const conversation = await json(
      '/conversations/create',
      post({ type: 'COPILOT', name: 'replayed', messages: [{ role: 'USER', fragment: { string: { raw: 'seeded' } } }] }, headers),
    );
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
    const replayed = upstream.log
      .slice(sentBefore)
      .filter(
        (e) => (e.method === 'POST' && e.path !== '/connect') || (e.path === '/connect' && JSON.stringify(e.body).includes('VS_CODE')),
      );
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
    const answered = await json(
      '/conversations/create',
      post({ type: 'COPILOT', name: 'lost answer', messages: [{ role: 'USER', fragment: { string: { raw: 'once' } } }] }),
    );
    expect(answered.name).toBe('lost answer');
    // While replaying: committed, answer dropped, the upstream then away.
    await upstream.stop();
    await reach('down');
    await json('/conversations/create', post({ type: 'COPILOT', name: 'lost in the drain' }));
    upstream.fault({ match: 'POST /conversations/create', action: { drop: 'after-commit' }, times: 1 });
    await upstream.start();
    await reach('up');
    const names = upstreamConversations(upstream)
      .map((c) => c.name)
      .sort();
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
    expect(now.setAside).toEqual([
      expect.objectContaining({ operation: 'conversationSpecificConversationRename', id: old.id, status: 404 }),
    ]);
    await eventually(async () => expect(await localConversations(host)).toEqual(upstreamConversations(upstream)));
  });
});

/** A seed of a snippet, as clients send it (`{asset: SeededAsset}`), from the application `application`. */
const seed = (application: unknown, raw: string, metadata: Record<string, unknown> = {}) => ({
  type: 'SEEDED_ASSET',
  asset: { application, format: { fragment: { string: { raw } }, classification: { specific: 'ts' } }, metadata },
});

/** An Application as a client that did not connect sends it. */
const app = (id: string) => ({ id, name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' });

/** A wire record without what only one side writes (`schema`, list `indices`). */
const normalized = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, inner: unknown) => (key === 'schema' || key === 'indices' ? undefined : inner)));

/** Every asset as the upstream holds it: name, text, annotation texts, tag texts. */
const upstreamAssets = (upstream: IndependentPiecesOS) =>
  upstream
    .snapshot()
    .assets.map((a) => ({
      id: a.id as string,
      name: a.name as string,
      text: a.original.reference.fragment.string.raw as string,
      annotations: ((a.annotations?.iterable ?? []) as any[]).map((n) => `${n.type}:${n.text}`).sort(),
      tags: ((a.tags?.iterable ?? []) as any[]).map((t) => t.text as string).sort(),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));

/** The local copy's own answer (the service over the host's storage, not the mirror in front of it). */
const localAnswer = (host: NodeHost, path: string) => createService({ storage: host.storage }).handle(new Request(BASE + path));

/** Every asset as the local copy holds it, the same way. */
async function localAssets(host: NodeHost) {
  const { iterable } = await (await localAnswer(host, '/assets?transferables=true')).json();
  return (iterable as any[])
    .map((a) => ({
      id: a.id as string,
      name: a.name as string,
      text: a.original.reference.fragment.string.raw as string,
      annotations: ((a.annotations?.iterable ?? []) as any[]).map((n) => `${n.type}:${n.text}`).sort(),
      tags: ((a.tags?.iterable ?? []) as any[]).map((t) => t.text as string).sort(),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

describe('the second ring: assets, what hangs on them, anchors, activities', () => {
  it('while up, keeps the upstream’s assets whole (formats, annotations, tags), anchors and activities, exactly as it answers them', async () => {
    const upstream = await upstreamOn();
    const { host, call, json, reach } = hostOf(upstream);
    await reach('up');
    const { application } = await json('/connect', post({ application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX' } }));
    const asset = await json(
      '/assets/create',
      post(seed(application, 'export const answer = 42;\n', { name: 'answer.ts', tags: [{ text: 'numbers' }] })),
    );
    await json('/annotations/create', post({ type: 'COMMENT', text: 'the answer', asset: asset.id }));
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'with an anchor' }));
    const anchor = await json('/anchors/create', post({ type: 'FILE', fullpath: '/src/answer.ts', conversation: conversation.id }));
    // Made on the upstream, not here: its ids.
    expect([asset.id, anchor.id]).toEqual([expect.stringMatching(/-0000-5000-9000-/), expect.stringMatching(/-0000-5000-9000-/)]);
    const theirs = async (path: string) => normalized(await (await fetch(upstream.url + path)).json());
    const paths = [
      `/asset/${asset.id}?transferables=true`,
      '/assets?transferables=true',
      `/anchor/${anchor.id}`,
      '/anchors',
      '/activities',
      `/tag/${asset.tags.iterable[0].id}`,
    ];
    const expected = await Promise.all(paths.map(theirs));
    // The local copy follows (its streams and the writes' answers): once it is away, the same records are answered here.
    await eventually(async () => {
      for (const [i, path] of paths.entries()) {
        expect(normalized(await (await localAnswer(host, path)).json()), path).toEqual(expected[i]);
      }
    });
    await upstream.stop();
    for (const [i, path] of paths.entries()) {
      const response = await call(path);
      expect(response.headers.get('x-upstream'), path).toBeNull();
      expect(normalized(await response.json()), path).toEqual(expected[i]);
    }
  });

  it('asset writes while it is away are queued in order and replayed with every local id rewritten; both sides end equal under the upstream’s ids', async () => {
    const upstream = await upstreamOn();
    const { host, call, json, status, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const { application } = await json('/connect', post({ application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX' } }));
    const headers = { application: application.id };
    const made = await json(
      '/assets/create',
      post(
        seed(application, 'let a = 1;\n', {
          name: 'a.ts',
          tags: [{ text: 'offline' }],
          websites: [{ url: 'https://example.com/a', name: 'a' }],
        }),
        headers,
      ),
    );
    const format = made.formats.iterable[0];
    // Sent back whole, as clients do (every id of it is one made here).
    await json('/asset/update', post({ ...made, name: 'a renamed.ts' }, headers));
    await json(
      '/format/update/value',
      post({ id: format.id, asset: { id: made.id }, fragment: { string: { raw: 'let a = 2;\n' } } }, headers),
    );
    const note = await json('/annotations/create', post({ type: 'COMMENT', text: 'second thoughts', asset: made.id }, headers));
    await json('/annotation/update', post({ ...note, text: 'third thoughts' }, headers));
    const website = made.websites.iterable[0].id;
    await call(`/asset/${made.id}/websites/disassociate/${website}`, post(undefined, headers));
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'anchored' }, headers));
    const anchor = await json(
      '/anchors/create',
      post({ type: 'FILE', fullpath: '/src/a.ts', conversation: conversation.id, asset: made.id }, headers),
    );
    const gone = await json('/anchors/create', post({ type: 'DIRECTORY', fullpath: '/tmp' }, headers));
    await call(`/anchors/${gone.id}/delete`, post(undefined, headers));
    const queued = (await status()).outbox.map((q) => q.operation);
    expect(queued).toEqual([
      'connect',
      'assetsCreateNewAsset',
      'assetUpdate',
      'formatUpdateValue',
      'annotationsCreateNewAnnotation',
      'annotationUpdate',
      'assetDisassociateWebsite',
      'conversationsCreateSpecificConversation',
      'anchorsCreateNewAnchor',
      'anchorsCreateNewAnchor',
      'anchorsDeleteSpecificAnchor',
    ]);
    const locals = [application.id, made.id, format.id, note.id, website, made.tags.iterable[0].id, conversation.id, anchor.id, gone.id];

    const before = upstream.log.length;
    await upstream.start();
    await reach('up');
    const replayed = upstream.log
      .slice(before)
      .filter((e) => e.method === 'POST' && !(e.path === '/connect' && JSON.stringify(e.body).includes('OPEN_SOURCE')));
    // The anchor made and deleted while away was never sent.
    expect(replayed.map((e) => e.path.replace(/[0-9a-f-]{36}/g, '{id}'))).toEqual([
      '/connect',
      '/assets/create',
      '/asset/update',
      '/format/update/value',
      '/annotations/create',
      '/annotation/update',
      '/asset/{id}/websites/disassociate/{id}',
      '/conversations/create',
      '/anchors/create',
    ]);
    expect(replayed.map((e) => e.outcome)).toEqual([200, 200, 200, 200, 200, 200, 204, 200, 200]);
    const sent = JSON.stringify(replayed);
    for (const id of locals) expect(sent).not.toContain(id);
    expect((await status()).setAside).toEqual([]);
    // The upstream has what was written, once; the local copy the same, under its ids.
    // (The update sent the asset back whole, as the client had it: its description is the one it was answered with here.)
    const description = made.annotations.iterable.find((a: { type: string }) => a.type === 'DESCRIPTION').text;
    expect(upstreamAssets(upstream).filter((a) => a.name === 'a renamed.ts')).toEqual([
      expect.objectContaining({
        text: 'let a = 2;\n',
        annotations: ['COMMENT:third thoughts', `DESCRIPTION:${description}`],
        tags: ['offline'],
      }),
    ]);
    await eventually(async () => expect(await localAssets(host)).toEqual(upstreamAssets(upstream)));
    const theirs = upstream.snapshot();
    expect(
      theirs.anchors.map((a) => [a.points.iterable[0].reference.fullpath, a.conversations.iterable.map((c: { id: string }) => c.id)]),
    ).toEqual([['/src/a.ts', [theirs.conversations[0]!.id]]]);
    // Reads by the ids given while away keep working (rewritten), every kind of them.
    const upstreamAsset = upstreamAssets(upstream).find((a) => a.name === 'a renamed.ts')!.id;
    expect((await json(`/asset/${made.id}`)).id).toBe(upstreamAsset);
    expect((await json(`/format/${format.id}`)).asset.id).toBe(upstreamAsset);
    expect((await json(`/annotation/${note.id}`)).text).toBe('third thoughts');
    expect((await json(`/anchor/${anchor.id}`)).points.iterable[0].reference.fullpath).toBe('/src/a.ts');
  });

  it('announces an asset made while away as its local id deleted and the upstream’s added, with its formats and annotations re-keyed in one go', async () => {
    const upstream = await upstreamOn();
    const { host, json, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const made = await json('/assets/create', post(seed(app('5e5e5e5e-0000-4000-8000-000000000001'), 'const b = 1;\n')));
    const after = (await host.storage.changesSince(0)).seq;
    await upstream.start();
    await reach('up');
    const { changes } = await host.storage.changesSince(after, 'asset');
    const theirs = upstreamAssets(upstream).find((a) => a.text === 'const b = 1;\n')!.id;
    const at = (id: string, deleted: boolean) => changes.findIndex((c) => c.id === id && !!c.deleted === deleted);
    expect(at(made.id, true)).toBeGreaterThanOrEqual(0);
    expect(at(theirs, false)).toBeGreaterThan(at(made.id, true));
    // Its format and annotation under the upstream's ids (the upstream made one format, and its own description).
    const local = await json(`/asset/${theirs}`);
    expect(local.formats.iterable.map((f: { id: string }) => f.id)).toEqual(
      upstream
        .snapshot()
        .assets.find((a) => a.id === theirs)!
        .formats.iterable.map((f: { id: string }) => f.id),
    );
  });

  it('anchors associated while away with conversations and assets made while away are replayed with both ids rewritten; both sides list each other there and here', async () => {
    const upstream = await upstreamOn();
    const { host, call, json, status, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const made = await json('/assets/create', post(seed(app('5e5e5e5e-0000-4000-8000-000000000003'), 'anchored\n')));
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'linked' }));
    const anchor = await json('/anchors/create', post({ type: 'FILE', fullpath: '/src/linked.ts' }));
    const other = await json('/anchors/create', post({ type: 'DIRECTORY', fullpath: '/src' }));
    expect((await call(`/anchor/${anchor.id}/assets/associate/${made.id}`, post())).status).toBe(204);
    expect((await call(`/conversation/${conversation.id}/anchors/associate/${anchor.id}`, post())).status).toBe(204);
    expect((await call(`/asset/${made.id}/anchors/associate/${other.id}`, post())).status).toBe(204);
    expect((await call(`/anchor/${other.id}/conversations/associate/${conversation.id}`, post())).status).toBe(204);
    expect((await call(`/conversation/${conversation.id}/anchors/disassociate/${other.id}`, post())).status).toBe(204);

    // Associating again changes nothing and queues nothing.
    expect((await call(`/asset/${made.id}/anchors/associate/${anchor.id}`, post())).status).toBe(204);
    // (The status announces the outbox at most every 25 ms.)
    await eventually(async () =>
      expect((await status()).outbox.map((q) => q.operation)).toEqual([
        'assetsCreateNewAsset',
        'conversationsCreateSpecificConversation',
        'anchorsCreateNewAnchor',
        'anchorsCreateNewAnchor',
        'anchorAssociateAsset',
        'conversationAssociateAnchor',
        'assetAssociateAnchor',
        'anchorAssociateConversation',
        'conversationDisassociateAnchor',
      ]),
    );
    const before = upstream.log.length;
    await upstream.start();
    await reach('up');
    const replayed = upstream.log.slice(before).filter((e) => e.method === 'POST' && e.path !== '/connect');
    expect(replayed.map((e) => e.path.replace(/[0-9a-f-]{36}/g, '{id}'))).toEqual([
      '/assets/create',
      '/conversations/create',
      '/anchors/create',
      '/anchors/create',
      '/anchor/{id}/assets/associate/{id}',
      '/conversation/{id}/anchors/associate/{id}',
      '/asset/{id}/anchors/associate/{id}',
      '/anchor/{id}/conversations/associate/{id}',
      '/conversation/{id}/anchors/disassociate/{id}',
    ]);
    expect(replayed.map((e) => e.outcome)).toEqual([200, 200, 200, 200, 204, 204, 204, 204, 204]);
    const sent = JSON.stringify(replayed);
    for (const id of [made.id, conversation.id, anchor.id, other.id]) expect(sent).not.toContain(id);
    expect((await status()).setAside).toEqual([]);
    // On the upstream: the anchor on the asset and the conversation, the other on the asset only.
    const theirs = upstream.snapshot();
    const theirAsset = theirs.assets.find((a) => a.original.reference.fragment.string.raw === 'anchored\n')!;
    const byPath = (path: string) => theirs.anchors.find((a) => a.points.iterable[0].reference.fullpath === path)!;
    const ids = (list: any) => ((list?.iterable ?? []) as Array<{ id: string }>).map((item) => item.id);
    expect(ids(byPath('/src/linked.ts').assets)).toEqual([theirAsset.id]);
    expect(ids(byPath('/src/linked.ts').conversations)).toEqual([theirs.conversations[0]!.id]);
    expect(ids(byPath('/src').assets)).toEqual([theirAsset.id]);
    expect(ids(byPath('/src').conversations)).toEqual([]);
    expect(ids(theirAsset.anchors)).toEqual([byPath('/src/linked.ts').id, byPath('/src').id]);
    // Here, under the upstream's ids, both sides as well (the local copy's own answers).
    await eventually(async () => {
      const asset = await (await localAnswer(host, `/asset/${theirAsset.id}`)).json();
      expect(ids(asset.anchors)).toEqual(ids(theirAsset.anchors));
      const anchored = await (await localAnswer(host, `/anchor/${byPath('/src/linked.ts').id}`)).json();
      expect([ids(anchored.assets), ids(anchored.conversations)]).toEqual([[theirAsset.id], [theirs.conversations[0]!.id]]);
      const listed = await (await localAnswer(host, `/conversation/${theirs.conversations[0]!.id}`)).json();
      expect(ids(listed.anchors)).toEqual([byPath('/src/linked.ts').id]);
    });
    // Reads by the ids given while away keep working.
    expect(ids((await json(`/asset/${made.id}`)).anchors)).toEqual(ids(theirAsset.anchors));
  });

  it('an asset created and deleted while away sends nothing, nor anything done to it in between', async () => {
    const upstream = await upstreamOn();
    const { json, call, reach } = hostOf(upstream);
    await reach('up');
    const kept = await json('/assets/create', post(seed(app('5e5e5e5e-0000-4000-8000-000000000002'), 'kept\n')));
    await upstream.stop();
    await reach('down');
    const made = await json('/assets/create', post(seed(kept.formats.iterable[0].application, 'short-lived\n')));
    await json('/asset/update', post({ id: made.id, name: 'renamed' }));
    await json('/format/update/value', post({ id: made.formats.iterable[0].id, fragment: { string: { raw: 'changed\n' } } }));
    await json('/annotations/create', post({ type: 'COMMENT', text: 'never sent', asset: made.id }));
    expect((await call(`/assets/${made.id}/delete`, post())).status).toBe(200);
    // Work on an asset the upstream has, made useless by its delete: only the delete goes.
    await json('/asset/update', post({ id: kept.id, name: 'useless' }));
    expect((await call(`/assets/${kept.id}/delete`, post())).status).toBe(200);
    const before = upstream.log.length;
    await upstream.start();
    await reach('up');
    const posts = upstream.log.slice(before).filter((e) => e.method === 'POST' && e.path !== '/connect');
    expect(posts.map((e) => e.path)).toEqual([`/assets/${kept.id}/delete`]);
    expect(upstreamAssets(upstream).map((a) => a.text)).not.toContain('kept\n');
    expect((await call(`/asset/${made.id}`)).status).toBe(404);
  });

  it('does not collapse what a kept operation needs: an anchor made on a conversation created and deleted while away is made on the upstream, the conversation made and deleted around it', async () => {
    const upstream = await upstreamOn();
    const { json, call, status, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'brief' }));
    const anchor = await json('/anchors/create', post({ type: 'FILE', fullpath: '/src/kept.ts', conversation: conversation.id }));
    expect((await call(`/conversations/${conversation.id}/delete`, post())).status).toBe(204);
    // The anchor stays here without it: it must on the upstream too.
    expect((await json(`/anchor/${anchor.id}`)).points.iterable[0].reference.fullpath).toBe('/src/kept.ts');
    const before = upstream.log.length;
    await upstream.start();
    await reach('up');
    const posts = upstream.log.slice(before).filter((e) => e.method === 'POST' && e.path !== '/connect');
    expect(posts.map((e) => [e.path.replace(/[0-9a-f-]{36}/g, '{id}'), e.outcome])).toEqual([
      ['/conversations/create', 200],
      ['/anchors/create', 200],
      ['/conversations/{id}/delete', 204],
    ]);
    expect((await status()).setAside).toEqual([]);
    expect(upstream.snapshot().anchors.map((a) => a.points.iterable[0].reference.fullpath)).toEqual(['/src/kept.ts']);
    expect(upstream.snapshot().conversations).toEqual([]);
  });

  it('an asset create whose answer was lost is looked for on the upstream, not made twice', async () => {
    const upstream = await upstreamOn();
    const { host, json, reach } = hostOf(upstream);
    await reach('up');
    await upstream.stop();
    await reach('down');
    const made = await json(
      '/assets/create',
      post(seed(app('5e5e5e5e-0000-4000-8000-000000000003'), 'exactly once\n', { name: 'once.ts' })),
    );
    await json('/asset/update', post({ id: made.id, name: 'once, renamed.ts' }));
    upstream.fault({ match: 'POST /assets/create', action: { drop: 'after-commit' }, times: 1 });
    await upstream.start();
    await reach('up');
    expect(upstream.log.filter((e) => e.path === '/assets/create').map((e) => e.outcome)).toEqual(['dropped']);
    expect(
      upstreamAssets(upstream)
        .filter((a) => a.text === 'exactly once\n')
        .map((a) => a.name),
    ).toEqual(['once, renamed.ts']);
    await eventually(async () => expect(await localAssets(host)).toEqual(upstreamAssets(upstream)));
  });

  it('the upstream’s own business (a model’s download, signing in, an applet, the cloud) passes through while it answers, and is answered here but not queued while it is away', async () => {
    const upstream = await upstreamOn();
    const { host, call, status, reach } = hostOf(upstream);
    await reach('up');
    const signIn = await call('/os/sign_in', post());
    expect([signIn.status, signIn.headers.get('x-upstream')]).toEqual([200, 'independent']);
    // Nothing of it was made here: the local profile is as it was.
    expect(await host.storage.getMeta('signedIn')).toBeUndefined();
    const download = await call('/model/597c1f91-0e97-56b2-ac37-77dc67c32c2b/download', post());
    expect(download.headers.get('x-upstream')).toBe('independent');
    await upstream.stop();
    await reach('down');
    const before = upstream.log.length;
    for (const [path, body] of [
      ['/os/sign_out', undefined],
      ['/os/applet/launch', { type: 'COPILOT' }],
      ['/allocations/disconnect', undefined],
    ] as const) {
      const response = await call(path, post(body));
      expect([path, response.status, response.headers.get('x-upstream')]).toEqual([path, 200, null]);
    }
    expect(await host.storage.getMeta('signedIn')).toBe(false);
    expect((await status()).outbox).toEqual([]);
    await upstream.start();
    await reach('up');
    expect(upstream.log.slice(before).filter((e) => e.method === 'POST' && e.path !== '/connect')).toEqual([]);
  });
});

describe('what no host can do', () => {
  it('passes through to the upstream while it answers (which does it), and is refused 501 here, not queued, while it is away', async () => {
    const upstream = await upstreamOn();
    const { call, status, reach } = hostOf(upstream);
    await reach('up');
    const picked = await call('/os/filesystem/folders/pick', post());
    expect([picked.status, picked.headers.get('x-upstream')]).toEqual([200, 'independent']);
    expect(await picked.json()).toEqual(['/home/independent/projects']);
    expect(upstream.log.filter((e) => e.path === '/os/filesystem/folders/pick')).toHaveLength(1);
    await upstream.stop();
    await reach('down');
    const before = upstream.log.length;
    const refused = await call('/os/filesystem/folders/pick', post());
    expect([refused.status, refused.headers.get('x-upstream')]).toEqual([501, null]);
    expect(await refused.text()).toMatch(
      /^POST \/os\/filesystem\/folders\/pick is the Pieces OS operation OSApi\.osFilesystemPickFolders, which this service cannot do: it shows the operating system’s folder picker/,
    );
    expect((await status()).outbox).toEqual([]);
    await upstream.start();
    await reach('up');
    // Nothing was replayed: the picker was shown once, while the upstream answered.
    expect(upstream.log.slice(before).filter((e) => e.path === '/os/filesystem/folders/pick')).toEqual([]);
  });
});

describe('the write table', () => {
  it('declares every write of the route table: the compiler refuses a table without one', () => {
    const { conversationUpdate, ...rest } = WRITES;
    // @ts-expect-error: conversationUpdate is a write of the route table, and its declaration is missing.
    const incomplete: Record<WriteOperationName, MirrorSpec> = rest;
    expect(Object.keys(incomplete)).not.toContain('conversationUpdate');
    expect(conversationUpdate.about.kind).toBe('conversation');
    // The operations declared (the table's, and the generic path's from the graph table) are the ones the route table serves as writes: every POST that changes something.
    expect([...Object.keys(WRITES), ...MATERIAL_WRITES.keys(), ...LINK_WRITES.keys()].sort()).toEqual(
      OPERATIONS.filter((o) => o.method === 'POST' && !o.readOnly)
        .map((o) => o.name)
        .sort(),
    );
  });
});
