/**
 * Following the upstream while it is up: its identifier streams (one socket per collection),
 * each change it announces read and written here, and whole collections read when it comes up.
 */
import { GENERIC_KINDS } from '../../core/handlers/materials.js';
import type { Collection, GenericKind } from '../../storage/schema.js';
import type { MirrorBatch, Storage } from '../../storage/storage.js';
import type { MirrorMachine } from './machine.js';
import { activityRecord, anchorRecord, applicationRecord, assetRecord, conversationRecord, materialRecord, records } from './records.js';
import { UpstreamError, type Upstream, type WebSocketLike } from './upstream.js';
import type { Write } from './write.js';

/**
 * The generic path's kinds kept from the upstream, from the graph table: those with a collection
 * snapshot and an item snapshot. Those with an identifier stream are followed on it (the
 * StreamedIdentifier key it names them by is the table's `streamed`); the others (workstream
 * events) are read whole when following begins.
 */
const MATERIALS = GENERIC_KINDS.filter((row) => row.ops.snapshot && row.ops.item);
const STREAMED = MATERIALS.filter((row) => row.ops.stream && row.streamed);
const UNSTREAMED = MATERIALS.filter((row) => !STREAMED.includes(row)).map((row) => row.kind as GenericKind);

/**
 * The identifier streams followed on the upstream, and what each change makes the mirror read
 * (models are the upstream's own: passed through while it answers, not kept): the hand-written
 * collections', then each generic kind's.
 */
const FOLLOWED: Partial<Record<Collection, { path: string; key: string }>> = {
  conversation: { path: '/conversations/stream/identifiers', key: 'conversation' },
  conversationMessage: { path: '/messages/stream/identifiers', key: 'conversationMessage' },
  application: { path: '/applications/stream/identifiers', key: 'application' },
  asset: { path: '/assets/stream/identifiers', key: 'asset' },
  anchor: { path: '/anchors/stream/identifiers', key: 'anchor' },
  activity: { path: '/activities/stream/identifiers', key: 'activity' },
  ...Object.fromEntries(STREAMED.map((row) => [row.kind, { path: row.ops.stream!.path, key: row.streamed! }])),
};
type Followed = Synced | 'conversationMessage';
/** The collections read whole (messages come with their conversations). */
export const SYNCED = [
  'conversation',
  'application',
  'asset',
  'anchor',
  'activity',
  ...MATERIALS.map((row) => row.kind as GenericKind),
] as const;
export type Synced = 'conversation' | 'application' | 'asset' | 'anchor' | 'activity' | GenericKind;
/** A generic kind's item path for one id (its one path parameter filled). */
const itemPath = (path: string, id: string) => path.replace(/\{\w+\}/, encodeURIComponent(id));
/** Each synced collection's list and one record of it, on the upstream, and the records of a list answer as a batch puts them. */
const READS: Partial<Record<Synced, { list: string; one: (id: string) => string; put: (answer: unknown) => MirrorBatch['put'] }>> = {
  conversation: {
    list: '/conversations?transferables=true',
    one: (id) => `/conversation/${encodeURIComponent(id)}?transferables=true`,
    put: (answer) => ({ conversations: records(answer, conversationRecord) }),
  },
  application: {
    list: '/applications',
    one: (id) => `/applications/${encodeURIComponent(id)}`,
    put: (answer) => ({ applications: records(answer, applicationRecord) }),
  },
  asset: {
    list: '/assets?transferables=true',
    one: (id) => `/asset/${encodeURIComponent(id)}?transferables=true`,
    put: (answer) => ({ assets: records(answer, assetRecord) }),
  },
  anchor: {
    list: '/anchors',
    one: (id) => `/anchor/${encodeURIComponent(id)}`,
    put: (answer) => ({ anchors: records(answer, anchorRecord) }),
  },
  activity: {
    list: '/activities',
    one: (id) => `/activity/${encodeURIComponent(id)}`,
    put: (answer) => ({ activities: records(answer, activityRecord) }),
  },
  ...Object.fromEntries(
    MATERIALS.map((row) => {
      const kind = row.kind as GenericKind;
      return [
        kind,
        {
          list: row.ops.snapshot!.path,
          one: (id: string) => itemPath(row.ops.item!.path, id),
          put: (answer: unknown) => ({ materials: records(answer, (wire) => materialRecord(kind, wire)) }),
        },
      ];
    }),
  ),
};
/** Whether a kind is one of the generic path's (read by the table, and not served by every upstream). */
const isMaterial = (kind: Followed): kind is GenericKind => GENERIC_KINDS.some((row) => row.kind === kind);

export class Follower {
  readonly #sockets = new Map<Followed, WebSocketLike>();
  /** Streams the upstream refused (closed before their first frame): not opened again until it goes away or is another one. */
  readonly #unserved = new Set<Followed>();
  /** What following does next, in order, one at a time: read a collection whole, or one record. */
  readonly #refreshing = new Map<string, { kind: Followed; id: string; deleted: boolean } | { sync: Synced }>();
  #refreshRun: Promise<void> | null = null;
  /** Records a write taken by the upstream put here (by id, in the order kept): a read of a whole collection begun before keeps them. */
  readonly #recent = new Map<string, number>();
  #tick = 0;

  constructor(
    private readonly machine: MirrorMachine,
    private readonly upstream: Upstream,
    private readonly write: Write,
    private readonly storage: Pick<Storage, 'getMessage'>,
    /** The host's WebSocket; none: collections are read whole each time the upstream comes up. */
    private readonly WebSocket: (new (url: string) => WebSocketLike) | undefined,
  ) {}

  /** Follows the upstream; `closed`: one of its streams closed while it was up (it may have gone away). */
  start(closed: () => void) {
    const { machine } = this;
    if (machine.isPaused) return;
    const base = machine.base;
    if (!this.WebSocket || !base || !machine.replays || machine.isClosed) {
      if (!this.#sockets.size && base && machine.replays) for (const collection of SYNCED) this.#queueSync(collection);
      return;
    }
    const following = this.#sockets.size > 0;
    for (const collection of Object.keys(FOLLOWED) as Followed[]) {
      const followed = FOLLOWED[collection]!;
      if (this.#sockets.has(collection)) continue;
      if (this.#unserved.has(collection)) {
        // No stream of it there: read whole once, as without sockets.
        if (collection !== 'conversationMessage') this.#queueSync(collection);
        continue;
      }
      const socket = new this.WebSocket(base.replace(/^http/, 'ws') + followed.path);
      this.#sockets.set(collection, socket);
      let first = true;
      socket.onmessage = (event) => {
        let frame: { iterable?: Array<Record<string, unknown>> };
        try {
          frame = JSON.parse(String(event.data)) as typeof frame;
        } catch {
          return;
        }
        if (first) {
          first = false;
          // The first frame is every id: the collection is read whole once (messages come with their conversations).
          if (collection !== 'conversationMessage') this.#queueSync(collection);
          return;
        }
        for (const item of frame.iterable ?? []) {
          const id = (item[followed.key] as { id?: unknown } | undefined)?.id;
          if (typeof id === 'string') this.#queueRefresh(collection, id, item.deleted === true);
        }
      };
      socket.onclose = () => {
        if (this.#sockets.get(collection) !== socket) return;
        this.#sockets.delete(collection);
        // Closed before its first frame: a stream this upstream may not serve (not opened again unless it went away meanwhile).
        if (first) this.#unserved.add(collection);
        // The upstream closed a stream: it may have gone away.
        if (machine.state === 'up' && !machine.isClosed) closed();
      };
      socket.onerror = () => {};
    }
    // What has no stream is read whole when following begins.
    if (!following) for (const kind of UNSTREAMED) this.#queueSync(kind);
  }

  stop() {
    for (const socket of this.#sockets.values()) {
      socket.onclose = null;
      try {
        socket.close();
      } catch {
        // Closing a socket still connecting may throw in some engines.
      }
    }
    this.#sockets.clear();
  }

  /** The streams the upstream refused may be served now (it went away, or is another one). */
  forgetRefused() {
    this.#unserved.clear();
  }

  /**
   * The upstream's whole collection, made the local copy's; kept: what was created here and is not
   * there yet (the replace keeps it), and what a write taken by the upstream put here since the read began.
   */
  async #sync(collection: Synced): Promise<void> {
    const since = this.#tick;
    const fresh = () => [...this.#recent].filter(([, at]) => at > since).map(([id]) => id);
    const reads = READS[collection]!;
    try {
      const answer = await this.upstream.json(`${this.machine.base}${reads.list}`);
      await this.write({ put: reads.put(answer), replace: { kinds: [collection], keep: fresh() } });
      // Older than this read: no longer needed.
      for (const [id, at] of this.#recent) if (at <= since) this.#recent.delete(id);
    } catch (error) {
      // A generic kind this upstream does not serve: nothing of it to keep.
      if (isMaterial(collection) && error instanceof UpstreamError && error.status === 404) return;
      this.machine.failed(`reading the upstream's ${collection}s failed: ${(error as Error)?.message ?? error}`);
    }
  }

  #queueRefresh(kind: Followed, id: string, deleted: boolean) {
    const key = `${kind}:${id}`;
    // Moved to the end: the latest news of a record is read after what came before it.
    this.#refreshing.delete(key);
    this.#refreshing.set(key, { kind, id, deleted });
    this.#follow();
  }

  #queueSync(collection: Synced) {
    this.#refreshing.set(`sync:${collection}`, { sync: collection });
    this.#follow();
  }

  #follow() {
    const { machine } = this;
    this.#refreshRun ??= (async () => {
      while (this.#refreshing.size && machine.state === 'up' && machine.live && machine.base) {
        const [key, item] = this.#refreshing.entries().next().value!;
        this.#refreshing.delete(key);
        await ('sync' in item ? this.#sync(item.sync) : this.refresh(item.kind, item.id, item.deleted)).catch((error: unknown) => {
          machine.failed(`following the upstream failed: ${(error as Error)?.message ?? error}`, false);
        });
      }
    })().finally(() => (this.#refreshRun = null));
  }

  /**
   * Reads a record again from the upstream after every read already under way or queued, so that
   * what the upstream holds now is written last (a read begun before a write the upstream took may
   * land after it here).
   */
  readAgain(kind: string, id: string) {
    if (READS[kind as Synced]) this.#queueRefresh(kind as Synced, id, false);
  }

  /** Notes records a write taken by the upstream put here (see `#recent`). */
  kept(ids: Array<string | undefined>) {
    for (const id of ids) if (id) this.#recent.set(id, ++this.#tick);
  }

  /** One record as the upstream has it now (gone when it answers 404 or the stream said deleted). */
  async refresh(kind: Followed, id: string, deleted: boolean) {
    const read = async (path: string) => {
      const response = await this.upstream.call(`${this.machine.base}${path}`);
      if (response.status === 404) return null;
      if (!response.ok) throw new UpstreamError('status', `${path} answered ${response.status}`, response.status);
      return response.json() as Promise<unknown>;
    };
    const remove = (k: Followed) => this.write({ remove: [{ kind: k, id }] });
    if (kind === 'conversationMessage') {
      // A message is read with its conversation (its place in it comes from there).
      const owner = deleted
        ? (await this.storage.getMessage(id))?.conversation
        : ((await read(`/message/${encodeURIComponent(id)}`)) as { conversation?: { id?: string } } | null)?.conversation?.id;
      if (owner) this.#queueRefresh('conversation', owner, false);
      else if (deleted) await remove('conversationMessage');
      return;
    }
    if (deleted) {
      await remove(kind);
      return;
    }
    const reads = READS[kind]!;
    const wire = await read(reads.one(id));
    if (wire === null) {
      await remove(kind);
      return;
    }
    // Kept as the upstream gave it (when it converts).
    const put = reads.put({ iterable: [wire] })!;
    if (Object.values(put).some((made) => made?.length)) await this.write({ put });
  }
}
