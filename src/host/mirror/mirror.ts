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
 *
 * This module puts the parts together, each given what it needs: the state, owned by the machine
 * (machine.ts); the one loop that probes, replays and follows (loop.ts) and the parts it calls:
 * reaching the upstream (connection.ts), the replayer (replayer.ts), following the upstream
 * (follower.ts); answering requests (pass-through.ts), with the ids of queued requests rewritten
 * (rewrite-request.ts) and what the upstream took kept (keep.ts); and it holds the replayer's
 * lock and hears the other hosts of the origin.
 */
import type { MirrorOptions } from '../../core/options.js';
import type { MirrorStatus } from '../../core/mirror-spec.js';
import type { Service } from '../../core/service.js';
import type { WorkerMessage } from '../../core/stream-wire.js';
import type { Storage } from '../../storage/storage.js';
import type { ChangeChannel } from '../channel.js';
import { Connection } from './connection.js';
import { CopilotBridge } from './copilot.js';
import { Follower } from './follower.js';
import { Keeper } from './keep.js';
import { leaseLock, type HoldLock } from './lock.js';
import { MirrorLoop, PROBE_FIRST_MS } from './loop.js';
import { MirrorMachine } from './machine.js';
import { PassThrough } from './pass-through.js';
import { Replayer } from './replayer.js';
import { discoveryCandidates, sameOrigin, trimBase, Upstream, type UpstreamIo } from './upstream.js';
import { writer } from './write.js';

export { PROBE_IDLE_MS } from './loop.js';

/** The Web Lock the replayer holds. */
export const REPLAYER_LOCK = 'pieces-os-worker:mirror';

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

export function createMirror(setup: MirrorSetup): Mirror {
  const { io, options } = setup;
  const auto = options.upstream === 'auto';
  if (!auto && !/^https?:\/\/[^/]/.test(String(options.upstream))) {
    throw new Error(
      `mirror.upstream must be a Pieces OS base URL (http://localhost:39300) or 'auto', not ${JSON.stringify(options.upstream)}.`,
    );
  }
  if (options.retryMaxMs !== undefined && !(options.retryMaxMs >= PROBE_FIRST_MS)) {
    throw new Error(
      `mirror.retryMaxMs must be a number of milliseconds, ${PROBE_FIRST_MS} or more, not ${JSON.stringify(options.retryMaxMs)}.`,
    );
  }
  if (!auto && io.own?.some((mine) => sameOrigin(mine, options.upstream))) {
    throw new Error(`mirror.upstream ${options.upstream} is this service's own address: it cannot mirror itself.`);
  }
  const candidates = auto ? discoveryCandidates(io.own) : [trimBase(options.upstream)];
  const { service, storage, channel, warn } = setup;
  const now = setup.now ?? Date.now;
  const machine = new MirrorMachine(storage, channel, auto ? null : candidates[0]!);
  const upstream = new Upstream(io, options.timeoutMs ?? 10_000);
  const write = writer(storage, service);
  const follower = new Follower(machine, upstream, write, storage, io.WebSocket, options.retryMaxMs);
  const replayer = new Replayer(machine, upstream, write, warn, now);
  const connection = new Connection(machine, upstream, storage, write, warn, auto, candidates);
  const loop = new MirrorLoop(machine, connection, replayer, follower, now, options.retryMaxMs);
  const keeper = new Keeper(service, storage, write, follower);
  const copilot = io.WebSocket ? new CopilotBridge((url) => new io.WebSocket!(url)) : null;
  const passThrough = new PassThrough(machine, loop, service, storage, upstream, replayer, keeper, copilot, now);

  // ---- the other hosts of the origin --------------------------------------------------------
  const listener = channel.open();
  listener.onmessage = ({ data }) => {
    const message = data as WorkerMessage & { from?: string };
    if (!message || typeof message !== 'object' || message.from === machine.self) return;
    if (message.type === 'mirror' && !machine.replays) {
      machine.heard(message.status);
      void machine.reload();
    } else if (message.type === 'mirror-queued' && machine.replays) {
      loop.queued();
    } else if (message.type === 'mirror-ask' && machine.replays) {
      machine.announce();
      if (message.failed) loop.check();
    }
  };

  // ---- starting ------------------------------------------------------------------------------
  let stopReplaying: () => void = () => {};
  /** This host replays from now on (it holds the lock): one probe says where things stand; then only needs probe. */
  const becomeReplayer = async (lost: Promise<void>, valid: () => boolean) => {
    if (machine.isClosed) return;
    machine.lockTaken(valid);
    // The lock was taken away (a lapsed lease): another host replays now.
    void lost.then(() => loop.lockLost());
    await machine.reload();
    void loop.probe();
    await new Promise<void>((resolve) => (stopReplaying = resolve));
  };
  void machine.reload().then(() => {
    if (machine.isClosed) return;
    if (setup.lock === 'alone') void becomeReplayer(new Promise(() => {}), () => true);
    else (setup.lock ?? leaseLock(storage))(REPLAYER_LOCK, becomeReplayer);
    // A host that does not replay asks the replayer for its status (known once it answers, or after a second).
    machine.tell({ type: 'mirror-ask' });
    setTimeout(() => machine.settle(), 1_000);
  });

  return {
    respond: (request) => passThrough.respond(request),
    async status() {
      if (machine.dirty) await machine.reload();
      return machine.snapshot();
    },
    async permission(report) {
      if (!report.granted) loop.refused(report.reason ?? 'the browser refused this page access to the local network');
      else {
        if (report.upstream && auto) machine.located(trimBase(report.upstream));
        await loop.allowed();
      }
      return machine.snapshot();
    },
    outboxReplaced: () => replayer.outboxReplaced(),
    pause: () => loop.pause(),
    close() {
      loop.close();
      listener.close();
      stopReplaying();
    },
  };
}
