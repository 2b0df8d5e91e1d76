/**
 * Every 2xx response of every unit test, checked against the SDK model its
 * operation returns. `installResponseCheck()` (from setup.ts) wraps each
 * handler of the route table, so whatever calls the service — the harness's
 * SDK clients, plain fetch, the worker host — is checked; the violations of a
 * test fail it in `afterEach`.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { LINK_OPERATIONS } from '../../../src/core/handlers/links.js';
import { MATERIAL_OPERATIONS } from '../../../src/core/handlers/materials.js';
import { HOST_CANNOT } from '../../../src/core/handlers/host-cannot.js';
import { OPERATIONS } from '../../../src/core/routes.js';
import { socketKind, type SocketKind } from '../../../src/core/stream-wire.js';
import { ServedSocket } from '../../../src/stream/served-socket.js';
import { check, SDK_MODELS, type Violation } from './sdk-shape.js';

/**
 * What an operation answers on success: an SDK model (by name), no body, plain
 * text, or server-sent events whose every `data:` frame is the model named.
 */
export type Returns = string | { empty: true } | { text: true } | { events: string } | { never: true } | ((url: URL) => string);

const EMPTY = { empty: true } as const;
/** An operation no host can do (src/core/handlers/host-cannot.ts): answered 501, never 2xx. */
const NEVER = { never: true } as const;
const TEXT = { text: true } as const;
const identifierStream = (url: URL) => (url.searchParams.has('after') ? 'StreamCatchUp' : 'IdentifierStreamHandshake');
const wholeAssetsStream = (url: URL) => (url.searchParams.has('after') ? 'AssetsStreamCatchUp' : 'AssetsStreamHandshake');

/** The rest of the hand-written kinds' operations (scores, activities, formats and analyses, asset reads, searches). */
const OWN_REST = [
  'activityIdentifiersSnapshot',
  'activitiesSpecificActivitySnapshot',
  'assetSpecificAssetActivities',
  'assetSnapshotPost',
  'assetSpecificAssetConversations',
  'assetSpecificAssetExport',
  'assetReclassify',
  'assetScoresIncrement',
  'assetsPseudoSnapshot',
  'assetsGetRecommendedAssets',
  'assetsGetRelatedAssets',
  'formatsSnapshot',
  'formatsSpecificFormatSnapshot',
  'formatReclassify',
  'formatAnalysis',
  'analysesSnapshot',
  'codeAnalysesSnapshot',
  'imageAnalysesSnapshot',
  'ocrAnalysesSnapshot',
  'getMetricsFormats',
  'metricsFormatsOrdered',
  'searchAnchors',
  'anchorScoresIncrement',
  'searchAnnotations',
  'annotationScoresIncrement',
  'searchMessages',
  'messageScoresIncrement',
  'searchConversationSpecificMessages',
  'conversationScoresIncrement',
  'conversationSpecificConversationPrepare',
  'conversationsCreateFromWorkstreamSummary',
  'anchorUpdate',
  'anchorRename',
  'applicationsBulkUpdateApplicationCapabilities',
  'relationshipsSnapshot',
  'relationshipsSpecificRelationshipSnapshot',
  'activitiesCreateNewActivity',
  'activityUpdate',
  'activitiesDeleteSpecificActivity',
  'assetsSearchWithFilters',
  'conversationSummarize',
];

/** Operation name (as in the route table) → the model of its 2xx body. */
export const RETURNS: Readonly<Record<string, Returns>> = {
  getWellKnownHealth: TEXT,
  getWellKnownVersion: TEXT,
  connect: 'Context',
  userSnapshot: 'ReturnedUserProfile',
  applicationUpdate: 'Application',
  applicationsSnapshot: 'Applications',
  applicationsExternalSnapshot: 'DetectedExternalApplications',
  applicationsExternalRelated: 'DetectedExternalApplications',
  applicationsSpecificApplicationSnapshot: 'Application',
  applicationsRegister: 'Application',
  applicationsSessionOpen: 'Session',
  applicationsSessionClose: 'Session',
  applicationsSessionSnapshot: 'Session',
  applicationsUsageEngagementInteraction: 'TrackedInteractionEvent',
  applicationsUsageEngagementKeyboard: 'TrackedKeyboardEvent',
  applicationsUsageInstallation: EMPTY,
  postApplicationsUsageUpdated: EMPTY,
  conversationsSnapshot: 'Conversations',
  conversationsIdentifiersSnapshot: 'FlattenedConversations',
  conversationsCreateSpecificConversation: 'Conversation',
  conversationsCreateFromAsset: 'ConversationsCreateFromAssetOutput',
  conversationsDeleteSpecificConversation: EMPTY,
  searchConversations: 'SearchedConversations',
  conversationGetSpecificConversation: 'Conversation',
  conversationUpdate: 'Conversation',
  conversationSpecificConversationMessages: 'ConversationMessages',
  conversationSpecificConversationRename: 'Conversation',
  conversationAssociateAsset: EMPTY,
  conversationDisassociateAsset: EMPTY,
  messagesSnapshot: 'ConversationMessages',
  messagesCreateSpecificMessage: 'ConversationMessage',
  messagesDeleteSpecificMessage: EMPTY,
  messageSpecificMessageSnapshot: 'ConversationMessage',
  messageSpecificMessageUpdate: 'ConversationMessage',
  messageUpdateValue: 'ConversationMessage',
  assetsSnapshot: 'Assets',
  assetsIdentifiersSnapshot: 'FlattenedAssets',
  assetsSpecificAssetSnapshot: 'Asset',
  assetSnapshot: 'Asset',
  assetsCreateNewAsset: 'Asset',
  assetsDraft: 'Seed',
  assetUpdate: 'Asset',
  // Answers the deleted asset's id, as text (the SDK reads a non-JSON answer as text).
  assetsDeleteAsset: TEXT,
  assetsSpecificAssetFormatsSnapshot: 'Formats',
  assetFormats: 'Formats',
  assetAssociateTag: EMPTY,
  anchorAssociateConversation: EMPTY,
  anchorDisassociateConversation: EMPTY,
  anchorAssociateAsset: EMPTY,
  anchorDisassociateAsset: EMPTY,
  conversationAssociateAnchor: EMPTY,
  conversationDisassociateAnchor: EMPTY,
  assetAssociateAnchor: EMPTY,
  assetDisassociateAnchor: EMPTY,
  assetDisassociateTag: EMPTY,
  assetAssociateWebsite: EMPTY,
  assetDisassociateWebsite: EMPTY,
  formatSnapshot: 'Format',
  formatUpdateValue: 'Format',
  annotationSpecificAnnotationSnapshot: 'Annotation',
  annotationsSnapshot: 'Annotations',
  annotationsCreateNewAnnotation: 'Annotation',
  annotationsDeleteSpecificAnnotation: EMPTY,
  annotationUpdate: 'Annotation',
  activitiesSnapshot: 'Activities',
  activitiesStreamIdentifiers: identifierStream,
  fullTextSearch: 'SearchedAssets',
  neuralCodeSearch: 'SearchedAssets',
  searchAssets: 'SearchedAssets',
  // WebSocket paths: the page shim's handshake (the service's own protocol around the SDK model each socket carries).
  conversationsStreamIdentifiers: identifierStream,
  conversationMessagesStreamIdentifiers: identifierStream,
  assetsStreamIdentifiers: identifierStream,
  annotationsStreamIdentifiers: identifierStream,
  formatsStreamIdentifiers: identifierStream,
  streamAssets: wholeAssetsStream,
  getAssetsStreamTransferables: wholeAssetsStream,
  applicationsStreamIdentifiers: identifierStream,
  getWellKnownStreamHealth: 'HealthStreamHandshake',
  relevance: 'QGPTRelevanceOutput',
  question: 'QGPTQuestionOutput',
  // Each frame a client sends on the copilot socket is answered with its QGPTStreamOutput frames.
  qgptStream: { events: 'QGPTStreamOutput' },
  streamUser: 'UserStreamHandshake',
  modelsSnapshot: 'Models',
  modelsSpecificModelSnapshot: 'Model',
  modelsStreamIdentifiers: identifierStream,
  modelSpecificModelDownload: 'Model',
  modelSpecificModelDownloadCancel: 'Model',
  // A model's progress socket: its ModelDownloadProgress frames, as server-sent events.
  modelSpecificModelDownloadProgress: { events: 'ModelDownloadProgress' },
  modelsDeleteSpecificModelCache: 'ModelDeleteCacheOutput',
  anchorsSnapshot: 'Anchors',
  anchorsCreateNewAnchor: 'Anchor',
  anchorsStreamIdentifiers: identifierStream,
  anchorSpecificAnchorSnapshot: 'Anchor',
  anchorsDeleteSpecificAnchor: EMPTY,
  signIntoOS: 'UserProfile',
  signOutOfOS: 'Users',
  osAppletLaunch: 'ActiveOSServerApplet',
  osSettingsSnapshot: 'OSServerSettings',
  osSettingsUpdate: 'OSServerSettings',
  osSettingsStream: 'OSSettingsStreamHandshake',
  osPermissions: 'OSPermissions',
  osPermissionsRequest: 'OSPermissions',
  osDeviceInformation: 'OSDeviceInformationReturnable',
  osMetadata: 'OSServerMetadata',
  // The local identity: UserApi, UsersApi, PKCEApi, Auth0Api, AllocationsApi and AllocationApi.
  userAccessToken: TEXT,
  userBetaStatus: 'UserBetaStatus',
  clearUser: EMPTY,
  userProviders: 'ReturnedUserProfile',
  refreshUser: 'UserProfile',
  selectUser: 'UserProfile',
  updateUser: 'UserProfile',
  userUpdateVanity: 'UserProfile',
  usersSnapshot: 'Users',
  authenticateFromOauthToken: 'UserProfile',
  usersSpecificUserSnapshot: 'UserProfile',
  usersDisconnectUser: 'Users',
  getChallenge: 'PKCE',
  clearPKCE: EMPTY,
  generateCode: 'PKCE',
  respondWithCode: 'PKCE',
  generateToken: 'PKCE',
  authorizeAuth0: 'ResultedPKCE',
  exchangeForAuth0Token: 'OAuthToken',
  getAuth0UserInfo: 'Auth0User',
  auth0Logout: TEXT,
  allocationsSnapshot: 'Allocations',
  allocationsConnectNewCloud: 'AllocationCloud',
  allocationsDisconnectCloud: TEXT,
  allocationsReconnectCloud: 'AllocationCloud',
  allocationSnapshot: 'AllocationCloud',
  allocationUpdate: 'AllocationCloud',
  workstreamPatternEngineProcessorsVisionStatus: 'WorkstreamPatternEngineStatus',
  workstreamPatternEngineProcessorsVisionStatusStream: 'VisionStreamHandshake',
  streamAppletVersion: 'AppletVersionStreamHandshake',
  workstreamSuggestionsStream: 'WorkstreamSuggestionsStreamHandshake',
  tagsSnapshot: 'Tags',
  tagsCreateNewTag: 'Tag',
  tagsExists: 'ExistingMetadata',
  searchTags: 'SearchedTags',
  tagsStreamIdentifiers: identifierStream,
  tagsDeleteSpecificTag: EMPTY,
  tagUpdate: 'Tag',
  tagsSpecificTagSnapshot: 'Tag',
  tagScoresIncrement: EMPTY,
  websitesSnapshot: 'Websites',
  websitesCreateNewWebsite: 'Website',
  websitesExists: 'ExistingMetadata',
  searchWebsites: 'SearchedWebsites',
  websitesStreamIdentifiers: identifierStream,
  websitesDeleteSpecificWebsite: EMPTY,
  websiteUpdate: 'Website',
  websitesSpecificWebsiteSnapshot: 'Website',
  websiteScoresIncrement: EMPTY,
  // The workstream pattern engine and the autogenerated summaries: what the SDK's API classes read from each.
  ...Object.fromEntries(
    (
      [
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineCreateIngestion'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsSources'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionActivate'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionDeactivate'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionMetadata'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionCalibrationCapture'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionCalibrationsSnapshot'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionCalibrationsFocused'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionDataClear'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionEventsSnapshot'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionEventsSearch'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionEventsScopedDelete'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionEventsSpecificSnapshot'],
        ['WorkstreamPatternEngineApi', 'workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent'],
        ['WorkstreamSummariesApi', 'workstreamSummariesCreateAutogeneratedWorkstreamSummary'],
        ['WorkstreamSummaryApi', 'workstreamSummaryRegenerateSpecificSummary'],
      ] as const
    ).map(([api, name]) => [name, sdkReturns(api, name)]),
  ),
  // Models and their runtimes.
  modelsCreateNewModel: 'Model',
  unloadModels: EMPTY,
  modelsDeleteSpecificModel: EMPTY,
  modelUpdate: 'Model',
  modelSpecificModelLoad: 'Model',
  modelSpecificModelUnload: 'Model',
  modelScoresIncrement: EMPTY,
  ...Object.fromEntries(
    (['ollama', 'foundry'] as const).flatMap((runtime) => {
      const name = runtime === 'ollama' ? 'Ollama' : 'Foundry';
      return [
        [`${runtime}StatusCheck`, `${name}Status`],
        [`${runtime}StatusCheckStream`, `${name}StatusStreamHandshake`],
        ...['Install', 'InstallSnapshot', 'InstallCancel', 'Update', 'UpdateSnapshot', 'UpdateCancel', 'Uninstall'].map((op) => [
          `${runtime}${op}`,
          `${name}Deployment`,
        ]),
        [`${runtime}InstallsSnapshot`, `${name}Deployments`],
        [`${runtime}UpdatesSnapshot`, `${name}Deployments`],
      ];
    }),
  ),
  openAiModelsList: 'OpenAIModelsListOutput',
  externalProviderApiKeyCreate: 'CreatedExternalProviderApiKey',
  externalProviderApiKeyUpdate: 'UpdatedExternalProviderApiKey',
  externalProviderApiKeyDelete: 'DeletedExternalProviderApiKey',
  // The rest of the hand-written kinds' operations: what the SDK's own API class reads from each.
  ...Object.fromEntries(OWN_REST.map((name) => [name, sdkReturns(OPERATIONS.find((op) => op.name === name)!.api, name)])),
  // Classification, machine learning, discovery, the copilot's helpers, the connector's extras, asset sources, notifications.
  ...Object.fromEntries(
    (
      [
        ['ClassificationApi', 'convertGenericClassification'],
        ['MachineLearningApi', 'personificationTechnicalLanguageGeneration'],
        ['MachineLearningApi', 'segmentTechnicalLanguage'],
        ['DiscoveryApi', 'discoveryDiscoverAssets'],
        ['DiscoveryApi', 'discoveryDiscoverAssetsHtml'],
        ['DiscoveryApi', 'discoveryDiscoverSensitives'],
        ['DiscoveryApi', 'discoveryDiscoverTagsRelated'],
        ['SearchApi', 'tagBasedSearch'],
        ['QGPTApi', 'hints'],
        ['QGPTApi', 'personsRelated'],
        ['QGPTApi', 'reprompt'],
        ['ConnectorApi', 'intention'],
        ['ConnectorApi', 'onboarded'],
        ['ConnectorApi', 'react'],
        ['ConnectorApi', 'suggest'],
        ['ConnectorApi', 'track'],
        ['MacOSApi', 'assetsCreateNewAssetFromMacos'],
        ['UltraSuiteApi', 'assetsCreateUltraSuiteAsset'],
        ['NotificationsApi', 'sendLocalNotification'],
        ['WorkstreamApi', 'workstreamSuggestionsRefresh'],
      ] as const
    ).map(([api, name]) => [name, sdkReturns(api, name)]),
  ),
  // Backups, the database's export and import, shares, links and distributions: what the SDK's own API class reads from each.
  ...Object.fromEntries(
    (
      [
        ['BackupsApi', 'backupsCreateNewBackupStreamed'],
        ['BackupsApi', 'backupsStreamedProgress'],
        ['BackupApi', 'backup'],
        ['BackupApi', 'backupAsset'],
        ['BackupApi', 'backupSpecificCreationStatus'],
        ['BackupApi', 'backupSpecificCreationCancel'],
        ['BackupApi', 'backupRestoreSpecificBackup'],
        ['BackupApi', 'backupRestoreSpecificBackupStreamed'],
        ['BackupApi', 'backupSpecificRestorationStatus'],
        ['BackupApi', 'backupSpecificRestorationCancel'],
        ['DatabaseApi', 'databaseExport'],
        ['DatabaseApi', 'databaseImport'],
        ['SharesApi', 'sharesSpecificShareSnapshot'],
        ['LinkifyApi', 'linkify'],
        ['LinkifyApi', 'linkifyMultiple'],
        ['LinkifyApi', 'linkifyShareRevoke'],
        ['PieceApi', 'htmlShare'],
      ] as const
    ).map(([api, name]) => [name, sdkReturns(api, name)]),
  ),
  backupsCreateNewBackupStreamedWebsocket: { events: 'BackupStreamedProgress' },
  backupRestoreSpecificBackupStreamedWebsocket: { events: 'BackupStreamedProgress' },
  // The generic path's operations: what the SDK's own API class reads from each.
  ...Object.fromEntries(MATERIAL_OPERATIONS.map((op) => [op.name, op.socket ? identifierStream : sdkReturns(op.api, op.name)])),
  ...Object.fromEntries(LINK_OPERATIONS.map((op) => [op.name, sdkReturns(op.api, op.name)])),
  ...Object.fromEntries(HOST_CANNOT.map((op) => [op.name, NEVER])),
};

/** What an SDK operation answers, read from its API class: the model of its `…FromJSON`, no body (VoidApiResponse) or text. */
function sdkReturns(api: string, name: string): Returns {
  const source = readFileSync(join(SDK_MODELS, '../apis', `${api}.js`), 'utf8');
  const start = source.indexOf(`async ${name}Raw(`);
  if (start < 0) throw new Error(`${api}.${name} is not an operation of the SDK`);
  const body = source.slice(start, source.indexOf('\n    async ', start + 1));
  const model = /JSONApiResponse\(response, \(jsonValue\) => \(0, index_1\.(\w+)FromJSON\)/.exec(body)?.[1];
  if (model) return model;
  if (body.includes('VoidApiResponse')) return EMPTY;
  if (body.includes('TextApiResponse')) return TEXT;
  throw new Error(`what ${api}.${name} answers is not read from the SDK`);
}

/** The violations of one 2xx response of `operation` (read from a clone: the response stays unread). */
export async function checkResponse(operation: string, url: URL, response: Response): Promise<Violation[]> {
  return checkBody(operation, url, response.headers.get('content-type') ?? '', await response.clone().text());
}

/** The violations of a 2xx body of `operation`, given its content type and text. */
export function checkBody(operation: string, url: URL, type: string, body: string): Violation[] {
  const returns = RETURNS[operation];
  if (returns === undefined) return [{ path: '$', message: `no response model is listed for ${operation} in RETURNS` }];
  if (typeof returns === 'object' && 'never' in returns) return [{ path: '$', message: `${operation} is answered 501 here, never 2xx` }];
  if (typeof returns === 'object' && 'empty' in returns) {
    return body === '' ? [] : [{ path: '$', message: `expected no body, got ${JSON.stringify(body.slice(0, 80))}` }];
  }
  if (typeof returns === 'object' && 'text' in returns) {
    // (htmlShare's page is text the SDK reads as such, labelled HTML for the browser that opens a share's link.)
    return type.startsWith('text/plain') || (operation === 'htmlShare' && type.startsWith('text/html'))
      ? []
      : [{ path: '$', message: `expected text/plain, got ${type || 'no content type'}` }];
  }
  if (typeof returns === 'object' && 'events' in returns) {
    if (!type.startsWith('text/event-stream'))
      return [{ path: '$', message: `expected text/event-stream, got ${type || 'no content type'}` }];
    const frames = body.split('\n\n').filter((event) => event.trim() !== '');
    return frames.flatMap((event, i) => {
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      return parsed(data, `$[frame ${i}]`, (value) => check(returns.events, value, `$[frame ${i}]`));
    });
  }
  if (!type.startsWith('application/json')) return [{ path: '$', message: `expected application/json, got ${type || 'no content type'}` }];
  return parsed(body, '$', (value) => check(typeof returns === 'function' ? returns(url) : returns, value));
}

function parsed(text: string, path: string, then: (value: unknown) => Violation[]): Violation[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ path, message: `not JSON: ${JSON.stringify(text.slice(0, 80))}` }];
  }
  return then(value);
}

/**
 * An event stream passed through unchanged (a consumer that cancels it cancels
 * the source, as without the check), each frame checked as it passes (a stream
 * that never ends, a progress socket's, is checked too).
 */
function checkedEvents(operation: string, url: URL, response: Response, report: (violations: Violation[]) => void): Response {
  const decoder = new TextDecoder();
  const type = response.headers.get('content-type') ?? '';
  let pending = '';
  let frames = 0;
  /** Checks the complete events of `pending` (all of it at the end). */
  const checkEvents = (end: boolean) => {
    const cut = end ? pending.length : pending.lastIndexOf('\n\n') + 2;
    if (cut <= 0) return;
    const complete = pending.slice(0, cut);
    pending = pending.slice(cut);
    const violations = checkBody(operation, url, type, complete).map((v) => ({
      ...v,
      path: v.path.replace(/^\$\[frame (\d+)\]/, (_m, i: string) => `$[frame ${frames + Number(i)}]`),
    }));
    frames += complete.split('\n\n').filter((event) => event.trim() !== '').length;
    report(violations);
  };
  const body = response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        checkEvents(false);
        controller.enqueue(chunk);
      },
      flush() {
        pending += decoder.decode();
        if (pending.trim()) checkEvents(true);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

const found: string[] = [];
/** Bodies checked per operation in this test file (PIECES_CHECK_REPORT=<file> appends them there as one JSON line). */
export const checked = new Map<string, number>();
const wrapped = new WeakSet<object>();

/** Wraps every handler of the route table with the check; a test with violations fails after it runs. */
export function installResponseCheck() {
  for (const operation of OPERATIONS) {
    if (wrapped.has(operation)) continue;
    const handler = operation.handler;
    operation.handler = async (context) => {
      const response = await handler(context);
      // HEAD is answered by the GET handler: its body is checked like the GET's.
      if (response.status < 200 || response.status >= 300) return response;
      checked.set(operation.name, (checked.get(operation.name) ?? 0) + 1);
      const report = (violations: Violation[]) => {
        for (const v of violations) {
          found.push(
            `${operation.name} ${context.request.method} ${context.url.pathname}${context.url.search} ${response.status}: ${v.path}: ${v.message}`,
          );
        }
      };
      const returns = RETURNS[operation.name];
      if (typeof returns === 'object' && 'events' in returns && response.body)
        return checkedEvents(operation.name, context.url, response, report);
      report(await checkResponse(operation.name, context.url, response));
      return response;
    };
    wrapped.add(operation);
  }
  afterEach(() => {
    const violations = found.splice(0);
    if (violations.length > 0) {
      throw new Error(
        `Responses that the SDK models do not allow:\n${violations.slice(0, 50).join('\n')}${violations.length > 50 ? `\n… and ${violations.length - 50} more` : ''}`,
      );
    }
  });
  afterAll(() => {
    const report = process.env.PIECES_CHECK_REPORT;
    if (report) appendFileSync(report, `${JSON.stringify(Object.fromEntries(checked))}\n`);
  });
}

/** What each frame a socket sends is, by the socket's kind (a material kind's: StreamedIdentifiers). */
const FRAME_MODEL: Partial<Record<SocketKind, string>> = {
  conversation: 'StreamedIdentifiers',
  conversationMessage: 'StreamedIdentifiers',
  asset: 'StreamedIdentifiers',
  application: 'StreamedIdentifiers',
  activity: 'StreamedIdentifiers',
  anchor: 'StreamedIdentifiers',
  range: 'StreamedIdentifiers',
  model: 'StreamedIdentifiers',
  format: 'StreamedIdentifiers',
  annotation: 'StreamedIdentifiers',
  assets: 'Assets',
  assetsWithValues: 'Assets',
  health: 'HealthStreamMessage',
  user: 'UserStreamMessage',
  osSettings: 'OSServerSettings',
  vision: 'WorkstreamPatternEngineStatus',
  ollamaStatus: 'OllamaStatus',
  foundryStatus: 'FoundryStatus',
  copilot: 'QGPTStreamOutput',
  progress: 'ModelDownloadProgress',
  appletVersion: 'AppletVersionMessage',
  workstreamSuggestions: 'WorkstreamSuggestions',
};

/** The kind of the socket at a URL: its path, or the path's tail under a base with a path. */
function kindOf(url: URL): SocketKind | undefined {
  const segments = url.pathname.replace(/\/+$/, '').split('/');
  for (let i = 1; i < segments.length; i++) {
    const kind = socketKind(`/${segments.slice(i).join('/')}`);
    if (kind) return kind;
  }
  return undefined;
}

/** The violations of one frame a socket at `url` sent (text frames: the health and user sockets' are not all JSON). */
export function checkFrame(url: URL, data: string): Violation[] {
  const kind = kindOf(url);
  if (!kind) return [{ path: '$', message: `a frame on ${url.pathname}, which is no socket of the service` }];
  // A backup's progress sockets send BackupStreamedProgress (a model's download, ModelDownloadProgress).
  const backup = kind === 'progress' && /\/backups?\//.test(url.pathname);
  const model = backup ? 'BackupStreamedProgress' : (FRAME_MODEL[kind] ?? 'StreamedIdentifiers');
  if (model === 'HealthStreamMessage' || model === 'AppletVersionMessage' || (model === 'UserStreamMessage' && data === ''))
    return check(model, data);
  return parsed(data, '$', (value) => check(model, value));
}

/** Checks every frame every served socket delivers (its kind from its URL), failing the test that saw a bad one. */
export function installFrameCheck() {
  const prototype = ServedSocket.prototype as unknown as { dispatchEvent(event: Event, ...rest: unknown[]): boolean; url: string };
  const dispatch = Object.getPrototypeOf(prototype).dispatchEvent as (event: Event, ...rest: unknown[]) => boolean;
  prototype.dispatchEvent = function (this: { url: string }, event: Event, ...rest: unknown[]) {
    if (event.type === 'message') {
      const url = new URL(this.url);
      checked.set(`frames ${url.pathname}`, (checked.get(`frames ${url.pathname}`) ?? 0) + 1);
      for (const v of checkFrame(url, String((event as MessageEvent).data)))
        found.push(`frame on ${url.pathname}: ${v.path}: ${v.message}`);
    }
    return dispatch.call(this, event, ...rest);
  };
}

/** True when every handler of the route table goes through the check. */
export const isInstalled = () => OPERATIONS.every((operation) => wrapped.has(operation));
