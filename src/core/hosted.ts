/**
 * The service as a browser host runs it (the Service Worker, or the page in
 * page mode): the sample assets as initial data, overrides kept in the
 * database for every tab, each committed change announced.
 */
import type { ModelAdapter, ModelConfig } from './copilot/model.js';
import type { UserConfig } from './models/user.js';
import { createService, type Service } from './service.js';
import { SAMPLE_ASSETS } from '../fixtures/sample-assets.js';
import type { Change, Storage } from '../storage/storage.js';

export interface HostedOptions {
  /** Base URLs to answer (a port range may be written `http://localhost:39300-39333`); default `DEFAULT_BASES`. */
  bases?: readonly string[];
  /** The local user profile; null for none. */
  user?: UserConfig | null;
  /** Store the sample assets on the database's first start (and on `reset()`); default true. */
  sampleAssets?: boolean;
  maxBodyBytes?: number;
  /** Print each request and its answer in the console. */
  log?: boolean;
  /**
   * The copilot's model: an adapter or a configuration; default the extractive answers
   * (no model). A page may switch it at run time (`setModel` of the page API).
   */
  model?: ModelAdapter | ModelConfig;
}

/** The sample assets, unless turned off. */
export const initialAssets = (options: HostedOptions) => (options.sampleAssets === false ? [] : SAMPLE_ASSETS);

export function createHostedService(storage: Storage, announce: (change: Change) => void, options: HostedOptions): Service {
  return createService({
    storage,
    bases: options.bases,
    user: options.user,
    maxBodyBytes: options.maxBodyBytes,
    model: options.model,
    onChange: announce,
    log: options.log,
    initialData: { assets: initialAssets(options) },
    // Overrides set by a test hold for every tab until reset, across restarts.
    keepOverrides: { load: () => storage.getMeta('overrides'), save: (list) => storage.setMeta('overrides', list) },
  });
}
