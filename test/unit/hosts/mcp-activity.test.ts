// @vitest-environment node
/**
 * The MCP endpoint's activity record (src/core/mcp/activity.ts) as a page reads it through the
 * `mcpActivity` control (`GET /__pieces/mcp` on the loopback server): sessions of both transports
 * with their clients, tool calls with their outcome, a dropped SSE stream closing its session, a
 * session ended by DELETE, the bounds, the long-poll (`after`), and what is refused.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CALLS_KEPT, CLOSED_KEPT, McpActivityLog, type McpActivity } from '../../../src/core/mcp/activity.js';
import { mcpEndpoint } from '../../../src/core/mcp/server.js';
import { setupPiecesServer } from '../../../src/node/index.js';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';

const STREAMABLE = '/model_context_protocol/2025-03-26/mcp';
const SSE = '/model_context_protocol/2024-11-05/sse';
const CONTROL = { 'X-Pieces-Control': '1' };

describe('the activity record', () => {
  it('keeps the last calls and the recently closed sessions only, newest first, and counts every call of a session', () => {
    const log = new McpActivityLog();
    const session = log.open('s-1', 'streamable-http');
    for (let i = 0; i < CALLS_KEPT + 50; i++) {
      session.received({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'ask_pieces_ltm', arguments: { question: `q${i}` } },
      });
      session.sent({ jsonrpc: '2.0', id: i, result: { content: [] } });
    }
    for (let i = 0; i < CLOSED_KEPT + 4; i++) log.open(`closed-${i}`, 'sse').closed('dropped');
    const activity = log.snapshot();
    expect(activity.calls).toHaveLength(CALLS_KEPT);
    expect(activity.calls[0]!.arguments).toBe(`{"question":"q${CALLS_KEPT + 49}"}`);
    expect(activity.calls.at(-1)!.arguments).toBe('{"question":"q50"}');
    expect(activity.calls.every((call) => call.ok === true && call.durationMs !== null)).toBe(true);
    expect(activity.sessions.map((s) => s.id)).toEqual([
      's-1',
      ...Array.from({ length: CLOSED_KEPT }, (_, i) => `closed-${CLOSED_KEPT + 3 - i}`),
    ]);
    expect(activity.sessions[0]!.calls).toBe(CALLS_KEPT + 50);
  });

  it('cuts long arguments and errors short, and ends the calls in progress when their session closes', () => {
    const log = new McpActivityLog();
    const session = log.open('s', 'sse');
    session.received({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 't', arguments: { text: 'x'.repeat(5000) } } });
    session.received({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 't', arguments: {} } });
    session.sent({ jsonrpc: '2.0', id: 'b', error: { code: -32602, message: 'y'.repeat(5000) } });
    session.closed('dropped');
    session.closed('evicted');
    const [b, a] = log.snapshot().calls;
    expect(a!.arguments.length).toBeLessThanOrEqual(200);
    expect(b!.error!.length).toBeLessThanOrEqual(300);
    expect(b!.ok).toBe(false);
    expect(a).toMatchObject({ ok: false, error: 'the session closed (dropped) before the tool answered' });
    expect(log.snapshot().sessions[0]).toMatchObject({ id: 's', closedBy: 'dropped' });
  });

  it('answers `after` once something follows it, or with nothing new once the wait is over', async () => {
    const log = new McpActivityLog();
    const { seq } = log.snapshot();
    const waiting = log.read(seq);
    const session = log.open('s', 'streamable-http');
    expect((await waiting).sessions.map((s) => s.id)).toEqual(['s']);
    const later = log.snapshot().seq;
    expect(later).toBeGreaterThan(seq);
    expect((await log.read(later, 1)).seq).toBe(later);
    session.closed('ended');
  });
});

describe('the loopback server’s GET /__pieces/mcp', () => {
  let server: LoopbackServer;
  const activity = async (query = '') =>
    (await (await fetch(`${server.url}/__pieces/mcp${query}`, { headers: CONTROL })).json()) as McpActivity;

  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows a streamable session with its client, its tool calls (one failing) as they end, and its end by DELETE', async () => {
    const before = await activity();
    // A long-poll from before the session: answered once it opens.
    const next = activity(`?after=${before.seq}`);
    const client = new Client({ name: 'activity-host', version: '2.1.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url + STREAMABLE));
    await client.connect(transport);
    expect((await next).seq).toBeGreaterThan(before.seq);

    await client.callTool({ name: 'material_identifiers', arguments: { material_type: 'WORKSTREAM_SUMMARIES' } });
    const failed = await client.callTool({ name: 'create_pieces_memory', arguments: { summary: 'no description' } });
    expect(failed.isError).toBe(true);

    const now = await activity();
    const session = now.sessions.find((s) => s.id === transport.sessionId)!;
    expect(session).toMatchObject({
      transport: 'streamable-http',
      client: { name: 'activity-host', version: '2.1.0' },
      closed: null,
      calls: 2,
    });
    const calls = now.calls.filter((call) => call.session === transport.sessionId);
    expect(calls.map((call) => [call.tool, call.ok])).toEqual([
      ['create_pieces_memory', false],
      ['material_identifiers', true],
    ]);
    expect(calls[0]!.error).toMatch(/summary_description/);
    expect(calls[0]!.arguments).toBe('{"summary":"no description"}');
    expect(calls[1]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(calls[1]!.ended!)).toBeGreaterThanOrEqual(Date.parse(calls[1]!.started));

    await transport.terminateSession();
    await client.close();
    expect((await activity()).sessions.find((s) => s.id === session.id)).toMatchObject({ closedBy: 'ended' });
    expect(await server.mcpActivity()).toMatchObject({ seq: expect.any(Number) });
  });

  it('closes an SSE session when its client drops the stream', async () => {
    const controller = new AbortController();
    const client = new Client({ name: 'sse-host', version: '1' });
    const transport = new SSEClientTransport(new URL(server.url + SSE), {
      fetch: (url, init) => fetch(url, { ...init, signal: controller.signal }),
      eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, signal: controller.signal }) },
    });
    await client.connect(transport);
    const live = (await activity()).sessions.find((s) => s.client?.name === 'sse-host')!;
    expect(live).toMatchObject({ transport: 'sse', closed: null });
    controller.abort();
    await vi.waitFor(async () => expect((await activity()).sessions.find((s) => s.id === live.id)).toMatchObject({ closedBy: 'dropped' }), {
      timeout: 10_000,
    });
    await client.close().catch(() => {});
  });

  it('refuses a bad `after` (400), a request without the control header (403), and a POST (405)', async () => {
    for (const after of ['abc', '-1', '1.5', '99999999999999999']) {
      const response = await fetch(`${server.url}/__pieces/mcp?after=${after}`, { headers: CONTROL });
      expect(response.status, after).toBe(400);
      expect(await response.text()).toMatch(/after must be a whole number/);
    }
    expect((await fetch(`${server.url}/__pieces/mcp`)).status).toBe(403);
    expect((await fetch(`${server.url}/__pieces/mcp`, { method: 'POST', headers: CONTROL })).status).toBe(405);
  });
});

describe('setupPiecesServer', () => {
  it('records the sessions of its MCP endpoint too, one closed to make room as evicted', async () => {
    const server = setupPiecesServer({ bases: ['http://localhost:39311'], mcp: mcpEndpoint({ maxSessions: 1 }) });
    server.listen();
    const connect = async (name: string) => {
      const client = new Client({ name, version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`http://localhost:39311${STREAMABLE}`));
      await client.connect(transport);
      return { client, id: transport.sessionId! };
    };
    try {
      const first = await connect('first');
      expect((await server.mcpActivity())!.sessions).toMatchObject([{ id: first.id, client: { name: 'first' }, closed: null }]);
      const second = await connect('second');
      expect((await server.mcpActivity())!.sessions).toMatchObject([
        { id: second.id, client: { name: 'second' }, closed: null },
        { id: first.id, closedBy: 'evicted' },
      ]);
      await Promise.all([first.client.close(), second.client.close()]);
    } finally {
      server.close();
    }
  });
});
