/** Worker-side entry: run the service in your own Service Worker. */
export { startWorker, addPiecesRoutes, type WorkerOptions } from './host.js';
export type { ServiceWorkerScope } from './sw-types.js';
export type { ModelAdapter, ModelConfig, OpenAiModelConfig, AnswerRequest } from '../core/copilot/model.js';
