/** The opt-in request log: one line per request, as MSW prints them. */
import { PREFIX } from '../shared/console.js';

export interface LogEntry {
  /** The operation that answered, when the path names one. */
  operation?: string;
  method: string;
  url: string;
  /** The path under the base. */
  path: string;
  /** 0 for a network error. */
  status: number;
  /** Milliseconds from the request to the answer. */
  ms: number;
  /** The answer came from an override. */
  overridden: boolean;
  /**
   * A WebSocket's: `open`, its connection (`status` 101 when accepted, else the
   * status that refused it); `message`, a frame a client sent on it (a copilot question).
   */
  socket?: 'open' | 'message';
}

export type Logger = (entry: LogEntry) => void;

const STATUS_TEXT: Record<number, string> = {
  101: 'Switching Protocols',
  200: 'OK',
  204: 'No Content',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

/**
 * `[pieces-os-worker] 12:04:05 conversationsSnapshot GET /conversations 200 OK (3 ms)`;
 * a socket's connection `… conversationsStreamIdentifiers WS /conversations/stream/identifiers 101 Switching Protocols (2 ms)`,
 * a frame sent on it `… qgptStream WS /qgpt/stream message 200 OK (4 ms)`.
 */
export function formatEntry(entry: LogEntry, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  const status = entry.status === 0 ? 'network error' : `${entry.status} ${STATUS_TEXT[entry.status] ?? ''}`.trim();
  const name = entry.operation ? `${entry.operation} ` : '';
  const method = entry.socket ? 'WS' : entry.method;
  const query = new URL(entry.url).search;
  const message = entry.socket === 'message' ? ' message' : '';
  return `${PREFIX} ${time} ${name}${method} ${entry.path || '/'}${query}${message} ${status} (${Math.round(entry.ms)} ms)${entry.overridden ? ' [override]' : ''}`;
}

export const consoleLogger: Logger = (entry) => console.log(formatEntry(entry));

/** The logger for a `log` option: `true` prints to the console, a function receives each entry. */
export function loggerFor(option: boolean | Logger | undefined): Logger | undefined {
  return typeof option === 'function' ? option : option ? consoleLogger : undefined;
}
