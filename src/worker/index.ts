/** Worker-side entry: run the service in your own Service Worker. */
export { startWorker, addPiecesRoutes } from './start.js';
export { createPiecesWorker, type WorkerOptions, type PiecesWorker, type RouteRegistry } from './pieces-worker.js';
export type { Service } from '../core/service.js';
export type { ServiceSettings } from '../core/options.js';
export type { ServiceWorkerScope, FetchEventLike, ExtendableEventLike, ExtendableMessageEventLike } from './sw-types.js';
export type { ModelAdapter, ModelConfig, OpenAiModelConfig, AnswerRequest } from '../core/copilot/model.js';
