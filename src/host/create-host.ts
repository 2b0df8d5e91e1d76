/**
 * The one way a host is assembled (docs/architecture.md, "Hosts"): a host adapter chooses a
 * storage, a channel and a transport, and nothing else.
 */
import { parseData } from '../core/data.js';
import type { MirrorStatus } from '../core/mirror-spec.js';
import { initialData, type ServiceSettings } from '../core/options.js';
import { createService, type Service } from '../core/service.js';
import type { Override } from '../core/overrides.js';
import { randomUUID } from '../shared/uuid.js';
import { say } from '../shared/console.js';
import { cacheReads } from '../storage/read-cache.js';
import { reconnectingStorage, type ConnectionHooks } from '../storage/reconnect.js';
import type { Storage, StoredData } from '../storage/storage.js';
import { installStreamShim, type StreamShimOptions } from '../stream/shim.js';
import { batchedAnnouncer, type ChangeChannel } from './channel.js';
import { createMirror, type Mirror } from './mirror/mirror.js';
import type { UpstreamIo } from './mirror/upstream.js';
import type { HoldLock } from './mirror/lock.js';
import { answerPageRequest } from './page-api.js';
import type { PageReply, PageRequest } from './protocol.js';

export interface HostSetup {
  /**
   * Opens a connection to the database, storing `initialData()` on its first start (called only
   * then: a started database costs nothing of it); called again after a connection is lost (site
   * data cleared, the database deleted or upgraded elsewhere).
   */
  open(hooks: ConnectionHooks, initialData: () => StoredData): Promise<Storage>;
  /** Where committed changes are announced (and other connections' caches cleared). */
  channel: ChangeChannel;
  settings: ServiceSettings;
  /** Keep the runtime overrides in the database: for every tab of the origin, across restarts. */
  keepOverrides?: boolean;
  /** How long a call waits for a database open blocked by another connection; default 3 s. */
  blockedWaitMs?: number;
  /** Where unserved Pieces OS paths are reported; default `console.warn`. */
  warn?: (message: string) => void;
  /**
   * How a mirrored Pieces OS (`settings.mirror`) is reached: an unpatched fetch and WebSocket
   * (captured before any interceptor patches the globals), and the Web Locks that make one
   * host of the origin its replayer.
   */
  upstream?: UpstreamIo & { lock?: HoldLock | 'alone' };
}

/** The service as a host runs it: with the mirror in front when one is configured. */
export interface HostService extends Service {
  /** The mirror's status; null without a mirror. */
  mirrorStatus(): Promise<MirrorStatus | null>;
  /** What the page's Local Network Access step found (see the page API's `connectMirror`). */
  mirrorPermission(report: { granted: boolean; upstream?: string; reason?: string }): Promise<MirrorStatus | null>;
}

export interface Host {
  service: HostService;
  /** The mirror of a real Pieces OS, when the settings ask for one. */
  mirror: Mirror | null;
  storage: Storage;
  channel: ChangeChannel;
  /** Answers a page API request (a worker's message, a page-mode call); `claim` takes control of the pages. */
  answerPageRequest(request: PageRequest, claim?: () => Promise<void>): Promise<PageReply>;
  /** Patches `target.WebSocket` (default the global) so that the service's sockets are fed by this host, in this process. */
  feedStreams(options?: Pick<StreamShimOptions, 'target' | 'healthIntervalMs' | 'sequenceCheckMs' | 'giveUpMs'>): () => void;
  close(): void;
}

export function createHost(setup: HostSetup): Host {
  const { channel, settings } = setup;
  const clock = { now: settings.now ?? (() => new Date()), newId: settings.newId ?? randomUUID };
  // Invalid data fails here, at once, with a message naming the problem in the data as given.
  parseData(settings.data ?? {}, clock);
  // With the sample assets, made only when a database is first started (not at every start of a worker).
  let parsed: StoredData | undefined;
  const records = () => (parsed ??= parseData(initialData(settings), clock));
  const storage = reconnectingStorage((hooks) => setup.open(hooks, records).then((opened) => cacheReads(opened, channel.invalidation)), {
    blockedWaitMs: setup.blockedWaitMs,
    // A database opened after the previous one was lost is another one: say so to every socket.
    onOpen: (opened, reopened) => {
      if (reopened) void opened.identity().then((identity) => channel.post({ type: 'database', identity }));
    },
  });
  const keepOverrides = setup.keepOverrides
    ? { load: () => storage.getMeta('overrides'), save: (list: Override[]) => storage.setMeta('overrides', list) }
    : undefined;
  const core = createService({ ...settings, storage, warn: setup.warn, onChange: batchedAnnouncer(channel), keepOverrides });
  const warn = setup.warn ?? ((message: string) => say('warn', message));
  let mirror: Mirror | null = null;
  if (settings.mirror) {
    if (!setup.upstream) throw new Error('This host cannot reach a mirrored Pieces OS (no upstream fetch given).');
    mirror = createMirror({
      options: settings.mirror,
      service: core,
      storage,
      io: setup.upstream,
      channel,
      lock: setup.upstream.lock,
      warn,
    });
  }
  const service: HostService = {
    ...core,
    respond: mirror ? (request) => mirror.respond(request) : core.respond,
    handle: (request) => service.respond(request) ?? globalThis.fetch(request),
    // Back to the initial data empties the outbox and the id map: the mirror reads them again.
    reset: async () => {
      await core.reset();
      await mirror?.outboxReplaced();
    },
    mirrorStatus: async () => (mirror ? mirror.status() : null),
    mirrorPermission: async (report) => (mirror ? mirror.permission(report) : null),
  };
  const fetch = (input: string, init?: RequestInit) => service.handle(new Request(input, init));
  return {
    service,
    mirror,
    storage,
    channel,
    answerPageRequest: (request, claim = async () => {}) => answerPageRequest(service, request, claim),
    feedStreams: (options = {}) =>
      installStreamShim({ ...options, bases: service.bases, fetch, isServiceAvailable: () => true, announcements: channel.open }),
    close() {
      mirror?.close();
      storage.close();
      channel.close();
    },
  };
}
