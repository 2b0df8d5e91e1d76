/**
 * The service core: `respond(request) -> Promise<Response>` over a Storage, dispatched
 * through the route table (routes.ts). Hosts (the Service Worker, page mode, Node,
 * the loopback server) are thin adapters around it.
 */
import type { OperationContext, ServiceContext } from './context.js';
import { clip, HttpError, markRerunnable, MAX_BODY_BYTES, reply } from './http.js';
import { findRoute, fixedSegments, OPERATIONS, operationFor, routes, type Operation } from './routes.js';
import type { Change, Storage } from '../storage/storage.js';
import { baseMatcher, DEFAULT_BASES } from '../shared/bases.js';
import { say } from '../shared/console.js';
import { knownOperation, namedMoreExactly } from './catalogue.js';
import { isUuid } from './validate.js';
import { parseData, toData, type PiecesData, type PiecesSeed } from './data.js';
import { loggerFor } from './log.js';
import { initialData, type ServiceSettings } from './options.js';
import { randomUUID } from '../shared/uuid.js';
import { Overrides, type Override } from './overrides.js';
import { Copilot } from './copilot/copilot.js';
import type { ModelAdapter, ModelConfig } from './copilot/model.js';
import { parseAssets } from './models/asset.js';
import { ofOpenSocket, SOCKETS, STREAM_HEADER } from './stream-wire.js';
import type { ExternalApplicationRecord } from '../storage/schema.js';
import type { Clock } from './clock.js';

export { DEFAULT_BASES };

export interface ServiceOptions extends ServiceSettings {
  storage: Storage;
  /** Where unserved Pieces OS paths are reported, once per operation; default `console.warn`. */
  warn?: (message: string) => void;
  /** Called after every committed change, in commit order. */
  onChange?: (change: Change) => void;
  /** The browser's user agent (the browser's own application, the detected applications); default `navigator.userAgent`. */
  userAgent?: string;
  /** Keeps the runtime overrides across restarts: loaded before the first request, saved on each change. */
  keepOverrides?: { load(): Promise<unknown>; save(overrides: Override[]): Promise<void> };
}

/** Operations answered at once, even while the database opens (a client's 100 ms health probe on a cold worker). */
const ANSWERED_WITHOUT_DATABASE = new Set(['getWellKnownHealth', 'getWellKnownVersion']);

/** What one request is answered with, instead of the service's own (a host's per-request storage, e.g. one that queues the write). */
export interface Within {
  storage: Storage;
  /** Where the request's ids and times come from, instead of the service's clock. */
  clock?: Clock;
}

export interface Service {
  readonly bases: readonly string[];
  /** The answer to a request under a base, or undefined when the request is not the service's. */
  respond(request: Request, within?: Within): Promise<Response> | undefined;
  /** Answers a request under a base; anything else goes to `fetch` untouched. */
  handle(request: Request): Promise<Response>;
  /** The path under a base, or null when the URL is outside every base. */
  pathUnderBase(url: URL): string | null;
  /** Replaces the whole store with the initial data. */
  reset(): Promise<void>;
  /** Adds records (the data format); a record with an existing id replaces it. Invalid data changes nothing. */
  seed(data: PiecesSeed): Promise<void>;
  /** The whole store in the data format. */
  exportData(): Promise<PiecesData>;
  /** Adds runtime overrides, tried before those already in force; in force at once, the promise says when kept. */
  use(...overrides: Override[]): Promise<void>;
  /** Removes every runtime override; at once, the promise says when kept. */
  resetOverrides(): Promise<void>;
  /** The runtime overrides in force, newest first. */
  listOverrides(): Override[];
  /** Stores assets (AssetInput objects, validated), announces them and makes them findable by relevance at once. */
  addAssets(assets: unknown): Promise<void>;
  /** Records applications present on the machine (the external applications snapshot lists them). */
  reportExternalApplications(applications: ExternalApplicationRecord[]): Promise<void>;
  /** Announces changes committed beside the operations (a mirrored Pieces OS's records): sockets and the relevance corpus follow. */
  announce(changes: readonly Change[]): void;
  /** The copilot's model adapter: the default one, or (with a catalogue model id) the one that answers that model. */
  model(forModel?: string): Promise<ModelAdapter>;
  /**
   * Switches the copilot's default model, or (with `forModel`: a catalogue id, `unique` or
   * name) that catalogue model's own (none: back to the host's choice); a configuration is kept
   * in the database and survives restarts. A bad configuration or an unknown model rejects
   * with a 400 HttpError.
   */
  setModel(model?: ModelAdapter | ModelConfig, forModel?: string): Promise<ModelAdapter>;
  /** The catalogue models that have an adapter of their own, by model id. */
  modelMapping(): Promise<Map<string, ModelAdapter>>;
}

export function createService(options: ServiceOptions): Service {
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES);
  const warn = options.warn ?? ((message: string) => say('warn', message));
  const warned = new Set<string>();
  const copilot = new Copilot(options.storage, options.model, options.models);
  const onChange = options.onChange ?? (() => {});
  const context: ServiceContext = {
    storage: options.storage,
    userAgent: options.userAgent ?? globalThis.navigator?.userAgent ?? 'unknown',
    maxBodyBytes: Math.min(options.maxBodyBytes ?? MAX_BODY_BYTES, MAX_BODY_BYTES),
    clock: { now: options.now ?? (() => new Date()), newId: options.newId ?? randomUUID },
    notify: (change) => {
      if (change.collection === 'conversation') copilot.corpus.conversationChanged(change.id);
      else if (change.collection === 'asset') copilot.corpus.assetChanged(change.id, change.seq);
      onChange(change);
    },
    copilot,
    user: options.user === undefined ? {} : options.user,
  };

  function pathUnderBase(url: URL): string | null {
    return matcher.match(url)?.path ?? null;
  }

  /** Runs an operation's handler; a thrown error becomes its answer. */
  async function run(operation: Operation, request: Request, url: URL, params: Record<string, string>, within?: Within): Promise<Response> {
    try {
      const service = within ? { ...context, storage: within.storage, ...(within.clock ? { clock: within.clock } : {}) } : context;
      const operationContext: OperationContext = { request, url, params, service };
      const response = await operation.handler(operationContext);
      return operation.readOnly ? markRerunnable(response) : response;
    } catch (error) {
      return reply(error instanceof Error ? error : new Error(String(error), { cause: error }));
    }
  }

  /**
   * Whether a route that matched `path` with `params` really serves it: not when a parameter took a
   * segment the SDK spells out as a path of its own (`/assets/draft` is not an asset id). Ids are
   * UUIDs, so the SDK's catalogue is read only for a parameter that is not one.
   */
  function owns(operation: Operation, params: Record<string, string>, path: string): boolean {
    return Object.values(params).every(isUuid) || !namedMoreExactly(path, fixedSegments(operation));
  }

  /** The route table's answer (no override applied). */
  function dispatch(request: Request, url: URL, path: string, within?: Within): Promise<Response> {
    const found = findRoute(request.method, path);
    return found && owns(found.operation, found.params, path) ? run(found.operation, request, url, found.params, within) : unmatched(request, url, path);
  }

  /**
   * No operation for this method here: 405 (with Allow) for a path the table serves with another
   * method; else 404, naming the SDK operation when the path is one of Pieces OS's.
   */
  async function unmatched(request: Request, url: URL, path: string): Promise<Response> {
    const matching = routes().filter(({ operation, match }) => {
      const params = match(path);
      return params !== null && owns(operation, params, path);
    });
    if (matching.length === 0) return unserved(request.method, path || '/');
    // Another Pieces OS operation this service does not serve (POST /model/update beside GET /model/{model}).
    const known = request.method === 'GET' || request.method === 'POST' ? knownOperation(request.method, path) : undefined;
    if (known && !OPERATIONS.some((operation) => `${operation.api}.${operation.name}` === known)) return unserved(request.method, path);
    const methods = matching.map(({ operation }) => operation.method);
    const allow = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].join(', ');
    if (request.method === 'OPTIONS') return reply(undefined, { headers: { Allow: allow } });
    const get = matching.find(({ operation }) => operation.method === 'GET');
    if (request.method === 'HEAD' && get) {
      const response = await run(get.operation, request, url, get.match(path)!);
      return reply(undefined, { status: response.status, headers: response.headers });
    }
    return reply(new HttpError(405, `${clip(request.method, 40)} is not allowed on ${clip(path)}; use ${allow}.`, { Allow: allow }));
  }

  /** 404; for a Pieces OS path this service does not serve, the message names the operation (warned once per operation). */
  function unserved(method: string, path: string): Response {
    const known = knownOperation(method, path);
    if (!known) return reply(new HttpError(404, `No operation at ${clip(path)}.`));
    const message = `${clip(method, 40)} ${clip(path)} is the Pieces OS operation ${known}, which this service does not serve.`;
    if (!warned.has(known)) {
      warned.add(known);
      warn(message);
    }
    return reply(new HttpError(404, message));
  }

  const overrides = new Overrides();
  const logger = loggerFor(options.log);
  const kept = options.keepOverrides;
  // Saves follow one another, so the last one written is the list in force.
  let saving = Promise.resolve();
  const save = () => {
    if (kept) saving = saving.then(() => kept.save(overrides.list())).catch(() => {});
    return saving;
  };
  let loading: Promise<void> | null = kept
    ? kept
        .load()
        .then((list) => {
          // Overrides given since the start stay in front of the ones kept.
          if (Array.isArray(list) && list.length) overrides.restore(list);
        })
        .catch(() => {})
        .finally(() => (loading = null))
    : null;

  /** The answer with the overrides in force applied, logged. */
  async function answer(request: Request, url: URL, path: string, within?: Within): Promise<Response> {
    const started = performance.now();
    const operation = overrides.size || logger || loading ? operationFor(request.method, path) : undefined;
    // Kept overrides are in force before the first answer, except discovery's, which never waits for the database.
    if (loading && !ANSWERED_WITHOUT_DATABASE.has(operation!)) await loading;
    const before = overrides.size;
    const outcome = overrides.size ? overrides.take(request.method, path, operation) : undefined;
    // A used-up `once` is written away before the answer, so that a restart cannot revive it.
    if (overrides.size !== before) await save();
    if (outcome?.delay) await new Promise((resolve) => setTimeout(resolve, outcome.delay));
    const response = outcome?.response ? outcome.response() : await dispatch(request, url, path, within);
    // A socket's catch-ups and heartbeats are part of its connection, not requests of their own;
    // its handshake is the connection (logged as a WebSocket's), a copilot POST a message sent on it.
    if (logger && !ofOpenSocket(request, url)) {
      const stream = Object.hasOwn(SOCKETS, path) ? request.headers.get(STREAM_HEADER) : null;
      const socket = stream === 'handshake' ? 'open' : stream === 'qgpt' ? 'message' : undefined;
      const status = response.type === 'error' ? 0 : response.status;
      logger({
        operation: socket ? operationFor('GET', path) : operation,
        method: request.method,
        url: request.url,
        path,
        status: socket === 'open' && response.ok ? 101 : status,
        ms: performance.now() - started,
        overridden: !!outcome,
        ...(socket ? { socket } : {}),
      });
    }
    return response;
  }

  function respond(request: Request, within?: Within): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = pathUnderBase(url);
    return path === null ? undefined : answer(request, url, path, within);
  }

  const initial = initialData(options);
  const load = async (data: PiecesSeed, replace: boolean) => {
    const changes = await context.storage.loadData(parseData(data, context.clock), { replace });
    copilot.reset();
    for (const change of changes) context.notify(change);
  };

  return {
    bases: matcher.list,
    respond,
    handle: (request) => respond(request) ?? fetch(request),
    pathUnderBase,
    reset: () => load(initial, true),
    seed: (data) => load(data, false),
    exportData: async () => toData(await context.storage.dumpData()),
    use: (...list) => {
      overrides.use(list);
      return save();
    },
    resetOverrides: () => {
      overrides.reset();
      return save();
    },
    listOverrides: () => overrides.list(),
    async addAssets(assets) {
      const records = parseAssets(assets, context.clock);
      const changes = await context.storage.putAssets(records);
      for (const change of changes) context.notify(change);
    },
    reportExternalApplications: (applications) => context.storage.putExternalApplications(applications),
    announce(changes) {
      // Assets written beside addAssets: the corpus reads them again when next asked.
      if (changes.some((change) => change.collection === 'asset')) copilot.corpus.reset();
      for (const change of changes) context.notify(change);
    },
    model: (forModel) => copilot.model(forModel),
    setModel: (model, forModel) => copilot.setModel(model, forModel),
    modelMapping: () => copilot.mapping(),
  };
}
