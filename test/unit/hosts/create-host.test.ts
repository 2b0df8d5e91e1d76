/**
 * createHost, the one way every host is assembled: what used to differ between
 * hosts (batching, recovery from a lost database, initial data) is the same for all.
 */
import { describe, expect, it } from 'vitest';
import { broadcastChannel, localChannel, type ChangeChannel } from '../../../src/host/channel.js';
import { createHost } from '../../../src/host/create-host.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import type { StoredData } from '../../../src/storage/storage.js';
import { memoryStorage } from '../../../src/storage/memory.js';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';

let counter = 0;
const databaseName = () => `create-host-${Date.now()}-${counter++}`;

/** A channel that records what it is asked to post. */
function recording(channel: ChangeChannel = localChannel()) {
  const posted: unknown[] = [];
  return {
    posted,
    channel: {
      ...channel,
      post: (message: Parameters<ChangeChannel['post']>[0]) => {
        posted.push(message);
        return channel.post(message);
      },
    },
  };
}

const create = (messages: number) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({
    type: 'COPILOT',
    messages: Array.from({ length: messages }, (_, i) => ({ role: 'USER', fragment: { string: { raw: `m${i}` } } })),
  }),
});

describe('createHost', () => {
  it('announces a write once per collection, with its last change, whatever the storage and channel', async () => {
    for (const open of [() => memoryStorage(), () => openStorage({ name: databaseName() })]) {
      const { posted, channel } = recording();
      const host = createHost({ open, channel, settings: { sampleAssets: false } });
      const response = await host.service.handle(new Request('http://localhost:1000/conversations/create', create(50)));
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 0));
      // 51 changes (the conversation and 50 messages): one announcement per collection, each with the last change
      // (and, after them, the activity recording the create, written in a transaction of its own).
      expect(posted.filter((p) => (p as { change?: { collection: string } }).change?.collection !== 'activity')).toEqual([
        { type: 'change', change: expect.objectContaining({ collection: 'conversation' }) },
        { type: 'change', change: expect.objectContaining({ collection: 'conversationMessage', seq: 51 }) },
      ]);
      host.close();
    }
  });

  it('reopens a database deleted under it, says so on its channel, and stores the initial data again', async () => {
    const name = databaseName();
    const { posted, channel } = recording(broadcastChannel(`${CHANGES_CHANNEL}:${name}`));
    const host = createHost({
      open: (hooks, initialData) => openStorage({ name, initialData, onLost: hooks.lost, onBlocked: hooks.blocked }),
      channel,
      settings: {},
    });
    const call = (path: string, init?: RequestInit) => host.service.handle(new Request(`http://localhost:1000${path}`, init));
    const created = (await (await call('/conversations/create', create(1))).json()) as { id: string };
    const before = await host.storage.identity();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(name);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    });
    const ids = (await (await call('/conversations/identifiers')).json()) as { iterable: Array<{ id: string }> };
    expect(ids.iterable.map((i) => i.id)).not.toContain(created.id);
    const assets = (await (await call('/assets/identifiers')).json()) as { iterable: Array<{ id: string }> };
    expect(assets.iterable.map((a) => a.id).sort()).toEqual(SAMPLE_ASSETS.map((a) => a.id).sort());
    const identity = await host.storage.identity();
    expect(identity).not.toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(posted).toContainEqual({ type: 'database', identity });
    expect((await call('/conversations/create', create(0))).status).toBe(200);
    host.close();
  });

  it('starts a new database with the data option and the sample assets, once; reset() goes back to them', async () => {
    const name = databaseName();
    const conversation = { id: crypto.randomUUID(), name: 'seeded', messages: [{ role: 'USER', fragment: { string: { raw: 'hi' } } }] };
    const settings = { data: { conversations: [conversation] } };
    // How often the initial data is made: only where a database may take it (its first start).
    let made = 0;
    const open = (initialData: () => StoredData) =>
      openStorage({
        name,
        initialData: () => {
          made++;
          return initialData();
        },
      });
    const first = createHost({ open: (_h, data) => open(data), channel: localChannel(), settings });
    expect((await first.service.exportData()).conversations.map((c) => c.id)).toEqual([conversation.id]);
    expect(made).toBe(1);
    await first.service.handle(new Request(`http://localhost:1000/conversations/${conversation.id}/delete`, { method: 'POST' }));
    first.close();
    // Started again on the same database: its data is kept as it was, not seeded twice, nor even made.
    const second = createHost({ open: (_h, data) => open(data), channel: localChannel(), settings });
    const kept = await second.service.exportData();
    expect(made).toBe(1);
    expect(kept.conversations).toEqual([]);
    expect(kept.assets.map((a) => a.id).sort()).toEqual(SAMPLE_ASSETS.map((a) => a.id).sort());
    await second.service.reset();
    expect((await second.service.exportData()).conversations.map((c) => c.id)).toEqual([conversation.id]);
    second.close();
  });

  it('refuses invalid initial data at once, naming the problem in the data as given', () => {
    expect(() =>
      createHost({ open: () => memoryStorage(), channel: localChannel(), settings: { data: { assets: [{ name: 'a.ts' } as never] } } }),
    ).toThrow('data.assets[0].text is required.');
  });
});
