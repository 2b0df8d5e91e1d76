/**
 * The Model Context Protocol endpoint, made with the official SDK (@modelcontextprotocol/sdk):
 * one McpServer per session (its tools in ./tools.ts), over the streamable HTTP transport
 * (WebStandardStreamableHTTPServerTransport: a session per `Mcp-Session-Id`, ended by DELETE) or
 * the legacy SSE transport (./sse.ts: a session per event stream, ended when its client drops it).
 * Sessions are bounded: at `maxSessions` a new one closes the one idle longest (no request in
 * progress), or is refused 503 when every one is busy. The Node hosts pass it (`ServiceSettings.mcp`);
 * the Service Worker does not bundle it (./endpoint.ts answers 501 there).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from '../../shared/uuid.js';
import { McpActivityLog, type SessionRecorder } from './activity.js';
import { MESSAGES_PATH, SSE_PATH, STREAMABLE_PATH, type McpCall, type McpEndpoint, type McpFactory } from './endpoint.js';
import { SseServerTransport } from './sse.js';
import { registerTools, type ToolContext } from './tools.js';
import { jsonRpcError } from './wire.js';

export interface McpSettings {
  /** Sessions (both transports) open at once; default 64. */
  maxSessions?: number;
}

/** What the server says of itself on initialize. */
const SERVER_INFO = { name: 'pieces-os-worker', version: '1.0.0' };

interface Session {
  server: McpServer;
  /** Requests in progress. */
  busy: number;
  close(): Promise<void>;
  streamable?: WebStandardStreamableHTTPServerTransport;
  sse?: SseServerTransport;
  /** Its record in the endpoint's activity (a streamable session has one once initialized). */
  recorder?: SessionRecorder;
}

/** Reports a connected transport's messages, both ways, to its session's recorder (once it has one). */
function watch(transport: Transport, session: Session): void {
  const receive = transport.onmessage;
  const send = transport.send.bind(transport);
  transport.onmessage = (message, extra) => {
    session.recorder?.received(message);
    receive?.(message, extra);
  };
  transport.send = (message, options) => {
    session.recorder?.sent(message);
    return send(message, options);
  };
}

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const text = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(message, { status, headers: { ...TEXT, ...headers } });

/** The MCP endpoint maker the Node hosts pass as `ServiceSettings.mcp`. */
export function mcpEndpoint(settings: McpSettings = {}): McpFactory {
  const maxSessions = settings.maxSessions ?? 64;
  return (service, respond): McpEndpoint => {
    /** Open sessions, the one used least recently first. */
    const sessions = new Map<string, Session>();
    const activity = new McpActivityLog(() => service.clock.now());

    const newServer = (origin: string) => {
      const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
      const context: ToolContext = { service, respond, origin };
      registerTools(server, context);
      return server;
    };

    /** Streamable sessions being initialized (not in `sessions` yet), counted against the bound. */
    let opening = 0;

    /** Room for one more session: the one idle longest is closed; false when every one is busy. */
    function makeRoom(): boolean {
      if (sessions.size + opening < maxSessions) return true;
      const idle = [...sessions].find(([, session]) => session.busy === 0);
      if (!idle) return false;
      sessions.delete(idle[0]);
      idle[1].recorder?.closed('evicted');
      void idle[1].close();
      return true;
    }

    /** Runs `work` as a request of `session` (it stays busy meanwhile and becomes the most recently used). */
    async function using(id: string, session: Session, work: () => Promise<Response>): Promise<Response> {
      sessions.delete(id);
      sessions.set(id, session);
      session.busy++;
      try {
        return await work();
      } finally {
        session.busy--;
      }
    }

    const full = () =>
      jsonRpcError(503, -32000, `Too many sessions (${maxSessions} at most, every one busy); try again once one ends.`, {
        'Retry-After': '1',
      });

    async function streamable({ request, url }: McpCall): Promise<Response> {
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const session = sessions.get(id);
        if (!session?.streamable)
          return jsonRpcError(404, -32001, 'Session not found: it ended, or the server closed it; initialize a new one.');
        return using(id, session, () => session.streamable!.handleRequest(request));
      }
      if (request.method !== 'POST') {
        return jsonRpcError(400, -32000, 'Bad Request: no Mcp-Session-Id header; a session starts with a POST of an initialize request.');
      }
      if (!makeRoom()) return full();
      const server = newServer(url.origin);
      const session: Session = { server, busy: 1, close: () => server.close() };
      opening++;
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: true,
        maxRequestBodySize: service.maxBodyBytes,
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, session);
          session.recorder = activity.open(sessionId, 'streamable-http');
        },
        onsessionclosed: (sessionId) => {
          sessions.delete(sessionId);
          session.recorder?.closed('ended');
        },
      });
      session.streamable = transport;
      transport.onclose = () => {
        if (transport.sessionId && sessions.get(transport.sessionId) === session) sessions.delete(transport.sessionId);
        session.recorder?.closed('closed');
      };
      try {
        await server.connect(transport);
        watch(transport, session);
        return await transport.handleRequest(request);
      } finally {
        opening--;
        session.busy--;
        // Not an initialize request (or a refused one): nothing is kept.
        if (!transport.sessionId || !sessions.has(transport.sessionId)) await server.close();
      }
    }

    async function openSse({ request, url }: McpCall): Promise<Response> {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return text(405, `${request.method} is not allowed on ${SSE_PATH}; use GET (and POST messages to ${MESSAGES_PATH}).`, {
          Allow: 'GET, HEAD, OPTIONS',
        });
      }
      if (request.method === 'HEAD') return new Response(null, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
      if (!makeRoom()) return full();
      const transport = new SseServerTransport(MESSAGES_PATH, service.maxBodyBytes);
      const server = newServer(url.origin);
      const session: Session = { server, busy: 0, sse: transport, close: () => server.close() };
      const id = transport.sessionId;
      transport.onclose = () => {
        if (sessions.get(id) === session) sessions.delete(id);
        // Closed by the server (evicted) it was recorded already; otherwise its client dropped the stream or stopped reading it.
        session.recorder?.closed('dropped');
      };
      await server.connect(transport);
      watch(transport, session);
      sessions.set(id, session);
      session.recorder = activity.open(id, 'sse');
      return new Response(transport.stream, {
        status: 200,
        headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform' },
      });
    }

    async function postMessage({ request, url }: McpCall): Promise<Response> {
      if (request.method !== 'POST') {
        return text(405, `${request.method} is not allowed on ${MESSAGES_PATH}; POST a JSON-RPC message.`, { Allow: 'POST' });
      }
      const id = url.searchParams.get('sessionId') ?? '';
      const session = sessions.get(id);
      if (!session?.sse) {
        return jsonRpcError(
          404,
          -32001,
          `Session not found: no open event stream has the sessionId ${JSON.stringify(id.slice(0, 100))}; GET ${SSE_PATH} first.`,
        );
      }
      return using(id, session, () => session.sse!.handlePost(request));
    }

    const endpoint: McpEndpoint = async (call) => {
      switch (call.path) {
        case STREAMABLE_PATH:
          return streamable(call);
        case SSE_PATH:
          return openSse(call);
        case MESSAGES_PATH:
          return postMessage(call);
        default:
          return text(
            404,
            `No Model Context Protocol endpoint at ${call.path.slice(0, 200)}: GET /model_context_protocol/schema_versions lists them (${SSE_PATH} and ${STREAMABLE_PATH}).`,
          );
      }
    };
    endpoint.activity = (after) => activity.read(after);
    return endpoint;
  };
}
