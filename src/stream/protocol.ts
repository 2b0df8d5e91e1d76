/** Messages between the worker and pages: change broadcasts and the page API's requests. */
import type { Change } from '../storage/storage.js';

/** Name of the BroadcastChannel on which the worker announces committed conversation changes. */
export const CHANGES_CHANNEL = 'pieces-os-worker:changes';

export interface ChangeMessage {
  type: 'change';
  change: Change;
}

/**
 * What the worker says about itself on the same channel: `worker` when a
 * worker (of `version`) has taken over, `database` when it opened a new
 * database after losing the one it had (wiped: the change sequence starts
 * again, under a new identity).
 */
export type WorkerMessage = { type: 'worker'; version: string } | { type: 'database'; identity: string };

export type PageRequest =
  | { type: 'pieces:hello'; version: string }
  | { type: 'pieces:claim' }
  | { type: 'pieces:add-assets'; assets: unknown }
  | { type: 'pieces:report-external-applications'; applications: unknown };

export type PageReply =
  | { ok: true; version: string; bases: readonly string[] }
  | { ok: true }
  | { ok: false; error: string };
