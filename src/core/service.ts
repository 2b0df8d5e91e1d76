/**
 * The service core: `respond(request) -> Promise<Response>` over a Storage: layers (`layers/`:
 * the log, the kept overrides' loading, the overrides, unmatched requests) around the operation
 * the route table (routes.ts) names. Hosts (the Service Worker, page mode, Node, the loopback
 * server) are thin adapters around it.
 */
import type { ServiceContext } from './context.js';
import { markRerunnable, MAX_BODY_BYTES, reply } from './http.js';
import type { Change, Storage } from '../storage/storage.js';
import { baseMatcher, DEFAULT_BASES } from '../shared/bases.js';
import { say } from '../shared/console.js';
import { parseData, toData, type PiecesData, type PiecesSeed } from './data.js';
import { loggerFor } from './log.js';
import { initialData, type ServiceSettings } from './options.js';
import { randomUUID } from '../shared/uuid.js';
import { Overrides, type Override } from './overrides.js';
import { Copilot } from './copilot/copilot.js';
import type { ModelAdapter, ModelConfig } from './copilot/model.js';
import { parseAssets } from './models/asset.js';
import type { ExternalApplicationRecord } from '../storage/schema.js';
import { Call, compose, type Within } from './layers/compose.js';
import { logging } from './layers/logging.js';
import { keptOverrides, type Keeper } from './layers/kept-overrides.js';
import { overriding } from './layers/overriding.js';
import { unmatched } from './layers/unmatched.js';
import { sequenceNumber, type McpActivity } from './mcp/activity.js';
import { modelContextProtocol } from './mcp/endpoint.js';

export { DEFAULT_BASES, type Within };

export interface ServiceOptions extends ServiceSettings {
  storage: Storage;
  /** Where unserved Pieces OS paths are reported, once per operation; default `console.warn`. */
  warn?: (message: string) => void;
  /** Called after every committed change, in commit order. */
  onChange?: (change: Change) => void;
  /** The browser's user agent (the browser's own application, the detected applications); default `navigator.userAgent`. */
  userAgent?: string;
  /** Keeps the runtime overrides across restarts: loaded before the first request, saved on each change. */
  keepOverrides?: Keeper;
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
  /**
   * The MCP endpoint's sessions and tool calls (src/core/mcp/activity.ts), or null where MCP is not
   * served (the Service Worker); with `after`, once something follows that sequence number (a long-poll).
   */
  mcpActivity(after?: number | string): Promise<McpActivity | null>;
}

export function createService(options: ServiceOptions): Service {
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES);
  const copilot = new Copilot(options.storage, options.model, options.models);
  const onChange = options.onChange ?? (() => {});
  const context: ServiceContext = {
    storage: options.storage,
    userAgent: options.userAgent ?? globalThis.navigator?.userAgent ?? 'unknown',
    maxBodyBytes: Math.min(options.maxBodyBytes ?? MAX_BODY_BYTES, MAX_BODY_BYTES),
    clock: { now: options.now ?? (() => new Date()), newId: options.newId ?? randomUUID },
    notify: (change) => {
      copilot.changed(change);
      onChange(change);
    },
    copilot,
    user: options.user === undefined ? {} : options.user,
  };

  /** The innermost answer: the operation's handler (the unmatched layer found it); a thrown error becomes its answer. */
  async function operate({ request, url, route, within }: Call): Promise<Response> {
    const { operation, params } = route!;
    try {
      const service = within ? { ...context, storage: within.storage, ...(within.clock ? { clock: within.clock } : {}) } : context;
      const response = await operation.handler({ request, url, params, service });
      return operation.readOnly ? markRerunnable(response) : response;
    } catch (error) {
      return reply(error instanceof Error ? error : new Error(String(error), { cause: error }));
    }
  }

  const overrides = new Overrides();
  const kept = options.keepOverrides ? keptOverrides(overrides, options.keepOverrides) : undefined;
  const save = kept?.save ?? (() => Promise.resolve());
  const logger = loggerFor(options.log);
  // The MCP endpoint's tools answer through the service's own operations (`respond`, made below).
  const mcp = options.mcp?.(context, (request) => respond(request) ?? Promise.reject(new TypeError(`${request.url} is under no base.`)));
  const answer = compose(
    [
      ...(logger ? [logging(logger)] : []),
      ...(kept ? [kept.layer] : []),
      overriding(overrides, save),
      modelContextProtocol(mcp),
      unmatched(options.warn ?? ((message) => say('warn', message))),
    ],
    operate,
  );

  function pathUnderBase(url: URL): string | null {
    return matcher.match(url)?.path ?? null;
  }

  function respond(request: Request, within?: Within): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = pathUnderBase(url);
    return path === null ? undefined : answer(new Call(request, url, path, within));
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
    mcpActivity: async (after) => {
      const seq = sequenceNumber(after);
      return mcp?.activity ? mcp.activity(seq) : null;
    },
  };
}
