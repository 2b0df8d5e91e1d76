/**
 * The page API: registers the worker and resolves once it controls the page.
 *
 *   import { startPiecesService } from 'pieces-os-worker';
 *   await startPiecesService();            // then fetch('http://localhost:1000/…')
 */
import { DEFAULT_BASES } from '../core/bases.js';
import type { AssetInput } from '../core/models/asset.js';
import type { ModelConfig, OpenAiModelConfig } from '../core/copilot/model.js';
import type { PageReply, PageRequest } from '../stream/protocol.js';
import { installStreamShim } from '../stream/shim.js';
import { installSyncProbes } from './sync-probe.js';
import { VERSION } from '../version.js';
import { controlsOver, type PiecesControls } from './controls.js';

export interface StartOptions {
  /** URL of the worker script copied into your public folder; default `/pieces-os-worker.js`. */
  url?: string;
  /** Registration scope; default the script's folder. */
  scope?: string;
  /**
   * Base URLs to answer; default `DEFAULT_BASES` (localhost and 127.0.0.1 on 1000, 5323 and
   * 39300–39333). A port range may be written compactly: `http://localhost:39300-39333`.
   */
  bases?: readonly string[];
  /** Don't log start-up messages to the console; default false. */
  quiet?: boolean;
  /** Patch `WebSocket` for the socket paths (identifier streams, health, user); default true. */
  stream?: boolean;
  /** Answer synchronous XHR health/version probes in the page (Chromium does not send them to the worker); default true. */
  syncProbes?: boolean;
  /** Print each request and its answer in the worker's console (as MSW does); default false. */
  log?: boolean;
}

export interface PiecesService extends PiecesControls {
  registration: ServiceWorkerRegistration;
  bases: readonly string[];
  /** The page library's version and the worker's; they differ when the worker script is stale. */
  version: { page: string; worker: string; mismatch: boolean };
}

export { DEFAULT_BASES, VERSION, installStreamShim, installSyncProbes };
export { watchService, type ServiceState, type ServiceWatch, type WatchOptions } from './state.js';
export type { StreamShimOptions } from '../stream/shim.js';
export type { SyncProbeOptions } from './sync-probe.js';
export type { PiecesControls };
export type { PiecesData, PiecesSeed } from '../core/data.js';
export type { Override } from '../core/overrides.js';
export type { AssetInput, ModelConfig, OpenAiModelConfig };

const log = (quiet: boolean | undefined, ...args: unknown[]) => {
  if (!quiet) console.info('%c[pieces-os-worker]', 'color:#6c5ce7;font-weight:bold', ...args);
};

/** Sends a request to the worker that controls the page and waits for its reply. */
export async function askWorker(request: PageRequest, worker?: ServiceWorker | null): Promise<PageReply> {
  const target = worker ?? navigator.serviceWorker.controller ?? (await navigator.serviceWorker.ready).active;
  if (!target) throw new Error('No pieces-os-worker is active: call startPiecesService() first.');
  const { port1, port2 } = new MessageChannel();
  return new Promise<PageReply>((resolve, reject) => {
    port1.onmessage = (event) => {
      port1.close();
      const reply = event.data as PageReply;
      if (reply.ok) resolve(reply);
      else reject(new Error(reply.error));
    };
    target.postMessage(request, [port2]);
  });
}

/** The registration's worker for `scriptURL` once activated (it may still be installing). */
async function activated(registration: ServiceWorkerRegistration, scriptURL: string): Promise<ServiceWorker> {
  for (;;) {
    const active = registration.active;
    if (active?.scriptURL === scriptURL && active.state === 'activated') return active;
    const pending = registration.installing ?? registration.waiting ?? active;
    if (pending?.state === 'redundant') throw new Error(`The worker ${scriptURL} failed to install.`);
    await new Promise((resolve) => {
      if (pending && pending.scriptURL === scriptURL) pending.addEventListener('statechange', resolve, { once: true });
      else registration.addEventListener('updatefound', resolve, { once: true });
    });
  }
}

/**
 * Registers the worker and resolves when it controls this page, on the very
 * first load and after a hard reload too (the worker is asked to claim the page).
 * Requests made before it resolves are not answered by the service.
 */
export async function startPiecesService(options: StartOptions = {}): Promise<PiecesService> {
  if (!('serviceWorker' in navigator)) {
    throw new Error('Service Workers are unavailable here (they need https:// or http://localhost).');
  }
  const bases = options.bases ?? DEFAULT_BASES;
  const url = new URL(options.url ?? '/pieces-os-worker.js', location.href);
  if (options.bases) url.searchParams.set('bases', bases.join(','));
  if (options.log) url.searchParams.set('log', '1');
  log(options.quiet, 'starting…');
  const registration = await navigator.serviceWorker.register(url.href, options.scope ? { scope: options.scope } : {});
  if (!registration) {
    // e.g. Playwright's `serviceWorkers: 'block'`, which makes register() resolve to nothing.
    throw new Error('Service worker registration is blocked in this browser context; pieces-os-worker needs it (in Playwright, leave serviceWorkers at "allow").');
  }
  const container = navigator.serviceWorker;
  const ours = () => container.controller?.scriptURL === url.href;
  if (!ours()) {
    // First load, new bases, or a hard reload (the page was loaded past the
    // worker): once our worker is active, ask it to claim this page.
    const changed = new Promise((resolve) => container.addEventListener('controllerchange', resolve, { once: true }));
    const worker = await activated(registration, url.href);
    await askWorker({ type: 'pieces:claim' }, worker);
    if (!ours()) await changed;
  }
  const hello = (await askWorker({ type: 'pieces:hello', version: VERSION })) as Extract<PageReply, { version: string }>;
  const mismatch = hello.version !== VERSION;
  if (mismatch) {
    console.warn(
      `[pieces-os-worker] version mismatch: the page library is ${VERSION} but the worker script is ${hello.version}. Copy the worker script again (npx pieces-os-worker init <public dir>).`,
    );
  }
  if (options.stream !== false) installStreamShim({ bases: hello.bases });
  if (options.syncProbes !== false && typeof XMLHttpRequest !== 'undefined') installSyncProbes({ bases: hello.bases });
  log(options.quiet, `ready: answering ${hello.bases.join(', ')}`);
  return {
    registration,
    bases: hello.bases,
    version: { page: VERSION, worker: hello.version, mismatch },
    ...controlsOver((request) => askWorker(request)),
  };
}

/** Adds assets to the store (to start conversations from); an existing id is replaced. */
export async function addAssets(assets: AssetInput[]): Promise<void> {
  await askWorker({ type: 'pieces:add-assets', assets });
}

/**
 * Switches the copilot's model for every page of the app: an OpenAI-compatible endpoint
 * (`{ type: 'openai', baseUrl, model, apiKey? }`), `{ type: 'extractive' }`, or nothing for
 * the worker's default. The choice is kept in the database. Resolves with its description.
 */
export async function setModel(model?: ModelConfig): Promise<string> {
  const reply = await askWorker({ type: 'pieces:set-model', ...(model ? { model } : {}) });
  return (reply as Extract<PageReply, { model: string }>).model;
}

/** The copilot's current model, described (e.g. `llama3.2 at http://127.0.0.1:11434/v1`). */
export async function getModel(): Promise<string> {
  return ((await askWorker({ type: 'pieces:get-model' })) as Extract<PageReply, { model: string }>).model;
}

/** Reports applications present on the machine; they appear in the external applications snapshot. */
export async function reportExternalApplications(applications: Array<{ name: string; version?: string }>): Promise<void> {
  await askWorker({ type: 'pieces:report-external-applications', applications });
}
