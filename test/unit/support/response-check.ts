/**
 * Every 2xx response of every unit test, checked against the SDK model its
 * operation returns. `installResponseCheck()` (from setup.ts) wraps each
 * handler of the route table, so whatever calls the service — the harness's
 * SDK clients, plain fetch, the worker host — is checked; the violations of a
 * test fail it in `afterEach`.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, afterEach } from 'vitest';
import { OPERATIONS } from '../../../src/core/routes.js';
import { check, type Violation } from './sdk-shape.js';

/**
 * What an operation answers on success: an SDK model (by name), no body, plain
 * text, or server-sent events whose every `data:` frame is the model named.
 */
export type Returns = string | { empty: true } | { text: true } | { events: string } | ((url: URL) => string);

const EMPTY = { empty: true } as const;
const TEXT = { text: true } as const;
const identifierStream = (url: URL) => (url.searchParams.has('after') ? 'StreamCatchUp' : 'IdentifierStreamHandshake');

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
  tagsSpecificTagSnapshot: 'Tag',
  websitesSpecificWebsiteSnapshot: 'Website',
  activitiesSnapshot: 'Activities',
  activitiesStreamIdentifiers: identifierStream,
  fullTextSearch: 'SearchedAssets',
  neuralCodeSearch: 'SearchedAssets',
  searchAssets: 'SearchedAssets',
  // WebSocket paths: the page shim's handshake (the service's own protocol around the SDK model each socket carries).
  conversationsStreamIdentifiers: identifierStream,
  conversationMessagesStreamIdentifiers: identifierStream,
  assetsStreamIdentifiers: identifierStream,
  applicationsStreamIdentifiers: identifierStream,
  getWellKnownStreamHealth: 'HealthStreamHandshake',
  relevance: 'QGPTRelevanceOutput',
  question: 'QGPTQuestionOutput',
  // Each frame a client sends on the copilot socket is answered with its QGPTStreamOutput frames.
  qgptStream: { events: 'QGPTStreamOutput' },
  streamUser: 'UserStreamHandshake',
};

/** The violations of one 2xx response of `operation` (read from a clone: the response stays unread). */
export async function checkResponse(operation: string, url: URL, response: Response): Promise<Violation[]> {
  return checkBody(operation, url, response.headers.get('content-type') ?? '', await response.clone().text());
}

/** The violations of a 2xx body of `operation`, given its content type and text. */
export function checkBody(operation: string, url: URL, type: string, body: string): Violation[] {
  const returns = RETURNS[operation];
  if (returns === undefined) return [{ path: '$', message: `no response model is listed for ${operation} in RETURNS` }];
  if (typeof returns === 'object' && 'empty' in returns) {
    return body === '' ? [] : [{ path: '$', message: `expected no body, got ${JSON.stringify(body.slice(0, 80))}` }];
  }
  if (typeof returns === 'object' && 'text' in returns) {
    return type.startsWith('text/plain') ? [] : [{ path: '$', message: `expected text/plain, got ${type || 'no content type'}` }];
  }
  if (typeof returns === 'object' && 'events' in returns) {
    if (!type.startsWith('text/event-stream')) return [{ path: '$', message: `expected text/event-stream, got ${type || 'no content type'}` }];
    const frames = body.split('\n\n').filter((event) => event.trim() !== '');
    return frames.flatMap((event, i) => {
      const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
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
 * the source, as without the check), its frames checked once it has ended.
 */
function checkedEvents(operation: string, url: URL, response: Response, report: (violations: Violation[]) => void): Response {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  const body = response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        chunks.push(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
      flush() {
        report(checkBody(operation, url, response.headers.get('content-type') ?? '', chunks.join('') + decoder.decode()));
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
          found.push(`${operation.name} ${context.request.method} ${context.url.pathname}${context.url.search} ${response.status}: ${v.path}: ${v.message}`);
        }
      };
      const returns = RETURNS[operation.name];
      if (typeof returns === 'object' && 'events' in returns && response.body) return checkedEvents(operation.name, context.url, response, report);
      report(await checkResponse(operation.name, context.url, response));
      return response;
    };
    wrapped.add(operation);
  }
  afterEach(() => {
    const violations = found.splice(0);
    if (violations.length > 0) {
      throw new Error(`Responses that the SDK models do not allow:\n${violations.slice(0, 50).join('\n')}${violations.length > 50 ? `\n… and ${violations.length - 50} more` : ''}`);
    }
  });
  afterAll(() => {
    const report = process.env.PIECES_CHECK_REPORT;
    if (report) appendFileSync(report, `${JSON.stringify(Object.fromEntries(checked))}\n`);
  });
}

/** True when every handler of the route table goes through the check. */
export const isInstalled = () => OPERATIONS.every((operation) => wrapped.has(operation));
