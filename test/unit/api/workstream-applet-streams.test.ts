/**
 * Two sockets that send a value: the workstream's suggestions (on open, and again after each
 * change of the assets they are made from) and this service's applet version (on open, for the
 * applet type asked for). Every frame and handshake is held to its SDK model by the response and
 * frame checks (test/unit/support/response-check.ts), and checked here against the model as well.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkstreamApi, type WorkstreamSuggestions } from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { STREAM_HEADER } from '../../../src/core/stream-wire.js';
import type { AnnouncementChannel } from '../../../src/stream/announcements.js';
import { installStreamShim } from '../../../src/stream/shim.js';
import { application, BASE, setup } from '../support/harness.js';
import { check } from '../support/sdk-shape.js';
import { sockets, until } from '../support/sockets.js';

type T = Awaited<ReturnType<typeof setup>>;

const SUGGESTIONS = 'ws://localhost:1000/workstream/suggestions/stream';
/** The package's version (the service's, which serves every applet here). */
const { version: PACKAGE_VERSION } = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version: string };

/** A frame of the suggestions socket, held to WorkstreamSuggestions. */
function suggestions(frame: string): WorkstreamSuggestions {
  const value = JSON.parse(frame) as WorkstreamSuggestions;
  expect(check('WorkstreamSuggestions', value)).toEqual([]);
  expect(value.types).toHaveLength(value.iterable.length);
  return value;
}

const ids = (frame: string) => suggestions(frame).iterable.map((item) => item.asset?.id);

/** What a refresh without a query answers: the suggestions the socket sends. */
async function refreshed(t: T) {
  const app = (await t.applications.applicationsSnapshot()).iterable[0]!;
  return (
    await new WorkstreamApi(t.configuration).workstreamSuggestionsRefresh({ seededWorkstreamSuggestionsRefresh: { application: app } })
  ).suggestions;
}

describe('the workstream suggestions socket', () => {
  it('sends the suggestions on open, and again after each change of the assets: update, create, delete; kept across a restart', async () => {
    const t = await setup();
    expect((await t.fetch(`${BASE}/workstream/suggestions/stream`)).status).toBe(426);
    const stream = sockets(t).open(SUGGESTIONS);
    await until(() => stream.frames.length === 1, 'the suggestions on open');
    const assets = (await t.assets.assetsSnapshot({})).iterable!;
    expect(new Set(ids(stream.frames[0]!))).toEqual(new Set(assets.map((asset) => asset.id)));
    expect(JSON.parse(stream.frames[0]!)).toEqual(JSON.parse(JSON.stringify(await refreshed(t))));

    // An update puts its asset first.
    const retry = assets.find((asset) => asset.name === 'retry.py')!;
    await t.asset.assetUpdate({ asset: { ...retry, name: 'retry-again.py' } });
    await until(() => stream.frames.length === 2, 'the suggestions after an update');
    expect(ids(stream.frames[1]!)[0]).toBe(retry.id);

    // A new asset comes first.
    const created = await t.assets.assetsCreateNewAsset({
      seed: {
        type: 'SEEDED_ASSET',
        asset: { application: application() as never, format: { fragment: { string: { raw: 'const x = 1;' } } } },
      },
    } as never);
    await until(() => stream.frames.length === 3, 'the suggestions after a create');
    expect(ids(stream.frames[2]!).slice(0, 2)).toEqual([created.id, retry.id]);

    // A deleted one is no longer suggested.
    await t.assets.assetsDeleteAsset({ asset: retry.id });
    await until(() => stream.frames.length === 4, 'the suggestions after a delete');
    expect(ids(stream.frames[3]!)).not.toContain(retry.id);
    expect(ids(stream.frames[3]!)[0]).toBe(created.id);
    expect(JSON.parse(stream.frames[3]!)).toEqual(JSON.parse(JSON.stringify(await refreshed(t))));

    // Kept: a restarted service's socket opens with the same suggestions.
    const restarted = await setup({ databaseName: t.databaseName });
    const late = sockets(restarted).open(SUGGESTIONS);
    await until(() => late.frames.length === 1, 'the kept suggestions on open');
    expect(late.frames[0]).toBe(stream.frames[3]);
  });

  it('sends at most ten: the assets updated last', async () => {
    const t = await setup({ sampleAssets: false });
    const stream = sockets(t).open(SUGGESTIONS);
    await until(() => stream.frames.length === 1, 'the suggestions on open');
    expect(suggestions(stream.frames[0]!)).toEqual({ iterable: [], types: [] });
    const created: string[] = [];
    for (let i = 0; i < 11; i++) {
      const asset = await t.assets.assetsCreateNewAsset({
        seed: {
          type: 'SEEDED_ASSET',
          asset: { application: application() as never, format: { fragment: { string: { raw: `const x${i} = ${i};` } } } },
        },
      } as never);
      created.push(asset.id);
      await until(() => ids(stream.frames.at(-1)!)[0] === asset.id, `the suggestions after create ${i}`);
    }
    expect(ids(stream.frames.at(-1)!)).toEqual(created.slice(1).reverse());
  });
  it('reads the suggestions again one read at a time: a read answered late is followed by a fresh one, never left last', async () => {
    const t = await setup();
    let channel: AnnouncementChannel | undefined;
    let reads = 0;
    const held: Array<() => void> = [];
    const target = { WebSocket: class {} as unknown as typeof WebSocket };
    const uninstall = installStreamShim({
      target,
      // The second read (the first after a change) is answered, then held until released.
      fetch: async (input, init) => {
        const read = ++reads;
        const response = await t.service.handle(new Request(input, init));
        if (read === 2) await new Promise<void>((resolve) => held.push(resolve));
        return response;
      },
      isServiceAvailable: () => true,
      announcements: () => (channel = { onmessage: null, close() {} }),
    });
    try {
      const socket = new target.WebSocket(SUGGESTIONS);
      const frames: string[] = [];
      socket.addEventListener('message', (event) => frames.push(String((event as MessageEvent).data)));
      await until(() => frames.length === 1, 'the suggestions on open');
      const assets = (await t.assets.assetsSnapshot({})).iterable!;
      const announce = () =>
        channel!.onmessage!({ data: { type: 'change', change: t.changes.filter((change) => change.collection === 'asset').at(-1) } });

      await t.asset.assetUpdate({ asset: { ...assets.find((asset) => asset.name === 'retry.py')!, name: 'retry-again.py' } });
      announce();
      await until(() => held.length === 1, 'the first read after a change, held');
      await t.asset.assetUpdate({ asset: { ...assets.find((asset) => asset.name === 'lru.go')!, name: 'lru-cache.go' } });
      announce();
      // A read made at once (before the held one is answered) would send the latest suggestions now.
      await until(() => reads === 2 || frames.length === 2, 'a read made at once answered, if one was made');
      held[0]!();
      await until(() => frames.length === 3, 'the held read and the one after it');
      expect(frames[2]).toBe(JSON.stringify(await refreshed(t)));
      socket.close();
    } finally {
      uninstall();
    }
  });
});

describe('the applet version socket', () => {
  it("sends this service's version on open, for the applet type asked for", async () => {
    const t = await setup();
    expect((await t.fetch(`${BASE}/os/applet/version/stream?applet_type=COPILOT`)).status).toBe(426);
    const open = sockets(t);
    const copilot = open.open('ws://localhost:1000/os/applet/version/stream?applet_type=COPILOT');
    const search = open.open('ws://localhost:1000/os/applet/version/stream?applet_type=GLOBAL_SEARCH&application=vs-code');
    await until(() => copilot.frames.length === 1 && search.frames.length === 1, 'the versions on open');
    expect(copilot.frames).toEqual([PACKAGE_VERSION]);
    expect(search.frames).toEqual([PACKAGE_VERSION]);
    expect(copilot.events).toEqual(['open']);
  });

  it('refuses a missing or unknown applet type with a 400 naming it: the socket never opens', async () => {
    const t = await setup();
    const handshake = async (query: string) => {
      const response = await t.fetch(`${BASE}/os/applet/version/stream${query}`, { headers: { [STREAM_HEADER]: 'handshake' } });
      return [response.status, await response.text()];
    };
    expect(await handshake('')).toEqual([400, expect.stringContaining('applet_type is required')]);
    expect(await handshake('?applet_type=CHAT')).toEqual([
      400,
      expect.stringContaining('applet_type must be one of UNKNOWN_APPLET_MODULE, COPILOT'),
    ]);
    const refused = sockets(t).open('ws://localhost:1000/os/applet/version/stream?applet_type=CHAT');
    await until(() => refused.events.includes('close'), 'the refused socket closed');
    expect(refused.events).toEqual(['error', 'close']);
    expect(refused.frames).toEqual([]);
  });
});
