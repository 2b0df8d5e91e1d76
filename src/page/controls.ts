/**
 * The test controls of a running service, the same on every host: in a page
 * they reach the worker that controls it (and so every tab of the origin).
 */
import type { PiecesData, PiecesSeed } from '../core/data.js';
import type { Override } from '../core/overrides.js';
import type { ControlRequest, PageReply } from '../stream/protocol.js';

export interface PiecesControls {
  /** Back to the initial data (the sample assets unless disabled). */
  reset(): Promise<void>;
  /** Adds records in the format of `exportData()`; ids and times are kept as given. */
  seed(data: PiecesSeed): Promise<void>;
  /** The whole store as one JSON-ready object. */
  exportData(): Promise<PiecesData>;
  /** Adds runtime overrides (status and body, delay, network error), tried before earlier ones. */
  use(...overrides: Override[]): Promise<void>;
  /** Removes every runtime override. */
  resetOverrides(): Promise<void>;
}

/** The controls over a function that sends a request to the worker and returns its reply (rejecting on `ok: false`). */
export function controlsOver(ask: (request: ControlRequest) => Promise<PageReply>): PiecesControls {
  return {
    reset: async () => void (await ask({ type: 'pieces:reset' })),
    seed: async (data) => void (await ask({ type: 'pieces:seed', data })),
    exportData: async () => ((await ask({ type: 'pieces:export' })) as { data: PiecesData }).data,
    use: async (...overrides) => void (await ask({ type: 'pieces:use', overrides })),
    resetOverrides: async () => void (await ask({ type: 'pieces:reset-overrides' })),
  };
}
