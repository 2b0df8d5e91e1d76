/**
 * The loopback server's bounds: what one client may hold of it (docs/testing.md, "Bounds"):
 * connections open at once, request bodies in flight, questions on one copilot socket. The
 * times (headers, request, idle) are node:http's, set where the server is made (serve.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { refuseRaw, TEXT } from './serve-send.js';

/** What one client may hold of the loopback server (docs/testing.md, "Bounds"). Times in ms; 0 turns a time off. */
export interface LoopbackLimits {
  /**
   * Connections (HTTP and WebSocket) open at once; default 256. At the limit a new connection
   * closes the oldest one with no request in progress, or, when there is none, is answered 503 and closed.
   */
  maxConnections?: number;
  /** Time a client has to send a request's headers (from its first byte, or from connecting); default 10 s. Then: 408 and closed. */
  headersTimeout?: number;
  /** Time a client has to send a whole request, body included; default 30 s. Then: 408 and closed. */
  requestTimeout?: number;
  /** A connection where nothing moves either way (a client that does not read its answer) is closed after it; default 120 s. */
  idleTimeout?: number;
  /** Request bodies being received at once, in bytes (each counted at its Content-Length); default 64 MiB. Over it: 503. */
  maxBodyBytesInFlight?: number;
  /** Questions one copilot socket (`/qgpt/stream`) may have unanswered; default 8. Over it: a FAILED frame (statusCode 429). */
  maxQuestionsInFlight?: number;
}

export const DEFAULT_LIMITS: Required<LoopbackLimits> = {
  maxConnections: 256,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  idleTimeout: 120_000,
  maxBodyBytesInFlight: 64 * 1024 * 1024,
  maxQuestionsInFlight: 8,
};

/** `options`' bounds, each at its default where it names none. */
export function limitsOf(options: LoopbackLimits): Required<LoopbackLimits> {
  return {
    ...DEFAULT_LIMITS,
    ...Object.fromEntries(Object.entries(options).filter(([name, value]) => name in DEFAULT_LIMITS && value !== undefined)),
  };
}

/** One connection: its requests in progress (answered in order, one at a time), and whether it became a WebSocket. */
export interface Connection {
  requests: number;
  websocket: boolean;
  queue: Promise<void>;
}

/**
 * Adds `socket` to `connections` (open connections, oldest first). At `maxConnections`, room is
 * made by closing the oldest connection that waits for nothing (idle, or still sending its
 * headers); when there is none, `socket` is answered 503 and closed, and not added.
 */
export function admitConnection(connections: Map<Socket, Connection>, socket: Socket, maxConnections: number) {
  if (connections.size >= maxConnections) {
    const idle = [...connections].find(([, connection]) => connection.requests === 0 && !connection.websocket)?.[0];
    if (!idle)
      return refuseRaw(socket, '503 Service Unavailable', `Too many connections (${maxConnections} at most); try again once one closes.`);
    connections.delete(idle);
    idle.destroy();
  }
  connections.set(socket, { requests: 0, websocket: false, queue: Promise.resolve() });
  socket.on('close', () => connections.delete(socket));
}

/** The request bodies being received at once, each counted at its Content-Length (at most `maxBodyBytes`) until its answer closes. */
export function bodyBudget(limit: number, maxBodyBytes: number) {
  let bytes = 0;
  return {
    /** Bytes counted in flight. */
    bytes: () => bytes,
    /** Counts `incoming`'s body until `outgoing` closes; over the budget, answers 503 (closing the connection) and returns false. */
    admit(incoming: IncomingMessage, outgoing: ServerResponse): boolean {
      if (incoming.headers['content-length'] === undefined && incoming.headers['transfer-encoding'] === undefined) return true;
      const declared = Number(incoming.headers['content-length']);
      const counted = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, maxBodyBytes) : maxBodyBytes;
      if (bytes + counted > limit) {
        outgoing.shouldKeepAlive = false;
        outgoing
          .writeHead(503, { ...TEXT, 'Retry-After': '1' })
          .end(`Too many request bodies in flight (${limit} bytes at most); try again once they are answered.`);
        return false;
      }
      bytes += counted;
      outgoing.on('close', () => {
        bytes -= counted;
      });
      return true;
    },
  };
}

/**
 * Whether a copilot socket's input is a question over `limit` (a stop or reset always goes
 * through): its questions unanswered, and those it took before the service's socket opened
 * (waiting in the bridge, not yet counted by it).
 */
export function questionsBound(limit: number) {
  const early = new WeakMap<WebSocket, number>();
  return (feed: WebSocket, input: string): boolean => {
    const connecting = feed.readyState === feed.CONNECTING;
    const waiting = connecting ? (early.get(feed) ?? 0) : 0;
    if (((feed as WebSocket & { pending?: number }).pending ?? 0) + waiting < limit) {
      if (connecting) early.set(feed, waiting + 1);
      return false;
    }
    try {
      const sent = JSON.parse(input) as { stop?: unknown; reset?: unknown } | null;
      return !(sent?.stop || sent?.reset);
    } catch {
      return true;
    }
  };
}
