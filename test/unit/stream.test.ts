import { afterEach, describe, expect, it } from 'vitest';
import { StreamedIdentifiersFromJSON, instanceOfStreamedIdentifiers } from '@pieces.app/pieces-os-client';
import { installStreamShim } from '../../src/stream/shim.js';
import { CHANGES_CHANNEL } from '../../src/stream/protocol.js';
import { BASE, setup } from './harness.js';

const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';

/** Stands in for the browser's native WebSocket. */
class NativeWebSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  readonly native = true;
  constructor(readonly url: string, readonly protocols?: string | string[]) {}
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
    for (const junk of [null, 'x', 42, {}, { type: 'change' }, { type: 'change', change: { seq: -1 } }, { type: 'change', change: { seq: 1e9, conversation: 'forged' } }]) {
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
