/**
 * The mirror of a real Pieces OS (docs/mirror.md), one mechanism for every host.
 *
 * Up, outbox empty: every request under a base goes to the upstream and its answer is the
 * client's (operations the service does not serve too); a write it took is made here as
 * well, and the upstream's identifier streams (one socket per collection) keep the local
 * copy current, so that the service's own sockets, fed by the local change log, follow it.
 * Down: the service answers from the local copy; a write is queued in the outbox in the
 * transaction that makes it locally. Back up: the one replayer (the host holding the
 * replayer's Web Lock: the worker, or one tab in page mode) sends the outbox in order,
 * rewriting the ids created locally into the ids the upstream gives, re-keying the local
 * records, and passes requests through again once the outbox is empty.
 *
 * Hosts that do not hold the lock (other tabs in page mode) answer the same way from the
 * status the replayer announces, and tell it when they queue.
 */
import { findRoute } from '../../core/routes.js';
import type { MirrorOptions } from '../../core/options.js';
import { createdTime, type MirrorState, type MirrorStatus, type QueuedCall, type SetAsideOperation } from '../../core/mirror-spec.js';
import type { Service } from '../../core/service.js';
import { STREAM_HEADER, type WorkerMessage } from '../../core/stream-wire.js';
import { storedJson } from '../../core/validate.js';
import { randomUUID } from '../../shared/uuid.js';
import type { Collection, CreatedId, IdPair, OutboxEntry } from '../../storage/schema.js';
import type { Change, MirrorBatch, OutboxInput, Storage } from '../../storage/storage.js';
import type { ChangeChannel } from '../channel.js';
import { CopilotBridge } from './copilot.js';
import { leaseLock, type HoldLock } from './lock.js';
import { aboutOf, collapse, pathOf, rewrite, routeOf, specOf, touches, unreachable } from './outbox-plan.js';
import { queueingStorage } from './queueing.js';
import {
  activityRecord,
  anchorRecord,
  annotationRecord,
  applicationRecord,
  assetRecord,
  conversationMessagesListed,
  anchorConversationIds,
  assetValuesListed,
  conversationRecord,
  records,
} from './records.js';
import {
  discoveryCandidates,
  isTemporary,
  PERMISSION_PROBE,
  sameOrigin,
  trimBase,
  Upstream,
  UpstreamError,
  type UpstreamIo,
  type WebSocketLike,
} from './upstream.js';


/** The Web Lock the replayer holds. */
export const REPLAYER_LOCK = 'pieces-os-worker:mirror';

/** Probing: the first retry after a failure, the longest wait, and the wait when nothing but the outbox or a socket needs the upstream. */
export const PROBE_FIRST_MS = 1_000;
export const PROBE_MAX_MS = 30_000;
export const PROBE_IDLE_MS = 30_000;
/** A socket that checked within this long counts as open (sockets check every few seconds). */
const SOCKET_SEEN_MS = 10_000;
/** How long the first request waits for the first probe before it is answered here. */
const FIRST_PROBE_WAIT_MS = 3_000;
/** A create looked for after a lost answer is one the upstream made at most this long before it was sent (one machine's clock, some slack). */
const CLOCK_SLACK_MS = 5_000;
/** How often the status is announced at most (the outbox changes in bursts). */
const ANNOUNCE_MS = 25;

/**
 * The identifier streams followed on the upstream, and what each change makes the mirror read
 * (ranges and models are the upstream's own: passed through while it answers, not kept).
 */
const FOLLOWED = {
  conversation: '/conversations/stream/identifiers',
  conversationMessage: '/messages/stream/identifiers',
  application: '/applications/stream/identifiers',
  asset: '/assets/stream/identifiers',
  anchor: '/anchors/stream/identifiers',
  activity: '/activities/stream/identifiers',
} as const satisfies Partial<Record<Collection, string>>;
type Followed = keyof typeof FOLLOWED;
/** The collections read whole (messages come with their conversations). */
const SYNCED = ['conversation', 'application', 'asset', 'anchor', 'activity'] as const;
type Synced = (typeof SYNCED)[number];
/** Each synced collection's list and one record of it, on the upstream. */
const READS: Record<Synced, { list: string; one: (id: string) => string }> = {
  conversation: { list: '/conversations?transferables=true', one: (id) => `/conversation/${encodeURIComponent(id)}?transferables=true` },
  application: { list: '/applications', one: (id) => `/applications/${encodeURIComponent(id)}` },
  asset: { list: '/assets?transferables=true', one: (id) => `/asset/${encodeURIComponent(id)}?transferables=true` },
  anchor: { list: '/anchors', one: (id) => `/anchor/${encodeURIComponent(id)}` },
  activity: { list: '/activities', one: (id) => `/activity/${encodeURIComponent(id)}` },
};

const META_IDENTITY = 'mirror:identity';

/** Discovery's paths: answered at once (here, until the first probe says where the upstream stands). */
const DISCOVERY = new Set(['/.well-known/health', '/.well-known/version']);

export interface MirrorSetup {
  options: MirrorOptions;
  service: Service;
  storage: Storage;
  io: UpstreamIo;
  channel: ChangeChannel;
  /**
   * The replayer's lock (Web Locks, see lock.ts); none: a lease in the database (page mode on an
   * origin without Web Locks), or `'alone'`: the only host of its data (Node), which replays at once.
   */
  lock?: HoldLock | 'alone';
  warn(message: string): void;
  /** Time, for tests; default Date.now. */
  now?: () => number;
}

export interface Mirror {
  /** The answer to a request under a base (undefined for anything else, and for the page's permission probe). */
  respond(request: Request): Promise<Response> | undefined;
  status(): Promise<MirrorStatus>;
  /** What the page's Local Network Access step found (see the page API's `connectMirror`). */
  permission(report: { granted: boolean; upstream?: string; reason?: string }): Promise<MirrorStatus>;
  /** The outbox was emptied or rewritten beside the mirror (the reset control): it is read again. */
  outboxReplaced(): Promise<void>;
  /**
   * Stops the background work (following the upstream, probes, retries) until the next request:
   * a Node test server that stopped listening leaves no socket or timer behind.
   */
  pause(): void;
  close(): void;
}

const HOP_HEADERS = ['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', STREAM_HEADER];

/** A queued entry's summary for the status. */
const summary = (entry: OutboxEntry) => {
  const id = aboutOf(entry)?.id;
  return { seq: entry.seq, operation: entry.operation, ...(id ? { id } : {}), ...(entry.state === 'sent' ? { sent: true as const } : {}) };
};

/** A request as it is sent or answered: its ids made here rewritten to the upstream's, and what it is (its route, its queued form). */
interface Rewritten {
  found: ReturnType<typeof findRoute>;
  entry: OutboxEntry;
  request: Request;
  text: string | null;
  /** Its body is JSON (or it has none): it can be queued. */
  parseable: boolean;
  /** Its path under the base, rewritten. */
  path: string;
  changed: boolean;
}

export function createMirror(setup: MirrorSetup): Mirror {
  const { service, storage, io, channel, options } = setup;
  const now = setup.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const upstream = new Upstream(io, timeoutMs);
  const auto = options.upstream === 'auto';
  if (!auto && !/^https?:\/\/[^/]/.test(String(options.upstream))) {
    throw new Error(`mirror.upstream must be a Pieces OS base URL (http://localhost:39300) or 'auto', not ${JSON.stringify(options.upstream)}.`);
  }
  if (!auto && io.own?.some((mine) => sameOrigin(mine, options.upstream))) {
    throw new Error(`mirror.upstream ${options.upstream} is this service's own address: it cannot mirror itself.`);
  }
  const candidates = auto ? discoveryCandidates(io.own) : [trimBase(options.upstream)];
  const copilot = io.WebSocket ? new CopilotBridge((url) => new io.WebSocket!(url)) : null;
  const self = randomUUID();

  let state: MirrorState = 'down';
  let base: string | null = auto ? null : candidates[0]!;
  let lastError: string | null = null;
  let blocked = false;
  /** Background work stopped until the next request (see Mirror.pause). */
  let paused = false;
  /** Whether this host replays (holds the lock); the others follow the replayer's announcements. */
  let replayer = false;
  let closed = false;

  let entries: OutboxEntry[] = [];
  let upstreamOf = new Map<string, string>();
  /** Whether the outbox changed since it was last read (queued here or by another host): then it may hold entries. */
  let dirty = true;

  // The first answer waits for the first probe (a few ms when the upstream answers or refuses).
  let known = false;
  let markKnown!: () => void;
  const firstProbe = new Promise<void>((resolve) => (markKnown = resolve));
  const setKnown = () => {
    known = true;
    markKnown();
  };

  // Status, announced (coalesced) to every host of the origin and to watchService.
  let announceTimer: ReturnType<typeof setTimeout> | undefined;
  const snapshot = (): MirrorStatus => ({
    state,
    upstream: base,
    outbox: entries.filter((e) => e.state !== 'set-aside').map(summary),
    setAside: entries.filter((e) => e.state === 'set-aside').map((e): SetAsideOperation => ({ operation: e.operation, ...e.refused! })),
    lastError,
  });
  const announce = () => {
    if (!replayer || announceTimer !== undefined || closed) return;
    announceTimer = setTimeout(() => {
      announceTimer = undefined;
      channel.post({ type: 'mirror', status: snapshot() });
    }, ANNOUNCE_MS);
  };
  const setState = (next: MirrorState, error: string | null = lastError) => {
    const changed = next !== state || error !== lastError;
    state = next;
    lastError = error;
    if (changed) announce();
  };

  // ---- the other hosts of the origin --------------------------------------------------------
  const listener = channel.open();
  listener.onmessage = ({ data }) => {
    const message = data as WorkerMessage & { from?: string };
    if (!message || typeof message !== 'object' || message.from === self) return;
    if (message.type === 'mirror' && !replayer) {
      state = message.status.state;
      base = message.status.upstream;
      lastError = message.status.lastError;
      setKnown();
      dirty = true;
      void reload();
    } else if (message.type === 'mirror-queued' && replayer) {
      dirty = true;
      scheduleReload();
    } else if (message.type === 'mirror-ask' && replayer) {
      announce();
      if (message.failed && state === 'up') void probe();
    }
  };
  const tell = (message: WorkerMessage) => channel.post({ ...message, from: self } as unknown as WorkerMessage);

  let reloading: Promise<void> | null = null;
  /**
   * Reads the outbox and the id map again (coalesced: one read at a time, the last one after the
   * last change). `appended`: only the entries queued since (the replayer's own copy is otherwise
   * current: only it removes or changes entries).
   */
  function reload(appended = false): Promise<void> {
    if (reloading) return reloading.then(() => (dirty ? reload(appended) : undefined));
    dirty = false;
    const after = appended ? entries.at(-1)?.seq : undefined;
    reloading = Promise.all([storage.outboxEntries(after), after === undefined ? storage.idPairs() : null])
      .then(([outbox, pairs]) => {
        entries = after === undefined ? outbox : [...entries, ...outbox.filter((e) => e.seq > after)];
        if (pairs) upstreamOf = new Map(pairs.map((pair) => [pair.local, pair.upstream]));
      })
      .catch((error: unknown) => {
        dirty = true;
        lastError = `reading the outbox failed: ${(error as Error)?.message ?? error}`;
      })
      .finally(() => {
        reloading = null;
        announce();
      });
    return reloading;
  }
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;
  /** Reads the outbox soon (writes queued in a burst are read once), then lets the replayer act on it. */
  function scheduleReload() {
    if (reloadTimer !== undefined) return;
    reloadTimer = setTimeout(() => {
      reloadTimer = undefined;
      void reload(replayer).then(() => {
        if (!replayer) return;
        if (state === 'up' || state === 'draining') void drain();
        else needUpstream('outbox');
      });
    }, ANNOUNCE_MS);
  }
  /** Whether requests must be answered here because operations wait (or may wait: not read since queued). */
  const waiting = () => dirty || entries.some((e) => e.state !== 'set-aside');

  // ---- probing -----------------------------------------------------------------------------
  let probing = false;
  let probeTimer: ReturnType<typeof setTimeout> | undefined;
  let lastProbe = 0;
  /** Failed probes in a row: the wait after the next one doubles from PROBE_FIRST_MS to PROBE_MAX_MS. */
  let failures = 0;
  const backoff = () => Math.min(PROBE_FIRST_MS * 2 ** Math.max(0, failures - 1), PROBE_MAX_MS);
  /** A request came since the last probe started: the upstream is needed now. */
  let requested = false;
  let socketSeen = 0;

  /** Something needs the upstream while it is away: a probe is scheduled, within the limits. */
  function needUpstream(reason: 'request' | 'socket' | 'outbox') {
    if (reason === 'request') requested = true;
    if (reason === 'socket') socketSeen = now();
    if (!replayer || state !== 'down' || blocked || closed) return;
    schedule();
  }

  /**
   * The next probe: after the backoff (1 s doubling to 30 s) while requests or queued writes
   * need the upstream; every PROBE_IDLE_MS when only an open socket does (at most 2 a
   * minute); none when nothing does. A need that comes sooner brings a later probe forward.
   */
  let probeDue = Infinity;
  function schedule() {
    if (probing || closed || blocked || paused || !replayer || state !== 'down') return;
    const socket = now() - socketSeen < SOCKET_SEEN_MS;
    let gap: number;
    if (requested || waiting()) gap = backoff();
    else if (socket) gap = Math.max(backoff(), PROBE_IDLE_MS);
    else return;
    const due = Math.max(now(), lastProbe + gap);
    if (probeTimer !== undefined && probeDue <= due) return;
    clearTimeout(probeTimer);
    probeDue = due;
    probeTimer = setTimeout(() => {
      probeTimer = undefined;
      probeDue = Infinity;
      void probe();
    }, due - now());
  }

  /** The upstream went away (or never answered): answers come from here, probes follow. */
  function wentDown(error: unknown) {
    stopFollowing();
    unserved.clear();
    failures++;
    lastProbe = now();
    const message = error instanceof Error ? error.message : String(error);
    if (!blocked) setState('down', message);
    setKnown();
    schedule();
  }

  async function probe(): Promise<void> {
    if (probing || closed || blocked || paused) return;
    probing = true;
    lastProbe = now();
    requested = false;
    clearTimeout(probeTimer);
    probeTimer = undefined;
    probeDue = Infinity;
    try {
      const found = auto ? await upstream.discover(base ? [base, ...candidates.filter((c) => c !== base)] : candidates) : (await upstream.healthy(base!)) ? base : null;
      if (!found) throw new UpstreamError('network', auto ? 'no Pieces OS answers on localhost (39300–39333, 1000, 5323)' : `${base} does not answer its health check`);
      base = found;
      await cameUp(found);
      failures = 0;
    } catch (error) {
      probing = false;
      wentDown(error);
    } finally {
      probing = false;
      setKnown();
    }
  }

  /** The upstream answers: check who it is, replay the outbox, then follow it. */
  async function cameUp(found: string) {
    const identity = await upstream.identity(found);
    dirty = true;
    await reload();
    const previous = await storage.getMeta<string>(META_IDENTITY);
    if (previous !== identity) await adopt(identity, previous !== undefined);
    lastError = null;
    await drain();
    if (state === 'down') throw new UpstreamError('network', lastError ?? 'the upstream went away while the outbox was replayed');
  }

  /**
   * A Pieces OS of another identity (or the first one): what was mirrored from the previous
   * one is dropped, the records created here and still queued are kept, and the outbox is
   * replayed to it once (an entry sent to the previous one is sent again, not looked for).
   */
  async function adopt(identity: string, replaced: boolean) {
    // What the queue created here is kept by the replace itself (read in its transaction).
    const changes = await storage.applyMirror({
      clearIdMap: true,
      replace: { kinds: [...SYNCED], keep: [] },
      outbox: { put: replaced ? entries.filter((e) => e.state === 'sent').map((e) => ({ ...e, state: 'queued' as const })) : [] },
      meta: { [META_IDENTITY]: identity },
    });
    upstreamOf = new Map();
    unserved.clear();
    service.announce(changes);
    if (replaced) setup.warn(`the mirrored Pieces OS is another one now (identity ${identity}): the records mirrored from the previous one were dropped, and the queued operations are replayed to this one.`);
    dirty = true;
    await reload();
  }

  // ---- replaying the outbox ------------------------------------------------------------------
  let draining: Promise<void> | null = null;
  /** A re-keying in progress (see complete). */
  let remapping: Promise<void> | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const warnedRecords = new Set<string>();

  function drain(): Promise<void> {
    return (draining ??= replay().finally(() => (draining = null)));
  }

  async function replay(): Promise<void> {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    for (;;) {
      if (closed || blocked || paused || !replayer || !holds()) return;
      if (dirty) await reload();
      const queued = entries.filter((e) => e.state !== 'set-aside');
      if (!queued.length) {
        setState('up', null);
        startFollowing();
        return;
      }
      stopFollowing();
      setState('draining');
      const useless = collapse(entries);
      if (useless.length) {
        await write({ outbox: { remove: useless } });
        entries = entries.filter((e) => !useless.includes(e.seq));
        announce();
        continue;
      }
      const entry = queued[0]!;
      const cause = firstBlocked(entry);
      if (cause) {
        await setAside(entry, cause.refused!.status, `follows the refused ${cause.operation} on ${cause.refused!.id}: ${cause.refused!.message}`, false);
        continue;
      }
      try {
        await send(entry);
        failures = 0;
      } catch (error) {
        if (error instanceof UpstreamError && error.kind !== 'status') {
          // Away: the probe that found it up reports it (and schedules the next), or this does.
          if (probing) setState('down', error.message);
          else wentDown(error);
          return;
        }
        // There, but failing (5xx, 429), or the local write failed: try again later (its Retry-After, or the backoff).
        failures++;
        setState('draining', (error as Error)?.message ?? String(error));
        const wait = (error instanceof UpstreamError ? error.retryAfterMs : undefined) ?? backoff();
        retryTimer = setTimeout(() => void drain(), wait);
        return;
      }
    }
  }

  /** The set-aside entry an entry depends on (it is on a record that one made unreachable), if any. */
  function firstBlocked(entry: OutboxEntry): OutboxEntry | undefined {
    const out = unreachable(entries);
    if (!out.size) return undefined;
    for (const id of touches(entry)) if (out.has(id)) return out.get(id);
    return undefined;
  }

  /** Writes a batch and announces its changes. */
  async function write(batch: MirrorBatch): Promise<Change[]> {
    const changes = await storage.applyMirror(batch);
    service.announce(changes);
    return changes;
  }

  const replace = (entry: OutboxEntry) => {
    entries = entries.map((e) => (e.seq === entry.seq ? entry : e));
    announce();
  };

  /** Sets an entry aside; a refusal of the upstream's own (not one that follows another) is told in the console, once per record. */
  async function setAside(entry: OutboxEntry, status: number, message: string, refusal = true) {
    const id = aboutOf(entry)?.id ?? entry.operation;
    const next: OutboxEntry = { ...entry, state: 'set-aside', refused: { status, message, id } };
    await write({ outbox: { put: [next] } });
    replace(next);
    if (refusal && !warnedRecords.has(id)) {
      warnedRecords.add(id);
      setup.warn(`the mirrored Pieces OS refused ${entry.operation} on ${id} (${status}: ${message}); it and the later operations on that record are set aside (see mirrorStatus().setAside).`);
    }
  }

  /** Sends one entry and records its outcome (or throws an UpstreamError to stop the replay). */
  async function send(entry: OutboxEntry): Promise<void> {
    const spec = specOf(entry);
    const call = rewrite(entry, upstreamOf);
    // Marked by this replay with the entry before it (see complete), and not sent yet: nothing to look for.
    const unsent = markedHere.delete(entry.seq);
    if (entry.state === 'sent' && !unsent && spec.creates && !spec.idempotent && spec.find) {
      const found = await look(entry, call);
      if (found) {
        await complete(entry, found);
        return;
      }
    }
    if (entry.state !== 'sent') {
      // Marked before it goes: after a crash or a lost answer, a create is looked for before it is sent again.
      const sent: OutboxEntry = { ...entry, state: 'sent', sentAt: new Date(now()).toISOString() };
      await write({ outbox: { put: [sent] } });
      replace(sent);
      entry = sent;
    }
    const response = await upstream.call(`${base}${pathOf(entry, call)}`, {
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
      await complete(entry, spec.creates && response.ok ? spec.creates(answer) : []);
      return;
    }
    const message = (await response.text().catch(() => '')).slice(0, 500) || `HTTP ${response.status}`;
    await setAside(entry, response.status, message);
  }

  /** A create whose answer was lost, looked for on the upstream among the records the mirror did not know. */
  async function look(entry: OutboxEntry, call: QueuedCall): Promise<CreatedId[] | null> {
    const spec = specOf(entry);
    let answer: unknown;
    try {
      answer = await upstream.json(`${base}${spec.find!.list(call)}`);
    } catch (error) {
      if (error instanceof UpstreamError && error.status !== undefined && !isTemporary(error.status)) return null;
      throw error;
    }
    // Records another queued create already became are not this one; nor are records made before it was sent.
    const taken = new Set(upstreamOf.values());
    const since = Date.parse(entry.sentAt ?? entry.at) - CLOCK_SLACK_MS;
    const kind = spec.about?.kind;
    for (const candidate of spec.find!.items(answer)) {
      const id = (candidate as { id?: unknown })?.id;
      if (typeof id !== 'string' || taken.has(id)) continue;
      const created = createdTime(candidate);
      if (created !== undefined && created < since) continue;
      if (spec.find!.matches(call, candidate)) {
        // The list may give a conversation without its messages' references: read it whole.
        const whole = kind === 'conversation' ? await upstream.json(`${base}/conversation/${encodeURIComponent(id)}?transferables=true`) : candidate;
        return spec.creates!(whole);
      }
    }
    return null;
  }

  /** Entries this replay marked sent in advance (with the completion of the one before), not sent yet. */
  const markedHere = new Set<number>();

  /**
   * An entry the upstream took: removed, with the ids it gave to what it created (re-keyed here).
   * The next entry to send is marked sent in the same transaction: one write per entry.
   */
  async function complete(entry: OutboxEntry, given: CreatedId[]) {
    const after = dirty ? undefined : entries.find((e) => e.seq > entry.seq && e.state !== 'set-aside');
    const next = after && after.state === 'queued' && !firstBlocked(after) && !collapse(entries.filter((e) => e.seq !== entry.seq)).length ? after : undefined;
    const marked: OutboxEntry | undefined = next && { ...next, state: 'sent', sentAt: new Date(now()).toISOString() };
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
    remapping = gate;
    try {
      await write({ outbox: { remove: [entry.seq], ...(marked ? { put: [marked] } : {}) }, rekey: pairs });
      for (const pair of pairs) upstreamOf.set(pair.local, pair.upstream);
    } finally {
      release();
      if (remapping === gate) remapping = null;
    }
    entries = entries.filter((e) => e.seq !== entry.seq);
    if (marked) {
      markedHere.add(marked.seq);
      replace(marked);
    }
    announce();
  }

  // ---- following the upstream while up --------------------------------------------------------
  const sockets = new Map<Followed, WebSocketLike>();
  /** Streams the upstream refused (closed before their first frame): not opened again until it goes away or is another one. */
  const unserved = new Set<Followed>();
  /** What following does next, in order, one at a time: read a collection whole, or one record. */
  const refreshing = new Map<string, { kind: Followed; id: string; deleted: boolean } | { sync: Synced }>();
  let refreshRun: Promise<void> | null = null;
  /** Records a write taken by the upstream put here (by id, in the order kept): a read of a whole collection begun before keeps them. */
  const recent = new Map<string, number>();
  let tick = 0;

  function startFollowing() {
    if (paused) return;
    if (!io.WebSocket || !base || !replayer || closed) {
      if (!sockets.size && base && replayer) for (const collection of SYNCED) queueSync(collection);
      return;
    }
    for (const collection of Object.keys(FOLLOWED) as Followed[]) {
      if (sockets.has(collection)) continue;
      if (unserved.has(collection)) {
        // No stream of it there: read whole once, as without sockets.
        if (collection !== 'conversationMessage') queueSync(collection);
        continue;
      }
      const socket = new io.WebSocket(base.replace(/^http/, 'ws') + FOLLOWED[collection]);
      sockets.set(collection, socket);
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
          if (collection !== 'conversationMessage') queueSync(collection);
          return;
        }
        for (const item of frame.iterable ?? []) {
          const id = (item[collection] as { id?: unknown } | undefined)?.id;
          if (typeof id === 'string') queueRefresh(collection, id, item.deleted === true);
        }
      };
      socket.onclose = () => {
        if (sockets.get(collection) !== socket) return;
        sockets.delete(collection);
        // Closed before its first frame: a stream this upstream may not serve (not opened again unless it went away meanwhile).
        if (first) unserved.add(collection);
        // The upstream closed a stream: it may have gone away.
        if (state === 'up' && !closed) void probe();
      };
      socket.onerror = () => {};
    }
  }

  function stopFollowing() {
    for (const socket of sockets.values()) {
      socket.onclose = null;
      try {
        socket.close();
      } catch {
        // Closing a socket still connecting may throw in some engines.
      }
    }
    sockets.clear();
  }

  /**
   * The upstream's whole collection, made the local copy's; kept: what was created here and is not
   * there yet (the replace keeps it), and what a write taken by the upstream put here since the read began.
   */
  async function sync(collection: Synced): Promise<void> {
    const since = tick;
    const fresh = () => [...recent].filter(([, at]) => at > since).map(([id]) => id);
    try {
      const answer = await upstream.json(`${base}${READS[collection].list}`);
      const replace = { kinds: [collection], keep: fresh() };
      if (collection === 'conversation') await write({ put: { conversations: records(answer, conversationRecord) }, replace });
      else if (collection === 'application') await write({ put: { applications: records(answer, applicationRecord) }, replace });
      else if (collection === 'asset') await write({ put: { assets: records(answer, assetRecord) }, replace });
      else if (collection === 'anchor') await write({ put: { anchors: records(answer, anchorRecord) }, replace });
      else await write({ put: { activities: records(answer, activityRecord) }, replace });
      // Older than this read: no longer needed.
      for (const [id, at] of recent) if (at <= since) recent.delete(id);
    } catch (error) {
      lastError = `reading the upstream's ${collection}s failed: ${(error as Error)?.message ?? error}`;
      announce();
    }
  }

  function queueRefresh(kind: Followed, id: string, deleted: boolean) {
    const key = `${kind}:${id}`;
    // Moved to the end: the latest news of a record is read after what came before it.
    refreshing.delete(key);
    refreshing.set(key, { kind, id, deleted });
    follow();
  }

  function queueSync(collection: Synced) {
    refreshing.set(`sync:${collection}`, { sync: collection });
    follow();
  }

  function follow() {
    refreshRun ??= (async () => {
      while (refreshing.size && state === 'up' && !closed && !paused && base) {
        const [key, item] = refreshing.entries().next().value!;
        refreshing.delete(key);
        await ('sync' in item ? sync(item.sync) : refresh(item.kind, item.id, item.deleted)).catch((error: unknown) => {
          lastError = `following the upstream failed: ${(error as Error)?.message ?? error}`;
        });
      }
    })().finally(() => (refreshRun = null));
  }

  /** Notes records a write taken by the upstream put here (see `recent`). */
  const kept = (ids: Array<string | undefined>) => {
    for (const id of ids) if (id) recent.set(id, ++tick);
  };

  /** One record as the upstream has it now (gone when it answers 404 or the stream said deleted). */
  async function refresh(kind: Followed, id: string, deleted: boolean) {
    const read = async (path: string) => {
      const response = await upstream.call(`${base}${path}`);
      if (response.status === 404) return null;
      if (!response.ok) throw new UpstreamError('status', `${path} answered ${response.status}`, response.status);
      return response.json() as Promise<unknown>;
    };
    const remove = (k: Followed) => write({ remove: [{ kind: k, id }] });
    if (kind === 'conversationMessage') {
      // A message is read with its conversation (its place in it comes from there).
      const owner = deleted ? (await storage.getMessage(id))?.conversation : ((await read(`/message/${encodeURIComponent(id)}`)) as { conversation?: { id?: string } } | null)?.conversation?.id;
      if (owner) queueRefresh('conversation', owner, false);
      else if (deleted) await remove('conversationMessage');
      return;
    }
    if (deleted) {
      await remove(kind);
      return;
    }
    const wire = await read(READS[kind].one(id));
    if (wire === null) {
      await remove(kind);
      return;
    }
    await put(kind, wire);
  }

  /** Keeps a record as the upstream gave it (one of a synced collection). */
  async function put(kind: Synced, wire: unknown) {
    if (kind === 'conversation') {
      const record = conversationRecord(wire);
      if (record) await write({ put: { conversations: [record] } });
    } else if (kind === 'application') {
      const record = applicationRecord(wire);
      if (record) await write({ put: { applications: [record] } });
    } else if (kind === 'asset') {
      const record = assetRecord(wire);
      if (record) await write({ put: { assets: [record] } });
    } else if (kind === 'anchor') {
      const record = anchorRecord(wire);
      if (record) await write({ put: { anchors: [record] } });
    } else {
      const record = activityRecord(wire);
      if (record) await write({ put: { activities: [record] } });
    }
  }

  // ---- answering -----------------------------------------------------------------------------
  /** A request's ids created here rewritten to the upstream's (path parameters, declared body fields, the application header). */
  function rewriteIds(request: Request, url: URL, path: string, text: string | null): Rewritten {
    const found = findRoute(request.method, path);
    const header = request.headers.get('application') ?? request.headers.get('x-application-id') ?? undefined;
    let body: unknown;
    try {
      body = text && text.trim() ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const parseable = !text || !text.trim() || body !== undefined;
    const entry = {
      seq: 0,
      operation: found?.operation.name ?? '',
      params: found?.params ?? {},
      ...(body === undefined ? {} : { body }),
      ...(header ? { application: header } : {}),
      created: [],
      state: 'queued',
      at: '',
    } satisfies OutboxEntry;
    if (!upstreamOf.size || !found) return { found, entry, request, text, parseable, path, changed: false };
    const call = rewrite(entry, upstreamOf);
    const rewritten: OutboxEntry = { ...entry, params: call.params, ...(call.body === undefined ? {} : { body: call.body }), ...(call.application ? { application: call.application } : {}) };
    const changedPath = found.operation.mirror ? pathOf(entry, { params: call.params }) : found.operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(call.params[name] ?? ''));
    const newText = call.body !== undefined && JSON.stringify(call.body) !== JSON.stringify(body) ? JSON.stringify(call.body) : text;
    if (changedPath === path && newText === text && call.application === header) return { found, entry, request, text, parseable, path, changed: false };
    const headers = new Headers(request.headers);
    if (call.application && headers.has('application')) headers.set('application', call.application);
    if (call.application && headers.has('x-application-id')) headers.set('x-application-id', call.application);
    const prefix = url.origin + url.pathname.slice(0, url.pathname.length - path.length);
    const init: RequestInit = { method: request.method, headers, ...(newText ? { body: newText } : {}) };
    return { found, entry: rewritten, request: new Request(prefix + changedPath + url.search, init), text: newText, parseable, path: changedPath, changed: true };
  }

  /** A request that needs no rewriting, as rewriteIds describes one. */
  function asIs(request: Request, path: string): Rewritten {
    const entry: OutboxEntry = { seq: 0, operation: '', params: {}, created: [], state: 'queued', at: '' };
    return { found: undefined, entry, request, text: null, parseable: true, path, changed: false };
  }

  /** The answer from here; a write the route table declares is queued with it. */
  async function answerHere(request: Request, text: string | null, context: Rewritten, url: URL, sent: boolean): Promise<Response> {
    const local = text === null ? request : new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) });
    const operation = context.found?.operation;
    // Not a write, a body that cannot be queued, or the upstream's business (answered here, not queued).
    if (!operation?.mirror || operation.mirror.local || !context.parseable) return service.respond(local)!;
    const input: OutboxInput = {
      operation: operation.name,
      params: context.entry.params,
      ...(url.search ? { query: url.search.slice(1) } : {}),
      ...(context.entry.body === undefined ? {} : { body: context.entry.body }),
      ...(context.entry.application ? { application: context.entry.application } : {}),
      created: [],
      at: new Date(now()).toISOString(),
      ...(sent ? { state: 'sent' as const } : {}),
    };
    const queueing = queueingStorage(storage, input);
    const response = await service.respond(local, { storage: queueing.storage })!;
    if (queueing.queued()) {
      dirty = true;
      if (!replayer) tell({ type: 'mirror-queued' });
      scheduleReload();
    }
    return response;
  }

  /** The upstream's answer to the request, or null when it gave none (then it is away). */
  async function passThrough(request: Request, text: string | null, path: string, url: URL): Promise<Response | null> {
    let headers = request.headers;
    if (HOP_HEADERS.some((name) => headers.has(name))) {
      headers = new Headers(headers);
      for (const name of HOP_HEADERS) headers.delete(name);
    }
    let response: Response;
    try {
      response = await upstream.request(`${base}${path}${url.search}`, {
        method: request.method,
        headers,
        ...(text ? { body: text } : {}),
        redirect: 'manual',
        cache: 'no-store',
      });
    } catch (error) {
      if (replayer) wentDown(error);
      else tell({ type: 'mirror-ask', failed: (error as Error)?.message ?? String(error) });
      return null;
    }
    // Node's fetch decodes compressed bodies: the encoding no longer applies.
    if (response.headers.has('content-encoding')) {
      const cleaned = new Headers(response.headers);
      cleaned.delete('content-encoding');
      cleaned.delete('content-length');
      response = new Response(response.body, { status: response.status, statusText: response.statusText, headers: cleaned });
    }
    return response;
  }

  let keeping: Promise<void> = Promise.resolve();
  /**
   * A write the upstream took is kept here too (in order, after the answer went out): from its
   * answer when that is a record; else it is made here as well. The local copy then has it even
   * if the upstream goes away next (an answer given here waits for what is being kept), and the
   * streams' own news of it changes nothing more.
   */
  function keep(request: Request, text: string | null, context: Rewritten, response: Response) {
    const spec = context.found?.operation.mirror;
    if (!spec || spec.local || !response.ok) return;
    const copy = response.clone();
    keeping = keeping.then(async () => {
      let answer: unknown;
      try {
        const body = await copy.text();
        answer = body ? JSON.parse(body) : undefined;
      } catch {
        answer = undefined;
      }
      const about = aboutOf(context.entry);
      const record = (value: unknown) => (typeof value === 'object' && value !== null ? (value as Record<string, any>) : {});
      /** A record the write changed, read again from the upstream now (what is answered here next waits for it). */
      const reread = async (kind: Synced, id: string) => {
        await refresh(kind, id, false);
        kept([id]);
      };
      const keepConversation = async (wire: unknown) => {
        const made = conversationRecord(wire);
        // Without its messages' references (transferables=false), it is read whole.
        if (made && conversationMessagesListed(wire)) {
          await write({ put: { conversations: [made] } });
          kept([made.conversation.id]);
        } else if (made) await reread('conversation', made.conversation.id);
      };
      switch (spec.answers) {
        case 'Conversation':
          return keepConversation(answer);
        case 'ConversationsCreateFromAssetOutput':
          return keepConversation(record(record(answer).conversation).reference);
        case 'ConversationMessage': {
          const message = record(answer);
          const owner = record(message.conversation).id;
          if (typeof message.id === 'string' && typeof owner === 'string') {
            await write({ put: { messages: [{ id: message.id, conversation: owner, json: storedJson(message) }] } });
            kept([owner]);
          }
          return;
        }
        case 'Application':
        case 'Context': {
          const application = applicationRecord(spec.answers === 'Context' ? record(answer).application : answer);
          if (application) {
            await write({ put: { applications: [application] } });
            kept([application.id]);
          }
          return;
        }
        case 'Session': {
          const session = record(answer);
          if (typeof session.id !== 'string' || !session.opened) return;
          const application = context.entry.application;
          await write({ put: { sessions: [{ id: session.id, opened: session.opened, ...(session.closed ? { closed: session.closed } : {}), ...(application ? { application } : {}) }] } });
          return;
        }
        case 'Asset': {
          const asset = assetRecord(answer);
          // Without its formats' values (transferables=false), it is read whole.
          if (asset && assetValuesListed(answer)) {
            await write({ put: { assets: [asset] } });
            kept([asset.record.id]);
          } else if (asset) await reread('asset', asset.record.id);
          return;
        }
        case 'Format': {
          // The format's asset changed with it: read whole.
          const asset = typeof record(answer).asset === 'string' ? record(answer).asset : record(record(answer).asset).id;
          if (typeof asset === 'string') await reread('asset', asset);
          return;
        }
        case 'Annotation': {
          const annotation = annotationRecord(answer);
          if (annotation?.asset) await reread('asset', annotation.asset.id);
          else if (annotation) await write({ put: { annotations: [annotation] } });
          return;
        }
        case 'Anchor': {
          const anchor = anchorRecord(answer);
          if (!anchor) return;
          await write({ put: { anchors: [anchor] } });
          kept([anchor.id]);
          // The conversation it was made for lists it now.
          const conversation = record(context.entry.body).conversation;
          if (typeof conversation === 'string') await reread('conversation', conversation);
          return;
        }
      }
      if (spec.deletes && about) {
        // What changed with it is read again: an annotation's asset, the conversations that listed an anchor.
        const owners: Array<[Synced, string]> =
          about.kind === 'annotation'
            ? [(await storage.getAnnotation(about.id))?.asset?.id].filter((id): id is string => !!id).map((id) => ['asset', id])
            : about.kind === 'anchor'
              ? anchorConversationIds(await storage.getAnchor(about.id)).map((id) => ['conversation', id])
              : [];
        await write({ remove: [{ kind: about.kind, id: about.id }] });
        for (const [kind, id] of owners) await reread(kind, id);
      } else if (about?.kind === 'asset') {
        // An asset changed without an answer that shows it (a tag or website put on or taken off): read it again.
        await reread('asset', about.id);
      } else {
        // No record in the answer (an association, a usage event): the write is made here as well.
        const local = new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) });
        await service.respond(local);
      }
    }).catch(() => {
      // The local copy catches up from the upstream's streams.
    });
  }

  async function handle(request: Request, url: URL, path: string): Promise<Response> {
    if (paused) {
      // Used again: where things stand is looked at once.
      paused = false;
      if (replayer) void probe();
    }
    const kind = request.headers.get(STREAM_HEADER);
    if (kind === 'handshake') {
      // The service's sockets are fed from the local change log, which follows the upstream.
      needUpstream('socket');
      return service.respond(request)!;
    }
    // Discovery never waits (a client's health probe on a cold worker gives up after 100 ms); the rest waits for the first probe.
    if (!known && !DISCOVERY.has(path)) await Promise.race([firstProbe, new Promise((resolve) => setTimeout(resolve, FIRST_PROBE_WAIT_MS))]);
    const up = state === 'up' && !waiting() && base !== null && !blocked;
    if (kind === 'qgpt') {
      if (up && copilot) {
        const input = await request.text();
        try {
          return await copilot.answer(`${base!.replace(/^http/, 'ws')}${path}`, input);
        } catch {
          return service.respond(new Request(request.url, { method: 'POST', headers: request.headers, body: input }))!;
        }
      }
      return service.respond(request)!;
    }
    needUpstream('request');
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const text = hasBody ? await request.text() : null;
    if (remapping) await remapping;
    // A read when no id was ever re-keyed goes as it is (the common case: no route to look up).
    const context = !hasBody && !upstreamOf.size ? asIs(request, path) : rewriteIds(request, url, path, text);
    if (up) {
      const answer = await passThrough(context.request, context.text, context.path, url);
      if (answer) {
        keep(context.request, context.text, context, answer);
        return answer;
      }
      // It went away with the request: answered here; a write is queued as sent (it may have been done there).
      await keeping;
      return answerHere(context.request, context.text, context, url, true);
    }
    // What the upstream took last is in the local copy before anything is answered from it.
    await keeping;
    const answer = await answerHere(context.request, context.text, context, url, false);
    if (answer.status !== 404 || !context.found) return answer;
    // An id made here may have been re-keyed a moment ago (by this host's replay, or another tab's): read the map again.
    dirty = true;
    await reload();
    const again = rewriteIds(request, url, path, text);
    if (!again.changed || (again.path === context.path && again.text === context.text)) return answer;
    await answer.body?.cancel().catch(() => {});
    return answerHere(again.request, again.text, again, url, false);
  }

  function respond(request: Request): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = service.pathUnderBase(url);
    if (path === null) return undefined;
    // The page's own first request to the upstream (the Local Network Access step) goes to the network.
    if (url.searchParams.has(PERMISSION_PROBE)) return undefined;
    return handle(request, url, path);
  }

  // ---- starting ------------------------------------------------------------------------------
  let stopReplaying: () => void = () => {};
  let holds: () => boolean = () => true;
  /** This host replays from now on (it holds the lock): one probe says where things stand; then only needs probe. */
  const becomeReplayer = async (lost: Promise<void>, valid: () => boolean) => {
    if (closed) return;
    replayer = true;
    holds = valid;
    void lost.then(resign);
    await reload();
    void probe();
    await new Promise<void>((resolve) => (stopReplaying = resolve));
  };
  /** The lock was taken away (a lapsed lease): another host replays now. */
  function resign() {
    replayer = false;
    stopFollowing();
    clearTimeout(probeTimer);
    probeTimer = undefined;
    clearTimeout(retryTimer);
  }
  void reload().then(() => {
    if (closed) return;
    if (setup.lock === 'alone') void becomeReplayer(new Promise(() => {}), () => true);
    else (setup.lock ?? leaseLock(storage))(REPLAYER_LOCK, becomeReplayer);
    // A host that does not replay asks the replayer for its status (known once it answers, or after a second).
    tell({ type: 'mirror-ask' });
    setTimeout(() => setKnown(), 1_000);
  });

  return {
    respond,
    async status() {
      if (dirty) await reload();
      return snapshot();
    },
    async permission(report) {
      if (!report.granted) {
        blocked = true;
        stopFollowing();
        clearTimeout(probeTimer);
        probeTimer = undefined;
        state = 'blocked';
        lastError = report.reason ?? 'the browser refused this page access to the local network';
        announce();
      } else {
        if (report.upstream && auto) base = trimBase(report.upstream);
        const wasBlocked = blocked;
        blocked = false;
        if (wasBlocked) setState('down', null);
        // Away (or never reached): look now. A drain waiting for its retry keeps waiting.
        if (replayer && state === 'down') await probe();
      }
      return snapshot();
    },
    async outboxReplaced() {
      dirty = true;
      markedHere.clear();
      await reload();
      announce();
    },
    pause() {
      paused = true;
      stopFollowing();
      clearTimeout(probeTimer);
      probeTimer = undefined;
      probeDue = Infinity;
      clearTimeout(retryTimer);
      clearTimeout(reloadTimer);
      reloadTimer = undefined;
    },
    close() {
      closed = true;
      stopFollowing();
      clearTimeout(probeTimer);
      clearTimeout(retryTimer);
      clearTimeout(announceTimer);
      clearTimeout(reloadTimer);
      listener.close();
      stopReplaying();
    },
  };
}
