/** The model adapter for a host's option or a page's choice: an adapter as given, or one made from a configuration. */
import { extractiveModel, parseModelConfig, type ModelAdapter, type ModelConfig } from './model.js';
import { ollamaModel } from './ollama.js';
import { openAiModel } from './openai.js';

/** The adapter for an adapter or a configuration; none gives the default. */
export function createModel(model?: ModelAdapter | ModelConfig): ModelAdapter {
  if (!model) return extractiveModel;
  if ('answer' in model && typeof model.answer === 'function') return model;
  const config = parseModelConfig(model);
  if (config.type === 'openai') return openAiModel(config);
  if (config.type === 'ollama') return ollamaModel(config);
  return extractiveModel;
}
