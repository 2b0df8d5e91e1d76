// @vitest-environment node
/**
 * The Model Context Protocol endpoint as MCP hosts use it: the official MCP TypeScript client over
 * both transports (streamable HTTP and the legacy SSE) against the loopback server and
 * setupPiecesServer; `pieces mcp start`'s gateway (health, schema_versions, entry endpoint, SSE).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Configuration,
  ModelContextProtocolApi,
  type SeededWorkstreamEvent,
  WorkstreamPatternEngineApi,
} from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { mcpEndpoint } from '../../../src/core/mcp/server.js';
import { setupPiecesServer } from '../../../src/node/index.js';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';
import { application } from '../support/harness.js';
import { check } from '../support/sdk-shape.js';

const STREAMABLE = '/model_context_protocol/2025-03-26/mcp';
const SSE = '/model_context_protocol/2024-11-05/sse';

type ToolText = { content: Array<{ type: string; text: string }>; isError?: boolean };
const textOf = (result: unknown) => (result as ToolText).content[0]!.text;
const jsonOf = (result: unknown) => JSON.parse(textOf(result)) as Record<string, unknown>;

async function streamableClient(base: string, fetchImpl?: typeof fetch) {
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(base + STREAMABLE), fetchImpl ? { fetch: fetchImpl } : undefined);
  await client.connect(transport);
  return { client, transport };
}

async function sseClient(url: string, fetchImpl?: typeof fetch) {
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  const transport = new SSEClientTransport(
    new URL(url),
    fetchImpl ? { fetch: fetchImpl, eventSourceInit: { fetch: fetchImpl } } : undefined,
  );
  await client.connect(transport);
  return { client, transport };
}

/** The first frame of an identifier stream of the loopback server (every id). */
function firstFrame(url: string): Promise<{ iterable: Array<{ workstream_summary?: { id: string } }> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('message', (data) => {
      resolve(JSON.parse(String(data)));
      socket.close();
    });
    socket.once('error', reject);
  });
}

const MEMORY = {
  summary_description: 'Search API Redis caching implementation',
  summary: 'Resolved the search API bottleneck with a Redis caching layer; responses fell from 800 ms to 120 ms (TTL one hour).',
  project: '/Users/dev/my-project',
  files: ['/Users/dev/my-project/src/cache/redis.ts'],
  externalLinks: ['https://github.com/org/repo/pull/42'],
  connected_client: 'Claude',
};

/** A summary as the REST API has it, with its annotations' texts by type and its websites' and anchors' ids. */
async function storedMemory(base: string, id: string, get: typeof fetch = fetch) {
  const summary = await (await get(`${base}/workstream_summary/${id}`)).json();
  const notes = await Promise.all(
    (summary.annotations?.iterable ?? []).map(async ({ id: note }: { id: string }) => (await get(`${base}/annotation/${note}`)).json()),
  );
  const websites = await Promise.all(
    (summary.websites?.iterable ?? []).map(async ({ id: site }: { id: string }) => (await get(`${base}/website/${site}`)).json()),
  );
  const anchors = await Promise.all(
    (summary.anchors?.iterable ?? []).map(async ({ id: anchor }: { id: string }) => (await get(`${base}/anchor/${anchor}`)).json()),
  );
  return {
    name: summary.name,
    notes: Object.fromEntries(notes.map((note) => [note.type, note.text])),
    notesListSummary: notes.every((note) => JSON.stringify(note).includes(id)),
    websites: websites.map((site) => site.url),
    anchors: anchors.map((anchor) => anchor.points?.iterable?.length ?? anchor.name ?? anchor.id).length,
  };
}

/** Arguments that make each generated tool run (one of every kind). */
function argumentsFor(name: string, schema: { properties?: Record<string, { enum?: string[] }> }): Record<string, unknown>[] {
  if (name === 'material_identifiers') return schema.properties!.material_type!.enum!.map((material_type) => ({ material_type }));
  if (name === 'extract_temporal_range') return [{ query: 'what did I do yesterday afternoon and in the past 3 hours' }];
  if (name.endsWith('_batch_snapshot')) return [{ identifiers: ['00000000-0000-4000-8000-000000000000'] }];
  if (name.endsWith('_search')) return [{ query: 'redis caching' }];
  return [];
}

describe('MCP over the loopback server', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer({ port: 0 });
  });
  afterAll(() => server.close());

  it('lists its schema versions as Pieces OS does, each entry endpoint absolute under the request origin', async () => {
    const response = await fetch(`${server.url}/model_context_protocol/schema_versions`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(check('ModelContextProtocolSchemaVersions', body)).toEqual([]);
    expect(body.iterable).toEqual([
      { version: '2024-11-05', entry_endpoint: `${server.url}${SSE}` },
      { version: '2025-03-26', entry_endpoint: `${server.url}${STREAMABLE}` },
    ]);
    // As the Pieces SDK reads it.
    const api = new ModelContextProtocolApi(new Configuration({ basePath: server.url }));
    expect((await api.modelContextProtocolSchemaVersions()).iterable.map((entry) => entry.entryEndpoint)).toEqual([
      `${server.url}${SSE}`,
      `${server.url}${STREAMABLE}`,
    ]);
  });

  it('re-enacts `pieces mcp start`: health, schema_versions, the first entry endpoint over SSE, the tools', async () => {
    expect((await fetch(`${server.url}/.well-known/health`)).status).toBe(200);
    const versions = await (await fetch(`${server.url}/model_context_protocol/schema_versions`)).json();
    const { client } = await sseClient(versions.iterable[0].entry_endpoint);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('ask_pieces_ltm');
    await client.close();
  });

  it("connects as an MCP host configured by docs/testing.md's JSON does (the streamable URL, the server on another port)", async () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../../docs/testing.md'), 'utf8');
    const block = /```json\n(\{\n\s*"mcpServers"[\s\S]*?)```/.exec(docs)![1]!;
    const configured = new URL((JSON.parse(block) as { mcpServers: { Pieces: { url: string } } }).mcpServers.Pieces.url);
    expect(configured.pathname).toBe(STREAMABLE);
    const { client } = await streamableClient(new URL(configured.pathname, server.url).origin);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['ask_pieces_ltm', 'create_pieces_memory']));
    await client.close();
  });

  it('lists the tools with the input schemas Pieces publishes, and answers each of them', async () => {
    const { client } = await streamableClient(server.url);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('ask_pieces_ltm')!.inputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['question', 'chat_llm']),
      properties: {
        question: { type: 'string' },
        chat_llm: { type: 'string' },
        topics: { type: 'array', items: { type: 'string' } },
        open_files: { type: 'array' },
        application_sources: { type: 'array' },
        related_questions: { type: 'array' },
        connected_client: { type: 'string' },
      },
    });
    expect([...(byName.get('ask_pieces_ltm')!.inputSchema.required ?? [])].sort()).toEqual(['chat_llm', 'question']);
    expect(byName.get('create_pieces_memory')!.inputSchema).toMatchObject({
      properties: {
        summary_description: {},
        summary: {},
        project: {},
        files: { type: 'array' },
        externalLinks: { type: 'array' },
        connected_client: {},
      },
    });
    expect([...(byName.get('create_pieces_memory')!.inputSchema.required ?? [])].sort()).toEqual(['summary', 'summary_description']);
    // Made from the material table: Pieces's names (wpe_ for the pattern engine's).
    for (const name of [
      'workstream_summaries_full_text_search',
      'workstream_events_vector_search',
      'wpe_source_windows_batch_snapshot',
      'conversation_messages_full_text_search',
      'material_identifiers',
      'extract_temporal_range',
    ])
      expect(byName.has(name), name).toBe(true);
    expect(byName.get('tags_vector_search')!.description).toMatch(/No embeddings/);

    for (const tool of tools) {
      for (const args of argumentsFor(tool.name, tool.inputSchema as never)) {
        const result = (await client.callTool({ name: tool.name, arguments: args })) as ToolText;
        expect(result.isError, `${tool.name} ${JSON.stringify(args)}: ${textOf(result)}`).toBeFalsy();
        JSON.parse(textOf(result));
      }
    }
    const ranges = jsonOf(await client.callTool({ name: 'extract_temporal_range', arguments: { query: 'yesterday afternoon' } }));
    expect(ranges.count).toBe(1);
    await client.close();
  });

  it('create_pieces_memory stores a workstream summary the REST API and its stream show at once; ask_pieces_ltm finds it', async () => {
    const { client } = await streamableClient(server.url);
    const before = await firstFrame(`${server.url.replace('http', 'ws')}/workstream_summaries/stream/identifiers`);
    const result = (await client.callTool({ name: 'create_pieces_memory', arguments: MEMORY })) as ToolText;
    expect(result.isError).toBeFalsy();
    const id = /workstream summary ([0-9a-f-]{36})/.exec(textOf(result))![1]!;
    expect(await storedMemory(server.url, id)).toEqual({
      name: MEMORY.summary_description,
      notes: { SUMMARY: MEMORY.summary, DESCRIPTION: MEMORY.summary_description },
      notesListSummary: true,
      websites: MEMORY.externalLinks,
      anchors: 2,
    });
    const after = await firstFrame(`${server.url.replace('http', 'ws')}/workstream_summaries/stream/identifiers`);
    const ids = (frame: typeof after) => frame.iterable.map((item) => item.workstream_summary?.id);
    expect(ids(before)).not.toContain(id);
    expect(ids(after)).toContain(id);

    const found = jsonOf(
      await client.callTool({ name: 'workstream_summaries_full_text_search', arguments: { query: 'Redis caching' } }),
    ) as { results: Array<{ summary: { id: string }; exact: boolean }> };
    expect(found.results[0]).toMatchObject({ summary: { id }, exact: true });
    const snapshot = jsonOf(
      await client.callTool({
        name: 'workstream_summaries_batch_snapshot',
        arguments: { identifiers: [id, '00000000-0000-4000-8000-000000000009'] },
      }),
    );
    expect(snapshot).toMatchObject({ count: 1, requested: 2, items: [{ id }], missing_ids: ['00000000-0000-4000-8000-000000000009'] });
    const listed = jsonOf(await client.callTool({ name: 'material_identifiers', arguments: { material_type: 'WORKSTREAM_SUMMARIES' } }));
    expect(listed.identifiers).toContain(id);

    const answer = jsonOf(
      await client.callTool({
        name: 'ask_pieces_ltm',
        arguments: { question: 'How did I make the search API faster with Redis?', chat_llm: 'gpt-4o-mini', connected_client: 'Claude' },
      }),
    ) as { summaries: Array<{ id: string; score: number; created: string; combined_string: string }>; events: unknown[] };
    expect(answer.summaries[0]).toMatchObject({ id, created: expect.any(String) });
    expect(answer.summaries[0]!.score).toBeGreaterThan(0);
    expect(Array.isArray(answer.events)).toBe(true);

    // An event captured in a browser: answered with its application, window title and URL.
    await new WorkstreamPatternEngineApi(new Configuration({ basePath: server.url })).workstreamPatternEngineCreateIngestion({
      seededWorkstreamIngestion: {
        event: {
          application: application({ name: 'GOOGLE_CHROME_EXTENSION_MV3' }) as SeededWorkstreamEvent['application'],
          trigger: { checkIn: true },
          context: {
            nativeOcr: {
              ocrText: 'Redis eviction policies: allkeys-lru keeps the hottest search results',
              ocrTextHash: 'h',
              appTitle: 'Google Chrome',
              windowTitle: 'Eviction policies | Redis docs',
              browserUrl: 'https://redis.io/docs/reference/eviction/',
              isMerged: false,
              isCached: false,
            },
          },
        },
      },
    });
    const withEvent = jsonOf(
      await client.callTool({
        name: 'ask_pieces_ltm',
        arguments: {
          question: 'Which Redis eviction policy did I read about?',
          chat_llm: 'gpt-4o-mini',
          application_sources: ['Google Chrome'],
        },
      }),
    ) as { summaries: unknown[]; events: Array<Record<string, unknown>> };
    expect(withEvent.events[0]).toMatchObject({
      window_title: 'Eviction policies | Redis docs',
      browser_url: 'https://redis.io/docs/reference/eviction/',
      combined_string: expect.stringContaining('allkeys-lru'),
    });
    expect(withEvent.events[0]!.app_title).toMatch(/chrome/i);
    await client.close();
  });

  it('keeps concurrent sessions apart; DELETE ends one and only that one', async () => {
    const a = await streamableClient(server.url);
    const b = await streamableClient(server.url);
    expect(a.transport.sessionId).toBeTruthy();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    const [listA, listB] = await Promise.all([a.client.listTools(), b.client.listTools()]);
    expect(listA.tools.length).toBe(listB.tools.length);
    const ended = a.transport.sessionId!;
    await a.transport.terminateSession();
    const gone = await fetch(server.url + STREAMABLE, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': ended,
        'Mcp-Protocol-Version': '2025-03-26',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe(-32001);
    expect((await b.client.listTools()).tools.length).toBe(listB.tools.length);
    await b.client.close();
  });

  it('serves the legacy SSE transport: its endpoint event, its messages; a dropped stream frees its session', async () => {
    const controller = new AbortController();
    const stream = await fetch(server.url + SSE, { signal: controller.signal, headers: { Accept: 'text/event-stream' } });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const endpoint = /^event: endpoint\ndata: (\/model_context_protocol\/2024-11-05\/messages\?sessionId=[0-9a-f-]{36})\n\n$/.exec(
      first,
    )![1]!;
    const post = (body: unknown) =>
      fetch(server.url + endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(init.status).toBe(202);
    const answer = new TextDecoder().decode((await reader.read()).value);
    expect(answer).toMatch(/^event: message\ndata: \{"result":\{"protocolVersion":"2024-11-05"/);
    controller.abort();
    await vi.waitFor(async () => expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(404), {
      timeout: 10_000,
    });

    // The official client over the same transport.
    const { client } = await sseClient(server.url + SSE);
    const memory = (await client.callTool({
      name: 'create_pieces_memory',
      arguments: { summary: 'over SSE', summary_description: 'SSE memory' },
    })) as ToolText;
    expect(memory.isError).toBeFalsy();
    await client.close();
  });

  it('answers bad JSON-RPC with JSON-RPC errors and changes nothing', async () => {
    const count = async () => ((await (await fetch(`${server.url}/workstream_summaries`)).json()).iterable as unknown[]).length;
    const before = await count();
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const broken = await fetch(server.url + STREAMABLE, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(broken.status).toBe(400);
    expect((await broken.json()).error.code).toBe(-32700);
    const notRpc = await fetch(server.url + STREAMABLE, { method: 'POST', headers, body: '{"hello": "world"}' });
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).error).toBeDefined();

    const { client, transport } = await streamableClient(server.url);
    const bad = await fetch(server.url + STREAMABLE, {
      method: 'POST',
      headers: { ...headers, 'Mcp-Session-Id': transport.sessionId!, 'Mcp-Protocol-Version': '2025-03-26' },
      body: '[1, 2',
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32700);
    // A tool call with arguments its schema refuses: an error, no memory.
    const refused = (await client.callTool({ name: 'create_pieces_memory', arguments: { summary: 'no title' } })) as ToolText;
    expect(refused.isError).toBe(true);
    const badLink = (await client.callTool({
      name: 'create_pieces_memory',
      arguments: { summary: 's', summary_description: 'd', externalLinks: ['not a url'] },
    })) as ToolText;
    expect(badLink.isError).toBe(true);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).resolves.toMatchObject({ isError: true });
    expect(await count()).toBe(before);

    // The legacy transport's messages: the same.
    const controller = new AbortController();
    const stream = await fetch(server.url + SSE, { signal: controller.signal });
    const first = new TextDecoder().decode((await stream.body!.getReader().read()).value);
    const endpoint = /data: (\S+)/.exec(first)![1]!;
    const sseBad = await fetch(server.url + endpoint, { method: 'POST', headers, body: 'not json' });
    expect(sseBad.status).toBe(400);
    expect((await sseBad.json()).error.code).toBe(-32700);
    const sseNotRpc = await fetch(server.url + endpoint, { method: 'POST', headers, body: '{"id": 1}' });
    expect((await sseNotRpc.json()).error.code).toBe(-32600);
    const sseNotUtf8 = await fetch(server.url + endpoint, { method: 'POST', headers, body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) });
    expect([sseNotUtf8.status, (await sseNotUtf8.json()).error.code]).toEqual([400, -32700]);
    const sseTooLarge = await fetch(server.url + endpoint, { method: 'POST', headers, body: ' '.repeat(16 * 1024 * 1024 + 1) });
    expect(sseTooLarge.status).toBe(413);
    expect((await sseTooLarge.json()).error.message).toMatch(/larger than the limit of 16777216 bytes/);
    controller.abort();
    expect(await count()).toBe(before);
    await client.close();
  });

  it('answers a page of a loopback origin (an MCP inspector): its preflight, and the session id it may read', async () => {
    const page = 'http://localhost:6274';
    const preflight = await fetch(server.url + STREAMABLE, {
      method: 'OPTIONS',
      headers: { Origin: page, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, mcp-session-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(page);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type, mcp-session-id');
    const init = await fetch(server.url + STREAMABLE, {
      method: 'POST',
      headers: { Origin: page, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'inspector', version: '1' } },
      }),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('access-control-allow-origin')).toBe(page);
    expect(init.headers.get('access-control-expose-headers')).toBe('*');
    expect(init.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a web page of a foreign origin on every MCP path', async () => {
    for (const [path, init] of [
      ['/model_context_protocol/schema_versions', {}],
      [SSE, {}],
      [STREAMABLE, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }],
    ] as const) {
      const response = await fetch(server.url + path, {
        ...init,
        headers: { ...(init as { headers?: object }).headers, Origin: 'https://evil.example' },
      });
      expect(response.status, path).toBe(403);
    }
  });
});

describe('MCP with setupPiecesServer', () => {
  const server = setupPiecesServer({ mcp: mcpEndpoint({ maxSessions: 2 }) });
  const base = 'http://localhost:39300';
  beforeAll(() => server.listen());
  afterAll(() => server.close());

  it('answers the official client over both transports, and what create_pieces_memory stores is read back through REST', async () => {
    const { client } = await streamableClient(base);
    const result = (await client.callTool({ name: 'create_pieces_memory', arguments: MEMORY })) as ToolText;
    const id = /workstream summary ([0-9a-f-]{36})/.exec(textOf(result))![1]!;
    expect((await storedMemory(base, id)).notes).toEqual({ SUMMARY: MEMORY.summary, DESCRIPTION: MEMORY.summary_description });
    await client.close();

    const sse = await sseClient(base + SSE, fetch);
    const { tools } = await sse.client.listTools();
    expect(tools.some((tool) => tool.name === 'create_pieces_memory')).toBe(true);
    await sse.client.close();
  });

  it('ends the session of an SSE client that drops its stream (the fetch aborted, as a network one ends)', async () => {
    const controller = new AbortController();
    const stream = await fetch(base + SSE, { signal: controller.signal });
    const first = new TextDecoder().decode((await stream.body!.getReader().read()).value);
    const endpoint = /data: (\S+)/.exec(first)![1]!;
    const post = () =>
      fetch(base + endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
      });
    expect((await post()).status).toBe(202);
    controller.abort();
    await vi.waitFor(async () => expect((await post()).status).toBe(404), { timeout: 10_000 });
  });

  it('bounds its sessions: at the limit the one idle longest is closed', async () => {
    const first = await streamableClient(base);
    const second = await streamableClient(base);
    const third = await streamableClient(base);
    await expect(first.client.listTools()).rejects.toThrow();
    expect((await third.client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await second.client.listTools()).tools.length).toBeGreaterThan(0);
    await Promise.all([second.client.close(), third.client.close()]);
  });
});
