/** Messages between the worker and pages: change broadcasts, the page API's requests, the socket paths. */
import type { Collection } from '../storage/schema.js';
import type { Change } from '../storage/storage.js';

/** Name of the BroadcastChannel on which the worker announces committed changes. */
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

/**
 * The WebSocket paths the page's shim serves, and what each carries: the
 * identifiers of a collection, the health heartbeat, the user profile, or
 * the copilot's answers.
 * (The route table has a GET route for each: the shim's handshake.)
 */
export const SOCKETS: Readonly<Record<string, Collection | 'health' | 'user' | 'copilot'>> = {
  '/conversations/stream/identifiers': 'conversation',
  '/messages/stream/identifiers': 'conversationMessage',
  '/assets/stream/identifiers': 'asset',
  '/applications/stream/identifiers': 'application',
  '/.well-known/stream/health': 'health',
  '/user/stream': 'user',
  /** The copilot's answers (its client frames travel as POSTs: see qgpt.ts). */
  '/qgpt/stream': 'copilot',
};

export type PageRequest =
  | { type: 'pieces:hello'; version: string }
  | { type: 'pieces:claim' }
  | { type: 'pieces:add-assets'; assets: unknown }
  | { type: 'pieces:report-external-applications'; applications: unknown }
  | ControlRequest
  /** Switches the copilot's model: a ModelConfig, or none for the host's default. */
  | { type: 'pieces:set-model'; model?: unknown }
  | { type: 'pieces:get-model' };

/** The test controls (`reset`, `seed`, …), sent by a page to its worker. */
export type ControlRequest =
  | { type: 'pieces:reset' }
  | { type: 'pieces:seed'; data: unknown }
  | { type: 'pieces:export' }
  | { type: 'pieces:use'; overrides: unknown }
  | { type: 'pieces:reset-overrides' };

export type PageReply =
  | { ok: true; version: string; bases: readonly string[] }
  | { ok: true; data: unknown }
  | { ok: true }
  /** The copilot's model, described. */
  | { ok: true; model: string }
  | { ok: false; error: string };
