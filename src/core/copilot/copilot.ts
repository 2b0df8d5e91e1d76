/**
 * The copilot's state in a running service: the relevance corpus, the
 * model adapter (switchable at run time) and the answers being streamed
 * (so that a stop or reset can reach them).
 */
import type { Storage } from '../../storage/storage.js';
import { Corpus } from './corpus.js';
import { createModel, type ModelAdapter, type ModelConfig } from './model.js';

export interface RunningAnswer {
  conversation: string;
  controller: AbortController;
}

export class Copilot {
  readonly corpus: Corpus;
  #model: ModelAdapter;
  /** Streamed answers in progress, by request id. */
  readonly running = new Map<string, RunningAnswer>();

  constructor(storage: Storage, model?: ModelAdapter | ModelConfig) {
    this.corpus = new Corpus(storage);
    this.#model = createModel(model);
  }

  get model(): ModelAdapter {
    return this.#model;
  }

  /** Switches the model for the answers asked from now on (none: the default). */
  setModel(model?: ModelAdapter | ModelConfig): ModelAdapter {
    this.#model = createModel(model);
    return this.#model;
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
