/** The service core, for hosts other than the Service Worker (tests, Node, other runtimes). */
export { createService, DEFAULT_BASES, type Service, type ServiceOptions } from './service.js';
export { OPERATIONS, operationFor, type Operation, type OperationName } from './routes.js';
// The material graph: the kinds and associations the SDK models, the shapes of their models, and those the generic path stores.
export { KINDS, RELATIONS, type GenericKind, type KindRow, type MaterialKind, type RelationRow } from '../shared/graph.js';
export { checkShape, shapeOf, type FieldType, type Shape, type ShapeField } from '../shared/shapes.js';
export { GENERIC_KINDS, GENERIC_RELATIONS } from './handlers/materials.js';
export type { ServiceSettings } from './options.js';
export { MAX_BODY_BYTES } from './http.js';
export { baseMatcher, expandBase, type Base, type BaseMatcher } from '../shared/bases.js';
export { PIECES_OS_VERSION } from '../shared/version.js';
export type { UserConfig } from './models/user.js';
export { openStorage, DatabaseVersionError, type OpenStorageOptions } from '../storage/idb/storage.js';
export type { Storage, Change, Collection, Engagement } from '../storage/storage.js';
export { SAMPLE_ASSETS } from './fixtures/sample-assets.js';
export type { PiecesData, PiecesSeed } from './data.js';
export type { Override } from './overrides.js';
export type { McpActivity, McpCallRecord, McpSessionRecord } from './mcp/activity.js';
export { formatEntry, type LogEntry, type Logger } from './log.js';
export { createModel } from './copilot/create-model.js';
export {
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
