/**
 * Why a service worker cannot run here, in words that say what to do. An
 * environment that refuses workers (insecure origin, third-party iframe,
 * blocked storage, blocked registration) is a reason to run in the page; a
 * missing or wrong worker script is a set-up mistake, reported as such.
 */
import { INIT_HINT } from './messages.js';

export class NoWorkerReason {
  constructor(readonly reason: string) {}
}

function inThirdPartyFrame(): boolean {
  try {
    return window.top !== window && window.top!.location.origin !== location.origin;
  } catch {
    return true; // reading a cross-origin top's location throws
  }
}

/** Blocked storage, said for what it is: a third-party iframe, or site data blocked by the browser's settings. */
function storageBlockedReason(): string {
  if (inThirdPartyFrame()) {
    return 'this page runs in a third-party iframe, where the browser blocks service workers and partitions or blocks storage. Open the app in its own tab to use the worker.';
  }
  return 'the browser blocks site data (cookies and storage) for this site, so no service worker can register. Allow site data for this site to use the worker.';
}

/** Why this page can never have a service worker, or null when it may. */
export function environmentReason(): string | null {
  if (!globalThis.isSecureContext) {
    return `this page (${location.origin}) is not a secure context: browsers run service workers only on https:// and on http://localhost (a LAN address such as http://192.168.1.20 is neither).`;
  }
  let container: ServiceWorkerContainer | undefined;
  try {
    container = navigator.serviceWorker;
  } catch {
    // Firefox throws SecurityError ("The operation is insecure.") where site data is blocked.
    return storageBlockedReason();
  }
  if (!container) {
    return 'this browser offers no service workers here (a private window, a setting or an embedding browser disables them).';
  }
  return null;
}

/** The reason when `register()` resolved with nothing: a harness replaced it. */
export const REGISTRATION_BLOCKED =
  'service worker registration is blocked in this browser (navigator.serviceWorker.register() returned no registration, as under Playwright with `serviceWorkers: "block"`).';

/**
 * Explains a failed registration: an environment reason (run in the page) or
 * an Error for a set-up mistake (missing or wrong worker script).
 */
export async function explainRegistrationFailure(error: unknown, scriptURL: string): Promise<NoWorkerReason | string> {
  const message = (error as Error)?.message ?? String(error);
  const script = await checkScript(scriptURL);
  if (script) return script;
  if (/denied permission|insecure|storage|cookie/i.test(message) || (error as DOMException)?.name === 'SecurityError') {
    return new NoWorkerReason(storageBlockedReason());
  }
  return `the worker script ${scriptURL} failed to register: ${message}`;
}

/** A missing or non-JavaScript worker script, described with the fix; null when the script looks right. */
async function checkScript(scriptURL: string): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch(scriptURL, { cache: 'no-store' });
  } catch {
    return null; // unreachable: let the registration error speak
  }
  await response.body?.cancel();
  if (!response.ok) return `the worker script ${scriptURL} is missing (the server answered ${response.status}). ${INIT_HINT}`;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!/javascript|ecmascript/i.test(type)) {
    return `the worker script ${scriptURL} is missing: the server answered with ${type || 'no content type'} instead of JavaScript (a page such as index.html served for an unknown path). ${INIT_HINT}`;
  }
  return null;
}
