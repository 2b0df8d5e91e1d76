/** The model adapter for a host's option or a page's choice: an adapter as given, or one made from a configuration. */
import { extractiveModel, ollamaDescription, openAiDescription, parseModelConfig, type ModelAdapter, type ModelConfig } from './model.js';

/** The adapter for an adapter or a configuration; none gives the default. */
export function createModel(model?: ModelAdapter | ModelConfig): ModelAdapter {
  if (!model) return extractiveModel;
  if ('answer' in model && typeof model.answer === 'function') return model;
  const config = parseModelConfig(model);
  if (config.type === 'openai') return onFirstUse(openAiDescription(config), async () => (await import('./openai.js')).openAiModel(config));
  if (config.type === 'ollama') return onFirstUse(ollamaDescription(config), async () => (await import('./ollama.js')).ollamaModel(config), true);
  return extractiveModel;
}

/**
 * An adapter whose code is loaded when it first answers, pulls or removes: a chunk of its own in the
 * page and Node builds, evaluated on first use in the worker script (no answer needs it before).
 */
function onFirstUse(description: string, load: () => Promise<ModelAdapter>, downloads = false): ModelAdapter {
  let loaded: Promise<ModelAdapter> | undefined;
  const adapter = () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
  return {
    description,
    // The loaded adapter's own iterator, once it is there: no extra step for each chunk.
    answer: (request) => ({
      [Symbol.asyncIterator]() {
        let inner: AsyncIterator<string> | undefined;
        return {
          next: () => (inner ? inner.next() : adapter().then((loaded) => (inner = loaded.answer(request)[Symbol.asyncIterator]()).next())),
          return: async (value?: unknown) => (await inner?.return?.(value)) ?? { done: true, value: undefined },
        };
      },
    }),
    ...(downloads
      ? {
          pull: async (signal: AbortSignal, progress: (fraction: number) => void) => (await adapter()).pull!(signal, progress),
          remove: async () => (await adapter()).remove!(),
        }
      : {}),
  };
}
