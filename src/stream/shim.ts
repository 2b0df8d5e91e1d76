/**
 * The page's WebSocket shim: socket URLs under the bases get a socket fed by the service, every other
 * URL the native WebSocket (docs/architecture.md, "Sockets").
 */
import { baseMatcher, DEFAULT_BASES, webSocketBase } from '../shared/bases.js';
import { CHANGES_CHANNEL, socketKind, type SocketKind } from '../core/stream-wire.js';
import { Announcements, type AnnouncementChannel } from './announcements.js';
import { CopilotSocket } from './copilot-socket.js';
import { CLOSE_UNAVAILABLE, FeedSocket } from './feed-socket.js';
import { ProgressSocket } from './progress-socket.js';
import { listen } from './served-socket.js';

export { CLOSE_DATABASE_REPLACED, CLOSE_FELL_BEHIND, CLOSE_UNAVAILABLE } from './feed-socket.js';
export type { AnnouncementChannel } from './announcements.js';

/** How often the health socket checks the service and sends `ok`, by default. */
export const HEALTH_INTERVAL_MS = 5_000;

/** How often an identifier socket checks the change sequence, by default. */
export const SEQUENCE_CHECK_MS = 3_000;

/** How long an identifier socket keeps retrying a catch-up the service does not answer, by default. */
export const GIVE_UP_MS = 30_000;

export interface StreamShimOptions {
  /** Base URLs (http/https) whose WebSocket form is served; default the service's defaults. */
  bases?: readonly string[];
  /** The global object to patch; default `globalThis`. */
  target?: { WebSocket: typeof WebSocket };
  /** The fetch used for handshakes and catch-up (the fast path's, in-process hosts' and tests' own); default `fetch`. */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /**
   * Whether a service worker is answering; default: the page has a controller.
   * When false, sockets fail like a refused connection (error, then close 1006).
   */
  isServiceAvailable?: () => boolean;
  /** Period of the health socket's `ok`, in ms; default `HEALTH_INTERVAL_MS`. */
  healthIntervalMs?: number;
  /** Period of an identifier socket's sequence check, in ms; default `SEQUENCE_CHECK_MS`. */
  sequenceCheckMs?: number;
  /** How long failed catch-ups are retried before the socket closes with CLOSE_UNAVAILABLE; default `GIVE_UP_MS`. */
  giveUpMs?: number;
  /**
   * Opens the channel on which change announcements arrive; default a
   * BroadcastChannel named `pieces-os-worker:changes` (the worker's). Hosts
   * running the service in the same process give their own, so that services are isolated.
   */
  announcements?: () => AnnouncementChannel;
}

const installed = new WeakMap<object, () => void>();

/**
 * Patches `WebSocket` so that socket URLs under the bases get a served socket.
 * Returns a function that restores the native constructor. Installing twice on
 * one target replaces the first installation.
 */
export function installStreamShim(options: StreamShimOptions = {}): () => void {
  const target = options.target ?? (globalThis as unknown as { WebSocket: typeof WebSocket });
  installed.get(target)?.();
  const Native = target.WebSocket;
  const matcher = baseMatcher(options.bases ?? DEFAULT_BASES, webSocketBase);
  const fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const available = options.isServiceAvailable ?? (() => typeof navigator !== 'undefined' && !!navigator.serviceWorker?.controller);
  const announcements = new Announcements(
    options.announcements ?? (() => new BroadcastChannel(CHANGES_CHANNEL) as unknown as AnnouncementChannel),
  );
  const timing = {
    healthIntervalMs: options.healthIntervalMs ?? HEALTH_INTERVAL_MS,
    sequenceCheckMs: options.sequenceCheckMs ?? SEQUENCE_CHECK_MS,
    giveUpMs: options.giveUpMs ?? GIVE_UP_MS,
  };

  /** The http(s) URL and kind of a socket URL under the bases, or null. */
  function socketOf(url: URL): { httpUrl: string; kind: SocketKind } | null {
    const match = matcher.match(url);
    const path = match?.path.replace(/\/+$/, '');
    const kind = path ? socketKind(path) : undefined;
    if (!match || !kind) return null;
    return { httpUrl: match.base.origin.replace(/^ws/, 'http') + match.base.path + path, kind };
  }

  function PiecesWebSocket(this: unknown, url: string | URL, protocols?: string | string[]) {
    if (!new.target) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator.");
    let parsed: URL | null = null;
    try {
      parsed = new URL(String(url));
    } catch {
      // Let the native constructor throw its own SyntaxError.
    }
    const socket = parsed && socketOf(parsed);
    if (!parsed || !socket) return new Native(url, protocols);
    listen(parsed.href);
    const { httpUrl, kind } = socket;
    if (kind === 'copilot') return new CopilotSocket(parsed.href, protocols, { httpUrl, fetch, available });
    if (kind === 'progress')
      return new ProgressSocket(parsed.href, protocols, {
        httpUrl,
        fetch,
        available,
        giveUpMs: timing.giveUpMs,
        closeUnavailable: CLOSE_UNAVAILABLE,
      });
    return new FeedSocket(parsed.href, protocols, { httpUrl, kind, fetch, available, announcements, ...timing });
  }
  PiecesWebSocket.prototype = Native.prototype;
  for (const [name, value] of Object.entries({ CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 })) {
    Object.defineProperty(PiecesWebSocket, name, { value, enumerable: true });
  }
  Object.defineProperty(PiecesWebSocket, Symbol.hasInstance, {
    value: (value: unknown) =>
      value instanceof Native || value instanceof FeedSocket || value instanceof CopilotSocket || value instanceof ProgressSocket,
  });
  target.WebSocket = PiecesWebSocket as unknown as typeof WebSocket;

  const uninstall = () => {
    if (target.WebSocket === (PiecesWebSocket as unknown)) target.WebSocket = Native;
    installed.delete(target);
  };
  installed.set(target, uninstall);
  return uninstall;
}
