/**
 * The copilot's state in a running service: the relevance corpus, the
 * model adapter (switchable at run time) and the answers being streamed
 * (so that a stop or reset can reach them).
 */
import type { Storage } from '../../storage/storage.js';
import type { JsonObject } from '../validate.js';
import { Corpus } from './corpus.js';
import { createModel } from './create-model.js';
import { parseModelConfig, type ModelAdapter, type ModelConfig } from './model.js';

export interface RunningAnswer {
  conversation: string;
  controller: AbortController;
}

/** Where a model configuration chosen at run time is kept, so that it outlives the worker. */
const MODEL_KEY = 'copilotModel';

export class Copilot {
  readonly corpus: Corpus;
  readonly #storage: Storage;
  /** The host's model: used until a page chooses another. */
  readonly #default: ModelAdapter;
  #model: Promise<ModelAdapter> | null = null;
  /** Streamed answers in progress, by request id. */
  readonly running = new Map<string, RunningAnswer>();
  /** The application named in the seeds the service returns, once read. */
  application: Promise<JsonObject> | null = null;

  constructor(storage: Storage, model?: ModelAdapter | ModelConfig) {
    this.corpus = new Corpus(storage);
    this.#storage = storage;
    this.#default = createModel(model);
  }

  /** The model: the one chosen at run time (kept in the database), else the host's. */
  model(): Promise<ModelAdapter> {
    this.#model ??= this.#storage.getMeta<ModelConfig>(MODEL_KEY).then(
      (config) => (config ? createModel(config) : this.#default),
      () => this.#default,
    );
    return this.#model;
  }

  /**
   * Switches the model for the answers asked from now on. A configuration is
   * kept in the database (it survives restarts); an adapter object lives in
   * memory only; none goes back to the host's model.
   */
  async setModel(model?: ModelAdapter | ModelConfig): Promise<ModelAdapter> {
    const adapter = model ? createModel(model) : this.#default;
    const persisted = model && !('answer' in model) ? parseModelConfig(model) : undefined;
    await this.#storage.setMeta(MODEL_KEY, persisted);
    this.#model = Promise.resolve(adapter);
    return adapter;
  }

  /** The whole store was replaced: forget what was read from it. */
  reset(): void {
    this.corpus.reset();
    this.application = null;
    this.#model = null;
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
