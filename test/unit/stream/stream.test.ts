import { afterEach, describe, expect, it } from 'vitest';
import { StreamedIdentifiersFromJSON, instanceOfStreamedIdentifiers } from '@pieces.app/pieces-os-client';
import { installStreamShim } from '../../../src/stream/shim.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import { formatEntry } from '../../../src/core/log.js';
import { BASE, newAsset, setup } from '../support/harness.js';

const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';

/** Stands in for the browser's native WebSocket. */
class NativeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  readonly native = true;
  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {}
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

type Received = Array<{ conversation: { id: string }; deleted?: true }[]>;

async function world(options: { available?: boolean } = {}) {
  const announce = new BroadcastChannel(CHANGES_CHANNEL);
  const t = await setup({ onChange: (change) => announce.postMessage({ type: 'change', change }) });
  const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
  const uninstall = installStreamShim({
    target,
    fetch: (input, init) => t.service.handle(new Request(input, init)),
    isServiceAvailable: () => options.available ?? true,
  });
  cleanups.push(() => {
    uninstall();
    announce.close();
  });
  const create = async (name = 'c') => {
    const response = await t.fetch(`${BASE}/conversations/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'COPILOT', name }),
    });
    return ((await response.json()) as { id: string }).id;
  };
  const remove = (id: string) => t.fetch(`${BASE}/conversations/${id}/delete`, { method: 'POST' });
  const ids = async () =>
    ((await (await t.fetch(`${BASE}/conversations/identifiers`)).json()) as { iterable: { id: string }[] }).iterable.map((i) => i.id);
  /** Opens a socket that records every message's items. */
  const open = (url = STREAM) => {
    const socket = new target.WebSocket(url);
    const messages: Received = [];
    const events: string[] = [];
    socket.addEventListener('message', (event) => {
      const json = JSON.parse((event as MessageEvent).data as string);
      expect(instanceOfStreamedIdentifiers(StreamedIdentifiersFromJSON(json))).toBe(true);
      messages.push(json.iterable);
    });
    for (const type of ['open', 'error', 'close']) socket.addEventListener(type, () => events.push(type));
    return { socket, messages, events };
  };
  return { t, target, create, remove, ids, open };
}

const until = async (condition: () => boolean, what: string) => {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
};

/** Every id a socket currently knows: the snapshot, then the changes applied in order. */
function replay(messages: Received): string[] {
  const ids: string[] = [];
  for (const item of messages.flat()) {
    const at = ids.indexOf(item.conversation.id);
    if (item.deleted) {
      if (at >= 0) ids.splice(at, 1);
    } else if (at < 0) ids.push(item.conversation.id);
  }
  return ids;
}

describe('the stream shim', () => {
  it('opens, then sends every current id as the first message', async () => {
    const w = await world();
    const a = await w.create('a');
    const b = await w.create('b');
    const { socket, messages, events } = w.open();
    expect(socket.readyState).toBe(0);
    await until(() => messages.length === 1, 'the snapshot');
    expect(socket.readyState).toBe(1);
    expect(events).toEqual(['open']);
    expect(messages[0]!.map((i) => i.conversation.id)).toEqual([a, b]);
  });

  it('sends an empty iterable when there are no conversations', async () => {
    const w = await world();
    const { messages } = w.open();
    await until(() => messages.length === 1, 'the snapshot');
    expect(messages[0]).toEqual([]);
  });

  it('then one message per change, in commit order, deletes flagged', async () => {
    const w = await world();
    const { messages } = w.open();
    await until(() => messages.length === 1, 'the snapshot');
    const a = await w.create('a');
    const b = await w.create('b');
    await w.remove(a);
    await until(() => messages.length === 4, 'three changes');
    expect(messages.slice(1)).toEqual([
      [{ conversation: { id: a } }],
      [{ conversation: { id: b } }],
      [{ conversation: { id: a }, deleted: true }],
    ]);
  });

  it('loses and doubles nothing when writes race the opening', async () => {
    const w = await world();
    await w.create('before');
    const { messages } = w.open();
    // Writes while the socket connects, without awaiting the socket.
    await Promise.all(Array.from({ length: 20 }, (_, i) => w.create(`during ${i}`)));
    const expected = await w.ids();
    await until(() => replay(messages).length === expected.length, 'every id');
    await new Promise((r) => setTimeout(r, 50));
    const all = messages.flat().map((i) => i.conversation.id);
    expect(new Set(all).size).toBe(all.length);
    expect(replay(messages).sort()).toEqual([...expected].sort());
  });

  it('gives several sockets in one page the full feed, and closing one leaves the others', async () => {
    const w = await world();
    const one = w.open();
    const two = w.open();
    await until(() => one.messages.length === 1 && two.messages.length === 1, 'both snapshots');
    const a = await w.create('a');
    await until(() => one.messages.length === 2 && two.messages.length === 2, 'the change on both');
    one.socket.close(1000, 'done');
    await until(() => one.events.includes('close'), 'the close');
    const b = await w.create('b');
    await until(() => two.messages.length === 3, 'the next change');
    expect(replay(two.messages)).toEqual([a, b]);
    expect(one.messages.length).toBe(2);
  });

  it('ignores malformed and forged announcements', async () => {
    const w = await world();
    const { socket, messages } = w.open();
    await until(() => messages.length === 1, 'the snapshot');
    const forger = new BroadcastChannel(CHANGES_CHANNEL);
    for (const junk of [
      null,
      'x',
      42,
      {},
      { type: 'change' },
      { type: 'change', change: { seq: -1 } },
      { type: 'change', change: { seq: 1e9, conversation: 'forged' } },
    ]) {
      forger.postMessage(junk);
    }
    await new Promise((r) => setTimeout(r, 60));
    forger.close();
    expect(messages.length).toBe(1);
    expect(socket.readyState).toBe(1);
    const a = await w.create('a');
    await until(() => messages.length === 2, 'the real change');
    expect(messages[1]).toEqual([{ conversation: { id: a } }]);
  });

  it('fails like a refused connection when no service worker answers', async () => {
    const w = await world({ available: false });
    const { socket, events, messages } = w.open();
    let close: { code: number; wasClean: boolean } | undefined;
    socket.addEventListener('close', (event) => (close = event as CloseEvent));
    await until(() => events.includes('close'), 'the close');
    expect(events).toEqual(['error', 'close']);
    expect(close!.code).toBe(1006);
    expect(close!.wasClean).toBe(false);
    expect(socket.readyState).toBe(3);
    expect(messages).toEqual([]);
  });

  it('follows WebSocket semantics: readyState, handlers, close codes, send', async () => {
    const w = await world();
    const { socket, messages } = w.open();
    expect(() => socket.send('x')).toThrow(/CONNECTING/);
    const seen: string[] = [];
    socket.onopen = () => seen.push('onopen');
    socket.onmessage = () => seen.push('onmessage');
    socket.onclose = (event) => seen.push(`onclose ${event.code}`);
    await until(() => messages.length === 1, 'the snapshot');
    expect(socket.url).toBe(STREAM);
    expect(socket.protocol).toBe('');
    expect(socket.bufferedAmount).toBe(0);
    expect(socket.extensions).toBe('');
    expect(() => socket.close(1001)).toThrow(/1000, or between 3000 and 4999/);
    expect(() => socket.close(1000, 'x'.repeat(124))).toThrow(/123 bytes/);
    socket.send('ignored');
    socket.close(4000, 'bye');
    expect(socket.readyState).toBe(2);
    await until(() => socket.readyState === 3, 'CLOSED');
    expect(seen).toEqual(['onopen', 'onmessage', 'onclose 4000']);
  });

  it('leaves every other URL to the native WebSocket, and instanceof holds for both', async () => {
    const w = await world();
    const other = new w.target.WebSocket('ws://localhost:1000/other');
    const elsewhere = new w.target.WebSocket('ws://example.test/conversations/stream/identifiers');
    expect((other as unknown as NativeWebSocket).native).toBe(true);
    expect((elsewhere as unknown as NativeWebSocket).native).toBe(true);
    expect(other instanceof w.target.WebSocket).toBe(true);
    const { socket } = w.open();
    expect(socket instanceof w.target.WebSocket).toBe(true);
    expect(w.target.WebSocket.OPEN).toBe(1);
    expect(() => (w.target.WebSocket as unknown as () => void)()).toThrow(/new/);
  });

  it('serves the second default base too', async () => {
    const w = await world();
    const { messages } = w.open('ws://localhost:39300/conversations/stream/identifiers');
    await until(() => messages.length === 1, 'the snapshot');
  });
});

describe('every socket path through the one mechanism', () => {
  type Item = Record<string, { id: string } | true | undefined>;
  /** Opens a socket on `path` that records every message, parsed. */
  const openPath = (w: Awaited<ReturnType<typeof world>>, url: string) => {
    const socket = new w.target.WebSocket(url);
    const messages: unknown[] = [];
    const events: string[] = [];
    socket.addEventListener('message', (event) => {
      const data = (event as MessageEvent).data as string;
      messages.push(data === 'ok' ? data : JSON.parse(data));
    });
    for (const type of ['open', 'error', 'close']) socket.addEventListener(type, () => events.push(type));
    return { socket, messages, events };
  };
  const items = (messages: unknown[]) => messages.flatMap((m) => (m as { iterable: Item[] }).iterable);
  const post = (w: Awaited<ReturnType<typeof world>>, path: string, body: unknown) =>
    w.t.fetch(`${BASE}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('messages: snapshot of every message id, then creates, updates and deletes; the conversation stream hears each write', async () => {
    const w = await world();
    const conversation = await w.create('c');
    const messages = openPath(w, 'ws://localhost:1000/messages/stream/identifiers');
    const conversations = openPath(w, STREAM);
    await until(() => messages.messages.length === 1 && conversations.messages.length === 1, 'both snapshots');
    expect(messages.messages[0]).toEqual({ iterable: [] });
    const created = await (
      await post(w, '/messages/create', { role: 'USER', fragment: { string: { raw: 'x' } }, conversation: { id: conversation } })
    ).json();
    await w.t.fetch(`${BASE}/messages/${created.id}/delete`, { method: 'POST' });
    await until(() => messages.messages.length === 3 && conversations.messages.length === 3, 'the changes');
    expect(items(messages.messages.slice(1))).toEqual([
      { conversationMessage: { id: created.id } },
      { conversationMessage: { id: created.id }, deleted: true },
    ]);
    expect(items(conversations.messages.slice(1))).toEqual([
      { conversation: { id: conversation } },
      { conversation: { id: conversation } },
    ]);
    for (const message of messages.messages) expect(instanceOfStreamedIdentifiers(StreamedIdentifiersFromJSON(message))).toBe(true);
    // A reopened socket's snapshot has no deleted id.
    const again = openPath(w, 'ws://127.0.0.1:39300/messages/stream/identifiers');
    await until(() => again.messages.length === 1, 'the new snapshot');
    expect(again.messages[0]).toEqual({ iterable: [] });
  });

  it('assets and applications: snapshot of the stored ids, then one message per write', async () => {
    const w = await world();
    const assets = openPath(w, 'ws://localhost:39310/assets/stream/identifiers');
    const applications = openPath(w, 'ws://127.0.0.1:39333/applications/stream/identifiers/');
    await until(() => assets.messages.length === 1 && applications.messages.length === 1, 'both snapshots');
    expect(items(assets.messages).length).toBeGreaterThan(0);
    expect(items(assets.messages).every((i) => typeof (i.asset as { id: string }).id === 'string')).toBe(true);
    // The OS's own entry is listed first, as in the applications snapshot.
    const os = ((await (await w.t.fetch(`${BASE}/applications`)).json()) as { iterable: Array<{ id: string }> }).iterable[0]!.id;
    expect(applications.messages[0]).toEqual({ iterable: [{ application: { id: os } }] });
    const context = await (await post(w, '/connect', { application: { name: 'JETBRAINS', version: '1', platform: 'MACOS' } })).json();
    await until(() => applications.messages.length === 2, 'the connected application');
    expect(applications.messages[1]).toEqual({ iterable: [{ application: { id: context.application.id } }] });
    const asset = {
      id: crypto.randomUUID(),
      name: 'n.py',
      language: 'py',
      text: 'x = 1',
      created: new Date().toISOString(),
      formatId: crypto.randomUUID(),
    };
    const whole = newAsset(asset);
    const announce = new BroadcastChannel(CHANGES_CHANNEL);
    for (const change of await w.t.storage.putAssets([whole])) announce.postMessage({ type: 'change', change });
    announce.close();
    await until(() => assets.messages.length === 2, 'the added asset');
    expect(assets.messages[1]).toEqual({ iterable: [{ asset: { id: asset.id } }] });
    // Neither heard the other collection's change.
    expect(applications.messages.length).toBe(2);
  });

  it('several sockets on one path, with and without query strings or a trailing slash, never interfere', async () => {
    const w = await world();
    const plain = w.open();
    const query = w.open(`${STREAM}?x=1`);
    const other = w.open(`${STREAM}?y=2&z`);
    const slash = w.open(`${STREAM}/`);
    const all = [plain, query, other, slash];
    await until(() => all.every((s) => s.messages.length === 1), 'every snapshot');
    expect(query.socket.url).toBe(`${STREAM}?x=1`);
    const a = await w.create('a');
    await until(() => all.every((s) => s.messages.length === 2), 'the change on each');
    query.socket.close();
    await until(() => query.events.includes('close'), 'the close');
    const b = await w.create('b');
    await until(() => [plain, other, slash].every((s) => s.messages.length === 3), 'the next change');
    for (const s of [plain, other, slash]) expect(replay(s.messages)).toEqual([a, b]);
    expect(query.messages.length).toBe(2);
    // And a new socket with a query opens while the others are open.
    const late = w.open(`${STREAM}?late`);
    await until(() => late.messages.length === 1, 'the late snapshot');
    expect(late.messages[0]!.map((i) => i.conversation.id)).toEqual([a, b]);
  });

  it('health: `ok:<os id>` on open and periodically while the service answers; closes when it stops answering', async () => {
    let up = true;
    const t = await setup();
    const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
    const uninstall = installStreamShim({
      target,
      fetch: async (input, init) => (up ? t.service.handle(new Request(input, init)) : Promise.reject(new TypeError('Failed to fetch'))),
      isServiceAvailable: () => true,
      healthIntervalMs: 10,
    });
    cleanups.push(uninstall);
    const socket = new target.WebSocket('ws://127.0.0.1:39300/.well-known/stream/health');
    const received: string[] = [];
    let closed: CloseEvent | undefined;
    socket.onmessage = (event) => received.push(event.data as string);
    socket.onclose = (event) => (closed = event);
    await until(() => received.length >= 3, 'three oks');
    const os = (
      (await (
        await t.fetch('http://127.0.0.1:39300/connect', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ application: { name: 'VS_CODE', version: '1', platform: 'LINUX' } }),
        })
      ).json()) as { os: string }
    ).os;
    expect(new Set(received)).toEqual(new Set([`ok:${os}`]));
    up = false;
    await until(() => closed !== undefined, 'the close');
    expect(closed!.code).toBe(4503);
    expect(socket.readyState).toBe(3);
  });

  it('health: logged once, as the connection it is; its beats and an identifier socket catch-ups are not requests of their own', async () => {
    const lines: string[] = [];
    const announce = new BroadcastChannel(CHANGES_CHANNEL);
    const t = await setup({
      log: (entry) =>
        lines.push(
          formatEntry(entry)
            .replace(/^\S+ \S+ /, '')
            .replace(/\(\d+ ms\)/, '(N ms)'),
        ),
      onChange: (change) => announce.postMessage({ type: 'change', change }),
    });
    const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
    const uninstall = installStreamShim({
      target,
      fetch: (input, init) => t.service.handle(new Request(input, init)),
      isServiceAvailable: () => true,
      healthIntervalMs: 10,
    });
    cleanups.push(() => {
      uninstall();
      announce.close();
    });
    const health = new target.WebSocket('ws://127.0.0.1:39300/.well-known/stream/health');
    const oks: string[] = [];
    health.onmessage = (event) => oks.push(event.data as string);
    const stream = new target.WebSocket(STREAM);
    const items: unknown[] = [];
    stream.onmessage = (event) => items.push(event.data);
    await until(() => oks.length >= 3 && items.length === 1, 'three oks and the snapshot');
    await t.fetch(`${BASE}/conversations/create`, { method: 'POST' });
    await until(() => items.length === 2, 'the change');
    health.close();
    stream.close();
    expect(lines.sort()).toEqual([
      'conversationsCreateSpecificConversation POST /conversations/create 200 OK (N ms)',
      'conversationsStreamIdentifiers WS /conversations/stream/identifiers 101 Switching Protocols (N ms)',
      'getWellKnownStreamHealth WS /.well-known/stream/health 101 Switching Protocols (N ms)',
    ]);
  });

  it('user: a bare UserProfile on open (GET /user has it in `user`)', async () => {
    const w = await world();
    const user = openPath(w, 'ws://localhost:1000/user/stream');
    await until(() => user.messages.length === 1, 'the profile');
    const expected = await (await w.t.fetch(`${BASE}/user`)).json();
    expect(user.messages[0]).toEqual(expected.user);
  });

  it('a plain GET of any socket path is 426', async () => {
    const t = await setup();
    for (const path of [
      '/messages/stream/identifiers',
      '/assets/stream/identifiers',
      '/applications/stream/identifiers',
      '/.well-known/stream/health',
      '/user/stream',
    ]) {
      const response = await t.fetch(`${BASE}${path}`);
      expect(response.status).toBe(426);
      expect(await response.text()).toMatch(/is a WebSocket/);
    }
  });
});
