/**
 * The service in this process, for Node hosts (`setupPiecesServer`, the
 * loopback server): the core over storage in memory, its identifier streams fed
 * in-process, and the controls.
 */
import type { ModelAdapter, ModelConfig } from '../core/copilot/model.js';
import { createService, type Service } from '../core/service.js';
import { parseData, type PiecesSeed } from '../core/data.js';
import type { Logger } from '../core/log.js';
import { SAMPLE_ASSETS } from '../fixtures/sample-assets.js';
import { lazyStorage } from '../storage/lazy.js';
import { memoryStorage } from '../storage/memory.js';
import { LocalAnnouncements } from '../stream/local.js';
import { installStreamShim } from '../stream/shim.js';

export interface NodeServiceOptions {
  /** Base URLs to answer; default `http://localhost:1000` and `http://localhost:39300`. */
  bases?: readonly string[];
  /** Start with (and reset to) the four sample assets; default true. */
  sampleAssets?: boolean;
  /** Data to start with and to go back to on `reset()` (the format of `exportData()`). */
  data?: PiecesSeed;
  /** The clock for every time the service records; default `new Date()`. */
  now?: () => Date;
  /** The id generator for every record the service creates; default `crypto.randomUUID()`. */
  newId?: () => string;
  /** Print each request and its answer, or give each entry to a function. */
  log?: boolean | Logger;
  /** Largest accepted request body, in bytes; default and ceiling 16 MiB. */
  maxBodyBytes?: number;
  /** The copilot's model: an adapter or a configuration; default the extractive answers (no model). */
  model?: ModelAdapter | ModelConfig;
}

export interface NodeService {
  service: Service;
  /** A socket for `url` when it is one of the service's streams, else null. */
  openStream(url: string, protocols?: string | string[]): WebSocket | null;
  /** Answers a request under a base in this process (other URLs go to `fetch`). */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

const NOT_SERVED = Symbol('not a stream of this service');

/** The initial data: the sample assets (unless disabled, or given again in the data) and the given data. */
function initialData(options: NodeServiceOptions): PiecesSeed {
  const given = options.data?.assets ?? [];
  if (!Array.isArray(given)) return { ...options.data }; // refused by parseData, with its message
  const ids = new Set(given.map((asset: { id?: unknown } | null) => asset?.id));
  const samples = options.sampleAssets === false ? [] : SAMPLE_ASSETS.filter((asset) => !ids.has(asset.id));
  return { ...options.data, assets: [...samples, ...given] };
}

export function createNodeService(options: NodeServiceOptions = {}): NodeService {
  const now = options.now ?? (() => new Date());
  const newId = options.newId ?? (() => crypto.randomUUID());
  const clock = { now: () => now().toISOString(), newId };
  // Invalid data fails here, at once, with a message naming the problem in the data as given.
  parseData(options.data ?? {}, clock);
  const initial = initialData(options);
  const records = parseData(initial, clock);
  // Memory is never lost, so this opens once.
  const storage = lazyStorage(() =>
    memoryStorage().then(async (opened) => {
      await opened.loadData(records, { replace: true });
      return opened;
    }),
  );
  const announcements = new LocalAnnouncements();
  const service = createService({
    storage,
    bases: options.bases,
    maxBodyBytes: options.maxBodyBytes,
    model: options.model,
    now,
    newId,
    log: options.log,
    initialData: initial,
    onChange: (change) => announcements.announce(change),
  });
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => service.handle(new Request(input, init));

  // The page's stream sockets, fed by this service in this process (handshake and
  // catch-up through `fetch`, announcements from this service only).
  const streams = {
    WebSocket: function NotServed() {
      throw NOT_SERVED;
    } as unknown as typeof WebSocket,
  };
  installStreamShim({
    target: streams,
    bases: service.bases,
    fetch: (input, init) => fetch(input, init),
    isServiceAvailable: () => true,
    announcements: announcements.open,
  });

  function openStream(url: string, protocols?: string | string[]): WebSocket | null {
    try {
      return new streams.WebSocket(url, protocols);
    } catch (error) {
      if (error === NOT_SERVED) return null;
      throw error;
    }
  }

  return { service, openStream, fetch };
}

/** The far end of a stream connection (an intercepted socket, a loopback client). */
export interface StreamPeer {
  send(data: string): void;
  close(code: number, reason: string): void;
  /** The stream could not start: fail as a refused connection. */
  refuse(): void;
  onClose(listener: () => void): void;
  /** Frames the client sends (the copilot socket's questions; identifier streams ignore them). */
  onMessage(listener: (data: string) => void): void;
}

/**
 * Carries a socket's messages between the service's socket and a peer, and
 * closes each side with the other. Resolves true once the socket is open (its
 * first message follows), false if refused.
 */
export function bridgeStream(feed: WebSocket, peer: StreamPeer): Promise<boolean> {
  return new Promise((resolve) => {
    let open = false;
    // What the client sends before the service's socket is open waits for it (a loopback client opens first).
    const waiting: string[] = [];
    feed.onopen = () => {
      open = true;
      for (const data of waiting.splice(0)) feed.send(data);
      resolve(true);
    };
    feed.onmessage = (event) => peer.send(String(event.data));
    feed.onclose = (event) => {
      if (open) peer.close(event.code, event.reason);
      else peer.refuse();
      resolve(false);
    };
    peer.onClose(() => {
      if (feed.readyState <= 1) feed.close(); // CONNECTING or OPEN
    });
    peer.onMessage((data) => {
      if (feed.readyState === 1) feed.send(data);
      else if (feed.readyState === 0) waiting.push(data);
    });
  });
}
