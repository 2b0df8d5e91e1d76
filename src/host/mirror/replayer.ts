/**
 * Replaying the outbox to the upstream, in order, one step at a time (the loop, loop.ts, calls
 * it): what a later delete makes useless dropped, a create whose answer was lost looked for
 * before it is sent again, what each entry created re-keyed to the upstream's ids, and what the
 * upstream refused set aside.
 */
import type { CreatedId, IdPair, OutboxEntry } from '../../storage/schema.js';
import { createdTime, type QueuedCall } from './writes.js';
import type { MirrorMachine } from './machine.js';
import { aboutOf, collapse, pathOf, rewrite, routeOf, specOf, touches, unreachable } from './outbox-plan.js';
import { isTemporary, UpstreamError, type Upstream } from './upstream.js';
import type { Write } from './write.js';

/**
 * A create looked for after a lost answer is one the upstream made at most this long before it was sent (one
 * machine's clock, some slack).
 */
const CLOCK_SLACK_MS = 5_000;

export class Replayer {
  #remapping: Promise<void> | null = null;
  readonly #warnedRecords = new Set<string>();
  /** Entries this replay marked sent in advance (with the completion of the one before), not sent yet. */
  readonly #markedHere = new Set<number>();

  constructor(
    private readonly machine: MirrorMachine,
    private readonly upstream: Upstream,
    private readonly write: Write,
    private readonly warn: (message: string) => void,
    private readonly now: () => number,
  ) {}

  /** A re-keying in progress (see #complete): requests wait for it. */
  get remapping(): Promise<void> | null {
    return this.#remapping;
  }

  /** The outbox was emptied or rewritten beside the mirror: it is read again (nothing in it is marked by this replay now). */
  async outboxReplaced() {
    this.machine.outboxChanged();
    this.#markedHere.clear();
    await this.machine.reload();
  }

  /** Whether operations wait to be sent (the outbox read first when it changed). */
  async pending(): Promise<boolean> {
    const { machine } = this;
    if (machine.dirty) await machine.reload();
    return machine.entries.some((e) => e.state !== 'set-aside');
  }

  /** One step of the replay (see Replay in loop.ts). */
  async step(): Promise<void> {
    const { machine } = this;
    const useless = collapse(machine.entries);
    if (useless.length) {
      await this.write({ outbox: { remove: useless } });
      machine.entriesRemoved(useless);
      return;
    }
    const entry = machine.entries.find((e) => e.state !== 'set-aside')!;
    const cause = this.#firstBlocked(entry);
    if (cause)
      await this.#setAside(
        entry,
        cause.refused!.status,
        `follows the refused ${cause.operation} on ${cause.refused!.id}: ${cause.refused!.message}`,
        false,
      );
    else await this.#send(entry);
  }

  /** The set-aside entry an entry depends on (it is on a record that one made unreachable), if any. */
  #firstBlocked(entry: OutboxEntry): OutboxEntry | undefined {
    const out = unreachable(this.machine.entries);
    if (!out.size) return undefined;
    for (const id of touches(entry)) if (out.has(id)) return out.get(id);
    return undefined;
  }

  /** Sets an entry aside; a refusal of the upstream's own (not one that follows another) is told in the console, once per record. */
  async #setAside(entry: OutboxEntry, status: number, message: string, refusal = true) {
    const id = aboutOf(entry)?.id ?? entry.operation;
    const next: OutboxEntry = { ...entry, state: 'set-aside', refused: { status, message, id } };
    await this.write({ outbox: { put: [next] } });
    this.machine.entryReplaced(next);
    if (refusal && !this.#warnedRecords.has(id)) {
      this.#warnedRecords.add(id);
      this.warn(
        `the mirrored Pieces OS refused ${entry.operation} on ${id} (${status}: ${message}); it and the later operations on that record are set aside (see mirrorStatus().setAside).`,
      );
    }
  }

  /** Sends one entry and records its outcome (or throws an UpstreamError to stop the replay). */
  async #send(entry: OutboxEntry): Promise<void> {
    const { machine } = this;
    const spec = specOf(entry);
    const call = rewrite(entry, machine.upstreamOf);
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
      const sent: OutboxEntry = { ...entry, state: 'sent', sentAt: new Date(this.now()).toISOString() };
      await this.write({ outbox: { put: [sent] } });
      machine.entryReplaced(sent);
      entry = sent;
    }
    const response = await this.upstream.call(`${machine.base}${pathOf(entry, call)}`, {
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
    const { machine } = this;
    const spec = specOf(entry);
    let answer: unknown;
    try {
      answer = await this.upstream.json(`${machine.base}${spec.find!.list(call)}`);
    } catch (error) {
      if (error instanceof UpstreamError && error.status !== undefined && !isTemporary(error.status)) return null;
      throw error;
    }
    // Records another queued create already became are not this one; nor are records made before it was sent.
    const taken = new Set(machine.upstreamOf.values());
    const since = Date.parse(entry.sentAt ?? entry.at) - CLOCK_SLACK_MS;
    const kind = spec.about?.kind;
    for (const candidate of spec.find!.items(answer)) {
      const id = (candidate as { id?: unknown })?.id;
      if (typeof id !== 'string' || taken.has(id)) continue;
      const created = createdTime(candidate);
      if (created !== undefined && created < since) continue;
      if (spec.find!.matches(call, candidate)) {
        // The list may give a conversation without its messages' references: read it whole.
        const whole =
          kind === 'conversation'
            ? await this.upstream.json(`${machine.base}/conversation/${encodeURIComponent(id)}?transferables=true`)
            : candidate;
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
    const { machine } = this;
    const after = machine.dirty ? undefined : machine.entries.find((e) => e.seq > entry.seq && e.state !== 'set-aside');
    const next =
      after &&
      after.state === 'queued' &&
      !this.#firstBlocked(after) &&
      !collapse(machine.entries.filter((e) => e.seq !== entry.seq)).length
        ? after
        : undefined;
    const marked: OutboxEntry | undefined = next && { ...next, state: 'sent', sentAt: new Date(this.now()).toISOString() };
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
    this.#remapping = gate;
    try {
      await this.write({ outbox: { remove: [entry.seq], ...(marked ? { put: [marked] } : {}) }, rekey: pairs });
      machine.paired(pairs);
    } finally {
      release();
      if (this.#remapping === gate) this.#remapping = null;
    }
    machine.entriesRemoved([entry.seq]);
    if (marked) {
      this.#markedHere.add(marked.seq);
      machine.entryReplaced(marked);
    }
  }
}
