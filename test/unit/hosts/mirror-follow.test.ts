// @vitest-environment node
/**
 * Following the upstream while it answers: a read of a record from the upstream begun before a
 * later write here (a write the upstream took, kept here; a delete) lands after it, and must not
 * be written over it. The upstream's answers to a record's reads are held by a gate (taken from
 * the upstream at once, as it stands then, and given to the mirror when released), and its news
 * of that record dropped from its streams once the read is held, so that nothing but the mirror's
 * own doing can bring the local copy back to what the upstream holds. And a read from the upstream
 * that fails (its answer a 500) is read again, once per step of the backoff, while following.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { localChannel } from '../../../src/host/channel.js';
import { createHost, type Host } from '../../../src/host/create-host.js';
import type { ChangeChannel } from '../../../src/host/channel.js';
import { Follower, SYNCED } from '../../../src/host/mirror/follower.js';
import { backoff } from '../../../src/host/mirror/loop.js';
import { MirrorMachine } from '../../../src/host/mirror/machine.js';
import { UpstreamError, type Upstream, type WebSocketLike } from '../../../src/host/mirror/upstream.js';
import { memoryStorage } from '../../../src/storage/memory.js';
import { SUMMARIZER } from '../../material-seeds.js';
import { startUpstream, type IndependentPiecesOS } from '../../upstream/pieces-os.js';

const BASE = 'http://localhost:1000';
const fetchOf = globalThis.fetch.bind(globalThis);
/** The local copy follows the upstream asynchronously: how long to wait for it. */
const settled = { timeout: 5_000, interval: 25 };
const ids = (list: any): string[] => (list?.iterable ?? []).map((item: { id: string }) => item.id);
const post = (body?: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

let upstream: IndependentPiecesOS | undefined;
let host: Host | undefined;
afterEach(async () => {
  host?.close();
  await upstream?.stop();
  host = undefined;
  upstream = undefined;
});

/**
 * A mirrored host whose reads of one path can be held, whose reads of some paths fail (`fail`:
 * how many times each, with a 500), and whose news of some ids can be dropped; `before`: done on the
 * upstream before the host starts.
 */
async function setup({ fail = {}, before }: { fail?: Record<string, number>; before?: (up: IndependentPiecesOS) => Promise<void> } = {}) {
  const up = (upstream = await startUpstream());
  await before?.(up);
  /** The reads of each path still to fail. */
  const failing = new Map(Object.entries(fail));
  /** The path whose next read is held; the releases of the reads held. */
  let holding: string | null = null;
  const held: Array<() => void> = [];
  /** Ids whose news from the upstream's streams is dropped. */
  const deaf = new Set<string>();
  const fetch = async (input: string, init?: RequestInit) => {
    const left = failing.get(new URL(input).pathname);
    if ((init?.method ?? 'GET') === 'GET' && left) {
      failing.set(new URL(input).pathname, left - 1);
      return new Response('failing', { status: 500 });
    }
    const response = await fetchOf(input, init);
    if ((init?.method ?? 'GET') !== 'GET' || new URL(input).pathname !== holding) return response;
    holding = null;
    // The upstream's answer as it stands now, given when released.
    const body = await response.text();
    await new Promise<void>((resolve) => held.push(resolve));
    return new Response(body, { status: response.status, headers: { 'Content-Type': response.headers.get('content-type') ?? '' } });
  };
  class Streams implements WebSocketLike {
    readonly #socket: NodeWebSocket;
    constructor(url: string) {
      this.#socket = new NodeWebSocket(url);
    }
    get readyState() {
      return this.#socket.readyState;
    }
    set onopen(handler: WebSocketLike['onopen']) {
      this.#socket.onopen = handler;
    }
    get onopen() {
      return null;
    }
    set onmessage(handler: WebSocketLike['onmessage']) {
      this.#socket.onmessage = (event) => {
        if (![...deaf].some((id) => String(event.data).includes(id))) handler?.(event);
      };
    }
    get onmessage() {
      return null;
    }
    set onclose(handler: WebSocketLike['onclose']) {
      this.#socket.onclose = handler;
    }
    get onclose() {
      return null;
    }
    set onerror(handler: WebSocketLike['onerror']) {
      this.#socket.onerror = handler;
    }
    get onerror() {
      return null;
    }
    send(data: string) {
      this.#socket.send(data);
    }
    close() {
      this.#socket.close();
    }
  }
  const h = (host = createHost({
    open: (_hooks, initialData) => memoryStorage({ initialData }),
    channel: localChannel(),
    settings: { sampleAssets: false, mirror: { upstream: up.url } },
    upstream: { fetch, WebSocket: Streams, lock: 'alone' },
  }));
  const json = async (path: string, init?: RequestInit): Promise<any> => {
    const response = await h.service.handle(new Request(BASE + path, init));
    expect(response.status, `${init?.method ?? 'GET'} ${path}`).toBeLessThan(300);
    const text = await response.text();
    return text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  };
  /** Another client of the upstream. */
  const other = async (path: string, init?: RequestInit) => {
    const response = await fetchOf(up.url + path, init);
    expect(response.status, `upstream ${path}`).toBeLessThan(300);
  };
  await vi.waitFor(async () => {
    await h.service.mirrorPermission({ granted: true });
    const status = (await h.service.mirrorStatus()) as MirrorStatus;
    expect(status.state).toBe('up');
  }, settled);
  /** Holds the next read of `path` once `trigger` makes the mirror read it; from then on, the upstream's news of `id` is dropped. */
  const holdRead = async (path: string, id: string, trigger: () => Promise<unknown>) => {
    holding = path;
    await trigger();
    await vi.waitFor(() => expect(held).toHaveLength(1), settled);
    deaf.add(id);
  };
  let made = 0;
  /**
   * Releases the read held, then waits until what the mirror does next is done: the streams' news
   * is followed one record at a time, so once a record another client makes after the release is
   * here, the read released was written (or not) before it.
   */
  const release = async () => {
    held.shift()!();
    const name = `later ${made++}`;
    await other('/persons/create', post({ type: { basic: { name } } }));
    await vi.waitFor(
      async () => expect((await h.service.exportData()).materials.person?.map((p: any) => p.type.basic.name)).toContain(name),
      settled,
    );
  };
  return { up, host: h, json, other, holdRead, release, failing, deaf, hold: (path: string) => (holding = path), held };
}

describe('a read from the upstream begun before a write here', () => {
  it('a person renamed while a read of it is under way keeps the new name (the read lands after the rename and is read again)', async () => {
    const { host, json, other, holdRead, release } = await setup();
    const made = await json('/persons/create', post({ type: { basic: { name: 'Ada' } } }));
    const local = async () => (await host.service.exportData()).materials.person?.find((p: any) => p.id === made.id) as any;
    await vi.waitFor(async () => expect((await local())?.type.basic.name).toBe('Ada'), settled);
    // Another client's change of the person: the mirror reads it, and the answer (named Ada) is held.
    await holdRead(`/person/${made.id}`, made.id, () => other('/person/update', post(made)));
    const renamed = await json('/person/update', post({ ...made, type: { basic: { name: 'Ada L.' } } }));
    expect(renamed.type.basic.name).toBe('Ada L.');
    await vi.waitFor(async () => expect((await local()).type.basic.name).toBe('Ada L.'), settled);
    await release();
    expect((await local()).type.basic.name).toBe('Ada L.');
  });

  it('an anchor whose conversation was deleted while a read of the anchor was under way does not list it again', async () => {
    const { up, host, json, other, holdRead, release } = await setup();
    const conversation = await json('/conversations/create', post({ type: 'COPILOT', name: 'c' }));
    const anchor = await json('/anchors/create', post({ type: 'FILE', fullpath: '/src/a.ts', conversation: conversation.id }));
    const local = async () => JSON.parse((await host.storage.getAnchor(anchor.id))!.json);
    await vi.waitFor(async () => expect(ids((await local()).conversations)).toEqual([conversation.id]), settled);
    // Another client associates an asset with the anchor: the mirror reads it, and the answer (listing the conversation) is held.
    const asset = up.snapshot().assets[0]!.id as string;
    await holdRead(`/anchor/${anchor.id}`, anchor.id, () => other(`/anchor/${anchor.id}/assets/associate/${asset}`, post()));
    await json(`/conversations/${conversation.id}/delete`, post());
    expect(up.snapshot().anchors.map((a: any) => ids(a.conversations))).toEqual([[]]);
    await vi.waitFor(async () => expect(await host.storage.getConversation(conversation.id)).toBeUndefined(), settled);
    await release();
    await vi.waitFor(async () => expect(ids((await local()).conversations)).toEqual([]), settled);
    expect(ids((await local()).assets)).toEqual([asset]);
  });

  it('a person whose associated person was deleted while a read of it was under way does not list it again', async () => {
    const { up, host, json, other, holdRead, release } = await setup();
    const ada = await json('/persons/create', post({ type: { basic: { name: 'Ada' } } }));
    const grace = await json('/persons/create', post({ type: { basic: { name: 'Grace' } } }));
    const local = async () => (await host.service.exportData()).materials.person?.find((p: any) => p.id === ada.id) as any;
    await json(`/person/${ada.id}/persons/associate/${grace.id}`, post());
    await vi.waitFor(async () => expect(ids((await local())?.persons)).toEqual([grace.id]), settled);
    // Another client's change of Ada: the mirror reads it, and the answer (listing Grace) is held.
    await holdRead(`/person/${ada.id}`, ada.id, () =>
      other('/person/update', post(up.snapshot().persons.find((p: any) => p.id === ada.id))),
    );
    await json(`/persons/${grace.id}/delete`, post());
    expect(ids(up.snapshot().persons.find((p: any) => p.id === ada.id)!.persons)).toEqual([]);
    await release();
    await vi.waitFor(async () => expect(ids((await local())?.persons)).toEqual([]), settled);
  });

  it('a person listed by a summary made while a read of the person was under way lists the summary', async () => {
    const { up, host, json, other, holdRead, release } = await setup();
    const ada = await json('/persons/create', post({ type: { basic: { name: 'Ada' } } }));
    const local = async () => (await host.service.exportData()).materials.person?.find((p: any) => p.id === ada.id) as any;
    await vi.waitFor(async () => expect((await local())?.type.basic.name).toBe('Ada'), settled);
    await holdRead(`/person/${ada.id}`, ada.id, () => other('/person/update', post(ada)));
    const summary = await json(
      '/workstream_summaries/create',
      post({ name: 'the week', model: SUMMARIZER, persons: { iterable: [{ id: ada.id }] } }),
    );
    expect(ids(up.snapshot().persons[0]!.summaries)).toEqual([summary.id]);
    await release();
    await vi.waitFor(async () => expect(ids((await local()).summaries)).toEqual([summary.id]), settled);
  });
});

describe('a write here kept after a read of its record landed', () => {
  it('a person whose create is kept after a read of her (listing a summary made since) landed lists the summary', async () => {
    const { up, host, json, deaf, hold, held } = await setup();
    const conversation = await json(
      '/conversations/create',
      post({ type: 'COPILOT', name: 'c', messages: [{ role: 'USER', fragment: { string: { raw: 'hello' } } }] }),
    );
    await vi.waitFor(async () => expect((await host.storage.getConversation(conversation.id))?.record.id).toBe(conversation.id), settled);
    // A write whose answer does not show the conversation whole: its keep reads it again, and that read is held (its news
    // dropped, so that the keep's is the read held): the writes answered next wait to be kept.
    deaf.add(conversation.id);
    hold(`/conversation/${conversation.id}`);
    await json('/conversation/update?transferables=false', post({ ...conversation, name: 'c renamed' }));
    await vi.waitFor(() => expect(held).toHaveLength(1), settled);
    // Ada is made (answered, her keep waiting), then a summary listing her: her read from the upstream lists it, and lands.
    const ada = await json('/persons/create', post({ type: { basic: { name: 'Ada' } } }));
    const local = async () => (await host.service.exportData()).materials.person?.find((p: any) => p.id === ada.id) as any;
    const summary = await json(
      '/workstream_summaries/create',
      post({ name: 'the week', model: SUMMARIZER, persons: { iterable: [{ id: ada.id }] } }),
    );
    expect(ids(up.snapshot().persons[0]!.summaries)).toEqual([summary.id]);
    await vi.waitFor(async () => expect(ids((await local())?.summaries)).toEqual([summary.id]), settled);
    // The keeps go on: Ada's create's answer (listing no summary) is kept after that read.
    held.shift()!();
    await vi.waitFor(
      async () => expect((await host.storage.getConversation(conversation.id))?.record.json).toContain('c renamed'),
      settled,
    );
    await vi.waitFor(async () => expect(ids((await local())?.summaries)).toEqual([summary.id]), settled);
  });
});

describe('a read from the upstream that fails', () => {
  it('a record whose read fails once is read again, and the change the read was for lands', async () => {
    const { up, host, other, failing } = await setup();
    // Another client's person, here once the mirror read her (her news then read and done with).
    const ada = await (await fetchOf(`${up.url}/persons/create`, post({ type: { basic: { name: 'Ada' } } }))).json();
    const local = async () => (await host.service.exportData()).materials.person?.find((p: any) => p.id === ada.id) as any;
    await vi.waitFor(async () => expect((await local())?.type.basic.name).toBe('Ada'), settled);
    // The other client renames her: the mirror's read of her fails once, and nothing else announces her again.
    failing.set(`/person/${ada.id}`, 1);
    await other('/person/update', post({ ...ada, type: { basic: { name: 'Grace' } } }));
    await vi.waitFor(() => expect(failing.get(`/person/${ada.id}`)).toBe(0), settled);
    await vi.waitFor(async () => expect((await local()).type.basic.name).toBe('Grace'), settled);
  });

  it('a collection whose whole read fails when the mirror comes up is read again', async () => {
    let made: any;
    const { host, failing } = await setup({
      fail: { '/conversations': 1 },
      before: async (up) => {
        const response = await fetchOf(`${up.url}/conversations/create`, post({ type: 'COPILOT', name: 'there before' }));
        made = await response.json();
      },
    });
    await vi.waitFor(() => expect(failing.get('/conversations')).toBe(0), settled);
    await vi.waitFor(async () => expect((await host.storage.getConversation(made.id))?.record.id).toBe(made.id), settled);
  });

  it('a read failing for good is read again once per backoff step, never in a loop, and forgotten once following stops', async () => {
    vi.useFakeTimers();
    const machine = new MirrorMachine(
      { outboxEntries: async () => [], idPairs: async () => [] },
      { post() {} } as unknown as ChangeChannel,
      BASE,
    );
    try {
      machine.lockTaken(() => true);
      machine.drained();
      /** The upstream answers every read with a 500. */
      const reads: string[] = [];
      const failing = async (url: string): Promise<never> => {
        reads.push(url);
        throw new UpstreamError('status', `${url} answered 500`, 500);
      };
      const up = { json: failing, call: failing } as unknown as Upstream;
      const follower = new Follower(machine, up, async () => [], { getMessage: async () => undefined }, undefined);
      // Without sockets, every collection is read whole when following starts.
      follower.start(() => {});
      await vi.advanceTimersByTimeAsync(0);
      expect(reads).toHaveLength(SYNCED.length);
      expect(machine.lastError).toMatch(/answered 500/);
      for (let step = 1; step <= 8; step++) {
        // Nothing until the backoff's wait is over, then each failed read once more.
        await vi.advanceTimersByTimeAsync(backoff(step) - 1);
        expect(reads, `step ${step}`).toHaveLength(step * SYNCED.length);
        await vi.advanceTimersByTimeAsync(1);
        expect(reads, `step ${step}`).toHaveLength((step + 1) * SYNCED.length);
      }
      // Following stopped (the upstream away): nothing is read again.
      follower.stop();
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect(reads).toHaveLength(9 * SYNCED.length);
    } finally {
      machine.close();
      vi.useRealTimers();
    }
  });
});
