/**
 * The Model Context Protocol paths of Pieces OS (`/model_context_protocol/…`), as a layer of the
 * service: `schema_versions` (the SDK's ModelContextProtocolApi, its entry endpoints absolute under
 * the request's origin) and the two transports, answered by the endpoint the host passes
 * (`ServiceSettings.mcp`, made with the official SDK in ./server.ts). This module does not import
 * the SDK: a host that passes no endpoint (the Service Worker) answers every MCP path 501, saying why.
 */
import type { ServiceContext } from '../context.js';
import { reply } from '../http.js';
import type { Layer } from '../layers/compose.js';
import type { McpActivity } from './activity.js';

export const MCP_PREFIX = '/model_context_protocol/';
export const SCHEMA_VERSIONS_PATH = '/model_context_protocol/schema_versions';
/** The legacy transport (HTTP+SSE, protocol 2024-11-05): the event stream, and where its messages are posted. */
export const SSE_PATH = '/model_context_protocol/2024-11-05/sse';
export const MESSAGES_PATH = '/model_context_protocol/2024-11-05/messages';
/** The streamable HTTP transport (protocol 2025-03-26). */
export const STREAMABLE_PATH = '/model_context_protocol/2025-03-26/mcp';

/** The versions served and their entry endpoints, newest last (as Pieces OS lists them). */
export const MCP_VERSIONS: ReadonlyArray<{ version: string; path: string }> = [
  { version: '2024-11-05', path: SSE_PATH },
  { version: '2025-03-26', path: STREAMABLE_PATH },
];

/** One MCP request under a base (its path under the base). */
export interface McpCall {
  request: Request;
  url: URL;
  path: string;
}

/** Answers the MCP transports' paths (every path under MCP_PREFIX but `schema_versions`). */
export interface McpEndpoint {
  (call: McpCall): Promise<Response>;
  /** Its sessions and tool calls now, or (with `after`) once something follows that sequence number (./activity.ts). */
  activity?: (after?: number) => Promise<McpActivity>;
}

/**
 * Makes a service's MCP endpoint, once per service: `service` is what its tools read and write
 * through, `respond` the service's own answer to a request (the tools use the REST operations).
 */
export type McpFactory = (service: ServiceContext, respond: (request: Request) => Promise<Response>) => McpEndpoint;

const NOT_HERE =
  'The Model Context Protocol endpoint is not served by this host: it is made with the official @modelcontextprotocol/sdk, ' +
  'which the Service Worker does not bundle (it would more than double the worker script). ' +
  'Serve MCP from Node: `npx pieces-os-worker serve` (the loopback server) or setupPiecesServer (docs/testing.md, "Model Context Protocol").';

/** The methods of each MCP path (a preflight's answer). */
const METHODS: Readonly<Record<string, string>> = {
  [SCHEMA_VERSIONS_PATH]: 'GET, HEAD, OPTIONS',
  [SSE_PATH]: 'GET, HEAD, OPTIONS',
  [MESSAGES_PATH]: 'POST, OPTIONS',
  [STREAMABLE_PATH]: 'GET, POST, DELETE, OPTIONS',
};

/** An endpoint's answer with the headers every answer of the service has (a page may read it, `Mcp-Session-Id` included). */
function readable(response: Response): Response {
  if (response.headers.has('access-control-allow-origin')) return response;
  const headers = new Headers(response.headers);
  headers.set('Access-Control-Allow-Origin', '*');
  headers.set('Access-Control-Expose-Headers', '*');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** The layer answering every path under MCP_PREFIX: `endpoint`'s, or 501 when the host has none. */
export function modelContextProtocol(endpoint: McpEndpoint | undefined): Layer {
  return async (call, next) => {
    const { request, url, path } = call;
    if (!path.startsWith(MCP_PREFIX)) return next();
    if (!endpoint) return reply(NOT_HERE, { status: 501, type: 'text' });
    if (request.method === 'OPTIONS' && METHODS[path]) return reply(undefined, { headers: { Allow: METHODS[path] } });
    if (path !== SCHEMA_VERSIONS_PATH) return readable(await endpoint({ request, url, path }));
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return reply(`${request.method} is not allowed on ${path}; use GET, HEAD, OPTIONS.`, {
        status: 405,
        type: 'text',
        headers: { Allow: 'GET, HEAD, OPTIONS' },
      });
    }
    // The SDK's ModelContextProtocolSchemaVersion on the wire (its entryEndpoint is `entry_endpoint`).
    const iterable = MCP_VERSIONS.map(({ version, path: entry }) => ({ version, entry_endpoint: `${url.origin}${entry}` }));
    const response = reply({ iterable });
    return request.method === 'HEAD' ? reply(undefined, { status: response.status, headers: response.headers }) : response;
  };
}
