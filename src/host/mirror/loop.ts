/**
 * The one loop that drives the mirror: probe → identity → drain → follow, one run at a time,
 * with one backoff and one wake-up. It owns the phase's transitions (through the machine) and
 * calls the parts through small interfaces: reaching the upstream (connection.ts), the replayer
 * (replayer.ts) and the follower (follower.ts), as a connection loop calls its delegate.
 */
import { ANNOUNCE_MS, type MirrorMachine } from './machine.js';
import { UpstreamError } from './upstream.js';

/** Probing: the first retry after a failure, the longest wait, and the wait when nothing but an open socket needs the upstream. */
export const PROBE_FIRST_MS = 1_000;
export const PROBE_MAX_MS = 30_000;
export const PROBE_IDLE_MS = 30_000;
/** The wait after `failures` failures in a row: PROBE_FIRST_MS doubling to `maxMs` (the mirror's retryMaxMs, PROBE_MAX_MS by default). */
export const backoff = (failures: number, maxMs = PROBE_MAX_MS) => Math.min(PROBE_FIRST_MS * 2 ** Math.max(0, failures - 1), maxMs);
/** A socket that checked within this long counts as open (sockets check every few seconds). */
const SOCKET_SEEN_MS = 10_000;
/** How long the first request waits for the first probe before it is answered here. */
const FIRST_PROBE_WAIT_MS = 3_000;

/** Reaching the upstream (connection.ts). */
export interface Reach {
  /** The base that answers; rejects with an UpstreamError when none does. */
  find(): Promise<string>;
  /** Checks who answers at `base`; true when it is another Pieces OS (or the first), adopted. */
  identify(base: string): Promise<boolean>;
}

/** Replaying the outbox (replayer.ts). */
export interface Replay {
  /** Whether operations wait to be sent (the outbox read first when it changed). */
  pending(): Promise<boolean>;
  /**
   * One step: what a later delete makes useless dropped, an entry that follows a refused one set
   * aside, or the next entry sent. Rejects with an UpstreamError (`network`, `silent`: the
   * upstream is away; `status`: 5xx, 429) or the local write's error.
   */
  step(): Promise<void>;
}

/** Following the upstream while it is up (follower.ts). */
export interface Follow {
  /** Follows the upstream; `closed`: one of its streams closed (it may have gone away). */
  start(closed: () => void): void;
  stop(): void;
  /** The streams the upstream refused may be served now (it went away, or is another one). */
  forgetRefused(): void;
}

type Work = 'probe' | 'drain';

export class MirrorLoop {
  /** Failed probes or sends in a row: the wait after the next one doubles from PROBE_FIRST_MS to retryMaxMs (PROBE_MAX_MS). */
  #failures = 0;
  /** What the running loop does next (a probe is followed by a drain). */
  #wanted: Work | null = null;
  #running: Promise<void> | null = null;
  /** The one wake-up: the next probe, or the replay's next attempt. */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerFor: Work | null = null;
  #due = Infinity;
  #lastProbe = 0;
  /** A request came since the last probe started: the upstream is needed now. */
  #requested = false;
  #socketSeen = 0;
  #reloadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly machine: MirrorMachine,
    private readonly reach: Reach,
    private readonly replay: Replay,
    private readonly follow: Follow,
    private readonly now: () => number,
    private readonly retryMaxMs = PROBE_MAX_MS,
  ) {}

  // ---- the loop ------------------------------------------------------------------------------------

  /** Runs `work` (after what runs now); resolves when the loop has nothing left to do. */
  #kick(work: Work): Promise<void> {
    if (work === 'probe' || !this.#wanted) this.#wanted = work;
    return (this.#running ??= this.#run());
  }

  async #run(): Promise<void> {
    try {
      while (this.#wanted) {
        const work = this.#wanted;
        this.#wanted = null;
        await (work === 'probe' ? this.#probe() : this.#resume());
      }
    } finally {
      this.#running = null;
    }
  }

  /** Looks for the upstream, checks who it is, then replays the outbox and follows it. */
  async #probe() {
    const { machine } = this;
    if (!machine.replays || !machine.probeStarted()) return;
    this.#lastProbe = this.now();
    this.#requested = false;
    this.#sleep();
    try {
      const base = await this.reach.find();
      if (await this.reach.identify(base)) this.follow.forgetRefused();
      machine.reached(base);
      this.#failures = 0;
    } catch (error) {
      this.#away(error);
      return;
    }
    await this.#drain();
    machine.settle();
  }

  /**
   * The replay again (operations queued, or a retry's time came): while the upstream is up or
   * draining, and no retry waits for its time; away, a probe comes first.
   */
  async #resume() {
    const { phase } = this.machine;
    if ((phase === 'up' || phase === 'draining') && this.#timerFor !== 'drain') await this.#drain();
  }

  /** Sends the outbox, one step at a time; once it is empty, follows the upstream. */
  async #drain() {
    const { machine } = this;
    for (;;) {
      if (!machine.live || !machine.holdsLock()) return;
      if (!(await this.replay.pending())) {
        machine.drained();
        this.follow.start(() => this.check());
        return;
      }
      this.follow.stop();
      machine.draining();
      try {
        await this.replay.step();
        this.#failures = 0;
      } catch (error) {
        if (error instanceof UpstreamError && error.kind !== 'status') {
          this.#away(error);
          return;
        }
        // There, but failing (5xx, 429), or the local write failed: try again later (its Retry-After, or the backoff).
        this.#failures++;
        machine.retrying(error);
        this.#wake('drain', (error instanceof UpstreamError ? error.retryAfterMs : undefined) ?? this.#backoff());
        return;
      }
    }
  }

  /** The upstream did not answer: answers come from here, probes follow (when something needs it). */
  #away(error: unknown) {
    this.follow.stop();
    this.follow.forgetRefused();
    this.#failures++;
    this.#lastProbe = this.now();
    this.machine.unreachable(error);
    this.#schedule();
  }

  #backoff() {
    return backoff(this.#failures, this.retryMaxMs);
  }

  /**
   * The next probe while the upstream is away: after the backoff (1 s doubling to 30 s) while
   * requests or queued writes need it; every PROBE_IDLE_MS when only an open socket does (at
   * most 2 a minute); none when nothing does. A need that comes sooner brings it forward.
   */
  #schedule() {
    const { machine } = this;
    if (!machine.replays || machine.phase !== 'down') return;
    const socket = this.now() - this.#socketSeen < SOCKET_SEEN_MS;
    let gap: number;
    if (this.#requested || machine.waiting()) gap = this.#backoff();
    else if (socket) gap = Math.max(this.#backoff(), PROBE_IDLE_MS);
    else return;
    const due = Math.max(this.now(), this.#lastProbe + gap);
    if (this.#timer !== undefined && this.#due <= due) return;
    this.#wake('probe', due - this.now());
  }

  #wake(work: Work, ms: number) {
    clearTimeout(this.#timer);
    this.#timerFor = work;
    this.#due = this.now() + ms;
    this.#timer = setTimeout(() => {
      this.#sleep();
      void this.#kick(work);
    }, ms);
  }

  /** No wake-up waits. */
  #sleep() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerFor = null;
    this.#due = Infinity;
  }

  // ---- the events the loop hears ------------------------------------------------------------------

  /** Where things stand is looked at now (this host just became the replayer). */
  probe(): Promise<void> {
    return this.#kick('probe');
  }

  /** Resolves once the first probe said where the upstream stands, or after FIRST_PROBE_WAIT_MS. */
  firstProbe(): Promise<unknown> {
    return Promise.race([this.machine.whenKnown(), new Promise((resolve) => setTimeout(resolve, FIRST_PROBE_WAIT_MS))]);
  }

  /** Something needs the upstream: a probe is scheduled while it is away, within the limits. */
  needUpstream(reason: 'request' | 'socket' | 'outbox') {
    if (reason === 'request') this.#requested = true;
    if (reason === 'socket') this.#socketSeen = this.now();
    this.#schedule();
  }

  /** A request came: used again after a pause, where things stand is looked at once. */
  used() {
    if (this.machine.resume() && this.machine.replays) void this.#kick('probe');
  }

  /** The upstream gave no answer to a request passed through. */
  unreachable(error: unknown) {
    this.#away(error);
  }

  /** The upstream may have gone away (one of its streams closed, another host's request failed): it is probed while it counts as up. */
  check() {
    if (this.machine.replays && this.machine.phase === 'up') void this.#kick('probe');
  }

  /** Operations were queued (here or by another host): the outbox is read soon (a burst once), then sent or waits for the upstream. */
  queued() {
    const { machine } = this;
    machine.outboxChanged();
    if (this.#reloadTimer !== undefined) return;
    this.#reloadTimer = setTimeout(() => {
      this.#reloadTimer = undefined;
      void machine.reload(machine.replays).then(() => {
        if (!machine.replays) return;
        if (machine.phase === 'up' || machine.phase === 'draining') void this.#kick('drain');
        else this.needUpstream('outbox');
      });
    }, ANNOUNCE_MS);
  }

  /** The browser refused this page access to the local network: nothing is tried until it is allowed. */
  refused(reason: string) {
    this.machine.blocked(reason);
    this.follow.stop();
    this.#sleep();
  }

  /** Access to the local network was allowed: away (or never reached), the upstream is looked at now. */
  async allowed() {
    this.machine.allowed();
    const { phase } = this.machine;
    if (this.machine.replays && (phase === 'down' || phase === 'unknown')) await this.#kick('probe');
  }

  /** The replayer's lock was taken away (a lapsed lease): another host replays now. */
  lockLost() {
    this.machine.lockLost();
    this.follow.stop();
    this.#sleep();
  }

  /** Background work stops until the next request (see `used`). */
  pause() {
    this.machine.pause();
    this.#stop();
  }

  /** For good. */
  close() {
    this.machine.close();
    this.#stop();
  }

  /** Stops what runs in the background: following the upstream, the next probe or retry, a read of the outbox. */
  #stop() {
    this.follow.stop();
    this.#sleep();
    clearTimeout(this.#reloadTimer);
    this.#reloadTimer = undefined;
  }
}
