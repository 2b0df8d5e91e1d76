/** The service core, for hosts other than the Service Worker (tests, Node, other runtimes). */
export { createService, DEFAULT_BASES, type Service, type ServiceOptions } from './service.js';
export { OPERATIONS, type Operation } from './routes.js';
export { MAX_BODY_BYTES } from './http.js';
export { openStorage, DatabaseVersionError, type OpenStorageOptions } from '../storage/idb-storage.js';
export type { Storage, Change, Engagement } from '../storage/storage.js';
export { SAMPLE_ASSETS } from '../fixtures/sample-assets.js';
export {
  createModel,
  extractiveModel,
  ModelError,
  parseModelConfig,
  type AnswerRequest,
  type ChatMessage,
  type ModelAdapter,
  type ModelConfig,
  type OpenAiModelConfig,
  type RelevantMaterial,
} from './copilot/model.js';
export { openAiModel } from './copilot/openai.js';
export { RelevanceIndex, tokenize } from './relevance.js';
