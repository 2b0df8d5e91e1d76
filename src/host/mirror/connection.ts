/**
 * Whether the upstream is reached: probed while it is away (only when something needs it, with a
 * backoff), down when it stops answering, up once it answers (its identity checked, the outbox replayed).
 */
import type { MirrorContext } from './context.js';
import { SYNCED, type Follower } from './follower.js';
import { trimBase, UpstreamError } from './upstream.js';

/** Probing: the first retry after a failure, the longest wait, and the wait when nothing but the outbox or a socket needs the upstream. */
export const PROBE_FIRST_MS = 1_000;
export const PROBE_MAX_MS = 30_000;
export const PROBE_IDLE_MS = 30_000;
/** A socket that checked within this long counts as open (sockets check every few seconds). */
const SOCKET_SEEN_MS = 10_000;
/** How long the first request waits for the first probe before it is answered here. */
const FIRST_PROBE_WAIT_MS = 3_000;

const META_IDENTITY = 'mirror:identity';

export class Connection {
  /** Failed probes (or sends) in a row: the wait after the next one doubles from PROBE_FIRST_MS to PROBE_MAX_MS. */
  failures = 0;
  /** Whether where the upstream stands is known (the first probe ended, or the replayer said). */
  known = false;
  #markKnown!: () => void;
  // The first answer waits for the first probe (a few ms when the upstream answers or refuses).
  readonly #firstProbe = new Promise<void>((resolve) => (this.#markKnown = resolve));
  #probing = false;
  #probeTimer: ReturnType<typeof setTimeout> | undefined;
  #probeDue = Infinity;
  #lastProbe = 0;
  /** A request came since the last probe started: the upstream is needed now. */
  #requested = false;
  #socketSeen = 0;

  constructor(
    private readonly ctx: MirrorContext,
    private readonly follower: Follower,
    /** Replays the outbox (then follows the upstream once it is empty). */
    private readonly drain: () => Promise<void>,
    /** `'auto'`: the upstream is found among `candidates`, else it is the one given. */
    private readonly auto: boolean,
    private readonly candidates: readonly string[],
  ) {}

  setKnown() {
    this.known = true;
    this.#markKnown();
  }

  /** Resolves once the first probe said where the upstream stands, or after FIRST_PROBE_WAIT_MS. */
  firstProbe(): Promise<unknown> {
    return Promise.race([this.#firstProbe, new Promise((resolve) => setTimeout(resolve, FIRST_PROBE_WAIT_MS))]);
  }

  backoff() {
    return Math.min(PROBE_FIRST_MS * 2 ** Math.max(0, this.failures - 1), PROBE_MAX_MS);
  }

  /** Something needs the upstream while it is away: a probe is scheduled, within the limits. */
  needUpstream(reason: 'request' | 'socket' | 'outbox') {
    const { ctx } = this;
    if (reason === 'request') this.#requested = true;
    if (reason === 'socket') this.#socketSeen = ctx.now();
    if (!ctx.replayer || ctx.state !== 'down' || ctx.blocked || ctx.closed) return;
    this.#schedule();
  }

  /**
   * The next probe: after the backoff (1 s doubling to 30 s) while requests or queued writes
   * need the upstream; every PROBE_IDLE_MS when only an open socket does (at most 2 a
   * minute); none when nothing does. A need that comes sooner brings a later probe forward.
   */
  #schedule() {
    const { ctx } = this;
    if (this.#probing || ctx.closed || ctx.blocked || ctx.paused || !ctx.replayer || ctx.state !== 'down') return;
    const socket = ctx.now() - this.#socketSeen < SOCKET_SEEN_MS;
    let gap: number;
    if (this.#requested || ctx.waiting()) gap = this.backoff();
    else if (socket) gap = Math.max(this.backoff(), PROBE_IDLE_MS);
    else return;
    const due = Math.max(ctx.now(), this.#lastProbe + gap);
    if (this.#probeTimer !== undefined && this.#probeDue <= due) return;
    clearTimeout(this.#probeTimer);
    this.#probeDue = due;
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      this.#probeDue = Infinity;
      void this.probe();
    }, due - ctx.now());
  }

  /** No probe is waiting to be made. */
  stopProbing() {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeDue = Infinity;
  }

  /** The upstream went away (or never answered): answers come from here, probes follow. */
  wentDown(error: unknown) {
    this.follower.stop();
    this.follower.forgetRefused();
    this.failures++;
    this.#lastProbe = this.ctx.now();
    const message = error instanceof Error ? error.message : String(error);
    if (!this.ctx.blocked) this.ctx.setState('down', message);
    this.setKnown();
    this.#schedule();
  }

  /** The upstream went away during a replay: the probe that found it up reports it (and schedules the next), or this does. */
  lost(error: UpstreamError) {
    if (this.#probing) this.ctx.setState('down', error.message);
    else this.wentDown(error);
  }

  async probe(): Promise<void> {
    const { ctx } = this;
    if (this.#probing || ctx.closed || ctx.blocked || ctx.paused) return;
    this.#probing = true;
    this.#lastProbe = ctx.now();
    this.#requested = false;
    this.stopProbing();
    try {
      const found = this.auto
        ? await ctx.upstream.discover(ctx.base ? [ctx.base, ...this.candidates.filter((c) => c !== ctx.base)] : this.candidates)
        : (await ctx.upstream.healthy(ctx.base!))
          ? ctx.base
          : null;
      if (!found) throw new UpstreamError('network', this.auto ? 'no Pieces OS answers on localhost (39300–39333, 1000, 5323)' : `${ctx.base} does not answer its health check`);
      ctx.base = found;
      await this.#cameUp(found);
      this.failures = 0;
    } catch (error) {
      this.#probing = false;
      this.wentDown(error);
    } finally {
      this.#probing = false;
      this.setKnown();
    }
  }

  /** The upstream answers: check who it is, replay the outbox, then follow it. */
  async #cameUp(found: string) {
    const { ctx } = this;
    const identity = await ctx.upstream.identity(found);
    ctx.dirty = true;
    await ctx.reload();
    const previous = await ctx.storage.getMeta<string>(META_IDENTITY);
    if (previous !== identity) await this.#adopt(identity, previous !== undefined);
    ctx.lastError = null;
    await this.drain();
    if (ctx.state === 'down') throw new UpstreamError('network', ctx.lastError ?? 'the upstream went away while the outbox was replayed');
  }

  /**
   * A Pieces OS of another identity (or the first one): what was mirrored from the previous
   * one is dropped, the records created here and still queued are kept, and the outbox is
   * replayed to it once (an entry sent to the previous one is sent again, not looked for).
   */
  async #adopt(identity: string, replaced: boolean) {
    const { ctx } = this;
    // What the queue created here is kept by the replace itself (read in its transaction).
    await ctx.write({
      clearIdMap: true,
      replace: { kinds: [...SYNCED], keep: [] },
      outbox: { put: replaced ? ctx.entries.filter((e) => e.state === 'sent').map((e) => ({ ...e, state: 'queued' as const })) : [] },
      meta: { [META_IDENTITY]: identity },
    });
    ctx.upstreamOf = new Map();
    this.follower.forgetRefused();
    if (replaced) ctx.warn(`the mirrored Pieces OS is another one now (identity ${identity}): the records mirrored from the previous one were dropped, and the queued operations are replayed to this one.`);
    ctx.dirty = true;
    await ctx.reload();
  }

  /** What the page's Local Network Access step found: refused, the mirror is blocked; allowed, the upstream is looked at now. */
  async permission(report: { granted: boolean; upstream?: string; reason?: string }) {
    const { ctx } = this;
    if (!report.granted) {
      ctx.blocked = true;
      this.follower.stop();
      this.stopProbing();
      ctx.state = 'blocked';
      ctx.lastError = report.reason ?? 'the browser refused this page access to the local network';
      ctx.announce();
      return;
    }
    if (report.upstream && this.auto) ctx.base = trimBase(report.upstream);
    const wasBlocked = ctx.blocked;
    ctx.blocked = false;
    if (wasBlocked) ctx.setState('down', null);
    // Away (or never reached): look now. A drain waiting for its retry keeps waiting.
    if (ctx.replayer && ctx.state === 'down') await this.probe();
  }
}
