/**
 * What the parts of the mirror share: where the upstream stands, this host's copy of the outbox
 * and of the id map, and the status made of them, announced to the other hosts of the origin.
 */
import type { MirrorState, MirrorStatus, SetAsideOperation } from '../../core/mirror-spec.js';
import type { Service } from '../../core/service.js';
import type { WorkerMessage } from '../../core/stream-wire.js';
import { randomUUID } from '../../shared/uuid.js';
import type { OutboxEntry } from '../../storage/schema.js';
import type { Change, MirrorBatch, Storage } from '../../storage/storage.js';
import type { ChangeChannel } from '../channel.js';
import type { MirrorSetup } from './mirror.js';
import { aboutOf } from './outbox-plan.js';
import { Upstream, type UpstreamIo } from './upstream.js';

/** How often the status is announced at most (the outbox changes in bursts). */
export const ANNOUNCE_MS = 25;

/** A queued entry's summary for the status. */
const summary = (entry: OutboxEntry) => {
  const id = aboutOf(entry)?.id;
  return { seq: entry.seq, operation: entry.operation, ...(id ? { id } : {}), ...(entry.state === 'sent' ? { sent: true as const } : {}) };
};

export class MirrorContext {
  state: MirrorState = 'down';
  lastError: string | null = null;
  /** The browser refused this page access to the local network: nothing is tried until it is allowed. */
  blocked = false;
  /** Background work stopped until the next request (see Mirror.pause). */
  paused = false;
  /** Whether this host replays (holds the lock); the others follow the replayer's announcements. */
  replayer = false;
  closed = false;

  entries: OutboxEntry[] = [];
  upstreamOf = new Map<string, string>();
  /** Whether the outbox changed since it was last read (queued here or by another host): then it may hold entries. */
  dirty = true;

  readonly service: Service;
  readonly storage: Storage;
  readonly io: UpstreamIo;
  readonly channel: ChangeChannel;
  readonly upstream: Upstream;
  readonly now: () => number;
  /** This host, in what it tells the others. */
  readonly self = randomUUID();
  readonly #warn: (message: string) => void;
  #announceTimer: ReturnType<typeof setTimeout> | undefined;
  #reloading: Promise<void> | null = null;

  constructor(
    setup: MirrorSetup,
    /** The upstream's base URL (for `'auto'`, null until one is found). */
    public base: string | null,
  ) {
    this.service = setup.service;
    this.storage = setup.storage;
    this.io = setup.io;
    this.channel = setup.channel;
    this.upstream = new Upstream(setup.io, setup.options.timeoutMs ?? 10_000);
    this.now = setup.now ?? Date.now;
    this.#warn = setup.warn;
  }

  warn(message: string) {
    this.#warn(message);
  }

  snapshot(): MirrorStatus {
    return {
      state: this.state,
      upstream: this.base,
      outbox: this.entries.filter((e) => e.state !== 'set-aside').map(summary),
      setAside: this.entries.filter((e) => e.state === 'set-aside').map((e): SetAsideOperation => ({ operation: e.operation, ...e.refused! })),
      lastError: this.lastError,
    };
  }

  /** The status, announced (coalesced) to every host of the origin and to watchService, by the replayer. */
  announce() {
    if (!this.replayer || this.#announceTimer !== undefined || this.closed) return;
    this.#announceTimer = setTimeout(() => {
      this.#announceTimer = undefined;
      this.channel.post({ type: 'mirror', status: this.snapshot() });
    }, ANNOUNCE_MS);
  }

  setState(next: MirrorState, error: string | null = this.lastError) {
    const changed = next !== this.state || error !== this.lastError;
    this.state = next;
    this.lastError = error;
    if (changed) this.announce();
  }

  /** A message to the other hosts of the origin (this host's own come back to it, and are passed over). */
  tell(message: WorkerMessage) {
    this.channel.post({ ...message, from: this.self } as unknown as WorkerMessage);
  }

  /**
   * Reads the outbox and the id map again (coalesced: one read at a time, the last one after the
   * last change). `appended`: only the entries queued since (the replayer's own copy is otherwise
   * current: only it removes or changes entries).
   */
  reload(appended = false): Promise<void> {
    if (this.#reloading) return this.#reloading.then(() => (this.dirty ? this.reload(appended) : undefined));
    this.dirty = false;
    const after = appended ? this.entries.at(-1)?.seq : undefined;
    this.#reloading = Promise.all([this.storage.outboxEntries(after), after === undefined ? this.storage.idPairs() : null])
      .then(([outbox, pairs]) => {
        this.entries = after === undefined ? outbox : [...this.entries, ...outbox.filter((e) => e.seq > after)];
        if (pairs) this.upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
      })
      .catch((error: unknown) => {
        this.dirty = true;
        this.lastError = `reading the outbox failed: ${(error as Error)?.message ?? error}`;
      })
      .finally(() => {
        this.#reloading = null;
        this.announce();
      });
    return this.#reloading;
  }

  /** Whether requests must be answered here because operations wait (or may wait: not read since queued). */
  waiting() {
    return this.dirty || this.entries.some((e) => e.state !== 'set-aside');
  }

  /** Writes a batch and announces its changes. */
  async write(batch: MirrorBatch): Promise<Change[]> {
    const changes = await this.storage.applyMirror(batch);
    this.service.announce(changes);
    return changes;
  }

  /** Nothing more is announced. */
  close() {
    this.closed = true;
    clearTimeout(this.#announceTimer);
  }
}
