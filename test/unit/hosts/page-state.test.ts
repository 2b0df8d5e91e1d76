/** The page's view of the service: ready, lost (and started again), recovered, another worker version. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchService, type ServiceWatch } from '../../../src/page/state.js';
import { CHANGES_CHANNEL } from '../../../src/core/stream-wire.js';
import { VERSION } from '../../../src/shared/version.js';

/** A stand-in for navigator.serviceWorker whose registration and controller a test removes. */
function fakeContainer() {
  const events = new EventTarget();
  const registration = { scope: 'http://localhost/' } as ServiceWorkerRegistration;
  const container = {
    registered: true as boolean,
    controller: {} as ServiceWorker | null,
    getRegistration: async () => (container.registered ? registration : undefined),
    addEventListener: events.addEventListener.bind(events),
    removeEventListener: events.removeEventListener.bind(events),
    dispatchEvent: events.dispatchEvent.bind(events),
  };
  Object.defineProperty(navigator, 'serviceWorker', { value: container, configurable: true });
  return { container, service: { registration, version: { worker: VERSION } } };
}

const watches: ServiceWatch[] = [];
afterEach(() => {
  while (watches.length) watches.pop()!.stop();
});

function watch(...args: Parameters<typeof watchService>) {
  const w = watchService(...args);
  watches.push(w);
  const states: string[] = [];
  w.addEventListener('statechange', () => states.push(w.state));
  return { w, states };
}

describe('watchService', () => {
  it('says lost when the worker is unregistered, starts the service again and says recovered', async () => {
    const { container, service } = fakeContainer();
    const restart = vi.fn(async () => {
      container.registered = true;
      return service;
    });
    const { w, states } = watch(service, restart, { intervalMs: 5 });
    expect(w.state).toBe('ready');
    await w.answering();
    container.registered = false;
    await vi.waitFor(() => expect(w.state).toBe('recovered'));
    expect(states).toEqual(['lost', 'recovered']);
    expect(restart).toHaveBeenCalledTimes(1);
    expect(w.reason).toMatch(/unregistered/);
  });

  it('stays lost while starting again fails, saying why, and keeps trying', async () => {
    const { container, service } = fakeContainer();
    let attempts = 0;
    const restart = vi.fn(async () => {
      if (++attempts < 3) throw new Error('no network');
      container.registered = true;
      return service;
    });
    const { w } = watch(service, restart, { intervalMs: 5 });
    container.registered = false;
    await vi.waitFor(() => expect(w.state).toBe('lost'));
    const answering = w.answering();
    await vi.waitFor(() => expect(w.reason).toMatch(/starting it again failed: no network/));
    await answering;
    expect(w.state).toBe('recovered');
    expect(attempts).toBe(3);
  });

  it('says lost when no worker controls the page any more', async () => {
    const { container, service } = fakeContainer();
    const { w } = watch(service, async () => new Promise<never>(() => {}), { intervalMs: 60_000 });
    container.controller = null;
    container.dispatchEvent(new Event('controllerchange'));
    await vi.waitFor(() => expect(w.state).toBe('lost'));
    expect(w.reason).toBe('no worker controls this page any more');
  });

  it('says recovered when the worker started over with a new database', async () => {
    const { service } = fakeContainer();
    const { w } = watch(service, async () => service, { intervalMs: 60_000 });
    const worker = new BroadcastChannel(CHANGES_CHANNEL);
    worker.postMessage({ type: 'database', identity: crypto.randomUUID() });
    await vi.waitFor(() => expect(w.state).toBe('recovered'));
    expect(w.reason).toMatch(/database was wiped/);
    worker.close();
  });

  it('tells a page opened before a worker update that the version changed', async () => {
    const { service } = fakeContainer();
    const { w } = watch(service, async () => service, { intervalMs: 60_000 });
    const changes: unknown[] = [];
    w.addEventListener('versionchange', (event) => changes.push((event as CustomEvent).detail));
    const worker = new BroadcastChannel(CHANGES_CHANNEL);
    worker.postMessage({ type: 'worker', version: VERSION });
    worker.postMessage({ type: 'worker', version: '9.9.9' });
    await vi.waitFor(() => expect(changes).toHaveLength(1));
    expect(changes[0]).toEqual({ from: VERSION, to: '9.9.9', page: VERSION, mismatch: true });
    expect(w.workerVersion).toBe('9.9.9');
    worker.close();
  });
});
