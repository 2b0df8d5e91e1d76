/** Worker-side entry: run the service in your own Service Worker. */
export { startWorker, addPiecesRoutes, createPiecesWorker, type WorkerOptions } from './host.js';
export type { RouteRegistry, Service } from '../core/service.js';
export type { ServiceWorkerScope, FetchEventLike, ExtendableEventLike, ExtendableMessageEventLike } from './sw-types.js';
export type { ModelAdapter, ModelConfig, OpenAiModelConfig, AnswerRequest } from '../core/copilot/model.js';
