/** Messages between the worker and pages: change broadcasts and the page API's requests. */
import type { Change } from '../storage/storage.js';

/** Name of the BroadcastChannel on which the worker announces committed conversation changes. */
export const CHANGES_CHANNEL = 'pieces-os-worker:changes';

export interface ChangeMessage {
  type: 'change';
  change: Change;
}

export type PageRequest =
  | { type: 'pieces:hello'; version: string }
  | { type: 'pieces:claim' }
  | { type: 'pieces:add-assets'; assets: unknown }
  | { type: 'pieces:report-external-applications'; applications: unknown }
  /** Switches the copilot's model: a ModelConfig, or none for the host's default. */
  | { type: 'pieces:set-model'; model?: unknown }
  | { type: 'pieces:get-model' };

export type PageReply =
  | { ok: true; version: string; bases: readonly string[] }
  | { ok: true }
  /** The copilot's model, described. */
  | { ok: true; model: string }
  | { ok: false; error: string };
