/**
 * Replaying the outbox to the upstream, in order: what a later delete makes useless dropped, a
 * create whose answer was lost looked for before it is sent again, what each entry created
 * re-keyed to the upstream's ids, and what the upstream refused set aside.
 */
import type { CreatedId, IdPair, OutboxEntry } from '../../storage/schema.js';
import { createdTime, type QueuedCall } from './writes.js';
import type { Connection } from './connection.js';
import { ANNOUNCE_MS, type MirrorContext } from './context.js';
import type { Follower } from './follower.js';
import { aboutOf, collapse, pathOf, rewrite, routeOf, specOf, touches, unreachable } from './outbox-plan.js';
import { isTemporary, UpstreamError } from './upstream.js';

/** A create looked for after a lost answer is one the upstream made at most this long before it was sent (one machine's clock, some slack). */
const CLOCK_SLACK_MS = 5_000;

export class Replayer {
  /** Whether this host still holds the replayer's lock (a lease may lapse). */
  holds: () => boolean = () => true;
  /** A re-keying in progress (see #complete): requests wait for it. */
  remapping: Promise<void> | null = null;
  #draining: Promise<void> | null = null;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #reloadTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #warnedRecords = new Set<string>();
  /** Entries this replay marked sent in advance (with the completion of the one before), not sent yet. */
  readonly #markedHere = new Set<number>();

  constructor(
    private readonly ctx: MirrorContext,
    private readonly connection: Connection,
    private readonly follower: Follower,
  ) {}

  drain(): Promise<void> {
    return (this.#draining ??= this.#replay().finally(() => (this.#draining = null)));
  }

  /** Reads the outbox soon (writes queued in a burst are read once), then lets the replayer act on it. */
  scheduleReload() {
    if (this.#reloadTimer !== undefined) return;
    const { ctx } = this;
    this.#reloadTimer = setTimeout(() => {
      this.#reloadTimer = undefined;
      void ctx.reload(ctx.replayer).then(() => {
        if (!ctx.replayer) return;
        if (ctx.state === 'up' || ctx.state === 'draining') void this.drain();
        else this.connection.needUpstream('outbox');
      });
    }, ANNOUNCE_MS);
  }

  /** The outbox was emptied or rewritten beside the mirror: it is read again (nothing in it is marked by this replay now). */
  async outboxReplaced() {
    this.ctx.dirty = true;
    this.#markedHere.clear();
    await this.ctx.reload();
    this.ctx.announce();
  }

  /** No retry waits. */
  stopRetrying() {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  /** No read of the outbox waits. */
  cancelReload() {
    clearTimeout(this.#reloadTimer);
    this.#reloadTimer = undefined;
  }

  async #replay(): Promise<void> {
    const { ctx } = this;
    this.stopRetrying();
    for (;;) {
      if (ctx.closed || ctx.blocked || ctx.paused || !ctx.replayer || !this.holds()) return;
      if (ctx.dirty) await ctx.reload();
      const queued = ctx.entries.filter((e) => e.state !== 'set-aside');
      if (!queued.length) {
        ctx.setState('up', null);
        this.follower.start();
        return;
      }
      this.follower.stop();
      ctx.setState('draining');
      const useless = collapse(ctx.entries);
      if (useless.length) {
        await ctx.write({ outbox: { remove: useless } });
        ctx.entries = ctx.entries.filter((e) => !useless.includes(e.seq));
        ctx.announce();
        continue;
      }
      const entry = queued[0]!;
      const cause = this.#firstBlocked(entry);
      if (cause) {
        await this.#setAside(entry, cause.refused!.status, `follows the refused ${cause.operation} on ${cause.refused!.id}: ${cause.refused!.message}`, false);
        continue;
      }
      try {
        await this.#send(entry);
        this.connection.failures = 0;
      } catch (error) {
        if (error instanceof UpstreamError && error.kind !== 'status') {
          this.connection.lost(error);
          return;
        }
        // There, but failing (5xx, 429), or the local write failed: try again later (its Retry-After, or the backoff).
        this.connection.failures++;
        ctx.setState('draining', (error as Error)?.message ?? String(error));
        const wait = (error instanceof UpstreamError ? error.retryAfterMs : undefined) ?? this.connection.backoff();
        this.#retryTimer = setTimeout(() => void this.drain(), wait);
        return;
      }
    }
  }

  /** The set-aside entry an entry depends on (it is on a record that one made unreachable), if any. */
  #firstBlocked(entry: OutboxEntry): OutboxEntry | undefined {
    const out = unreachable(this.ctx.entries);
    if (!out.size) return undefined;
    for (const id of touches(entry)) if (out.has(id)) return out.get(id);
    return undefined;
  }

  #replace(entry: OutboxEntry) {
    this.ctx.entries = this.ctx.entries.map((e) => (e.seq === entry.seq ? entry : e));
    this.ctx.announce();
  }

  /** Sets an entry aside; a refusal of the upstream's own (not one that follows another) is told in the console, once per record. */
  async #setAside(entry: OutboxEntry, status: number, message: string, refusal = true) {
    const id = aboutOf(entry)?.id ?? entry.operation;
    const next: OutboxEntry = { ...entry, state: 'set-aside', refused: { status, message, id } };
    await this.ctx.write({ outbox: { put: [next] } });
    this.#replace(next);
    if (refusal && !this.#warnedRecords.has(id)) {
      this.#warnedRecords.add(id);
      this.ctx.warn(`the mirrored Pieces OS refused ${entry.operation} on ${id} (${status}: ${message}); it and the later operations on that record are set aside (see mirrorStatus().setAside).`);
    }
  }

  /** Sends one entry and records its outcome (or throws an UpstreamError to stop the replay). */
  async #send(entry: OutboxEntry): Promise<void> {
    const { ctx } = this;
    const spec = specOf(entry);
    const call = rewrite(entry, ctx.upstreamOf);
    // Marked by this replay with the entry before it (see #complete), and not sent yet: nothing to look for.
    const unsent = this.#markedHere.delete(entry.seq);
    if (entry.state === 'sent' && !unsent && spec.creates && !spec.idempotent && spec.find) {
      const found = await this.#look(entry, call);
      if (found) {
        await this.#complete(entry, found);
        return;
      }
    }
    if (entry.state !== 'sent') {
      // Marked before it goes: after a crash or a lost answer, a create is looked for before it is sent again.
      const sent: OutboxEntry = { ...entry, state: 'sent', sentAt: new Date(ctx.now()).toISOString() };
      await ctx.write({ outbox: { put: [sent] } });
      this.#replace(sent);
      entry = sent;
    }
    const response = await ctx.upstream.call(`${ctx.base}${pathOf(entry, call)}`, {
      method: routeOf(entry.operation)?.method ?? 'POST',
      headers: {
        ...(call.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(call.application ? { application: call.application } : {}),
      },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    });
    if (response.ok || (spec.deletes && response.status === 404)) {
      const text = await response.text();
      let answer: unknown;
      try {
        answer = text ? JSON.parse(text) : undefined;
      } catch {
        answer = undefined;
      }
      await this.#complete(entry, spec.creates && response.ok ? spec.creates(answer) : []);
      return;
    }
    const message = (await response.text().catch(() => '')).slice(0, 500) || `HTTP ${response.status}`;
    await this.#setAside(entry, response.status, message);
  }

  /** A create whose answer was lost, looked for on the upstream among the records the mirror did not know. */
  async #look(entry: OutboxEntry, call: QueuedCall): Promise<CreatedId[] | null> {
    const { ctx } = this;
    const spec = specOf(entry);
    let answer: unknown;
    try {
      answer = await ctx.upstream.json(`${ctx.base}${spec.find!.list(call)}`);
    } catch (error) {
      if (error instanceof UpstreamError && error.status !== undefined && !isTemporary(error.status)) return null;
      throw error;
    }
    // Records another queued create already became are not this one; nor are records made before it was sent.
    const taken = new Set(ctx.upstreamOf.values());
    const since = Date.parse(entry.sentAt ?? entry.at) - CLOCK_SLACK_MS;
    const kind = spec.about?.kind;
    for (const candidate of spec.find!.items(answer)) {
      const id = (candidate as { id?: unknown })?.id;
      if (typeof id !== 'string' || taken.has(id)) continue;
      const created = createdTime(candidate);
      if (created !== undefined && created < since) continue;
      if (spec.find!.matches(call, candidate)) {
        // The list may give a conversation without its messages' references: read it whole.
        const whole = kind === 'conversation' ? await ctx.upstream.json(`${ctx.base}/conversation/${encodeURIComponent(id)}?transferables=true`) : candidate;
        return spec.creates!(whole);
      }
    }
    return null;
  }

  /**
   * An entry the upstream took: removed, with the ids it gave to what it created (re-keyed here).
   * The next entry to send is marked sent in the same transaction: one write per entry.
   */
  async #complete(entry: OutboxEntry, given: CreatedId[]) {
    const { ctx } = this;
    const after = ctx.dirty ? undefined : ctx.entries.find((e) => e.seq > entry.seq && e.state !== 'set-aside');
    const next = after && after.state === 'queued' && !this.#firstBlocked(after) && !collapse(ctx.entries.filter((e) => e.seq !== entry.seq)).length ? after : undefined;
    const marked: OutboxEntry | undefined = next && { ...next, state: 'sent', sentAt: new Date(ctx.now()).toISOString() };
    // The records it created, paired with the upstream's kind by kind, in order (an asset's formats with its formats).
    const pairs: IdPair[] = [];
    const theirs = new Map<string, string[]>();
    for (const { kind, id } of given) theirs.set(kind, [...(theirs.get(kind) ?? []), id]);
    for (const local of entry.created) {
      const upstreamId = theirs.get(local.kind)?.shift();
      if (upstreamId !== undefined && upstreamId !== local.id) pairs.push({ local: local.id, upstream: upstreamId, kind: local.kind });
    }
    // Requests wait while records are re-keyed: the map and the records change together.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.remapping = gate;
    try {
      await ctx.write({ outbox: { remove: [entry.seq], ...(marked ? { put: [marked] } : {}) }, rekey: pairs });
      for (const pair of pairs) ctx.upstreamOf.set(pair.local, pair.upstream);
    } finally {
      release();
      if (this.remapping === gate) this.remapping = null;
    }
    ctx.entries = ctx.entries.filter((e) => e.seq !== entry.seq);
    if (marked) {
      this.#markedHere.add(marked.seq);
      this.#replace(marked);
    }
    ctx.announce();
  }
}
