/**
 * Following the upstream while it is up: its identifier streams (one socket per collection),
 * each change it announces read and written here, and whole collections read when it comes up.
 */
import { GENERIC_KINDS } from '../../core/handlers/materials.js';
import type { Collection, GenericKind } from '../../storage/schema.js';
import type { MirrorBatch, Storage } from '../../storage/storage.js';
import { backoff } from './loop.js';
import type { MirrorMachine } from './machine.js';
import {
  activityRecord,
  anchorRecord,
  applicationRecord,
  assetRecord,
  conversationRecord,
  idOf,
  idsIn,
  materialRecord,
  records,
} from './records.js';
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
/** Forgets the entries of `ticks` older than every tick still `open` (all of them when none is). */
function forgetOlder(ticks: Map<string, { tick: number }>, open: ReadonlySet<number>) {
  const oldest = Math.min(...open);
  for (const [id, { tick }] of ticks) if (tick < oldest) ticks.delete(id);
}

/** A read following does: a collection whole, or one record (`deleted`: the stream said it is gone). */
type Read = { kind: Followed; id: string; deleted: boolean } | { sync: Synced };
const keyOf = (read: Read) => ('sync' in read ? `sync:${read.sync}` : `${read.kind}:${read.id}`);

export class Follower {
  readonly #sockets = new Map<Followed, WebSocketLike>();
  /** Streams the upstream refused (closed before their first frame): not opened again until it goes away or is another one. */
  readonly #unserved = new Set<Followed>();
  /** What following does next, in order, one at a time: read a collection whole, or one record. */
  readonly #refreshing = new Map<string, Read>();
  #refreshRun: Promise<void> | null = null;
  /**
   * The reads that failed and have not succeeded since: queued again (those not queued already)
   * after the backoff, while the upstream is followed. Following stopped (the upstream away, the
   * outbox draining, paused), they are forgotten: every collection is read whole when it starts again.
   */
  readonly #failed = new Map<string, Read>();
  /** The waits for failed reads since none was left failed: the backoff's count (PROBE_FIRST_MS doubling to retryMaxMs). */
  #failures = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Each record's local change point: the tick of the last write here that touched it (`touched`:
   * a write the upstream took, kept here, the records it lists and what it changed, a delete, an
   * association), or of the read from the upstream written last (the tick that read began at), and
   * whether that write removed it. A read that lands when a write after its beginning touched its
   * record, or removed a record it lists, is discarded and the record read again, after what is
   * queued: what the upstream held before that write is never written over it.
   */
  readonly #changed = new Map<string, { tick: number; gone: boolean }>();
  /** The keeps under way (`keeping`), and when a read from the upstream last wrote each record since the oldest began. */
  readonly #keeps = new Set<number>();
  readonly #landed = new Map<string, { tick: number; kind: Followed }>();
  /** The ticks the reads under way began at: a change older than all of them decides nothing. */
  readonly #reading = new Set<number>();
  #tick = 0;

  constructor(
    private readonly machine: MirrorMachine,
    private readonly upstream: Upstream,
    private readonly write: Write,
    private readonly storage: Pick<Storage, 'getMessage'>,
    /** The host's WebSocket; none: collections are read whole each time the upstream comes up. */
    private readonly WebSocket: (new (url: string) => WebSocketLike) | undefined,
    /** The longest wait before a failed read is tried again (the mirror's retryMaxMs). */
    private readonly retryMaxMs?: number,
  ) {}

  /** Follows the upstream; `closed`: one of its streams closed while it was up (it may have gone away). */
  start(closed: () => void) {
    const { machine } = this;
    if (machine.isPaused) return;
    const base = machine.base;
    if (!this.WebSocket || !base || !machine.replays || machine.isClosed) {
      if (!this.#sockets.size && base && machine.replays) {
        this.#forgetFailed();
        for (const collection of SYNCED) this.#queueSync(collection);
      }
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
    this.#forgetFailed();
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

  /** The reads that failed are not read again (every collection is read whole when following starts). */
  #forgetFailed() {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#failed.clear();
    this.#failures = 0;
  }

  /**
   * Makes a read (`run`); one that fails is noted (`failed`: the error told, `announce`d or not)
   * and read again after the backoff, unless it succeeds meanwhile (the record's news read it).
   */
  async #attempt(read: Read, run: () => Promise<void>, failed: (message: string) => string, announce: boolean) {
    const key = keyOf(read);
    try {
      await run();
      this.#failed.delete(key);
      if (!this.#failed.size) this.#failures = 0;
    } catch (error) {
      this.machine.failed(failed(`${(error as Error)?.message ?? error}`), announce);
      this.#failed.set(key, read);
      this.#retryLater();
    }
  }

  /** The reads that failed queued again after the backoff (one wait at a time, for all of them; each one longer until none is left failed). */
  #retryLater() {
    if (this.#retryTimer !== undefined) return;
    this.#failures++;
    this.#retryTimer = setTimeout(
      () => {
        this.#retryTimer = undefined;
        for (const [key, read] of this.#failed) if (!this.#refreshing.has(key)) this.#refreshing.set(key, read);
        this.#follow();
      },
      backoff(this.#failures, this.retryMaxMs),
    );
  }

  /** The streams the upstream refused may be served now (it went away, or is another one). */
  forgetRefused() {
    this.#unserved.clear();
  }

  /**
   * The upstream's whole collection, made the local copy's; kept: what was created here and is not
   * there yet (the replace keeps it), and what a write here touched since the read began (read again).
   */
  #sync(collection: Synced): Promise<void> {
    return this.#attempt(
      { sync: collection },
      () => this.#syncOnce(collection),
      (message) => `reading the upstream's ${collection}s failed: ${message}`,
      true,
    );
  }

  async #syncOnce(collection: Synced): Promise<void> {
    const at = this.#begin();
    const reads = READS[collection]!;
    try {
      const answer = await this.upstream.json(`${this.machine.base}${reads.list}`);
      const found = records(answer, (wire) => {
        const id = idOf(wire);
        return id === undefined ? undefined : { id, wire };
      });
      await this.#land(collection, at, found, (fresh, keep) => ({
        put: reads.put({ iterable: fresh }),
        replace: { kinds: [collection], keep: [...keep] },
      }));
    } catch (error) {
      // A generic kind this upstream does not serve: nothing of it to keep.
      if (isMaterial(collection) && error instanceof UpstreamError && error.status === 404) return;
      throw error;
    } finally {
      this.#end(at);
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
        await ('sync' in item ? this.#sync(item.sync) : this.refresh(item.kind, item.id, item.deleted));
      }
    })().finally(() => (this.#refreshRun = null));
  }

  /**
   * Notes a write here (keep.ts: a write the upstream took, kept here; a delete; an association)
   * of the records `ids` (`gone`: it removes them), before it is made (and, with what it changed,
   * after): a read of them from the upstream begun before it is not written over it (see `#changed`).
   */
  touched(ids: Iterable<string | undefined>, gone = false) {
    for (const id of ids) if (id) this.#changed.set(id, { tick: ++this.#tick, gone });
  }

  /**
   * A write the upstream answered is to be kept here (keep.ts): its tick. A read from the upstream
   * that lands after it may be newer than that answer, which the keep then writes over it: see
   * `landedSince`. `kept(mark)` when it is kept.
   */
  keeping(): number {
    this.#keeps.add(++this.#tick);
    return this.#tick;
  }

  kept(mark: number) {
    this.#keeps.delete(mark);
    forgetOlder(this.#landed, this.#keeps);
  }

  /** Of `ids`, those a read from the upstream wrote here since `mark` are read again (a keep wrote an older answer over them). */
  landedSince(mark: number, ids: Iterable<string | undefined>) {
    for (const id of ids) {
      const landed = id === undefined ? undefined : this.#landed.get(id);
      if (id !== undefined && landed && landed.tick > mark) {
        this.touched([id]);
        this.#queueRefresh(landed.kind, id, false);
      }
    }
  }

  /** A read from the upstream begins: its tick. */
  #begin(): number {
    this.#reading.add(++this.#tick);
    return this.#tick;
  }

  /** A read ended (written, discarded or failed): what no read under way began before is forgotten. */
  #end(at: number) {
    this.#reading.delete(at);
    forgetOlder(this.#changed, this.#reading);
  }

  /** The records a write here (or a read begun later) touched since the tick `at`, each with whether it removed them. */
  #touchedSince(at: number): Map<string, boolean> {
    return new Map([...this.#changed].filter(([, { tick }]) => tick > at).map(([id, { gone }]) => [id, gone]));
  }

  /**
   * Writes what a read begun at `at` found (`wire` null: a record it no longer has), never over a
   * write here since: a record touched since, or that lists one removed since, is left
   * out of `batch` (null: nothing is written; `keep`: those and every record touched) and read
   * again after what is queued. The records written are as of the read: an older read still under
   * way is discarded when it lands; one touched while the batch was written (the two writes' order
   * unknown) is read again too.
   */
  async #land(
    kind: Followed,
    at: number,
    found: ReadonlyArray<{ id: string; wire: unknown }>,
    batch: (fresh: unknown[], keep: ReadonlySet<string>) => MirrorBatch | null,
  ) {
    const stale = (touched: ReadonlyMap<string, boolean>) => (item: { id: string; wire: unknown }) =>
      touched.size > 0 && (touched.has(item.id) || idsIn(item.wire).some((id) => touched.get(id)));
    const touched = this.#touchedSince(at);
    const again = found.filter(stale(touched));
    const fresh = found.filter((item) => !again.includes(item));
    const made = batch(
      fresh.map((item) => item.wire),
      new Set([...touched.keys(), ...again.map((item) => item.id)]),
    );
    if (made) {
      for (const { id, wire } of fresh) this.#changed.set(id, { tick: at, gone: wire === null });
      await this.write(made);
      if (this.#keeps.size) for (const { id } of fresh) this.#landed.set(id, { tick: ++this.#tick, kind });
      again.push(...fresh.filter(stale(this.#touchedSince(at))));
    }
    for (const { id } of again) this.#queueRefresh(kind, id, false);
  }

  /**
   * One record as the upstream has it now (gone when it answers 404 or the stream said deleted);
   * a read that fails is read again later (see `#attempt`).
   */
  refresh(kind: Followed, id: string, deleted: boolean): Promise<void> {
    return this.#attempt(
      { kind, id, deleted },
      async () => {
        const at = this.#begin();
        try {
          await this.#refresh(kind, id, deleted, at);
        } finally {
          this.#end(at);
        }
      },
      (message) => `following the upstream failed: ${message}`,
      false,
    );
  }

  async #refresh(kind: Followed, id: string, deleted: boolean, at: number) {
    const read = async (path: string) => {
      const response = await this.upstream.call(`${this.machine.base}${path}`);
      if (response.status === 404) return null;
      if (!response.ok) throw new UpstreamError('status', `${path} answered ${response.status}`, response.status);
      return response.json() as Promise<unknown>;
    };
    if (kind === 'conversationMessage') {
      // A message is read with its conversation (its place in it comes from there).
      const owner = deleted
        ? (await this.storage.getMessage(id))?.conversation
        : ((await read(`/message/${encodeURIComponent(id)}`)) as { conversation?: { id?: string } } | null)?.conversation?.id;
      if (owner) this.#queueRefresh('conversation', owner, false);
      else if (deleted) await this.write({ remove: [{ kind, id }] });
      return;
    }
    if (deleted) {
      // News, not a read: a read of it (or of a record listing it) begun before is not written over it.
      this.touched([id], true);
      await this.write({ remove: [{ kind, id }] });
      return;
    }
    const reads = READS[kind]!;
    const wire = await read(reads.one(id));
    // Kept as the upstream gave it (when it converts).
    const put = wire === null ? null : reads.put({ iterable: [wire] })!;
    if (put && !Object.values(put).some((made) => made?.length)) return;
    await this.#land(kind, at, [{ id, wire }], (fresh) => (!fresh.length ? null : put ? { put } : { remove: [{ kind, id }] }));
  }
}
