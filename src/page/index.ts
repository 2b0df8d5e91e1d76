/**
 * The page API: `startPiecesService()` starts the service (in a service worker, or in the page where
 * none can run) and resolves once it answers (docs/getting-started.md).
 */
import { DEFAULT_BASES } from '../shared/bases.js';
import type { AssetInput } from '../core/models/asset.js';
import type { ModelConfig, OllamaModelConfig, OpenAiModelConfig } from '../core/copilot/model.js';
import type { ServiceSettings } from '../core/options.js';
import type { PageReply, PageRequest } from '../host/protocol.js';
import { installStreamShim } from '../stream/shim.js';
import { installSyncProbes } from './sync-probe.js';
import { VERSION } from '../shared/version.js';
import { controlMessage, controlsOver, type PiecesControls } from '../host/controls.js';
import { NoWorkerReason } from './diagnose.js';
import { info, INIT_HINT, PiecesServiceError, warn } from './messages.js';
import { askWorker, startWorkerMode } from './worker-mode.js';
import { permissionStep } from './mirror-permission.js';
import type { MirrorStatus } from '../core/mirror-spec.js';

/** The worker's settings that travel to it (the rest of `ServiceSettings` is the worker script's to set: `startWorker`). */
export interface StartOptions extends Pick<ServiceSettings, 'bases' | 'sampleAssets'> {
  /** URL of the worker script; default `/pieces-os-worker.js`. Its own query is kept. */
  url?: string;
  /** Registration scope; default the script's folder. */
  scope?: string;
  /** `'module'` for an ES-module worker script (your own, e.g. a Vite dev worker); default classic. */
  type?: WorkerType;
  /**
   * `false` to attach to the service worker your app registers itself (one that
   * calls `addPiecesRoutes()`), instead of registering the pieces-os-worker script.
   */
  register?: boolean;
  /**
   * How long, in milliseconds, the worker gets to answer the service's hello before
   * it is judged not to be the service's (the error then says which script to fix); default 10000.
   */
  helloTimeoutMs?: number;
  /**
   * Page mode: where no service worker can run (insecure origin, third-party iframe,
   * blocked storage or registration), run the service in the page; default
   * true. `false` rejects instead.
   */
  fallback?: boolean;
  /** Don't log start-up messages to the console (warnings still show); default false. */
  quiet?: boolean;
  /** Patch `WebSocket` for the socket paths (identifier streams, health, user); default true. */
  stream?: boolean;
  /** Answer synchronous XHR health/version probes in the page (Chromium does not send them to the worker); default true. */
  syncProbes?: boolean;
  /** Print each request and its answer in the worker's console (as MSW does); default false. */
  log?: boolean;
  /**
   * Send this page's requests under the bases to the worker over a MessagePort (faster than
   * through its fetch handler, same answers); default true. `false`: every request goes by fetch.
   */
  fastPath?: boolean;
  /**
   * Mirror a real Pieces OS (docs/mirror.md): while it answers, requests go to it and what it
   * holds is kept; while it does not, the service answers from that copy and queues writes,
   * replayed in order when it is back. `upstream`: its base URL, or `'auto'` (found as clients
   * find it). The page makes the first request to it (see `connectMirror`). `retryMaxMs`: the
   * longest wait between tries to reach it while it is away (1 s doubling up to this); default 30 000.
   */
  mirror?: { upstream: string; retryMaxMs?: number };
}

export interface PiecesService extends PiecesControls {
  /** `'worker'`: a service worker answers; `'page'`: this page answers its own requests. */
  mode: 'worker' | 'page';
  /** Why the service runs in the page (undefined in worker mode). */
  reason?: string;
  /** Where the data lives: IndexedDB (shared by the origin's tabs) or this tab's memory. */
  storage: 'indexeddb' | 'memory';
  /** The service worker's registration (undefined in page mode). */
  registration?: ServiceWorkerRegistration;
  bases: readonly string[];
  /** The page library's version and the worker's; they differ when the worker script is stale. */
  version: { page: string; worker: string; mismatch: boolean };
  /**
   * The fast path's figures (requests sent over the port, and by fetch after the port
   * failed), live; null when it is off or in page mode.
   */
  fastPath: { port: number; fetch: number } | null;
}

export { DEFAULT_BASES, VERSION, installStreamShim, installSyncProbes, PiecesServiceError };
export { watchService, type ServiceState, type ServiceWatch, type WatchOptions } from './state.js';
export type { StreamShimOptions } from '../stream/shim.js';
export type { SyncProbeOptions } from './sync-probe.js';
export type { PiecesControls };
export type { PiecesData, PiecesSeed } from '../core/data.js';
export type { Override } from '../core/overrides.js';
export type { AssetInput, ModelConfig, OllamaModelConfig, OpenAiModelConfig };
export type { MirrorState, MirrorStatus, QueuedOperation, SetAsideOperation } from '../core/mirror-spec.js';

/** Answers the page API's requests: the worker, or the page-mode host. */
let ask: (request: PageRequest) => Promise<PageReply> = (request) => askWorker(request);

/** The mirror the service was started with. */
let mirrored: { upstream: string } | null = null;

/** The test controls, run by whatever answers the page API. */
const controls = controlsOver(async (name, arg) => ((await ask(controlMessage(name, arg) as PageRequest)) as { data?: unknown }).data);

/**
 * Starts the service: registers the worker (or attaches to the app's own) and
 * resolves when it controls this page, on the very first load and after a hard
 * reload too. Where no service worker can run, runs the service in the page
 * instead (unless `fallback: false`). Requests made before it resolves are not
 * answered by the service.
 */
export async function startPiecesService(options: StartOptions = {}): Promise<PiecesService> {
  info(options.quiet, 'starting…');
  try {
    const { registration, hello } = await startWorkerMode(options);
    const mismatch = hello.version !== VERSION;
    if (mismatch) {
      warn(`version mismatch: the page library is ${VERSION} but the worker script is ${hello.version}. ${INIT_HINT}`);
    }
    // Before the stream shim: its handshakes and catch-ups take the fast path too.
    const fastPath = options.fastPath === false ? null : (await import('./fast-path.js')).startFastPath(hello.bases);
    if (options.stream !== false) installStreamShim({ bases: hello.bases, ...(fastPath ? { fetch: fastPath.fetch } : {}) });
    if (options.syncProbes !== false && typeof XMLHttpRequest !== 'undefined') installSyncProbes({ bases: hello.bases });
    ask = (request) => askWorker(request);
    startMirror(options);
    info(options.quiet, `ready: a service worker answers ${hello.bases.join(', ')}`);
    return {
      mode: 'worker',
      storage: 'indexeddb',
      registration,
      bases: hello.bases,
      version: { page: VERSION, worker: hello.version, mismatch },
      fastPath: fastPath?.counts ?? null,
      ...controls,
    };
  } catch (error) {
    if (!(error instanceof NoWorkerReason)) throw error;
    if (options.fallback === false) throw new PiecesServiceError(`no service worker can run: ${error.reason}`);
    const { startPageMode } = await import('./page-mode.js');
    const host = await startPageMode({
      bases: options.bases,
      stream: options.stream !== false,
      syncProbes: options.syncProbes !== false,
      log: options.log,
      ...(options.sampleAssets === false ? { sampleAssets: false } : {}),
      ...(options.mirror ? { mirror: options.mirror } : {}),
    });
    ask = host.ask;
    startMirror(options);
    // Said once, even with `quiet`: the app runs differently than it may expect.
    warn(
      `running in the page, without a service worker: ${error.reason} Requests to ${host.bases.join(', ')} are answered in this page; pass \`fallback: false\` to fail instead.`,
    );
    return {
      mode: 'page',
      reason: error.reason,
      storage: host.storage,
      bases: host.bases,
      version: { page: VERSION, worker: VERSION, mismatch: false },
      fastPath: null,
      ...controls,
    };
  }
}

/** The page's step of a mirror: its first request to the upstream (not awaited: the browser may be asking the user). */
function startMirror(options: StartOptions) {
  mirrored = options.mirror ? { upstream: options.mirror.upstream } : null;
  if (mirrored)
    void connectMirror().catch((error: unknown) => warn(`the mirror's first request failed: ${(error as Error)?.message ?? error}`));
}

/**
 * The Local Network Access step of a mirrored Pieces OS: the page makes a request to the
 * upstream itself (a page on a public origin needs the browser's permission to reach
 * localhost, and only a page can be given it), and tells the service what came of it:
 * reached (the mirror probes now), or refused (the mirror is `blocked` and the service keeps
 * answering by itself). `startPiecesService({ mirror })` runs it once; run it again (from a
 * user's click, say) after the permission was granted. Resolves with the mirror's status.
 */
export async function connectMirror(): Promise<MirrorStatus | null> {
  if (!mirrored) return null;
  const report = await permissionStep(mirrored.upstream);
  const reply = await ask({ type: 'pieces:mirror-permission', ...report });
  return ((reply as { data?: MirrorStatus | null }).data ?? null) as MirrorStatus | null;
}

/** The mirrored Pieces OS's status (see `PiecesService.mirrorStatus`); null without a mirror. */
export const mirrorStatus = (): Promise<MirrorStatus | null> => controls.mirrorStatus();

/** Adds assets to the store (to start conversations from); an existing id is replaced. */
export async function addAssets(assets: AssetInput[]): Promise<void> {
  await ask({ type: 'pieces:add-assets', assets });
}

/**
 * Switches the copilot's model for every page of the app: an OpenAI-compatible endpoint
 * (`{ type: 'openai', baseUrl, model, apiKey? }`), a model served by Ollama (`{ type: 'ollama',
 * baseUrl: 'http://127.0.0.1:11434', model }`), `{ type: 'extractive' }`, or nothing for the
 * worker's default. With `forModel` (a catalogue model's id, `unique` or name: `GET /models`
 * lists them), only that model's questions (and downloads) go to it. The choice is kept in
 * the database. Resolves with its description.
 */
export async function setModel(model?: ModelConfig, forModel?: string): Promise<string> {
  const reply = await ask({ type: 'pieces:set-model', ...(model ? { model } : {}), ...(forModel ? { for: forModel } : {}) });
  return (reply as Extract<PageReply, { model: string }>).model;
}

/**
 * The copilot's current model (with `forModel`: the one that answers that catalogue model), described (e.g.
 * `llama3.2 at http://127.0.0.1:11434/v1`).
 */
export async function getModel(forModel?: string): Promise<string> {
  return ((await ask({ type: 'pieces:get-model', ...(forModel ? { for: forModel } : {}) })) as Extract<PageReply, { model: string }>).model;
}

/** The catalogue models that have an adapter of their own: model id → its description (every other model gets `getModel()`). */
export async function getModelMapping(): Promise<Record<string, string>> {
  return ((await ask({ type: 'pieces:model-mapping' })) as Extract<PageReply, { mapping: Record<string, string> }>).mapping;
}

/** Reports applications present on the machine; they appear in the external applications snapshot. */
export async function reportExternalApplications(applications: Array<{ name: string; version?: string }>): Promise<void> {
  await ask({ type: 'pieces:report-external-applications', applications });
}
