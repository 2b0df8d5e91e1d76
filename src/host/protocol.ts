/** The page API's messages: what a page asks its worker (or the in-page host), and the replies. */

export type PageRequest =
  | { type: 'pieces:hello'; version: string }
  | { type: 'pieces:claim' }
  | { type: 'pieces:add-assets'; assets: unknown }
  | { type: 'pieces:report-external-applications'; applications: unknown }
  /** Switches the copilot's model (with `for`: that catalogue model's own): a ModelConfig, or none for the host's choice. */
  | { type: 'pieces:set-model'; model?: unknown; for?: string }
  | { type: 'pieces:get-model'; for?: string }
  /** The catalogue models with an adapter of their own: model id → description. */
  | { type: 'pieces:model-mapping' }
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
  /** Each catalogue model with an adapter of its own, by id, described. */
  | { ok: true; mapping: Record<string, string> }
  | { ok: false; error: string };
