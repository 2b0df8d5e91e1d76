/**
 * The test controls, one table read by every host: a page's messages to its
 * worker, the in-page host, `setupPiecesServer()`, the loopback server's
 * `/__pieces/` paths and `piecesControls(page)` for browser test drivers all
 * run the same entries, with the same signature (every control returns a Promise).
 */
import type { PiecesData, PiecesSeed } from '../core/data.js';
import type { McpActivity } from '../core/mcp/activity.js';
import type { MirrorStatus } from '../core/mirror-spec.js';
import type { Override } from '../core/overrides.js';
import type { HostService } from './create-host.js';

export interface PiecesControls {
  /** Back to the initial data (the sample assets unless disabled, and the `data` option). */
  reset(): Promise<void>;
  /** Adds records in the format of `exportData()`; ids and times are kept as given. */
  seed(data: PiecesSeed): Promise<void>;
  /** The whole store as one JSON-ready object. */
  exportData(): Promise<PiecesData>;
  /** Adds runtime overrides (status and body, delay, network error), tried before earlier ones; in force at once. */
  use(...overrides: Override[]): Promise<void>;
  /** Removes every runtime override; at once. */
  resetOverrides(): Promise<void>;
  /** The mirrored Pieces OS's status (state, upstream, outbox, set-aside operations, last error); null without a mirror. */
  mirrorStatus(): Promise<MirrorStatus | null>;
  /**
   * The MCP endpoint's sessions and tool calls (null where MCP is not served: the Service Worker);
   * with `after` (a `seq` it answered), once something changed since, or after 20 s with nothing new.
   */
  mcpActivity(after?: number): Promise<McpActivity | null>;
}

export type ControlName = keyof PiecesControls;

interface Control {
  /** Its path under `/__pieces/` on the loopback server, and its page message `pieces:<path>`. */
  path: string;
  /** Its HTTP method on the loopback server. */
  method: 'GET' | 'POST';
  /** The page message's field that carries the argument (the loopback server's JSON body). */
  field?: 'data' | 'overrides' | 'after';
  run(service: HostService, arg: unknown): Promise<unknown>;
}

export const CONTROLS: Readonly<Record<ControlName, Control>> = {
  reset: { path: 'reset', method: 'POST', run: (service) => service.reset() },
  seed: { path: 'seed', method: 'POST', field: 'data', run: (service, data) => service.seed((data ?? {}) as PiecesSeed) },
  exportData: { path: 'export', method: 'GET', run: (service) => service.exportData() },
  use: {
    path: 'use',
    method: 'POST',
    field: 'overrides',
    // A page sends a list; the loopback server takes one override or a list. Each is checked by `use`.
    run: (service, overrides) => service.use(...((Array.isArray(overrides) ? overrides : [overrides]) as Override[])),
  },
  resetOverrides: { path: 'reset-overrides', method: 'POST', run: (service) => service.resetOverrides() },
  mirrorStatus: { path: 'mirror', method: 'GET', run: (service) => service.mirrorStatus() },
  // `after`: a number from a page or a program, the query parameter's text over HTTP (checked by the service).
  mcpActivity: { path: 'mcp', method: 'GET', field: 'after', run: (service, after) => service.mcpActivity(after as number | undefined) },
};

/** A control by its page message type (`pieces:seed`), if it is one. */
export function controlOfMessage(type: unknown): [ControlName, Control] | undefined {
  return (Object.entries(CONTROLS) as Array<[ControlName, Control]>).find(([, control]) => type === `pieces:${control.path}`);
}

/** A control by its path under `/__pieces/`, if it is one. */
export function controlOfPath(path: string): [ControlName, Control] | undefined {
  return (Object.entries(CONTROLS) as Array<[ControlName, Control]>).find(([, control]) => control.path === path);
}

/** The page message that runs a control (what `controlOfMessage` reads). */
export function controlMessage(name: ControlName, arg?: unknown): { type: string; [field: string]: unknown } {
  const control = CONTROLS[name];
  return { type: `pieces:${control.path}`, ...(control.field ? { [control.field]: arg } : {}) };
}

/** The controls over a function that runs one (on a worker, in a page, over HTTP) and gives its result. */
export function controlsOver(call: (name: ControlName, arg?: unknown) => Promise<unknown>): PiecesControls {
  return {
    reset: async () => void (await call('reset')),
    seed: async (data) => void (await call('seed', data)),
    exportData: async () => (await call('exportData')) as PiecesData,
    use: async (...overrides) => void (await call('use', overrides)),
    resetOverrides: async () => void (await call('resetOverrides')),
    mirrorStatus: async () => (await call('mirrorStatus')) as MirrorStatus | null,
    mcpActivity: async (after) => (await call('mcpActivity', after)) as McpActivity | null,
  };
}

/** The controls of a service in this process. */
export const serviceControls = (service: HostService): PiecesControls => controlsOver((name, arg) => CONTROLS[name].run(service, arg));
