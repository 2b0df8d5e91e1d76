/**
 * The route table: every operation the service answers, named exactly as the SDK 4.1.0 names it, with
 * its method, path and handler. Static paths come before `{param}` paths.
 */
import type { OperationHandler } from './context.js';
import * as activities from './handlers/activities.js';
import * as annotations from './handlers/annotations.js';
import * as anchors from './handlers/anchors.js';
import * as applications from './handlers/applications.js';
import * as assets from './handlers/assets.js';
import * as connector from './handlers/connector.js';
import * as conversation from './handlers/conversation.js';
import * as conversations from './handlers/conversations.js';
import * as qgpt from './handlers/qgpt.js';
import { qgptStream } from './handlers/qgpt-stream.js';
import * as messages from './handlers/messages.js';
import * as search from './handlers/search.js';
import * as models from './handlers/models.js';
import * as os from './handlers/os.js';
import * as streams from './handlers/streams.js';
import * as user from './handlers/user.js';
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

const TABLE = [
  { api: 'WellKnownApi', name: 'getWellKnownHealth', method: 'GET', path: '/.well-known/health', handler: wellKnown.getWellKnownHealth },
  { api: 'WellKnownApi', name: 'getWellKnownVersion', method: 'GET', path: '/.well-known/version', handler: wellKnown.getWellKnownVersion },
  {
    api: 'WellKnownApi',
    name: 'getWellKnownStreamHealth',
    method: 'GET',
    path: '/.well-known/stream/health',
    handler: streams.getWellKnownStreamHealth,
    socket: true,
  },
  { api: 'ConnectorApi', name: 'connect', method: 'POST', path: '/connect', handler: connector.connect },
  { api: 'UserApi', name: 'userSnapshot', method: 'GET', path: '/user', handler: user.userSnapshot },
  { api: 'UserApi', name: 'streamUser', method: 'GET', path: '/user/stream', handler: streams.streamUser, socket: true },
  {
    api: 'ApplicationApi',
    name: 'applicationUpdate',
    method: 'POST',
    path: '/application/update',
    handler: applications.applicationUpdate,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsSnapshot',
    method: 'GET',
    path: '/applications',
    handler: applications.applicationsSnapshot,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsExternalSnapshot',
    method: 'GET',
    path: '/applications/external',
    handler: applications.applicationsExternalSnapshot,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsExternalRelated',
    method: 'GET',
    path: '/applications/external/related',
    handler: applications.applicationsExternalRelated,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsRegister',
    method: 'POST',
    path: '/applications/register',
    handler: applications.applicationsRegister,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsSessionOpen',
    method: 'POST',
    path: '/applications/session/open',
    handler: applications.applicationsSessionOpen,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsSessionClose',
    method: 'POST',
    path: '/applications/session/close',
    handler: applications.applicationsSessionClose,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsUsageEngagementInteraction',
    method: 'POST',
    path: '/applications/usage/engagement/interaction',
    handler: applications.applicationsUsageEngagementInteraction,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsUsageEngagementKeyboard',
    method: 'POST',
    path: '/applications/usage/engagement/keyboard',
    handler: applications.applicationsUsageEngagementKeyboard,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsUsageInstallation',
    method: 'POST',
    path: '/applications/usage/installation',
    handler: applications.applicationsUsageInstallation,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'postApplicationsUsageUpdated',
    method: 'POST',
    path: '/applications/usage/updated',
    handler: applications.postApplicationsUsageUpdated,
    deprecated: true,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsStreamIdentifiers',
    method: 'GET',
    path: '/applications/stream/identifiers',
    handler: streams.applicationsStreamIdentifiers,
    socket: true,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsSnapshot',
    method: 'GET',
    path: '/conversations',
    handler: conversations.conversationsSnapshot,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsIdentifiersSnapshot',
    method: 'GET',
    path: '/conversations/identifiers',
    handler: conversations.conversationsIdentifiersSnapshot,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsCreateSpecificConversation',
    method: 'POST',
    path: '/conversations/create',
    handler: conversations.conversationsCreateSpecificConversation,
  },
  {
    api: 'ConversationsApi',
    name: 'searchConversations',
    method: 'POST',
    path: '/conversations/search',
    handler: conversations.searchConversations,
    readOnly: true,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsStreamIdentifiers',
    method: 'GET',
    path: '/conversations/stream/identifiers',
    handler: streams.conversationsStreamIdentifiers,
    socket: true,
  },
  {
    api: 'ConversationApi',
    name: 'conversationUpdate',
    method: 'POST',
    path: '/conversation/update',
    handler: conversation.conversationUpdate,
  },
  { api: 'ConversationMessagesApi', name: 'messagesSnapshot', method: 'GET', path: '/messages', handler: messages.messagesSnapshot },
  {
    api: 'ConversationMessagesApi',
    name: 'messagesCreateSpecificMessage',
    method: 'POST',
    path: '/messages/create',
    handler: messages.messagesCreateSpecificMessage,
  },
  {
    api: 'ConversationMessagesApi',
    name: 'conversationMessagesStreamIdentifiers',
    method: 'GET',
    path: '/messages/stream/identifiers',
    handler: streams.conversationMessagesStreamIdentifiers,
    socket: true,
  },
  {
    api: 'ConversationMessageApi',
    name: 'messageSpecificMessageUpdate',
    method: 'POST',
    path: '/message/update',
    handler: messages.messageSpecificMessageUpdate,
  },
  {
    api: 'ConversationMessageApi',
    name: 'messageUpdateValue',
    method: 'POST',
    path: '/message/update/value',
    handler: messages.messageUpdateValue,
  },
  { api: 'AssetsApi', name: 'assetsSnapshot', method: 'GET', path: '/assets', handler: assets.assetsSnapshot },
  {
    api: 'AssetsApi',
    name: 'assetsIdentifiersSnapshot',
    method: 'GET',
    path: '/assets/identifiers',
    handler: assets.assetsIdentifiersSnapshot,
  },
  {
    api: 'AssetsApi',
    name: 'assetsStreamIdentifiers',
    method: 'GET',
    path: '/assets/stream/identifiers',
    handler: streams.assetsStreamIdentifiers,
    socket: true,
  },
  { api: 'AssetsApi', name: 'assetsCreateNewAsset', method: 'POST', path: '/assets/create', handler: assets.assetsCreateNewAsset },
  { api: 'AssetsApi', name: 'assetsDraft', method: 'POST', path: '/assets/draft', handler: assets.assetsDraft, readOnly: true },
  { api: 'AssetsApi', name: 'searchAssets', method: 'GET', path: '/assets/search', handler: search.searchAssets },
  { api: 'AssetApi', name: 'assetUpdate', method: 'POST', path: '/asset/update', handler: assets.assetUpdate },
  { api: 'FormatApi', name: 'formatUpdateValue', method: 'POST', path: '/format/update/value', handler: assets.formatUpdateValue },
  { api: 'AnnotationsApi', name: 'annotationsSnapshot', method: 'GET', path: '/annotations', handler: annotations.annotationsSnapshot },
  {
    api: 'AnnotationsApi',
    name: 'annotationsCreateNewAnnotation',
    method: 'POST',
    path: '/annotations/create',
    handler: annotations.annotationsCreateNewAnnotation,
  },
  { api: 'AnnotationApi', name: 'annotationUpdate', method: 'POST', path: '/annotation/update', handler: annotations.annotationUpdate },
  { api: 'ActivitiesApi', name: 'activitiesSnapshot', method: 'GET', path: '/activities', handler: activities.activitiesSnapshot },
  {
    api: 'ActivitiesApi',
    name: 'activitiesStreamIdentifiers',
    method: 'GET',
    path: '/activities/stream/identifiers',
    handler: streams.activitiesStreamIdentifiers,
    socket: true,
  },
  { api: 'SearchApi', name: 'fullTextSearch', method: 'GET', path: '/search/full_text', handler: search.fullTextSearch },
  { api: 'SearchApi', name: 'neuralCodeSearch', method: 'GET', path: '/search/neural_code', handler: search.neuralCodeSearch },
  { api: 'QGPTApi', name: 'relevance', method: 'POST', path: '/qgpt/relevance', handler: qgpt.relevance, readOnly: true },
  { api: 'QGPTApi', name: 'question', method: 'POST', path: '/qgpt/question', handler: qgpt.question },
  { api: 'QGPTApi', name: 'qgptStream', method: 'GET', path: '/qgpt/stream', handler: qgptStream, socket: true, streamMethod: 'POST' },
  { api: 'ModelsApi', name: 'modelsSnapshot', method: 'GET', path: '/models', handler: models.modelsSnapshot },
  {
    api: 'ModelsApi',
    name: 'modelsStreamIdentifiers',
    method: 'GET',
    path: '/models/stream/identifiers',
    handler: models.modelsStreamIdentifiers,
    socket: true,
  },
  { api: 'AnchorsApi', name: 'anchorsSnapshot', method: 'GET', path: '/anchors', handler: anchors.anchorsSnapshot },
  { api: 'AnchorsApi', name: 'anchorsCreateNewAnchor', method: 'POST', path: '/anchors/create', handler: anchors.anchorsCreateNewAnchor },
  {
    api: 'AnchorsApi',
    name: 'anchorsStreamIdentifiers',
    method: 'GET',
    path: '/anchors/stream/identifiers',
    handler: streams.anchorsStreamIdentifiers,
    socket: true,
  },
  { api: 'RangesApi', name: 'rangesSnapshot', method: 'GET', path: '/ranges', handler: anchors.rangesSnapshot },
  {
    api: 'RangesApi',
    name: 'rangesStreamIdentifiers',
    method: 'GET',
    path: '/ranges/stream/identifiers',
    handler: streams.rangesStreamIdentifiers,
    socket: true,
  },
  { api: 'OSApi', name: 'signIntoOS', method: 'POST', path: '/os/sign_in', handler: os.signIntoOS },
  { api: 'OSApi', name: 'signOutOfOS', method: 'POST', path: '/os/sign_out', handler: os.signOutOfOS },
  { api: 'OSApi', name: 'osAppletLaunch', method: 'POST', path: '/os/applet/launch', handler: os.osAppletLaunch },
  {
    api: 'AllocationsApi',
    name: 'allocationsConnectNewCloud',
    method: 'POST',
    path: '/allocations/connect',
    handler: os.allocationsConnectNewCloud,
  },
  {
    api: 'AllocationsApi',
    name: 'allocationsDisconnectCloud',
    method: 'POST',
    path: '/allocations/disconnect',
    handler: os.allocationsDisconnectCloud,
  },
  {
    api: 'WorkstreamPatternEngineApi',
    name: 'workstreamPatternEngineProcessorsVisionStatus',
    method: 'GET',
    path: '/workstream_pattern_engine/processors/vision/status',
    handler: os.workstreamPatternEngineProcessorsVisionStatus,
  },
  {
    api: 'WorkstreamPatternEngineApi',
    name: 'workstreamPatternEngineProcessorsVisionStatusStream',
    method: 'GET',
    path: '/workstream_pattern_engine/processors/vision/status/stream',
    handler: streams.workstreamPatternEngineProcessorsVisionStatusStream,
    socket: true,
  },
  // Parameterised paths last.
  {
    api: 'ApplicationsApi',
    name: 'applicationsSpecificApplicationSnapshot',
    method: 'GET',
    path: '/applications/{application}',
    handler: applications.applicationsSpecificApplicationSnapshot,
  },
  {
    api: 'ApplicationsApi',
    name: 'applicationsSessionSnapshot',
    method: 'GET',
    path: '/applications/sessions/{session}',
    handler: applications.applicationsSessionSnapshot,
    deprecated: true,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsCreateFromAsset',
    method: 'POST',
    path: '/conversations/create/from_asset/{asset}',
    handler: conversations.conversationsCreateFromAsset,
  },
  {
    api: 'ConversationsApi',
    name: 'conversationsDeleteSpecificConversation',
    method: 'POST',
    path: '/conversations/{conversation}/delete',
    handler: conversations.conversationsDeleteSpecificConversation,
  },
  {
    api: 'ConversationApi',
    name: 'conversationGetSpecificConversation',
    method: 'GET',
    path: '/conversation/{conversation}',
    handler: conversation.conversationGetSpecificConversation,
  },
  {
    api: 'ConversationApi',
    name: 'conversationSpecificConversationMessages',
    method: 'GET',
    path: '/conversation/{conversation}/messages',
    handler: conversation.conversationSpecificConversationMessages,
  },
  {
    api: 'ConversationApi',
    name: 'conversationSpecificConversationRename',
    method: 'POST',
    path: '/conversation/{conversation}/rename',
    handler: conversation.conversationSpecificConversationRename,
  },
  {
    api: 'ConversationApi',
    name: 'conversationAssociateAsset',
    method: 'POST',
    path: '/conversation/{conversation}/assets/associate/{asset}',
    handler: conversation.conversationAssociateAsset,
  },
  {
    api: 'ConversationApi',
    name: 'conversationDisassociateAsset',
    method: 'POST',
    path: '/conversation/{conversation}/assets/disassociate/{asset}',
    handler: conversation.conversationDisassociateAsset,
  },
  {
    api: 'ConversationMessagesApi',
    name: 'messagesDeleteSpecificMessage',
    method: 'POST',
    path: '/messages/{message}/delete',
    handler: messages.messagesDeleteSpecificMessage,
  },
  {
    api: 'ConversationMessageApi',
    name: 'messageSpecificMessageSnapshot',
    method: 'GET',
    path: '/message/{message}',
    handler: messages.messageSpecificMessageSnapshot,
  },
  { api: 'AssetsApi', name: 'assetsSpecificAssetSnapshot', method: 'GET', path: '/assets/{asset}', handler: assets.assetSnapshot },
  { api: 'AssetApi', name: 'assetSnapshot', method: 'GET', path: '/asset/{asset}', handler: assets.assetSnapshot },
  { api: 'AssetsApi', name: 'assetsDeleteAsset', method: 'POST', path: '/assets/{asset}/delete', handler: assets.assetsDeleteAsset },
  {
    api: 'AssetsApi',
    name: 'assetsSpecificAssetFormatsSnapshot',
    method: 'GET',
    path: '/assets/{asset}/formats',
    handler: assets.assetFormats,
  },
  { api: 'AssetApi', name: 'assetFormats', method: 'GET', path: '/asset/{asset}/formats', handler: assets.assetFormats },
  {
    api: 'AssetApi',
    name: 'assetAssociateTag',
    method: 'POST',
    path: '/asset/{asset}/tags/associate/{tag}',
    handler: assets.assetAssociateTag,
  },
  {
    api: 'AssetApi',
    name: 'assetDisassociateTag',
    method: 'POST',
    path: '/asset/{asset}/tags/disassociate/{tag}',
    handler: assets.assetDisassociateTag,
  },
  {
    api: 'AssetApi',
    name: 'assetAssociateWebsite',
    method: 'POST',
    path: '/asset/{asset}/websites/associate/{website}',
    handler: assets.assetAssociateWebsite,
  },
  {
    api: 'AssetApi',
    name: 'assetDisassociateWebsite',
    method: 'POST',
    path: '/asset/{asset}/websites/disassociate/{website}',
    handler: assets.assetDisassociateWebsite,
  },
  { api: 'FormatApi', name: 'formatSnapshot', method: 'GET', path: '/format/{format}', handler: assets.formatSnapshot },
  {
    api: 'AnnotationApi',
    name: 'annotationSpecificAnnotationSnapshot',
    method: 'GET',
    path: '/annotation/{annotation}',
    handler: annotations.annotationSpecificAnnotationSnapshot,
  },
  {
    api: 'AnnotationsApi',
    name: 'annotationsDeleteSpecificAnnotation',
    method: 'POST',
    path: '/annotations/{annotation}/delete',
    handler: annotations.annotationsDeleteSpecificAnnotation,
  },
  { api: 'TagApi', name: 'tagsSpecificTagSnapshot', method: 'GET', path: '/tag/{tag}', handler: annotations.tagsSpecificTagSnapshot },
  {
    api: 'WebsiteApi',
    name: 'websitesSpecificWebsiteSnapshot',
    method: 'GET',
    path: '/website/{website}',
    handler: annotations.websitesSpecificWebsiteSnapshot,
  },
  {
    api: 'ModelApi',
    name: 'modelsSpecificModelSnapshot',
    method: 'GET',
    path: '/model/{model}',
    handler: models.modelsSpecificModelSnapshot,
  },
  {
    api: 'ModelApi',
    name: 'modelSpecificModelDownload',
    method: 'POST',
    path: '/model/{model}/download',
    handler: models.modelSpecificModelDownload,
  },
  {
    api: 'ModelApi',
    name: 'modelSpecificModelDownloadCancel',
    method: 'POST',
    path: '/model/{model}/download/cancel',
    handler: models.modelSpecificModelDownloadCancel,
  },
  {
    api: 'ModelApi',
    name: 'modelSpecificModelDownloadProgress',
    method: 'GET',
    path: '/model/{model}/download/progress',
    handler: models.modelSpecificModelDownloadProgress,
    socket: true,
  },
  {
    api: 'ModelsApi',
    name: 'modelsDeleteSpecificModelCache',
    method: 'POST',
    path: '/models/{model}/delete/cache',
    handler: models.modelsDeleteSpecificModelCache,
  },
  {
    api: 'AnchorApi',
    name: 'anchorSpecificAnchorSnapshot',
    method: 'GET',
    path: '/anchor/{anchor}',
    handler: anchors.anchorSpecificAnchorSnapshot,
  },
  {
    api: 'AnchorApi',
    name: 'anchorAssociateConversation',
    method: 'POST',
    path: '/anchor/{anchor}/conversations/associate/{conversation}',
    handler: anchors.anchorAssociateConversation,
  },
  {
    api: 'AnchorApi',
    name: 'anchorDisassociateConversation',
    method: 'POST',
    path: '/anchor/{anchor}/conversations/disassociate/{conversation}',
    handler: anchors.anchorDisassociateConversation,
  },
  {
    api: 'AnchorApi',
    name: 'anchorAssociateAsset',
    method: 'POST',
    path: '/anchor/{anchor}/assets/associate/{asset}',
    handler: anchors.anchorAssociateAsset,
  },
  {
    api: 'AnchorApi',
    name: 'anchorDisassociateAsset',
    method: 'POST',
    path: '/anchor/{anchor}/assets/disassociate/{asset}',
    handler: anchors.anchorDisassociateAsset,
  },
  {
    api: 'ConversationApi',
    name: 'conversationAssociateAnchor',
    method: 'POST',
    path: '/conversation/{conversation}/anchors/associate/{anchor}',
    handler: anchors.conversationAssociateAnchor,
  },
  {
    api: 'ConversationApi',
    name: 'conversationDisassociateAnchor',
    method: 'POST',
    path: '/conversation/{conversation}/anchors/disassociate/{anchor}',
    handler: anchors.conversationDisassociateAnchor,
  },
  {
    api: 'AssetApi',
    name: 'assetAssociateAnchor',
    method: 'POST',
    path: '/asset/{asset}/anchors/associate/{anchor}',
    handler: anchors.assetAssociateAnchor,
  },
  {
    api: 'AssetApi',
    name: 'assetDisassociateAnchor',
    method: 'POST',
    path: '/asset/{asset}/anchors/disassociate/{anchor}',
    handler: anchors.assetDisassociateAnchor,
  },
  {
    api: 'AnchorsApi',
    name: 'anchorsDeleteSpecificAnchor',
    method: 'POST',
    path: '/anchors/{anchor}/delete',
    handler: anchors.anchorsDeleteSpecificAnchor,
  },
  {
    api: 'RangeApi',
    name: 'rangesSpecificRangeSnapshot',
    method: 'GET',
    path: '/range/{range}',
    handler: anchors.rangesSpecificRangeSnapshot,
  },
] as const satisfies readonly Operation[];

/** The name of an operation the service answers, as the SDK names it (`conversationsSnapshot`). */
export type OperationName = (typeof TABLE)[number]['name'];

/**
 * The operations that write: every POST but those that change nothing (`readOnly`). A mirrored
 * Pieces OS needs a declaration of each (src/host/mirror/writes.ts: how it is queued and replayed).
 */
export type WriteOperationName = Exclude<Extract<(typeof TABLE)[number], { method: 'POST' }>, { readOnly: true }>['name'];

export const OPERATIONS: readonly Operation[] = TABLE;

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
