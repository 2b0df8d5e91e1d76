/**
 * The route table: every operation the service answers, one line each, named exactly as the SDK 4.1.0
 * names it, with its method, path and handler, under the name of its SDK API class:
 * `op('conversationsSnapshot', 'GET /conversations', conversations)`. Static paths come before
 * `{param}` paths.
 */
import type { OperationHandler } from './context.js';
import * as activities from './handlers/activities.js';
import * as allocations from './handlers/allocations.js';
import * as annotations from './handlers/annotations.js';
import * as anchors from './handlers/anchors.js';
import * as applications from './handlers/applications.js';
import * as assets from './handlers/assets.js';
import * as assetSources from './handlers/asset-sources.js';
import * as backups from './handlers/backups.js';
import * as connector from './handlers/connector.js';
import * as conversation from './handlers/conversation.js';
import * as conversations from './handlers/conversations.js';
import { HOST_CANNOT_OPERATIONS, type HostCannotName, type HostCannotWriteName } from './handlers/host-cannot.js';
import * as qgpt from './handlers/qgpt.js';
import * as qgptExtras from './handlers/qgpt-extras.js';
import * as ml from './handlers/ml.js';
import { qgptStream } from './handlers/qgpt-stream.js';
import * as messages from './handlers/messages.js';
import { LINK_OPERATIONS } from './handlers/links.js';
import { MATERIAL_OPERATIONS } from './handlers/materials.js';
import * as search from './handlers/search.js';
import * as shares from './handlers/shares.js';
import * as models from './handlers/models.js';
import * as os from './handlers/os.js';
import * as patternEngine from './handlers/pattern-engine.js';
import * as providers from './handlers/providers.js';
import * as runtimes from './handlers/runtimes.js';
import * as pkce from './handlers/pkce.js';
import * as streams from './handlers/streams.js';
import * as tagsWebsites from './handlers/tags-websites.js';
import * as user from './handlers/user.js';
import * as activity from './handlers/activity.js';
import * as assetReads from './handlers/asset-reads.js';
import * as assetFilters from './handlers/asset-filters.js';
import * as formats from './handlers/formats.js';
import * as ownSearch from './handlers/own-search.js';
import * as ownWrites from './handlers/own-writes.js';
import * as conversationMore from './handlers/conversation-more.js';
import * as scores from './handlers/scores.js';
import * as wellKnown from './handlers/wellknown.js';

export interface Operation {
  name: string;
  /** The SDK API class the operation belongs to. */
  api: string;
  method: 'GET' | 'POST';
  /** Path under a base; `{name}` segments are parameters. */
  path: string;
  handler: OperationHandler;
  deprecated?: true;
  /** A POST that changes nothing (a search): its answer need not be kept to be given again, it can be made again. */
  readOnly?: true;
  /** A WebSocket path (served by the page's shim). */
  socket?: true;
  /**
   * For a socket whose client frames the page's shim carries as requests:
   * their method (not listed in `Allow`; without the shim's marker header it
   * is refused like a plain GET).
   */
  streamMethod?: 'POST';
}

/** What a row may add to its operation (a WebSocket path is said by its verb, `WS`). */
type Flags = Pick<Operation, 'deprecated' | 'readOnly' | 'streamMethod'>;

/**
 * One row: the operation's SDK name, `METHOD /path` (`WS /path`: a WebSocket, served on GET), and
 * its handler: the export of that name in `handlers` (a handler module), or the handler itself.
 */
function op<const N extends string, const V extends 'GET' | 'POST' | 'WS', const F extends Flags = Record<never, never>>(
  name: N,
  route: `${V} /${string}`,
  handlers: OperationHandler | NoInfer<{ readonly [K in N]: OperationHandler }>,
  flags?: F,
) {
  const space = route.indexOf(' ');
  const verb = route.slice(0, space) as V;
  return {
    name,
    method: (verb === 'WS' ? 'GET' : verb) as V extends 'WS' ? 'GET' : V,
    path: route.slice(space + 1),
    handler: typeof handlers === 'function' ? handlers : (handlers as Record<N, OperationHandler>)[name],
    ...((verb === 'WS' ? { socket: true } : {}) as V extends 'WS' ? { socket: true } : Record<never, never>),
    ...(flags as F),
  };
}

/** The table from its rows, each under the SDK API class named before it. */
function table<const T extends ReadonlyArray<string | object>>(...items: T): Array<Exclude<T[number], string> & { api: string }> {
  let api = '';
  const rows: Array<Exclude<T[number], string> & { api: string }> = [];
  for (const item of items) {
    if (typeof item === 'string') api = item;
    else rows.push({ api, ...(item as Exclude<T[number], string>) });
  }
  return rows;
}

const TABLE = table(
  'WellKnownApi',
  op('getWellKnownHealth', 'GET /.well-known/health', wellKnown),
  op('getWellKnownVersion', 'GET /.well-known/version', wellKnown),
  op('getWellKnownStreamHealth', 'WS /.well-known/stream/health', streams),
  'ConnectorApi',
  op('connect', 'POST /connect', connector),
  'UserApi',
  op('userSnapshot', 'GET /user', user),
  op('streamUser', 'WS /user/stream', streams),
  op('userAccessToken', 'GET /user/access_token', user),
  op('userBetaStatus', 'POST /user/beta/status', user),
  op('clearUser', 'POST /user/clear', user),
  op('userProviders', 'GET /user/providers', user),
  op('refreshUser', 'GET /user/refresh', user),
  op('selectUser', 'POST /user/select', user),
  op('updateUser', 'POST /user/update', user),
  op('userUpdateVanity', 'POST /user/update/vanity', user),
  'UsersApi',
  op('usersSnapshot', 'GET /users', user),
  op('authenticateFromOauthToken', 'POST /users/authenticate/from_token', user),
  op('usersSpecificUserSnapshot', 'GET /users/{user}', user),
  op('usersDisconnectUser', 'POST /users/{user}/disconnect', user),
  'PKCEApi',
  op('getChallenge', 'GET /pkce/challenge', pkce),
  op('clearPKCE', 'POST /pkce/clear', pkce),
  op('generateCode', 'POST /pkce/code', pkce),
  op('respondWithCode', 'POST /pkce/response/code', pkce),
  op('generateToken', 'POST /pkce/token', pkce),
  'Auth0Api',
  op('authorizeAuth0', 'GET /authorize', pkce),
  op('exchangeForAuth0Token', 'POST /oauth/token', pkce),
  op('getAuth0UserInfo', 'GET /userinfo', pkce),
  op('auth0Logout', 'GET /v2/logout', pkce),
  'AllocationsApi',
  op('allocationsSnapshot', 'GET /allocations', allocations),
  op('allocationsConnectNewCloud', 'POST /allocations/connect', allocations),
  op('allocationsDisconnectCloud', 'POST /allocations/disconnect', allocations),
  op('allocationsReconnectCloud', 'POST /allocations/reconnect', allocations),
  'AllocationApi',
  op('allocationUpdate', 'POST /allocation/update', allocations),
  op('allocationSnapshot', 'GET /allocation/{allocation}', allocations),
  'ApplicationApi',
  op('applicationUpdate', 'POST /application/update', applications),
  'ApplicationsApi',
  op('applicationsSnapshot', 'GET /applications', applications),
  op('applicationsExternalSnapshot', 'GET /applications/external', applications),
  op('applicationsExternalRelated', 'GET /applications/external/related', applications),
  op('applicationsRegister', 'POST /applications/register', applications, { deprecated: true }),
  op('applicationsSessionOpen', 'POST /applications/session/open', applications, { deprecated: true }),
  op('applicationsSessionClose', 'POST /applications/session/close', applications, { deprecated: true }),
  op('applicationsUsageEngagementInteraction', 'POST /applications/usage/engagement/interaction', applications, { deprecated: true }),
  op('applicationsUsageEngagementKeyboard', 'POST /applications/usage/engagement/keyboard', applications, { deprecated: true }),
  op('applicationsUsageInstallation', 'POST /applications/usage/installation', applications, { deprecated: true }),
  op('postApplicationsUsageUpdated', 'POST /applications/usage/updated', applications, { deprecated: true }),
  op('applicationsStreamIdentifiers', 'WS /applications/stream/identifiers', streams),
  'ConversationsApi',
  op('conversationsSnapshot', 'GET /conversations', conversations),
  op('conversationsIdentifiersSnapshot', 'GET /conversations/identifiers', conversations),
  op('conversationsCreateSpecificConversation', 'POST /conversations/create', conversations),
  op('searchConversations', 'POST /conversations/search', conversations, { readOnly: true }),
  op('conversationsStreamIdentifiers', 'WS /conversations/stream/identifiers', streams),
  'ConversationApi',
  op('conversationUpdate', 'POST /conversation/update', conversation),
  'ConversationMessagesApi',
  op('messagesSnapshot', 'GET /messages', messages),
  op('messagesCreateSpecificMessage', 'POST /messages/create', messages),
  op('conversationMessagesStreamIdentifiers', 'WS /messages/stream/identifiers', streams),
  'ConversationMessageApi',
  op('messageSpecificMessageUpdate', 'POST /message/update', messages),
  op('messageUpdateValue', 'POST /message/update/value', messages),
  'AssetsApi',
  op('assetsSnapshot', 'GET /assets', assets),
  op('assetsIdentifiersSnapshot', 'GET /assets/identifiers', assets),
  op('assetsStreamIdentifiers', 'WS /assets/stream/identifiers', streams),
  op('assetsCreateNewAsset', 'POST /assets/create', assets),
  op('assetsDraft', 'POST /assets/draft', assets, { readOnly: true }),
  op('searchAssets', 'GET /assets/search', search),
  'AssetApi',
  op('assetUpdate', 'POST /asset/update', assets),
  'FormatApi',
  op('formatUpdateValue', 'POST /format/update/value', assets),
  'AnnotationsApi',
  op('annotationsSnapshot', 'GET /annotations', annotations),
  op('annotationsCreateNewAnnotation', 'POST /annotations/create', annotations),
  'AnnotationApi',
  op('annotationUpdate', 'POST /annotation/update', annotations),
  'AnnotationsApi',
  op('annotationsStreamIdentifiers', 'WS /annotations/stream/identifiers', streams),
  'FormatsApi',
  op('formatsStreamIdentifiers', 'WS /formats/stream/identifiers', streams),
  'AssetsApi',
  op('streamAssets', 'WS /assets/stream', streams),
  op('getAssetsStreamTransferables', 'WS /assets/stream/transferables', streams),
  'ActivitiesApi',
  op('activitiesSnapshot', 'GET /activities', activities),
  op('activitiesStreamIdentifiers', 'WS /activities/stream/identifiers', streams),
  'SearchApi',
  op('fullTextSearch', 'GET /search/full_text', search),
  op('neuralCodeSearch', 'GET /search/neural_code', search),
  'QGPTApi',
  op('relevance', 'POST /qgpt/relevance', qgpt, { readOnly: true }),
  op('question', 'POST /qgpt/question', qgpt),
  op('qgptStream', 'WS /qgpt/stream', qgptStream, { streamMethod: 'POST' }),
  'ModelsApi',
  op('modelsSnapshot', 'GET /models', models),
  op('modelsStreamIdentifiers', 'WS /models/stream/identifiers', models),
  'AnchorsApi',
  op('anchorsSnapshot', 'GET /anchors', anchors),
  op('anchorsCreateNewAnchor', 'POST /anchors/create', anchors),
  op('anchorsStreamIdentifiers', 'WS /anchors/stream/identifiers', streams),
  'OSApi',
  op('signIntoOS', 'POST /os/sign_in', os),
  op('signOutOfOS', 'POST /os/sign_out', os),
  op('osAppletLaunch', 'POST /os/applet/launch', os),
  op('osSettingsSnapshot', 'GET /os/settings', os),
  op('osSettingsUpdate', 'POST /os/settings/update', os),
  op('osSettingsStream', 'WS /os/settings/stream', streams),
  op('osPermissions', 'GET /os/permissions', os),
  op('osPermissionsRequest', 'POST /os/permissions/request', os),
  op('osDeviceInformation', 'GET /os/device/information', os),
  op('osMetadata', 'GET /os/metadata', os),
  'WorkstreamPatternEngineApi',
  op('workstreamPatternEngineProcessorsVisionStatus', 'GET /workstream_pattern_engine/processors/vision/status', os),
  op('workstreamPatternEngineProcessorsVisionStatusStream', 'WS /workstream_pattern_engine/processors/vision/status/stream', streams),
  op('workstreamPatternEngineProcessorsVisionActivate', 'POST /workstream_pattern_engine/processors/vision/activate', patternEngine),
  op('workstreamPatternEngineProcessorsVisionDeactivate', 'POST /workstream_pattern_engine/processors/vision/deactivate', patternEngine),
  op('workstreamPatternEngineCreateIngestion', 'POST /workstream_pattern_engine/ingestions/create', patternEngine),
  op('workstreamPatternEngineProcessorsSources', 'GET /workstream_pattern_engine/processors/sources', patternEngine),
  op('workstreamPatternEngineProcessorsVisionMetadata', 'GET /workstream_pattern_engine/processors/vision/metadata', patternEngine),
  op(
    'workstreamPatternEngineProcessorsVisionCalibrationCapture',
    'POST /workstream_pattern_engine/processors/vision/calibration/capture',
    patternEngine,
  ),
  op(
    'workstreamPatternEngineProcessorsVisionCalibrationsSnapshot',
    'GET /workstream_pattern_engine/processors/vision/calibrations',
    patternEngine,
  ),
  op(
    'workstreamPatternEngineProcessorsVisionCalibrationsFocused',
    'GET /workstream_pattern_engine/processors/vision/calibrations/focused',
    patternEngine,
  ),
  op('workstreamPatternEngineProcessorsVisionDataClear', 'POST /workstream_pattern_engine/processors/vision/data/clear', patternEngine),
  op(
    'workstreamPatternEngineProcessorsVisionEventsSnapshot',
    'GET /workstream_pattern_engine/processors/vision/data/events',
    patternEngine,
  ),
  op(
    'workstreamPatternEngineProcessorsVisionEventsSearch',
    'POST /workstream_pattern_engine/processors/vision/data/events/search',
    patternEngine,
    { readOnly: true },
  ),
  op(
    'workstreamPatternEngineProcessorsVisionEventsScopedDelete',
    'POST /workstream_pattern_engine/processors/vision/data/events/scoped_delete',
    patternEngine,
  ),
  op(
    'workstreamPatternEngineProcessorsVisionEventsSpecificSnapshot',
    'GET /workstream_pattern_engine/processors/vision/data/events/{vision_event}',
    patternEngine,
  ),
  op(
    'workstreamPatternEngineProcessorsVisionEventDeleteSpecificVisionEvent',
    'POST /workstream_pattern_engine/processors/vision/data/events/{vision_event}/delete',
    patternEngine,
  ),
  'WorkstreamSummariesApi',
  op('workstreamSummariesCreateAutogeneratedWorkstreamSummary', 'POST /workstream_summaries/create/summary', patternEngine),
  'WorkstreamSummaryApi',
  op('workstreamSummaryRegenerateSpecificSummary', 'POST /workstream_summary/{workstream_summary}/regenerate/summary', patternEngine),
  'ApplicationsApi',
  op('applicationsSpecificApplicationSnapshot', 'GET /applications/{application}', applications),
  op('applicationsSessionSnapshot', 'GET /applications/sessions/{session}', applications, { deprecated: true }),
  'ConversationsApi',
  op('conversationsCreateFromAsset', 'POST /conversations/create/from_asset/{asset}', conversations),
  op('conversationsDeleteSpecificConversation', 'POST /conversations/{conversation}/delete', conversations),
  'ConversationApi',
  op('conversationGetSpecificConversation', 'GET /conversation/{conversation}', conversation),
  op('conversationSpecificConversationMessages', 'GET /conversation/{conversation}/messages', conversation),
  op('conversationSpecificConversationRename', 'POST /conversation/{conversation}/rename', conversation),
  op('conversationAssociateAsset', 'POST /conversation/{conversation}/assets/associate/{asset}', conversation),
  op('conversationDisassociateAsset', 'POST /conversation/{conversation}/assets/disassociate/{asset}', conversation),
  'ConversationMessagesApi',
  op('messagesDeleteSpecificMessage', 'POST /messages/{message}/delete', messages),
  'ConversationMessageApi',
  op('messageSpecificMessageSnapshot', 'GET /message/{message}', messages),
  'AssetsApi',
  op('assetsSpecificAssetSnapshot', 'GET /assets/{asset}', assets),
  'AssetApi',
  op('assetSnapshot', 'GET /asset/{asset}', assets),
  'AssetsApi',
  op('assetsDeleteAsset', 'POST /assets/{asset}/delete', assets),
  op('assetsSpecificAssetFormatsSnapshot', 'GET /assets/{asset}/formats', assets),
  'AssetApi',
  op('assetFormats', 'GET /asset/{asset}/formats', assets),
  op('assetAssociateTag', 'POST /asset/{asset}/tags/associate/{tag}', assets),
  op('assetDisassociateTag', 'POST /asset/{asset}/tags/disassociate/{tag}', assets),
  op('assetAssociateWebsite', 'POST /asset/{asset}/websites/associate/{website}', assets),
  op('assetDisassociateWebsite', 'POST /asset/{asset}/websites/disassociate/{website}', assets),
  'FormatApi',
  op('formatSnapshot', 'GET /format/{format}', assets),
  'AnnotationApi',
  op('annotationSpecificAnnotationSnapshot', 'GET /annotation/{annotation}', annotations),
  'AnnotationsApi',
  op('annotationsDeleteSpecificAnnotation', 'POST /annotations/{annotation}/delete', annotations),
  'ModelApi',
  op('modelsSpecificModelSnapshot', 'GET /model/{model}', models),
  op('modelSpecificModelDownload', 'POST /model/{model}/download', models),
  op('modelSpecificModelDownloadCancel', 'POST /model/{model}/download/cancel', models),
  op('modelSpecificModelDownloadProgress', 'WS /model/{model}/download/progress', models),
  'ModelsApi',
  op('modelsDeleteSpecificModelCache', 'POST /models/{model}/delete/cache', models),
  'AnchorApi',
  op('anchorSpecificAnchorSnapshot', 'GET /anchor/{anchor}', anchors),
  op('anchorAssociateConversation', 'POST /anchor/{anchor}/conversations/associate/{conversation}', anchors),
  op('anchorDisassociateConversation', 'POST /anchor/{anchor}/conversations/disassociate/{conversation}', anchors),
  op('anchorAssociateAsset', 'POST /anchor/{anchor}/assets/associate/{asset}', anchors),
  op('anchorDisassociateAsset', 'POST /anchor/{anchor}/assets/disassociate/{asset}', anchors),
  'ConversationApi',
  op('conversationAssociateAnchor', 'POST /conversation/{conversation}/anchors/associate/{anchor}', anchors),
  op('conversationDisassociateAnchor', 'POST /conversation/{conversation}/anchors/disassociate/{anchor}', anchors),
  'AssetApi',
  op('assetAssociateAnchor', 'POST /asset/{asset}/anchors/associate/{anchor}', anchors),
  op('assetDisassociateAnchor', 'POST /asset/{asset}/anchors/disassociate/{anchor}', anchors),
  'AnchorsApi',
  op('anchorsDeleteSpecificAnchor', 'POST /anchors/{anchor}/delete', anchors),
  'TagsApi',
  op('tagsSnapshot', 'GET /tags', tagsWebsites),
  op('tagsCreateNewTag', 'POST /tags/create', tagsWebsites),
  op('tagsExists', 'POST /tags/exists', tagsWebsites, { readOnly: true }),
  op('searchTags', 'POST /tags/search', tagsWebsites, { readOnly: true }),
  op('tagsStreamIdentifiers', 'WS /tags/stream/identifiers', tagsWebsites),
  op('tagsDeleteSpecificTag', 'POST /tags/{tag}/delete', tagsWebsites),
  'TagApi',
  op('tagUpdate', 'POST /tag/update', tagsWebsites),
  op('tagsSpecificTagSnapshot', 'GET /tag/{tag}', tagsWebsites),
  op('tagScoresIncrement', 'POST /tag/{tag}/scores/increment', tagsWebsites),
  'WebsitesApi',
  op('websitesSnapshot', 'GET /websites', tagsWebsites),
  op('websitesCreateNewWebsite', 'POST /websites/create', tagsWebsites),
  op('websitesExists', 'POST /websites/exists', tagsWebsites, { readOnly: true }),
  op('searchWebsites', 'POST /websites/search', tagsWebsites, { readOnly: true }),
  op('websitesStreamIdentifiers', 'WS /websites/stream/identifiers', tagsWebsites),
  op('websitesDeleteSpecificWebsite', 'POST /websites/{website}/delete', tagsWebsites),
  'WebsiteApi',
  op('websiteUpdate', 'POST /website/update', tagsWebsites),
  op('websitesSpecificWebsiteSnapshot', 'GET /website/{website}', tagsWebsites),
  op('websiteScoresIncrement', 'POST /website/{website}/scores/increment', tagsWebsites),
  // Models and their runtimes (handlers/models.ts, runtimes.ts, providers.ts).
  'ModelsApi',
  op('modelsCreateNewModel', 'POST /models/create', models),
  op('unloadModels', 'POST /models/unload', models),
  op('modelsDeleteSpecificModel', 'POST /models/{model}/delete', models),
  'ModelApi',
  op('modelUpdate', 'POST /model/update', models),
  op('modelSpecificModelLoad', 'POST /model/{model}/load', models),
  op('modelSpecificModelUnload', 'POST /model/{model}/unload', models),
  op('modelScoresIncrement', 'POST /model/{model}/scores/increment', models),
  'OllamaApi',
  op('ollamaStatusCheck', 'GET /ollama/status', runtimes),
  op('ollamaStatusCheckStream', 'WS /ollama/status/stream', runtimes),
  op('ollamaInstall', 'POST /ollama/install', runtimes),
  op('ollamaInstallsSnapshot', 'GET /ollama/installs', runtimes),
  op('ollamaInstallSnapshot', 'GET /ollama/install/{identifier}', runtimes),
  op('ollamaInstallCancel', 'POST /ollama/install/{identifier}/cancel', runtimes),
  op('ollamaUpdate', 'POST /ollama/update', runtimes),
  op('ollamaUpdatesSnapshot', 'GET /ollama/updates', runtimes),
  op('ollamaUpdateSnapshot', 'GET /ollama/update/{identifier}', runtimes),
  op('ollamaUpdateCancel', 'POST /ollama/update/{identifier}/cancel', runtimes),
  op('ollamaUninstall', 'POST /ollama/uninstall', runtimes),
  'FoundryApi',
  op('foundryStatusCheck', 'GET /foundry/status', runtimes),
  op('foundryStatusCheckStream', 'WS /foundry/status/stream', runtimes),
  op('foundryInstall', 'POST /foundry/install', runtimes),
  op('foundryInstallsSnapshot', 'GET /foundry/installs', runtimes),
  op('foundryInstallSnapshot', 'GET /foundry/install/{identifier}', runtimes),
  op('foundryInstallCancel', 'POST /foundry/install/{identifier}/cancel', runtimes),
  op('foundryUpdate', 'POST /foundry/update', runtimes),
  op('foundryUpdatesSnapshot', 'GET /foundry/updates', runtimes),
  op('foundryUpdateSnapshot', 'GET /foundry/update/{identifier}', runtimes),
  op('foundryUpdateCancel', 'POST /foundry/update/{identifier}/cancel', runtimes),
  op('foundryUninstall', 'POST /foundry/uninstall', runtimes),
  'OpenAIApi',
  op('openAiModelsList', 'POST /open_ai/models/list', providers, { readOnly: true }),
  'ExternalProviderApi',
  op('externalProviderApiKeyCreate', 'POST /external_provider/api_key/create', providers),
  op('externalProviderApiKeyUpdate', 'POST /external_provider/api_key/update', providers),
  op('externalProviderApiKeyDelete', 'POST /external_provider/api_key/delete', providers),
  // The rest of the hand-written kinds' operations (scores, activities, formats and analyses,
  // asset reads, searches), one block.
  'ActivitiesApi',
  op('activitiesCreateNewActivity', 'POST /activities/create', activity),
  op('activitiesDeleteSpecificActivity', 'POST /activities/{activity}/delete', activity),
  'ActivityApi',
  op('activityUpdate', 'POST /activity/update', activity),
  op('activityIdentifiersSnapshot', 'GET /activity/identifiers', activity),
  op('activitiesSpecificActivitySnapshot', 'GET /activity/{activity}', activity),
  'AssetApi',
  op('assetSpecificAssetActivities', 'GET /asset/{asset}/activities', activity),
  op('assetSnapshotPost', 'POST /asset/{asset}', assetReads, { readOnly: true }),
  op('assetSpecificAssetConversations', 'GET /asset/{asset}/conversations', assetReads),
  op('assetSpecificAssetExport', 'GET /asset/{asset}/export', assetReads),
  op('assetReclassify', 'POST /asset/reclassify', formats),
  op('assetScoresIncrement', 'POST /asset/{asset}/scores/increment', scores),
  'AssetsApi',
  op('assetsPseudoSnapshot', 'GET /assets/pseudo', assetReads),
  op('assetsGetRecommendedAssets', 'GET /assets/recommended', assetReads),
  op('assetsGetRelatedAssets', 'GET /assets/related', assetReads),
  op('assetsSearchWithFilters', 'POST /assets/search', assetFilters, { readOnly: true }),
  'FormatsApi',
  op('formatsSnapshot', 'GET /formats', formats),
  op('formatsSpecificFormatSnapshot', 'GET /formats/{format}', formats),
  'FormatApi',
  op('formatReclassify', 'POST /format/reclassify', formats),
  op('formatAnalysis', 'GET /format/{format}/analysis', formats),
  'AnalysesApi',
  op('analysesSnapshot', 'GET /analyses', formats),
  'CodeAnalysesApi',
  op('codeAnalysesSnapshot', 'GET /code_analyses', formats),
  'ImageAnalysesApi',
  op('imageAnalysesSnapshot', 'GET /image_analyses', formats),
  'OCRAnalysesApi',
  op('ocrAnalysesSnapshot', 'GET /ocr_analyses', formats),
  'MetricsApi',
  op('getMetricsFormats', 'GET /metrics/formats', formats),
  op('metricsFormatsOrdered', 'GET /metrics/formats/ordered', formats),
  'AnchorsApi',
  op('searchAnchors', 'POST /anchors/search', ownSearch, { readOnly: true }),
  'AnchorApi',
  op('anchorScoresIncrement', 'POST /anchor/{anchor}/scores/increment', scores),
  'AnnotationsApi',
  op('searchAnnotations', 'POST /annotations/search', ownSearch, { readOnly: true }),
  'AnnotationApi',
  op('annotationScoresIncrement', 'POST /annotation/{annotation}/scores/increment', scores),
  'ConversationMessagesApi',
  op('searchMessages', 'POST /messages/search', ownSearch, { readOnly: true }),
  'ConversationMessageApi',
  op('messageScoresIncrement', 'POST /message/{message}/scores/increment', scores),
  'ConversationApi',
  op('searchConversationSpecificMessages', 'POST /conversation/{conversation}/search', ownSearch, { readOnly: true }),
  op('conversationScoresIncrement', 'POST /conversation/{conversation}/scores/increment', scores),
  op('conversationSpecificConversationPrepare', 'POST /conversation/{conversation}/prepare', ownWrites, { readOnly: true }),
  op('conversationSummarize', 'POST /conversation/{conversation}/summarize', conversationMore),
  'ConversationsApi',
  op(
    'conversationsCreateFromWorkstreamSummary',
    'POST /conversations/create/from_workstream_summary/{workstream_summary}',
    conversationMore,
  ),
  'AnchorApi',
  op('anchorUpdate', 'POST /anchor/update', ownWrites),
  op('anchorRename', 'POST /anchor/{anchor}/rename', ownWrites),
  'ApplicationsApi',
  op('applicationsBulkUpdateApplicationCapabilities', 'POST /applications/update/capabilities', ownWrites),
  'RelationshipsApi',
  op('relationshipsSnapshot', 'GET /relationships', ownWrites),
  'RelationshipApi',
  op('relationshipsSpecificRelationshipSnapshot', 'GET /relationship/{relationship}', ownWrites),
  // Classification, machine learning, discovery, the copilot's helpers, the connector's extras, asset sources, notifications.
  'ClassificationApi',
  op('convertGenericClassification', 'POST /classification/generic/convert', ml, { readOnly: true }),
  'MachineLearningApi',
  op('personificationTechnicalLanguageGeneration', 'POST /machine_learning/text/technical_language/generators/personification', ml, {
    readOnly: true,
  }),
  op('segmentTechnicalLanguage', 'POST /machine_learning/text/technical_language/parsers/segmentation', ml, { readOnly: true }),
  'DiscoveryApi',
  op('discoveryDiscoverAssets', 'POST /discovery/discover/assets', ml),
  op('discoveryDiscoverAssetsHtml', 'POST /discovery/discover/assets/html', ml),
  op('discoveryDiscoverSensitives', 'POST /discovery/discover/sensitives', ml),
  op('discoveryDiscoverTagsRelated', 'POST /discovery/discover/tags/related', ml),
  'SearchApi',
  op('tagBasedSearch', 'POST /search/tag_based', search, { readOnly: true }),
  'QGPTApi',
  op('hints', 'POST /qgpt/hints', qgptExtras, { readOnly: true }),
  op('personsRelated', 'POST /qgpt/persons/related', qgptExtras, { readOnly: true }),
  op('reprompt', 'POST /qgpt/reprompt', qgptExtras, { readOnly: true }),
  'ConnectorApi',
  op('intention', 'POST /{application}/intention', connector),
  op('onboarded', 'POST /{application}/onboarded', connector),
  op('react', 'POST /{application}/reaction', connector),
  op('suggest', 'POST /{application}/suggestion', connector, { readOnly: true }),
  op('track', 'POST /{application}/track', connector),
  'MacOSApi',
  op('assetsCreateNewAssetFromMacos', 'POST /macos/assets/create', assetSources),
  'UltraSuiteApi',
  op('assetsCreateUltraSuiteAsset', 'POST /ultra_suite/assets/create', assetSources),
  'NotificationsApi',
  op('sendLocalNotification', 'POST /notifications/local/send', assetSources),
  'WorkstreamApi',
  op('workstreamSuggestionsRefresh', 'POST /workstream/suggestions/refresh', qgptExtras, { readOnly: true }),
  op('workstreamSuggestionsStream', 'WS /workstream/suggestions/stream', streams),
  'AppletApi',
  op('streamAppletVersion', 'WS /os/applet/version/stream', streams),
  // Backups, the database's export and import, shares, links and distributions (their snapshots and items: the generic path's).
  'BackupsApi',
  op('backupsCreateNewBackup', 'POST /backups/create', backups),
  op('backupsCreateNewBackupStreamed', 'POST /backups/create/streamed', backups),
  op('backupsStreamedProgress', 'GET /backups/streamed/progress', backups),
  op('backupsCreateNewBackupStreamedWebsocket', 'WS /backups/create/streamed/websocket', backups),
  op('backupsDeleteSpecificBackup', 'POST /backups/{backup}/delete', backups),
  'BackupApi',
  op('backup', 'POST /backup', backups),
  op('backupAsset', 'POST /backup/asset', backups),
  op('backupSpecificCreationStatus', 'GET /backup/{backup}/creation/status', backups),
  op('backupSpecificCreationCancel', 'POST /backup/{backup}/creation/cancel', backups),
  op('backupRestoreSpecificBackup', 'POST /backup/{backup}/restore', backups),
  op('backupRestoreSpecificBackupStreamed', 'POST /backup/{backup}/restore/streamed', backups),
  op('backupSpecificRestorationStatus', 'GET /backup/{backup}/restoration/status', backups),
  op('backupSpecificRestorationCancel', 'POST /backup/{backup}/restoration/cancel', backups),
  op('backupRestoreSpecificBackupStreamedWebsocket', 'WS /backup/{backup}/restore/streamed/websocket', backups),
  'DatabaseApi',
  op('databaseExport', 'GET /database/export', backups),
  op('databaseImport', 'POST /database/import', backups),
  'SharesApi',
  op('sharesCreateNewShare', 'POST /shares/create', shares),
  op('sharesSpecificShareSnapshot', 'GET /shares/{share}', shares),
  op('sharesDeleteShare', 'POST /shares/{share}/delete', shares),
  'LinkifyApi',
  op('linkify', 'POST /linkify', shares),
  op('linkifyMultiple', 'POST /linkify/multiple', shares),
  op('linkifyShareRevoke', 'POST /linkify/{share}/revoke', shares),
  'DistributionsApi',
  op('distributionsCreateNewDistribution', 'POST /distributions/create', shares),
  op('distributionsDeleteSpecificDistribution', 'POST /distributions/{distribution}/delete', shares),
  'DistributionApi',
  op('distributionUpdate', 'POST /distribution/update', shares),
  'PieceApi',
  op('htmlShare', 'GET /', shares),
) satisfies readonly Operation[];

/**
 * The name of an operation the service answers, as the SDK names it (`conversationsSnapshot`): a row
 * of the table above, or of what no host can do (src/core/handlers/host-cannot.ts). (The generic
 * path's rows, `MATERIAL_OPERATIONS`, are named by the graph table, src/shared/graph.ts, whose names
 * are strings.)
 */
export type OperationName = (typeof TABLE)[number]['name'] | HostCannotName;

/**
 * The operations that write: every POST but those that change nothing (`readOnly`). A mirrored
 * Pieces OS needs a declaration of each (src/host/mirror/writes.ts: how it is queued and replayed).
 */
export type WriteOperationName =
  | Exclude<Extract<(typeof TABLE)[number], { method: 'POST' }>, { readOnly: true }>['name']
  | HostCannotWriteName;

/**
 * Every operation: the rows above, then the generic path's, one per SDK operation of each kind with
 * no hand-written store and of each association between two such kinds, made from the graph table
 * (src/core/handlers/materials.ts): `personsCreateNewPerson` is there, under its SDK name; then
 * those no host of this service can do, each answered 501 with its reason
 * (src/core/handlers/host-cannot.ts). Static paths come before `{param}` paths.
 */
const WRITTEN: ReadonlySet<string> = new Set(TABLE.map((row) => row.name));
const ALL: readonly Operation[] = [
  ...TABLE,
  // A row of the table answers in place of the generic path's of the same name (a backup's create keeps the store's data).
  ...MATERIAL_OPERATIONS.filter((generic) => !WRITTEN.has(generic.name)),
  // The associations with a hand-written kind (handlers/links.ts), but those the table has a row of.
  ...LINK_OPERATIONS.filter((operation) => !WRITTEN.has(operation.name)),
  ...HOST_CANNOT_OPERATIONS,
];
export const OPERATIONS: readonly Operation[] = [
  ...ALL.filter((operation) => !operation.path.includes('{')),
  ...ALL.filter((operation) => operation.path.includes('{')),
];

export type PathMatcher = (path: string) => Record<string, string> | null;

/**
 * Compiles `/a/{b}/c` into a matcher giving `{b}` decoded, or null. A
 * parameter never takes a segment that another path of `table` spells out at
 * the same place (`/applications/{application}` does not match
 * `/applications/register`), so such a path gets its own 404/405, not a
 * complaint about a malformed id.
 */
export function compilePath(pattern: string, table: readonly string[] = OPERATIONS.map((o) => o.path)): PathMatcher {
  const parts = pattern.split('/');
  const reserved = parts.map((part, i) => {
    if (!part.startsWith('{')) return new Set<string>();
    const prefix = parts.slice(0, i).join('/');
    return new Set(
      table
        .map((path) => path.split('/'))
        .filter((other) => other.slice(0, i).join('/') === prefix && other[i] && !other[i]!.startsWith('{'))
        .map((other) => other[i]!),
    );
  });
  return (path) => {
    const segments = path.split('/');
    if (segments.length !== parts.length) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const segment = segments[i]!;
      if (part.startsWith('{')) {
        if (segment === '' || reserved[i]!.has(segment)) return null;
        try {
          params[part.slice(1, -1)] = decodeURIComponent(segment);
        } catch {
          params[part.slice(1, -1)] = segment;
        }
      } else if (part !== segment) {
        return null;
      }
    }
    return params;
  };
}

interface Route {
  operation: Operation;
  match: PathMatcher;
}

let compiled: Route[] | undefined;
/** Every operation with its compiled path, in table order (compiled on first use). */
export const routes = (): readonly Route[] =>
  (compiled ??= OPERATIONS.map((operation) => ({ operation, match: compilePath(operation.path) })));

/** How many segments of an operation's path are fixed (not `{param}`). */
export const fixedSegments = (operation: Operation): number =>
  operation.path.split('/').filter((part) => part && !part.startsWith('{')).length;

/** The operation that serves `method` on `path` (the first in table order), with its parameters. */
export function findRoute(method: string, path: string): { operation: Operation; params: Record<string, string> } | undefined {
  for (const { operation, match } of routes()) {
    if (operation.method !== method && operation.streamMethod !== method) continue;
    const params = match(path);
    if (params) return { operation, params };
  }
  return undefined;
}

/** The operation a request names (HEAD names the GET operation), for logs and overrides. */
export function operationFor(method: string, path: string): OperationName | undefined {
  return routes().find(
    ({ operation, match }) => (operation.method === method || (method === 'HEAD' && operation.method === 'GET')) && match(path),
  )?.operation.name as OperationName | undefined;
}
