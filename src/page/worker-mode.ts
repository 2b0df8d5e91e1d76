/**
 * Worker mode: registers the worker script (or attaches to the app's own
 * worker) and resolves once a worker that answers the service controls the page.
 */
import type { PageReply, PageRequest } from '../host/protocol.js';
import { VERSION } from '../shared/version.js';
import { environmentReason, explainRegistrationFailure, NoWorkerReason, REGISTRATION_BLOCKED } from './diagnose.js';
import { INIT_HINT, PiecesServiceError } from './messages.js';

export type Hello = Extract<PageReply, { version: string }>;

export interface WorkerModeOptions {
  url?: string;
  scope?: string;
  type?: WorkerType;
  bases?: readonly string[];
  register?: boolean;
  log?: boolean;
  sampleAssets?: boolean;
  mirror?: { upstream: string; retryMaxMs?: number };
  helloTimeoutMs?: number;
}

/** How long a worker gets by default to answer the page API's hello before it is judged not to be ours. */
const HELLO_TIMEOUT_MS = 10_000;

/** Sends a request to the worker that controls the page and waits for its reply. */
export async function askWorker(request: PageRequest, worker?: ServiceWorker | null, timeoutMs?: number): Promise<PageReply> {
  const target = worker ?? navigator.serviceWorker.controller ?? (await navigator.serviceWorker.ready).active;
  if (!target) throw new PiecesServiceError('no worker is active: call startPiecesService() first.');
  const { port1, port2 } = new MessageChannel();
  return new Promise<PageReply>((resolve, reject) => {
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => reject(new TimeoutError()), timeoutMs);
    port1.onmessage = (event) => {
      clearTimeout(timer);
      port1.close();
      const reply = event.data as PageReply;
      if (reply.ok) resolve(reply);
      else reject(new PiecesServiceError(reply.error));
    };
    target.postMessage(request, [port2]);
  });
}

class TimeoutError extends Error {}

/** The worker script URL: the given one with its own query kept, plus `bases`, `log`, `sampleAssets` and `mirror` (`mirrorRetryMax`) when given. */
export function workerURL(options: WorkerModeOptions): URL {
  const url = new URL(options.url ?? '/pieces-os-worker.js', location.href);
  if (options.bases) url.searchParams.set('bases', options.bases.join(','));
  if (options.log) url.searchParams.set('log', '1');
  if (options.sampleAssets === false) url.searchParams.set('sampleAssets', '0');
  if (options.mirror) url.searchParams.set('mirror', options.mirror.upstream);
  if (options.mirror?.retryMaxMs !== undefined) url.searchParams.set('mirrorRetryMax', String(options.mirror.retryMaxMs));
  return url;
}

/** The registration's worker for `scriptURL` (any when null) once activated. */
async function activated(registration: ServiceWorkerRegistration, scriptURL: string | null): Promise<ServiceWorker> {
  const wanted = (worker: ServiceWorker | null) => !!worker && (scriptURL === null || worker.scriptURL === scriptURL);
  for (;;) {
    const active = registration.active;
    if (wanted(active) && active!.state === 'activated') return active!;
    const pending = registration.installing ?? registration.waiting ?? active;
    if (pending?.state === 'redundant' && wanted(pending)) {
      throw new PiecesServiceError(
        `the worker ${pending.scriptURL} failed to install (it threw while starting; see the worker's console).`,
      );
    }
    await new Promise((resolve) => {
      if (wanted(pending)) pending!.addEventListener('statechange', resolve, { once: true });
      else registration.addEventListener('updatefound', resolve, { once: true });
    });
  }
}

/** A worker that does not answer the page API: not the service's. */
function notOurs(attached: boolean, script: string | undefined): PiecesServiceError {
  return new PiecesServiceError(
    attached
      ? `the service worker controlling this page (${script}) does not answer the service: add \`addPiecesRoutes()\` from 'pieces-os-worker/worker' to it.`
      : `the script ${script} is not the pieces-os-worker script (it does not answer the service). ${INIT_HINT}`,
  );
}

/** Makes `registration`'s worker control the page (asking it to claim a page loaded past it). */
async function control(registration: ServiceWorkerRegistration, scriptURL: string | null, timeoutMs: number): Promise<void> {
  const container = navigator.serviceWorker;
  // The page is ours once this registration's worker controls it: a controller of the same script
  // from a registration that is gone (site data cleared) no longer answers the page's fetches.
  const ours = () =>
    !!container.controller &&
    container.controller === registration.active &&
    (scriptURL === null || container.controller.scriptURL === scriptURL);
  if (ours()) return;
  const changed = new Promise((resolve) => container.addEventListener('controllerchange', resolve, { once: true }));
  const worker = await activated(registration, scriptURL);
  if (ours()) return;
  try {
    await Promise.race([askWorker({ type: 'pieces:claim' }, worker, timeoutMs), changed]);
  } catch (error) {
    throw error instanceof TimeoutError ? notOurs(scriptURL === null, worker.scriptURL) : error;
  }
  if (!ours()) await changed;
}

async function hello(attached: boolean, timeoutMs: number): Promise<Hello> {
  try {
    return (await askWorker({ type: 'pieces:hello', version: VERSION }, undefined, timeoutMs)) as Hello;
  } catch (error) {
    throw error instanceof TimeoutError ? notOurs(attached, navigator.serviceWorker.controller?.scriptURL) : error;
  }
}

/**
 * The worker found a newer script (the page is still controlled by the old
 * one): let the new one install and take over before answering.
 */
async function update(registration: ServiceWorkerRegistration): Promise<boolean> {
  const container = navigator.serviceWorker;
  const controller = container.controller;
  try {
    await registration.update();
  } catch {
    return false; // offline: keep the running worker
  }
  // The new worker: still installing or waiting, or already active (the
  // browser's own update check on navigation may have got there first).
  const next = registration.installing ?? registration.waiting ?? (registration.active !== controller ? registration.active : null);
  if (!next) return false;
  const changed = new Promise((resolve) => container.addEventListener('controllerchange', resolve, { once: true }));
  while (next.state !== 'activated') {
    if (next.state === 'redundant') return false;
    await new Promise((resolve) => next.addEventListener('statechange', resolve, { once: true }));
  }
  if (container.controller === controller) {
    await askWorker({ type: 'pieces:claim' }, next);
    if (container.controller === controller) await changed;
  }
  return true;
}

export interface WorkerMode {
  registration: ServiceWorkerRegistration;
  hello: Hello;
}

/**
 * Starts worker mode. Rejects with a NoWorkerReason where the environment
 * refuses service workers, with a PiecesServiceError for a set-up mistake.
 */
export async function startWorkerMode(options: WorkerModeOptions): Promise<WorkerMode> {
  const timeoutMs = options.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
  if (!(timeoutMs > 0))
    throw new PiecesServiceError(`helloTimeoutMs must be a number of milliseconds above 0, not ${JSON.stringify(timeoutMs)}.`);
  const reason = environmentReason();
  if (reason) throw new NoWorkerReason(reason);
  const container = navigator.serviceWorker;
  if (options.register === false) {
    const registration = await container.ready;
    await control(registration, null, timeoutMs);
    return { registration, hello: await hello(true, timeoutMs) };
  }
  const url = workerURL(options).href;
  let registration: ServiceWorkerRegistration | undefined;
  try {
    registration = await container.register(url, {
      ...(options.scope ? { scope: options.scope } : {}),
      ...(options.type ? { type: options.type } : {}),
    });
  } catch (error) {
    const explained = await explainRegistrationFailure(error, url);
    throw explained instanceof NoWorkerReason ? explained : new PiecesServiceError(explained, { cause: error });
  }
  if (!registration) throw new NoWorkerReason(REGISTRATION_BLOCKED);
  await control(registration, url, timeoutMs);
  let answer = await hello(false, timeoutMs);
  if (answer.version !== VERSION && (await update(registration))) answer = await hello(false, timeoutMs);
  return { registration, hello: answer };
}
