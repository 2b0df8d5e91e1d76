/** The page API's messages: what a page asks its worker (or the in-page host), and the replies. */

export type PageRequest =
  | { type: 'pieces:hello'; version: string }
  | { type: 'pieces:claim' }
  | { type: 'pieces:add-assets'; assets: unknown }
  | { type: 'pieces:report-external-applications'; applications: unknown }
  /** Switches the copilot's model: a ModelConfig, or none for the host's default. */
  | { type: 'pieces:set-model'; model?: unknown }
  | { type: 'pieces:get-model' }
  /** What the page's Local Network Access step found: whether it may reach the upstream, and where (`'auto'`). */
  | { type: 'pieces:mirror-permission'; granted: boolean; upstream?: string; reason?: string }
  /** A test control (`pieces:reset`, `pieces:seed`, …: see controls.ts). */
  | { type: `pieces:${string}`; [field: string]: unknown };

export type PageReply =
  | { ok: true; version: string; bases: readonly string[] }
  | { ok: true; data: unknown }
  | { ok: true }
  /** The copilot's model, described. */
  | { ok: true; model: string }
  | { ok: false; error: string };
