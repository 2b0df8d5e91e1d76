/**
 * The route table: every operation of the API, its method and its path, in
 * one place. Static paths come before `{param}` paths so that
 * `/applications/external` is never read as an application id.
 */
import type { OperationHandler } from './context.js';
import * as applications from './handlers/applications.js';
import * as conversations from './handlers/conversations.js';

export interface Operation {
  name: string;
  method: 'GET' | 'POST';
  /** Path under a base; `{name}` segments are parameters. */
  path: string;
  handler: OperationHandler;
  deprecated?: true;
}

export const OPERATIONS: readonly Operation[] = [
  { name: 'applicationsSnapshot', method: 'GET', path: '/applications', handler: applications.applicationsSnapshot },
  { name: 'applicationsExternalSnapshot', method: 'GET', path: '/applications/external', handler: applications.applicationsExternalSnapshot },
  { name: 'applicationsExternalRelated', method: 'GET', path: '/applications/external/related', handler: applications.applicationsExternalRelated },
  { name: 'applicationsRegister', method: 'POST', path: '/applications/register', handler: applications.applicationsRegister, deprecated: true },
  { name: 'applicationsSessionOpen', method: 'POST', path: '/applications/session/open', handler: applications.applicationsSessionOpen, deprecated: true },
  { name: 'applicationsSessionClose', method: 'POST', path: '/applications/session/close', handler: applications.applicationsSessionClose, deprecated: true },
  { name: 'applicationsUsageEngagementInteraction', method: 'POST', path: '/applications/usage/engagement/interaction', handler: applications.applicationsUsageEngagementInteraction, deprecated: true },
  { name: 'applicationsUsageEngagementKeyboard', method: 'POST', path: '/applications/usage/engagement/keyboard', handler: applications.applicationsUsageEngagementKeyboard, deprecated: true },
  { name: 'applicationsUsageInstallation', method: 'POST', path: '/applications/usage/installation', handler: applications.applicationsUsageInstallation, deprecated: true },
  { name: 'postApplicationsUsageUpdated', method: 'POST', path: '/applications/usage/updated', handler: applications.postApplicationsUsageUpdated, deprecated: true },
  { name: 'conversationsSnapshot', method: 'GET', path: '/conversations', handler: conversations.conversationsSnapshot },
  { name: 'conversationsIdentifiersSnapshot', method: 'GET', path: '/conversations/identifiers', handler: conversations.conversationsIdentifiersSnapshot },
  { name: 'conversationsCreateSpecificConversation', method: 'POST', path: '/conversations/create', handler: conversations.conversationsCreateSpecificConversation },
  { name: 'conversationsStreamIdentifiers', method: 'GET', path: '/conversations/stream/identifiers', handler: conversations.conversationsStreamIdentifiers },
  { name: 'assetsIdentifiersSnapshot', method: 'GET', path: '/assets/identifiers', handler: conversations.assetsIdentifiersSnapshot },
  // Parameterised paths last.
  { name: 'applicationsSpecificApplicationSnapshot', method: 'GET', path: '/applications/{application}', handler: applications.applicationsSpecificApplicationSnapshot },
  { name: 'applicationsSessionSnapshot', method: 'GET', path: '/applications/sessions/{session}', handler: applications.applicationsSessionSnapshot, deprecated: true },
  { name: 'conversationsCreateFromAsset', method: 'POST', path: '/conversations/create/from_asset/{asset}', handler: conversations.conversationsCreateFromAsset },
  { name: 'conversationsDeleteSpecificConversation', method: 'POST', path: '/conversations/{conversation}/delete', handler: conversations.conversationsDeleteSpecificConversation },
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
