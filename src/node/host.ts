/**
 * The service in this process, for the Node hosts (`setupPiecesServer`, the
 * loopback server): the core over storage in memory, its sockets fed in this
 * process, changes announced in this process only.
 */
import { WebSocket as NodeWebSocket } from 'ws';
import { mcpEndpoint } from '../core/mcp/server.js';
import type { ServiceSettings } from '../core/options.js';
import { localChannel } from '../host/channel.js';
import { createHost, type Host } from '../host/create-host.js';
import type { WebSocketLike } from '../host/mirror/upstream.js';
import { memoryStorage } from '../storage/memory.js';
import type { Storage, StoredData } from '../storage/storage.js';

/**
 * The fetch of this process as it was before any server listened (the interceptors patch the
 * global): a mirrored Pieces OS is reached with it, never through the service itself.
 */
const unpatchedFetch = globalThis.fetch.bind(globalThis);

export interface NodeHost extends Host {
  /** A socket for `url` when it is one of the service's sockets, else null. */
  openStream(url: string, protocols?: string | string[]): WebSocket | null;
  /** Answers a request under a base in this process (other URLs go to `fetch`). */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

const NOT_SERVED = Symbol('not a socket of this service');

/**
 * `own`: the addresses this host listens on (the loopback server's), never taken for a mirrored Pieces OS.
 * `open`: the storage (default in memory; the loopback server's `dataFile` keeps it on disk).
 */
export function createNodeHost(
  settings: ServiceSettings = {},
  own: readonly string[] = [],
  open: (initialData: () => StoredData) => Promise<Storage> = (initialData) => memoryStorage({ initialData }),
): NodeHost {
  // Memory is never lost: the database opens once, with the initial data.
  const host = createHost({
    open: (_hooks, initialData) => open(initialData),
    channel: localChannel(),
    // The Model Context Protocol endpoint (the Service Worker does not bundle its SDK).
    settings: { mcp: mcpEndpoint(), ...settings },
    // The `ws` package's WebSocket: the global one (where there is one) may be patched while a server listens.
    upstream: { fetch: unpatchedFetch, WebSocket: NodeWebSocket as unknown as new (url: string) => WebSocketLike, lock: 'alone', own },
  });
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => host.service.handle(new Request(input, init));

  // The service's sockets, fed by this host (handshake and catch-up through `fetch`,
  // announcements from this service only), on a constructor of their own.
  const sockets = {
    WebSocket: class {
      constructor() {
        throw NOT_SERVED;
      }
    } as unknown as typeof WebSocket,
  };
  host.feedStreams({ target: sockets });

  function openStream(url: string, protocols?: string | string[]): WebSocket | null {
    try {
      return new sockets.WebSocket(url, protocols);
    } catch (error) {
      if (error === NOT_SERVED) return null;
      throw error;
    }
  }

  return { ...host, openStream, fetch };
}
