/**
 * Answers synchronous XMLHttpRequest discovery probes (health, version) in the page: Chromium does not
 * send a synchronous XHR to a service worker, and editor-plugin connectors probe that way.
 */
import { baseMatcher, DEFAULT_BASES } from '../shared/bases.js';
import { PIECES_OS_VERSION } from '../shared/version.js';

/** What a probe may ask synchronously, and the answer (both need no storage). */
const ANSWERS: Readonly<Record<string, string>> = {
  '/.well-known/health': 'ok',
  '/.well-known/version': PIECES_OS_VERSION,
};

export interface SyncProbeOptions {
  bases?: readonly string[];
  /** The global object to patch; default `globalThis`. */
  target?: { XMLHttpRequest: typeof XMLHttpRequest; location?: { href: string } };
  /** Whether a service worker is answering; default: the page has a controller. */
  isServiceAvailable?: () => boolean;
}

const installed = new WeakMap<object, () => void>();

/** Patches `XMLHttpRequest` for synchronous probes; returns a function that restores it. */
export function installSyncProbes(options: SyncProbeOptions = {}): () => void {
  const target = options.target ?? (globalThis as unknown as NonNullable<SyncProbeOptions['target']>);
  installed.get(target)?.();
  const prototype = target.XMLHttpRequest.prototype;
  const { open, send } = prototype;
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES);
  const available = options.isServiceAvailable ?? (() => typeof navigator !== 'undefined' && !!navigator.serviceWorker?.controller);
  const probes = new WeakMap<XMLHttpRequest, { method: string; url: string; body: string }>();

  prototype.open = function (this: XMLHttpRequest, method: string, url: string | URL, ...rest: unknown[]) {
    probes.delete(this);
    if (rest.length > 0 && rest[0] === false) {
      try {
        const parsed = new URL(String(url), target.location?.href);
        const path = matcher.match(parsed)?.path;
        const upper = method.toUpperCase();
        if (path !== undefined && Object.hasOwn(ANSWERS, path) && (upper === 'GET' || upper === 'HEAD')) {
          probes.set(this, { method: upper, url: parsed.href, body: ANSWERS[path]! });
        }
      } catch {
        // Not a URL: the native open reports it.
      }
    }
    return (open as (...args: unknown[]) => void).call(this, method, url, ...rest);
  } as typeof prototype.open;

  prototype.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
    const probe = probes.get(this);
    if (!probe || !available()) return send.call(this, body);
    probes.delete(this);
    const text = probe.method === 'HEAD' ? '' : probe.body;
    const contentType = 'text/plain; charset=utf-8';
    const values: Record<string, unknown> = {
      readyState: 4,
      status: 200,
      statusText: 'OK',
      responseText: text,
      response: text,
      responseURL: probe.url,
      getResponseHeader: (name: string) => (name.toLowerCase() === 'content-type' ? contentType : null),
      getAllResponseHeaders: () => `content-type: ${contentType}\r\n`,
    };
    for (const [key, value] of Object.entries(values)) Object.defineProperty(this, key, { value, configurable: true });
    for (const type of ['readystatechange', 'load', 'loadend']) {
      this.dispatchEvent(
        type === 'readystatechange' ? new Event(type) : new ProgressEvent(type, { loaded: text.length, total: text.length }),
      );
    }
  };

  const uninstall = () => {
    prototype.open = open;
    prototype.send = send;
    installed.delete(target);
  };
  installed.set(target, uninstall);
  return uninstall;
}
