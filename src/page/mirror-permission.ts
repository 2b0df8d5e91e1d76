/**
 * The Local Network Access step of a mirrored Pieces OS. A page on a public origin needs the
 * browser's permission to reach localhost (Chromium asks the user), and a service worker
 * cannot ask for it: so the page makes the first request to the upstream itself (its health
 * check, marked so that the worker lets it go to the network), where the browser can ask.
 * What it finds goes to the service: the upstream's address (for `'auto'`), or that the
 * browser refused (the mirror is then `blocked`, and the service keeps answering by itself).
 */
import { discoveryCandidates, PERMISSION_PROBE, trimBase } from '../host/mirror/upstream.js';
import { nativeFetch } from './native.js';

export interface PermissionReport {
  granted: boolean;
  upstream?: string;
  reason?: string;
}

/** The names Chromium has given the permission (the newer split names first). */
const PERMISSION_NAMES = ['loopback-network', 'local-network-access', 'local-network'];

/** The state of the browser's Local Network Access permission for this page; undefined where the browser has none. */
async function localNetworkPermission(): Promise<PermissionState | undefined> {
  const permissions = typeof navigator === 'undefined' ? undefined : navigator.permissions;
  if (!permissions) return undefined;
  for (const name of PERMISSION_NAMES) {
    try {
      return (await permissions.query({ name } as unknown as PermissionDescriptor)).state;
    } catch {
      // Not a permission of this browser.
    }
  }
  return undefined;
}

export const REFUSED =
  'the browser refused this page access to the local network (Local Network Access), so the mirrored Pieces OS cannot be reached; allow it in the site settings and call connectMirror() again.';

/** Makes the page's first request to the upstream (each candidate, for `'auto'`) and says what came of it. */
export async function permissionStep(upstream: string, timeoutMs = 5_000): Promise<PermissionReport> {
  if (!nativeFetch) return { granted: true };
  const candidates = upstream === 'auto' ? discoveryCandidates() : [trimBase(upstream)];
  const reach = async (base: string) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await nativeFetch!(`${base}/.well-known/health?${PERMISSION_PROBE}=1`, {
        cache: 'no-store',
        signal: controller.signal,
      });
      return response.ok ? base : null;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  };
  const answers = await Promise.all(candidates.map(reach));
  const found = answers.find((base): base is string => base !== null);
  if (found) return { granted: true, upstream: found };
  // No answer: refused by the browser, or simply not running (then the service probes on its own).
  return (await localNetworkPermission()) === 'denied' ? { granted: false, reason: REFUSED } : { granted: true };
}
