/**
 * A socket never looks live while stale: missed announcements, failed
 * catch-ups, a replaced database, a change log that no longer reaches back,
 * a service that stopped answering.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { reconnectingStorage } from '../../../src/storage/reconnect.js';
import { cacheReads } from '../../../src/storage/read-cache.js';
import {
  CLOSE_DATABASE_REPLACED,
  CLOSE_FELL_BEHIND,
  CLOSE_UNAVAILABLE,
  installStreamShim,
  type StreamShimOptions,
} from '../../../src/stream/shim.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import { BASE, setup } from '../support/harness.js';

const STREAM = 'ws://localhost:1000/conversations/stream/identifiers';

class NativeWebSocket {
  constructor(readonly url: string) {}
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

let counter = 0;

/**
 * A service over the worker's reopening storage, its sockets, and nothing
 * announced unless `announce` (so that only the sequence check can find changes).
 */
async function world(
  options: {
    announce?: boolean;
    fetch?: (f: NonNullable<StreamShimOptions['fetch']>) => StreamShimOptions['fetch'];
    shim?: Partial<StreamShimOptions>;
  } = {},
) {
  const name = `staleness-${Date.now()}-${counter++}`;
  const storage = reconnectingStorage((hooks) =>
    openStorage({ name, onLost: hooks.lost, onBlocked: hooks.blocked }).then((s) => cacheReads(s, null)),
  );
  const announce = new BroadcastChannel(CHANGES_CHANNEL);
  const t = await setup({
    storage,
    sampleAssets: false,
    onChange: (change) => options.announce && announce.postMessage({ type: 'change', change }),
  });
  const target = { WebSocket: NativeWebSocket as unknown as typeof WebSocket };
  const direct: NonNullable<StreamShimOptions['fetch']> = (input, init) => t.service.handle(new Request(input, init));
  const uninstall = installStreamShim({
    target,
    fetch: options.fetch?.(direct) ?? direct,
    isServiceAvailable: () => true,
    sequenceCheckMs: 20,
    ...options.shim,
  });
  const sockets: WebSocket[] = [];
  cleanups.push(() => {
    for (const socket of sockets) socket.close();
    uninstall();
    announce.close();
    storage.close();
  });
  const create = async () =>
    (
      (await (
        await t.fetch(`${BASE}/conversations/create`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"COPILOT"}',
        })
      ).json()) as { id: string }
    ).id;
  const open = async () => {
    const socket = new target.WebSocket(STREAM);
    sockets.push(socket);
    const ids: string[] = [];
    const closed = new Promise<CloseEvent>((resolve) => socket.addEventListener('close', (event) => resolve(event as CloseEvent)));
    socket.addEventListener('message', (event) => {
      for (const item of JSON.parse((event as MessageEvent).data as string).iterable) ids.push(item.conversation.id);
    });
    await new Promise((resolve) => socket.addEventListener('message', resolve, { once: true }));
    return { socket, ids, closed };
  };
  return { t, name, storage, create, open, announce };
}

const until = async (condition: () => boolean, what: string) => {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
};

describe('identifier sockets', () => {
  it('carry the database identity in the handshake and every catch-up', async () => {
    const w = await world();
    const identity = await w.storage.identity();
    const headers = { 'X-Pieces-Stream': 'handshake' };
    const handshake = (await (await w.t.fetch(`${BASE}/conversations/stream/identifiers`, { headers })).json()) as { database: string };
    const catchUp = (await (await w.t.fetch(`${BASE}/assets/stream/identifiers?after=0`, { headers })).json()) as { database: string };
    expect(handshake.database).toBe(identity);
    expect(catchUp.database).toBe(identity);
  });

  it('find a change whose announcement never came, by the periodic sequence check', async () => {
    const w = await world({ announce: false });
    const socket = await w.open();
    const id = await w.create();
    await until(() => socket.ids.includes(id), 'the unannounced change');
    expect(socket.socket.readyState).toBe(1);
  });

  it('retry a failed catch-up with a backoff until it succeeds', async () => {
    let failures = 3;
    const w = await world({
      announce: true,
      shim: { sequenceCheckMs: 60_000 },
      fetch: (direct) => async (input, init) => {
        if (input.includes('after=') && failures-- > 0) throw new TypeError('Failed to fetch');
        return direct(input, init);
      },
    });
    const socket = await w.open();
    const id = await w.create();
    await until(() => socket.ids.includes(id), 'the change after three failed catch-ups');
    expect(failures).toBeLessThan(0);
  });

  it(`close with ${CLOSE_DATABASE_REPLACED} when the database was replaced, and a new socket gets the new database`, async () => {
    const w = await world({ announce: true });
    const old = await w.open();
    await w.create();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(w.name);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    });
    const event = await old.closed;
    expect(event.code).toBe(CLOSE_DATABASE_REPLACED);
    expect(event.reason).toMatch(/database was replaced/);
    const fresh = await w.open();
    expect(fresh.ids).toEqual([]);
    const id = await w.create();
    await until(() => fresh.ids.includes(id), 'the first change of the new database');
  });

  it(`close with ${CLOSE_FELL_BEHIND} (a code a WebSocket can send) when the change log no longer reaches back`, async () => {
    const w = await world({
      announce: true,
      fetch: (direct) => async (input, init) => {
        const response = await direct(input, init);
        if (!input.includes('after=')) return response;
        return new Response(JSON.stringify({ ...(await response.json()), complete: false }), {
          headers: { 'Content-Type': 'application/json' },
        });
      },
    });
    const socket = await w.open();
    await w.create();
    const event = await socket.closed;
    expect(event.code).toBe(CLOSE_FELL_BEHIND);
  });

  it(`close with ${CLOSE_UNAVAILABLE} when the service does not answer catch-ups for giveUpMs`, async () => {
    let down = false;
    const w = await world({
      shim: { giveUpMs: 100 },
      fetch: (direct) => async (input, init) => {
        if (down) return new Response('The database went away', { status: 503 });
        return direct(input, init);
      },
    });
    const socket = await w.open();
    down = true;
    const event = await socket.closed;
    expect(event.code).toBe(CLOSE_UNAVAILABLE);
  });
});
