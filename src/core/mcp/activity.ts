/**
 * What the MCP endpoint has been doing, for a page to show (the `mcpActivity` control,
 * `GET /__pieces/mcp`): its sessions (transport, the client's name and version from its initialize
 * request, opened, last active, closed and why) and its tool calls (session, tool, arguments in
 * short, started, ended, duration, ok or the error). Bounded: the live sessions (the endpoint keeps
 * at most its `maxSessions`), the last CLOSED_KEPT closed ones, the last CALLS_KEPT calls. It reads
 * JSON-RPC messages as the transports carry them and does not import the SDK.
 */
import { HttpError } from '../http.js';

export type McpTransportName = 'streamable-http' | 'sse';

/** Why a session ended: its client ended it (DELETE), dropped its event stream, or the server closed it (to make room, or on shutdown). */
export type McpCloseReason = 'ended' | 'dropped' | 'evicted' | 'closed';

export interface McpSessionRecord {
  id: string;
  transport: McpTransportName;
  /** The client's `clientInfo` from its initialize request; null until then. */
  client: { name: string; version: string } | null;
  /** The protocol version the client asked for on initialize. */
  protocolVersion: string | null;
  opened: string;
  /** When a message of the client last came in. */
  lastActive: string;
  closed: string | null;
  closedBy: McpCloseReason | null;
  /** Tool calls made in this session (all of them, including those no longer in `calls`). */
  calls: number;
}

export interface McpCallRecord {
  /** The activity's sequence number when the call came in. */
  seq: number;
  session: string;
  tool: string;
  /** The arguments as JSON, cut to ARGUMENTS_SHOWN characters. */
  arguments: string;
  started: string;
  ended: string | null;
  durationMs: number | null;
  /** Null while in progress; false for a JSON-RPC error or a result marked `isError`. */
  ok: boolean | null;
  error: string | null;
}

export interface McpActivity {
  /** Goes up with every change: ask again with `after` set to it to wait for the next. */
  seq: number;
  /** Live sessions, then the recently closed ones; most recently active first. */
  sessions: McpSessionRecord[];
  /** The last tool calls, newest first. */
  calls: McpCallRecord[];
  limits: { calls: number; closedSessions: number };
}

/** What one session's transport reports. */
export interface SessionRecorder {
  /** A message of the client (any: it makes the session active; initialize and tools/call are read). */
  received(message: unknown): void;
  /** A message of the server (a tools/call's answer ends it). */
  sent(message: unknown): void;
  /** The session ended (the first reason given stands). */
  closed(reason: McpCloseReason): void;
}

export const CALLS_KEPT = 100;
export const CLOSED_KEPT = 16;
const ARGUMENTS_SHOWN = 200;
const ERROR_SHOWN = 300;
/** How long a request for what follows `after` waits when nothing happens (a long-poll's answer comes before proxies and clients time out). */
export const WAIT_MS = 20_000;
/** Requests waiting at once, at most: past it the one waiting longest is answered now. */
const WAITERS_KEPT = 64;

type Message = { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };

const short = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown, length = 100) => (typeof value === 'string' ? short(value, length) : '');

/** The text of a tool result marked `isError` (its first text content). */
function resultError(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const first = content.map(record).find((item) => typeof item.text === 'string');
  return short(first ? String(first.text) : 'the tool answered an error', ERROR_SHOWN);
}

/** `after` as given (a number, or a query parameter's text): absent, or a whole number ≥ 0; anything else is refused 400. */
export function sequenceNumber(after: unknown): number | undefined {
  if (after === undefined || after === null || after === '') return undefined;
  const value = typeof after === 'string' && /^\d{1,15}$/.test(after) ? Number(after) : after;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new HttpError(
      400,
      `after must be a whole number ≥ 0 (the seq of an earlier answer), not ${JSON.stringify(after)?.slice(0, 50)}.`,
    );
  }
  return value;
}

interface Waiter {
  resolve(activity: McpActivity): void;
  timer: ReturnType<typeof setTimeout>;
}

export class McpActivityLog {
  #seq = 0;
  readonly #live = new Map<string, McpSessionRecord>();
  #closed: McpSessionRecord[] = [];
  #calls: McpCallRecord[] = [];
  readonly #waiters = new Set<Waiter>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  #changed() {
    this.#seq++;
    const activity = this.snapshot();
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(activity);
    }
    this.#waiters.clear();
  }

  snapshot(): McpActivity {
    const byActivity = (a: McpSessionRecord, b: McpSessionRecord) => b.lastActive.localeCompare(a.lastActive);
    return {
      seq: this.#seq,
      sessions: [...[...this.#live.values()].sort(byActivity), ...[...this.#closed].reverse()].map((session) => ({
        ...session,
        client: session.client && { ...session.client },
      })),
      calls: [...this.#calls].reverse().map((call) => ({ ...call })),
      limits: { calls: CALLS_KEPT, closedSessions: CLOSED_KEPT },
    };
  }

  /** The activity now, or (with `after`) once its sequence number passes `after`, or after `waitMs` with nothing new. */
  read(after?: number, waitMs = WAIT_MS): Promise<McpActivity> {
    if (after === undefined || this.#seq > after) return Promise.resolve(this.snapshot());
    if (this.#waiters.size >= WAITERS_KEPT) {
      const oldest = this.#waiters.values().next().value!;
      this.#waiters.delete(oldest);
      clearTimeout(oldest.timer);
      oldest.resolve(this.snapshot());
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          resolve(this.snapshot());
        }, waitMs),
      };
      (waiter.timer as { unref?: () => void }).unref?.();
      this.#waiters.add(waiter);
    });
  }

  /** A session opened: what its transport reports goes to the recorder returned. */
  open(id: string, transport: McpTransportName): SessionRecorder {
    const at = this.now().toISOString();
    const session: McpSessionRecord = {
      id,
      transport,
      client: null,
      protocolVersion: null,
      opened: at,
      lastActive: at,
      closed: null,
      closedBy: null,
      calls: 0,
    };
    this.#live.set(id, session);
    this.#changed();
    /** Tool calls in progress, by JSON-RPC request id. */
    const running = new Map<string, { call: McpCallRecord; start: number }>();

    const finish = (key: string, ok: boolean, error: string | null) => {
      const entry = running.get(key);
      if (!entry) return false;
      running.delete(key);
      Object.assign(entry.call, {
        ended: this.now().toISOString(),
        durationMs: Math.round((performance.now() - entry.start) * 10) / 10,
        ok,
        error,
      });
      return true;
    };

    return {
      received: (raw) => {
        if (session.closed) return;
        const message = record(raw) as Message;
        session.lastActive = this.now().toISOString();
        const params = record(message.params);
        if (message.method === 'initialize') {
          const info = record(params.clientInfo);
          session.client = { name: text(info.name), version: text(info.version) };
          session.protocolVersion = text(params.protocolVersion) || null;
        } else if (message.method === 'tools/call' && (typeof message.id === 'string' || typeof message.id === 'number')) {
          const call: McpCallRecord = {
            seq: this.#seq + 1,
            session: id,
            tool: text(params.name) || '(no name)',
            arguments: short(JSON.stringify(params.arguments ?? {}) ?? '', ARGUMENTS_SHOWN),
            started: session.lastActive,
            ended: null,
            durationMs: null,
            ok: null,
            error: null,
          };
          session.calls++;
          running.set(String(message.id), { call, start: performance.now() });
          this.#calls.push(call);
          if (this.#calls.length > CALLS_KEPT) this.#calls.splice(0, this.#calls.length - CALLS_KEPT);
        }
        this.#changed();
      },
      sent: (raw) => {
        const message = record(raw) as Message;
        if (message.method !== undefined || (typeof message.id !== 'string' && typeof message.id !== 'number')) return;
        const key = String(message.id);
        const ended =
          message.error !== undefined
            ? finish(key, false, short(text(record(message.error).message, ERROR_SHOWN) || 'JSON-RPC error', ERROR_SHOWN))
            : record(message.result).isError === true
              ? finish(key, false, resultError(record(message.result)))
              : finish(key, true, null);
        if (ended) this.#changed();
      },
      closed: (reason) => {
        if (session.closed) return;
        session.closed = this.now().toISOString();
        session.closedBy = reason;
        for (const key of [...running.keys()]) finish(key, false, `the session closed (${reason}) before the tool answered`);
        this.#live.delete(id);
        this.#closed.push(session);
        if (this.#closed.length > CLOSED_KEPT) this.#closed.splice(0, this.#closed.length - CLOSED_KEPT);
        this.#changed();
      },
    };
  }
}
