/**
 * The settings every host takes (the Service Worker, page mode, the Node test
 * host, the loopback server), documented once here; each host's options
 * extend them with its own.
 */
import type { ModelAdapter, ModelConfig } from './copilot/model.js';
import type { ModelMapping } from './copilot/copilot.js';
import type { PiecesSeed } from './data.js';
import { SAMPLE_ASSETS } from './fixtures/sample-assets.js';
import type { Logger } from './log.js';
import type { McpFactory } from './mcp/endpoint.js';
import type { UserConfig } from './models/user.js';

export interface ServiceSettings {
  /**
   * Base URLs to answer; default `DEFAULT_BASES`: every address a client probes for a local
   * Pieces OS (`localhost` and `127.0.0.1` on ports 1000, 5323 and 39300–39333). A port range
   * may be written compactly: `http://localhost:39300-39333`.
   */
  bases?: readonly string[];
  /** The local user profile (`GET /user`, connect); `null` for none. Default: a local profile. */
  user?: UserConfig | null;
  /** Start with (and reset to) the sample assets; default true. */
  sampleAssets?: boolean;
  /**
   * Data to start with (on a database's first start) and to go back to on `reset()`, in the
   * format of `exportData()`; with the sample assets unless `sampleAssets: false`.
   */
  data?: PiecesSeed;
  /** Largest accepted request body, in bytes; default and ceiling 16 MiB. */
  maxBodyBytes?: number;
  /** Print each request and its answer (as MSW does), or give each log entry to a function. */
  log?: boolean | Logger;
  /**
   * The copilot's model: an adapter, or a configuration (`{ type: 'openai', baseUrl, model }`);
   * default the extractive answers (no model). A page may switch it at run time (`setModel`).
   */
  model?: ModelAdapter | ModelConfig;
  /**
   * Catalogue models with an adapter of their own (`GET /models` lists the catalogue): keys are
   * model ids, `unique`s or names, values adapters or configurations, e.g.
   * `{ 'llama3.2:3b-instruct-q4_K_S': { type: 'ollama', baseUrl: 'http://127.0.0.1:11434', model: 'llama3.2:3b' } }`.
   * A question naming such a model is answered by its adapter, every other by `model`; a
   * download of a model mapped to Ollama pulls it there. A page may change it at run time.
   */
  models?: ModelMapping;
  /** The clock for every time the service records (`created`, `updated`, events); default `new Date()`. */
  now?: () => Date;
  /** The id generator for every record the service creates; default a random UUID. */
  newId?: () => string;
  /**
   * Mirror a real Pieces OS (docs/mirror.md): while it answers, every request goes to it and
   * what it holds is kept here; while it does not, the service answers from that copy and
   * queues writes, replayed in order when it is back.
   */
  mirror?: MirrorOptions;
  /**
   * The Model Context Protocol endpoint (`/model_context_protocol/…`, docs/testing.md): the Node
   * hosts pass the one made with the official SDK (`mcpEndpoint()`, src/core/mcp/server.ts); without
   * one (the Service Worker) those paths answer 501, saying why.
   */
  mcp?: McpFactory;
}

export interface MirrorOptions {
  /**
   * The Pieces OS base URL (`http://localhost:39300`), or `'auto'`: found as clients find it
   * (health on localhost 39300–39333, 1000 and 5323, never the service's own port).
   */
  upstream: string;
  /** How long the upstream may stay silent on a request before it counts as away; default 10 000 ms. */
  timeoutMs?: number;
  /** The longest wait between tries to reach it while it is away or failing (1 s, doubling up to this); default 30 000 ms. */
  retryMaxMs?: number;
}

/** The initial data the settings describe: the given data, with the sample assets not given again in it (unless turned off). */
export function initialData(settings: Pick<ServiceSettings, 'data' | 'sampleAssets'>): PiecesSeed {
  const given = settings.data?.assets ?? [];
  if (!Array.isArray(given)) return { ...settings.data }; // refused by parseData, with its message
  const ids = new Set(given.map((asset: { id?: unknown } | null) => asset?.id));
  const samples = settings.sampleAssets === false ? [] : SAMPLE_ASSETS.filter((asset) => !ids.has(asset.id));
  return { ...settings.data, assets: [...samples, ...given] };
}
