/**
 * A mirrored host over a test upstream (test/upstream/pieces-os.ts), for the mirror's tests: what
 * each creates is closed by `closeMirrorHosts()` (call it in `afterEach`).
 */
import { expect } from 'vitest';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { createNodeHost, type NodeHost } from '../../../src/node/host.js';
import { startUpstream, type IndependentPiecesOS } from '../../upstream/pieces-os.js';

const BASE = 'http://localhost:1000';

const upstreams: IndependentPiecesOS[] = [];
const hosts: NodeHost[] = [];
/** Closes every host and stops every upstream made since the last call. */
export async function closeMirrorHosts() {
  for (const host of hosts.splice(0)) host.close();
  for (const upstream of upstreams.splice(0)) await upstream.stop();
}

export async function upstreamOn(options: Parameters<typeof startUpstream>[0] = {}) {
  const upstream = await startUpstream(options);
  upstreams.push(upstream);
  return upstream;
}

export function hostOf(upstream: IndependentPiecesOS, timeoutMs?: number) {
  const host = createNodeHost({ sampleAssets: false, mirror: { upstream: upstream.url, ...(timeoutMs ? { timeoutMs } : {}) } });
  hosts.push(host);
  const call = (path: string, init?: RequestInit) => host.fetch(BASE + path, init);
  const json = async <T = any>(path: string, init?: RequestInit): Promise<T> => {
    const response = await call(path, init);
    expect(response.status, `${init?.method ?? 'GET'} ${path}: ${response.status}`).toBeLessThan(300);
    return (response.status === 204 ? undefined : response.json()) as Promise<T>;
  };
  const status = () => host.service.mirrorStatus() as Promise<MirrorStatus>;
  /** Waits for the mirror to reach `state` (probing at once: what the page's permission step does). */
  const reach = async (state: MirrorStatus['state'], timeout = 10_000) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      // Probes at once (what the page's permission step does), rather than after the backoff.
      if (state !== 'down') await host.service.mirrorPermission({ granted: true });
      const now = await status();
      if (now.state === state && (state !== 'up' || now.outbox.length === 0)) return now;
      if (Date.now() > deadline) throw new Error(`the mirror stayed ${JSON.stringify(now)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return { host, call, json, status, reach };
}
