/**
 * The mirror's state, owned in one place: the phase (where the upstream stands and what this host
 * does about it), the upstream's base, the last error, this host's view of the outbox and of the id
 * map, and the status made of them, announced to the other hosts of the origin. Every change is a
 * transition named after the event that causes it; the other parts read through getters
 * (docs/mirror.md#the-states draws them).
 */
import type { MirrorState, MirrorStatus, SetAsideOperation } from '../../core/mirror-spec.js';
import type { WorkerMessage } from '../../core/stream-wire.js';
import { randomUUID } from '../../shared/uuid.js';
import type { IdPair, OutboxEntry } from '../../storage/schema.js';
import type { Storage } from '../../storage/storage.js';
import type { ChangeChannel } from '../channel.js';
import { aboutOf } from './outbox-plan.js';

/** How often the status is announced at most (the outbox changes in bursts). */
export const ANNOUNCE_MS = 25;

/**
 * Where the mirror stands. `unknown`: nothing said yet (a start); `probing`: a probe (then the
 * identity check) in flight, from down or to check an upstream that was up; `paused`: background
 * work stopped until the next request; `closed`: for good.
 */
export type Phase = 'unknown' | 'down' | 'probing' | 'draining' | 'up' | 'blocked' | 'paused' | 'closed';

/** The state the status shows in each phase; null: the one shown before (a probe of an upstream that was up keeps passing through). */
const SHOWN: Record<Phase, MirrorState | null> = {
  unknown: 'down',
  down: 'down',
  probing: null,
  draining: 'draining',
  up: 'up',
  blocked: 'blocked',
  paused: null,
  closed: null,
};

/** The phases in which the upstream may be reached (not blocked, paused or closed). */
const LIVE: readonly Phase[] = ['unknown', 'down', 'probing', 'draining', 'up'];

/** A queued entry's summary for the status. */
const summary = (entry: OutboxEntry) => {
  const id = aboutOf(entry)?.id;
  return { seq: entry.seq, operation: entry.operation, ...(id ? { id } : {}), ...(entry.state === 'sent' ? { sent: true as const } : {}) };
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class MirrorMachine {
  #phase: Phase = 'unknown';
  #shown: MirrorState = 'down';
  #lastError: string | null = null;
  /** The phase a pause interrupted (the next request resumes it). */
  #beforePause: Phase = 'unknown';
  /** The upstream's base URL (for `'auto'`, null until one is found). */
  #base: string | null;
  /** Whether this host replays (holds the lock); the others follow the replayer's announcements. */
  #replays = false;
  /** Whether the lock is still held now (a lease may lapse before it is taken away). */
  #holds: () => boolean = () => false;
  /** Whether where the upstream stands is known (the first probe ended, the replayer said, or waiting gave up). */
  #known = false;
  #markKnown!: () => void;
  readonly #whenKnown = new Promise<void>((resolve) => (this.#markKnown = resolve));

  #entries: OutboxEntry[] = [];
  #upstreamOf = new Map<string, string>();
  /** Whether the outbox changed since it was last read (queued here or by another host): then it may hold entries. */
  #dirty = true;
  #reloading: Promise<void> | null = null;

  /** This host, in what it tells the others. */
  readonly self = randomUUID();
  #announceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly storage: Pick<Storage, 'outboxEntries' | 'idPairs'>,
    private readonly channel: ChangeChannel,
    base: string | null,
  ) {
    this.#base = base;
  }

  // ---- reading ---------------------------------------------------------------------------------

  get phase(): Phase {
    return this.#phase;
  }
  /** The public state (MirrorStatus.state), derived from the phase. */
  get state(): MirrorState {
    return this.#shown;
  }
  get base(): string | null {
    return this.#base;
  }
  get lastError(): string | null {
    return this.#lastError;
  }
  get replays(): boolean {
    return this.#replays;
  }
  /** This host replays and its lock is still valid. */
  holdsLock(): boolean {
    return this.#replays && this.#holds();
  }
  get known(): boolean {
    return this.#known;
  }
  /** Resolves once where the upstream stands is known. */
  whenKnown(): Promise<void> {
    return this.#whenKnown;
  }
  get isClosed(): boolean {
    return this.#phase === 'closed';
  }
  get isPaused(): boolean {
    return this.#phase === 'paused';
  }
  /** The upstream may be reached: not blocked, paused or closed. */
  get live(): boolean {
    return LIVE.includes(this.#phase);
  }
  get entries(): readonly OutboxEntry[] {
    return this.#entries;
  }
  get upstreamOf(): ReadonlyMap<string, string> {
    return this.#upstreamOf;
  }
  get dirty(): boolean {
    return this.#dirty;
  }
  /** Whether requests must be answered here because operations wait (or may wait: not read since queued). */
  waiting(): boolean {
    return this.#dirty || this.#entries.some((e) => e.state !== 'set-aside');
  }

  snapshot(): MirrorStatus {
    return {
      state: this.#shown,
      upstream: this.#base,
      outbox: this.#entries.filter((e) => e.state !== 'set-aside').map(summary),
      setAside: this.#entries
        .filter((e) => e.state === 'set-aside')
        .map((e): SetAsideOperation => ({ operation: e.operation, ...e.refused! })),
      lastError: this.#lastError,
    };
  }

  // ---- the phase's transitions ------------------------------------------------------------------

  /** Moves to `to` when the phase is one of `from` (else nothing changes); `error` replaces the last error when given. */
  #go(to: Phase, from: readonly Phase[], error?: string | null): boolean {
    if (!from.includes(this.#phase)) return false;
    this.#phase = to;
    const shown = SHOWN[to] ?? this.#shown;
    const next = error === undefined ? this.#lastError : error;
    const changed = shown !== this.#shown || next !== this.#lastError;
    this.#shown = shown;
    this.#lastError = next;
    if (changed) this.announce();
    return true;
  }

  /** This host holds the replayer's lock (`holds`: whether it still does, for a lease). */
  lockTaken(holds: () => boolean) {
    if (this.isClosed) return;
    this.#replays = true;
    this.#holds = holds;
  }

  /** The lock was taken away (a lapsed lease): another host replays now. */
  lockLost() {
    this.#replays = false;
  }

  /** A probe starts (one at a time): false when none may (one runs, or the mirror is blocked, paused or closed). */
  probeStarted(): boolean {
    return this.#go('probing', ['unknown', 'down', 'up', 'draining']);
  }

  /** The page found the upstream (`'auto'`, the Local Network Access step) at `base`. */
  located(base: string) {
    this.#base = base;
  }

  /** The probe found the upstream at `base` and checked its identity: what went wrong before is over. */
  reached(base: string) {
    if (!this.live) return;
    const changed = base !== this.#base || this.#lastError !== null;
    this.#base = base;
    this.#lastError = null;
    if (changed) this.announce();
  }

  /** The upstream did not answer (a probe, a replay or a request): answers come from here. */
  unreachable(error: unknown) {
    this.#go('down', ['unknown', 'down', 'probing', 'draining', 'up'], messageOf(error));
    this.settle();
  }

  /** Operations wait: they are being sent. */
  draining() {
    this.#go('draining', ['unknown', 'down', 'probing', 'draining', 'up']);
  }

  /** The upstream failed an operation (5xx, 429) or its local completion failed: it is sent again later. */
  retrying(error: unknown) {
    this.#go('draining', ['draining'], messageOf(error));
  }

  /** Nothing waits in the outbox: requests pass through. */
  drained() {
    this.#go('up', ['unknown', 'down', 'probing', 'draining', 'up'], null);
  }

  /** The browser refused this page access to the local network: nothing is tried until it is allowed. */
  blocked(reason: string) {
    this.#go('blocked', [...LIVE, 'blocked', 'paused'], reason);
    this.settle();
  }

  /** The page may reach the local network again: down until a probe says more. */
  allowed() {
    this.#go('down', ['blocked'], null);
  }

  /** Background work stops until the next request. */
  pause() {
    const before = this.#phase;
    if (this.#go('paused', [...LIVE, 'blocked'])) this.#beforePause = before;
  }

  /** A request came while paused: the phase before it (a probe then says more); false when not paused. */
  resume(): boolean {
    const before = this.#beforePause === 'probing' ? (this.#shown === 'up' ? 'up' : 'down') : this.#beforePause;
    return this.#go(before, ['paused']);
  }

  /**
   * The replayer's status, heard by a host that does not replay: it takes the replayer's phase, except
   * where it keeps its own (a page blocked here tries nothing until it is allowed; a replayer's
   * `blocked` is the replayer's page's own), and then shows what the replayer sees all the same.
   */
  heard(status: MirrorStatus) {
    if (this.isClosed) return;
    this.#base = status.upstream;
    if (status.state === 'blocked' || !this.#go(status.state, ['unknown', 'down', 'probing', 'draining', 'up'], status.lastError)) {
      const changed = status.state !== this.#shown || status.lastError !== this.#lastError;
      this.#shown = status.state;
      this.#lastError = status.lastError;
      if (changed) this.announce();
    }
    this.settle();
    this.outboxChanged();
  }

  /** Where the upstream stands is known now (or the first request waited long enough). */
  settle() {
    this.#known = true;
    this.#markKnown();
  }

  /** Something went wrong beside the phase (following the upstream, reading the outbox); `announce`: told now. */
  failed(message: string, announce = true) {
    this.#lastError = message;
    if (announce) this.announce();
  }

  /** For good: nothing more is announced. */
  close() {
    this.#phase = 'closed';
    clearTimeout(this.#announceTimer);
  }

  // ---- the outbox and the id map -----------------------------------------------------------------

  /** The outbox changed beside this view (queued here, by another host, or replaced): it is read again. */
  outboxChanged() {
    this.#dirty = true;
  }

  /**
   * Reads the outbox and the id map again (coalesced: one read at a time, the last one after the
   * last change). `appended`: only the entries queued since (the replayer's own copy is otherwise
   * current: only it removes or changes entries).
   */
  reload(appended = false): Promise<void> {
    if (this.#reloading !== null) return this.#reloading.then(() => (this.#dirty ? this.reload(appended) : undefined));
    this.#dirty = false;
    const after = appended ? this.#entries.at(-1)?.seq : undefined;
    this.#reloading = Promise.all([this.storage.outboxEntries(after), after === undefined ? this.storage.idPairs() : null])
      .then(([outbox, pairs]) => {
        this.#entries = after === undefined ? outbox : [...this.#entries, ...outbox.filter((e) => e.seq > after)];
        if (pairs) this.#upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
      })
      .catch((error: unknown) => {
        this.#dirty = true;
        this.#lastError = `reading the outbox failed: ${messageOf(error)}`;
      })
      .finally(() => {
        this.#reloading = null;
        this.announce();
      });
    return this.#reloading;
  }

  /** An entry written anew (marked sent, set aside). */
  entryReplaced(entry: OutboxEntry) {
    this.#entries = this.#entries.map((e) => (e.seq === entry.seq ? entry : e));
    this.announce();
  }

  /** Entries done or dropped. */
  entriesRemoved(seqs: readonly number[]) {
    this.#entries = this.#entries.filter((e) => !seqs.includes(e.seq));
    this.announce();
  }

  /** Local ids re-keyed to the upstream's. */
  paired(pairs: readonly IdPair[]) {
    for (const pair of pairs) this.#upstreamOf.set(pair.local, pair.upstream);
  }

  /** Another upstream: no local id has an upstream id any more. */
  idMapCleared() {
    this.#upstreamOf = new Map();
  }

  // ---- the other hosts of the origin ------------------------------------------------------------

  /** The status, announced (coalesced) to every host of the origin and to watchService, by the replayer. */
  announce() {
    if (!this.#replays || this.#announceTimer !== undefined || this.isClosed) return;
    this.#announceTimer = setTimeout(() => {
      this.#announceTimer = undefined;
      this.channel.post({ type: 'mirror', status: this.snapshot() });
    }, ANNOUNCE_MS);
  }

  /** A message to the other hosts of the origin (this host's own come back to it, and are passed over). */
  tell(message: WorkerMessage) {
    this.channel.post({ ...message, from: this.self } as unknown as WorkerMessage);
  }
}
