/**
 * The copilot's state in a running service: the relevance corpus, long-term memory's index, the
 * model adapters (switchable at run time), the answers being streamed
 * (so that a stop or reset can reach them) and the model downloads running.
 *
 * Which adapter answers a model id: the adapter mapped to that catalogue
 * model (chosen at run time, else given by the host), else the default one
 * (chosen at run time, else the host's, else the extractive answers). Ids that
 * are not in the catalogue get the default.
 */
import type { Change, Storage } from '../../storage/storage.js';
import { badRequest } from '../http.js';
import type { JsonObject } from '../validate.js';
import { findCatalogueModel } from './catalogue.js';
import { Memory } from '../ltm/memory.js';
import { Corpus } from './corpus.js';
import { createModel } from './create-model.js';
import { Downloads } from './downloads.js';
import { parseModelConfig, type ModelAdapter, type ModelConfig, type ModelEndpoint } from './model.js';

export interface RunningAnswer {
  conversation: string;
  controller: AbortController;
}

/** Where a model configuration chosen at run time is kept, so that it outlives the worker. */
const MODEL_KEY = 'copilotModel';
/** Where the configurations chosen at run time for catalogue models are kept (model id → configuration). */
const MODELS_KEY = 'copilotModels';

/** Adapters (or configurations) for catalogue models, by model id, `unique` or name. */
export type ModelMapping = Readonly<Record<string, ModelAdapter | ModelConfig>>;

/** The catalogue id a key (id, `unique` or name) designates; a 400 naming it when none does. */
export function catalogueId(key: string, path = 'model'): string {
  const found = findCatalogueModel(key);
  if (!found) throw badRequest(`${path} ${JSON.stringify(key)} is not a model of the catalogue (GET /models lists them).`);
  return found.id;
}

export class Copilot {
  readonly corpus: Corpus;
  /** Long-term memory's index: the workstream summaries and events. */
  readonly memory: Memory;
  readonly #storage: Storage;
  /** The host's model: used until a page chooses another. */
  readonly #default: ModelAdapter;
  #model: Promise<ModelAdapter> | null = null;
  /** The host's adapters for catalogue models, by model id. */
  readonly #hostMapping: ReadonlyMap<string, ModelAdapter>;
  /** Adapter objects chosen at run time for catalogue models (in memory only). */
  readonly #runtimeAdapters = new Map<string, ModelAdapter>();
  /** Every catalogue model's own adapter, once read. */
  #mapping: Promise<Map<string, ModelAdapter>> | null = null;
  /** Model downloads running, and their progress. */
  readonly downloads = new Downloads();
  /** Streamed answers in progress, by request id. */
  readonly running = new Map<string, RunningAnswer>();
  /** The application named in the seeds the service returns, once read. */
  application: Promise<JsonObject> | null = null;

  constructor(storage: Storage, model?: ModelAdapter | ModelConfig, mapping: ModelMapping = {}) {
    this.corpus = new Corpus(storage);
    this.memory = new Memory(storage);
    this.#storage = storage;
    this.#default = createModel(model);
    this.#hostMapping = new Map(Object.entries(mapping).map(([key, value]) => [catalogueId(key, 'models:'), createModel(value)]));
  }

  /** The default model: the one chosen at run time (kept in the database), else the host's. */
  #defaultModel(): Promise<ModelAdapter> {
    this.#model ??= this.#storage.getMeta<ModelConfig>(MODEL_KEY).then(
      (config) => (config ? createModel(config) : this.#default),
      () => this.#default,
    );
    return this.#model;
  }

  /** The catalogue models that have an adapter of their own, by id. */
  mapping(): Promise<Map<string, ModelAdapter>> {
    this.#mapping ??= this.#storage.getMeta<Record<string, ModelConfig>>(MODELS_KEY).then(
      (kept) => {
        const mapping = new Map(this.#hostMapping);
        for (const [id, config] of Object.entries(kept ?? {})) mapping.set(id, createModel(config));
        for (const [id, adapter] of this.#runtimeAdapters) mapping.set(id, adapter);
        return mapping;
      },
      (error: unknown) => {
        this.#mapping = null;
        throw error;
      },
    );
    return this.#mapping;
  }

  /** The adapter that answers a model id: the model's own, else the default. */
  async model(id?: string): Promise<ModelAdapter> {
    const own = id === undefined ? undefined : (await this.mapping()).get(id);
    return own ?? this.#defaultModel();
  }

  /** The servers the configured adapters ask: the default one's first, then the catalogue models' own. */
  async endpoints(): Promise<ModelEndpoint[]> {
    const adapters = [await this.#defaultModel(), ...(await this.mapping()).values()];
    return adapters.flatMap((adapter) => (adapter.endpoint ? [adapter.endpoint] : []));
  }

  /**
   * Switches a model for the answers asked from now on: the default one, or (with `forModel`,
   * a catalogue id, `unique` or name) that catalogue model's own. A configuration is kept in
   * the database (it survives restarts); an adapter object lives in memory only; none goes back
   * to the host's choice. A bad configuration or an unknown model is a 400 HttpError.
   */
  async setModel(model?: ModelAdapter | ModelConfig, forModel?: string): Promise<ModelAdapter> {
    const persisted = model && !('answer' in model) ? parseModelConfig(model) : undefined;
    if (forModel === undefined) {
      const adapter = model ? createModel(model) : this.#default;
      await this.#storage.setMeta(MODEL_KEY, persisted);
      this.#model = Promise.resolve(adapter);
      return adapter;
    }
    const id = catalogueId(forModel);
    const kept = { ...((await this.#storage.getMeta<Record<string, ModelConfig>>(MODELS_KEY)) ?? {}) };
    delete kept[id];
    if (persisted) kept[id] = persisted;
    await this.#storage.setMeta(MODELS_KEY, Object.keys(kept).length ? kept : undefined);
    this.#runtimeAdapters.delete(id);
    if (model && !persisted) this.#runtimeAdapters.set(id, model as ModelAdapter);
    this.#mapping = null;
    return this.model(id);
  }

  /** A committed change: the indexes that follow its collection take it into account. */
  changed(change: Change): void {
    if (change.collection === 'conversation') this.corpus.conversationChanged(change.id);
    else if (change.collection === 'asset') this.corpus.assetChanged(change.id, change.seq);
    else this.memory.changed(change);
  }

  /** The whole store was replaced: forget what was read from it. */
  reset(): void {
    this.corpus.reset();
    this.memory.reset();
    this.application = null;
    this.#model = null;
    this.#mapping = null;
    this.downloads.cancelAll();
  }

  /**
   * Stops the running answers of a request id, or else of a conversation;
   * returns how many were stopped.
   */
  stop(target: { request?: string; conversation?: string }, reason: 'STOPPED' | 'RESET'): number {
    let stopped = 0;
    for (const [request, running] of this.running) {
      const matches = target.request ? request === target.request : running.conversation === target.conversation;
      if (!matches) continue;
      running.controller.abort(reason);
      stopped++;
    }
    return stopped;
  }
}
