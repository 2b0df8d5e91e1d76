/**
 * `watchService`: whether the service still answers this page (`ready`, `lost`, `recovered`,
 * `versionchange`, `mirrorchange`), restarting it when lost. See docs/integrations.md, "watchService".
 */
import type { MirrorStatus } from '../core/mirror-spec.js';
import { CHANGES_CHANNEL, type WorkerMessage } from '../core/stream-wire.js';
import { VERSION } from '../shared/version.js';

export type ServiceState = 'ready' | 'lost' | 'recovered';

export interface WatchedService {
  /** The worker's registration; none when the service runs in the page itself (nothing to lose then). */
  registration?: ServiceWorkerRegistration;
  version: { worker: string };
}

export interface WatchOptions {
  /** How often the registration is read; default 2 s. */
  intervalMs?: number;
}

export interface ServiceWatch extends EventTarget {
  readonly state: ServiceState;
  /** Why the service was lost or what it recovered from ('' while ready). */
  readonly reason: string;
  /** The version of the worker that controls the page, as last announced. */
  readonly workerVersion: string;
  /** The mirrored Pieces OS's status as last announced (null until one is, or without a mirror). */
  readonly mirror: MirrorStatus | null;
  /** Resolves when the service answers (now, if it does). */
  answering(): Promise<void>;
  stop(): void;
}

export function watchService(service: WatchedService, restart: () => Promise<WatchedService>, options: WatchOptions = {}): ServiceWatch {
  const intervalMs = options.intervalMs ?? 2000;
  const target = new EventTarget();
  let state: ServiceState = 'ready';
  let reason = '';
  let lostBecause = '';
  let workerVersion = service.version.worker;
  let mirror: MirrorStatus | null = null;
  let current = service;
  let recovering = false;
  let backoff = 500;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const waiting: Array<() => void> = [];

  function set(next: ServiceState, why: string) {
    if (next === state && why === reason) return;
    state = next;
    reason = why;
    if (next !== 'lost') for (const resolve of waiting.splice(0)) resolve();
    target.dispatchEvent(new CustomEvent('statechange', { detail: { state, reason } }));
  }

  async function recover() {
    if (recovering || stopped) return;
    recovering = true;
    try {
      current = await restart();
      backoff = 500;
      workerVersion = current.version.worker;
      set('recovered', `started again after ${lostBecause}`);
    } catch (error) {
      set('lost', `${lostBecause}; starting it again failed: ${(error as Error)?.message ?? error}`);
      retry = setTimeout(() => {
        retry = undefined;
        void recover();
      }, backoff);
      backoff = Math.min(backoff * 2, 30_000);
    } finally {
      recovering = false;
    }
  }

  async function check() {
    // While starting again is under way or waiting for its backoff, there is nothing to check.
    if (stopped || recovering || retry !== undefined) return;
    const container = navigator.serviceWorker;
    const scope = current.registration?.scope;
    if (scope === undefined) return;
    const registration = await container.getRegistration(scope).catch(() => undefined);
    const controller = container.controller;
    let why = '';
    if (!registration) why = 'the worker was unregistered (site data cleared?)';
    else if (!controller) why = 'no worker controls this page any more';
    if (!why) return;
    lostBecause = why;
    if (state !== 'lost') set('lost', why);
    await recover();
  }

  // A service running in the page has no worker to lose (and there, navigator.serviceWorker may even throw).
  const watched = service.registration !== undefined;
  const timer = watched ? setInterval(() => void check(), intervalMs) : undefined;
  const onControllerChange = () => void check();
  if (watched) navigator.serviceWorker.addEventListener('controllerchange', onControllerChange);
  let channel: BroadcastChannel | null = null;
  try {
    channel = new BroadcastChannel(CHANGES_CHANNEL);
  } catch {
    // Refused (some browsers' private modes): no announcements to follow.
  }
  if (channel)
    channel.onmessage = (event: MessageEvent) => {
      const message = event.data as WorkerMessage;
      if (message?.type === 'worker' && typeof message.version === 'string' && message.version !== workerVersion) {
        const from = workerVersion;
        workerVersion = message.version;
        target.dispatchEvent(
          new CustomEvent('versionchange', { detail: { from, to: message.version, page: VERSION, mismatch: message.version !== VERSION } }),
        );
      }
      if (message?.type === 'database') {
        set('recovered', 'the database was wiped and created again: read what you show again');
      }
      if (message?.type === 'mirror' && message.status && typeof message.status === 'object') {
        mirror = message.status;
        target.dispatchEvent(new CustomEvent('mirrorchange', { detail: mirror }));
      }
    };

  // Accessors, not copies: Object.assign would read the getters once.
  return Object.defineProperties(target, {
    state: { get: () => state },
    reason: { get: () => reason },
    workerVersion: { get: () => workerVersion },
    mirror: { get: () => mirror },
    answering: {
      value: () => (state === 'lost' ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()),
    },
    stop: {
      value: () => {
        stopped = true;
        clearInterval(timer);
        clearTimeout(retry);
        if (watched) navigator.serviceWorker.removeEventListener('controllerchange', onControllerChange);
        channel?.close();
      },
    },
  }) as ServiceWatch;
}
