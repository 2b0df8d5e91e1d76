/**
 * The MCP pane: the Model Context Protocol sessions and tool calls of the Pieces OS the demo
 * mirrors, as they happen. MCP is served by the Node hosts only (the Service Worker answers 501:
 * the official SDK would exceed its size budget), so the pane reads the mirrored server's
 * activity: the loopback server's `GET /__pieces/mcp` control, a long-poll (`after=<seq>`), which
 * needs this page's origin among the server's `--allowed-origins`. Its connect action opens a
 * session from the page with the official MCP client (imported when first used, so the demo's
 * first load does not grow): `schema_versions`, the streamable entry endpoint, the tools listed,
 * one called with its result shown; that session and call then show in the activity.
 * Without a mirror, the pane says where MCP is served and how to start it.
 */
import type { McpActivity, McpCallRecord, McpSessionRecord } from 'pieces-os-worker/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PiecesService, ServiceWatch } from 'pieces-os-worker';
import { $, h, plural } from './dom.js';
import type { Errors } from './errors.js';

export interface McpPane {
  /** Finds what the demo mirrors and starts following its MCP activity (or says how to start one). */
  listen(): Promise<void>;
}

type Tool = { name: string; description?: string; inputSchema: { properties?: Record<string, { type?: string }>; required?: string[] } };

const STREAMABLE_VERSION = '2025-03-26';
/** Waits before asking again after a failed read (the server stopped, say). */
const RETRY_MS = 3000;
const RESULT_SHOWN = 4000;

const time = (value: string | null) => (value ? new Date(value).toLocaleTimeString() : '—');

/** The command that starts the loopback server so that this page may read its controls. */
const serveCommand = () => `npx pieces-os-worker serve --allowed-origins ${location.origin}`;

/** This page mirroring the loopback server on its default port. */
function mirroredUrl(): string {
  const url = new URL(location.href);
  url.searchParams.set('mirror', 'http://localhost:39300');
  return url.href;
}

/** A tool's arguments from the text typed: every required string field gets it (chat_llm names the demo). */
function argumentsFor(tool: Tool, text: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of tool.inputSchema.required ?? []) {
    const type = tool.inputSchema.properties?.[name]?.type;
    if (type === 'string') args[name] = name === 'chat_llm' ? 'pieces-os-worker demo' : text;
    else if (type === 'array') args[name] = [text];
  }
  return args;
}

export function mountMcp(service: PiecesService, watch: ServiceWatch, mirror: string | null, { act }: Errors): McpPane {
  const pane = $('#mcp');
  const state = $('#mcp-state');
  const note = $('#mcp-note');
  const sessionList = $('#mcp-sessions');
  const callList = $('#mcp-calls');
  const toolSelect = $<HTMLSelectElement>('#mcp-tool');
  const input = $<HTMLInputElement>('#mcp-input');
  const result = $('#mcp-result');
  /** The mirrored server's origin, once known. */
  let target: string | null = null;
  let client: { client: Client; transport: StreamableHTTPClientTransport } | null = null;
  let tools: Tool[] = [];

  function showState(value: 'none' | 'waiting' | 'open' | 'refused' | 'unreachable' | 'unserved', text: string) {
    pane.dataset.state = value;
    state.dataset.state = value === 'open' ? 'open' : value === 'waiting' || value === 'none' ? 'closed' : 'stale';
    state.textContent = text;
  }

  function showNote(...children: Array<Node | string>) {
    note.replaceChildren(...children);
    note.hidden = children.length === 0;
  }

  function noServer() {
    showState('none', 'no MCP server');
    showNote(
      'MCP is served by the Node hosts, not by this Service Worker (its SDK would exceed the worker’s size budget). Start the loopback server: ',
      h('code', { id: 'mcp-command' }, serveCommand()),
      ' then open ',
      h('a', { id: 'mcp-open', href: mirroredUrl() }, mirroredUrl()),
      ' to see its sessions and tool calls here.',
    );
  }

  const sessionItem = (session: McpSessionRecord) =>
    h(
      'li',
      { dataset: { id: session.id, transport: session.transport, closed: String(session.closed !== null) } },
      h('span', { class: `badge ${session.closed ? '' : 'ok'}` }, session.closed ? `closed (${session.closedBy})` : 'live'),
      h('span', { class: 'name' }, session.client ? `${session.client.name} ${session.client.version}` : 'initializing…'),
      h(
        'span',
        { class: 'muted' },
        `${session.transport} · ${plural(session.calls, 'call')} · opened ${time(session.opened)} · active ${time(session.lastActive)}`,
      ),
    );

  const callItem = (call: McpCallRecord) =>
    h(
      'li',
      { dataset: { tool: call.tool, session: call.session, ok: String(call.ok) } },
      h('span', { class: 'muted' }, time(call.started)),
      h(
        'span',
        { class: `badge ${call.ok === false ? 'fail' : ''}` },
        call.ok === null ? 'running' : call.ok ? `${call.durationMs} ms` : 'error',
      ),
      h('span', { class: 'name' }, call.tool),
      h('span', { class: 'muted' }, call.error ?? call.arguments),
    );

  function render(activity: McpActivity) {
    const live = activity.sessions.filter((session) => !session.closed).length;
    $('#mcp-count').textContent = String(live);
    sessionList.replaceChildren(...activity.sessions.map(sessionItem));
    callList.replaceChildren(...activity.calls.map(callItem));
    if (!activity.sessions.length)
      sessionList.append(h('li', { class: 'muted' }, 'No session yet: connect one below, or point an MCP host at this server.'));
  }

  /** Follows the activity of `origin` (a long-poll), as long as the page is open; says why when it cannot. */
  async function follow(origin: string) {
    let after: number | undefined;
    for (;;) {
      let response: Response;
      try {
        response = await fetch(`${origin}/__pieces/mcp${after === undefined ? '' : `?after=${after}`}`, {
          headers: { 'X-Pieces-Control': '1' },
          cache: 'no-store',
        });
      } catch {
        // The browser hides why: a refused preflight (this origin not allowed its controls) looks like a server that is down.
        const up = await fetch(`${origin}/.well-known/health`, { cache: 'no-store' }).then(
          (health) => health.ok,
          () => false,
        );
        if (up) {
          showState('refused', 'refused');
          showNote(
            `${origin} refuses this page its controls (only origins it lists may read them). Start it with `,
            h('code', {}, serveCommand()),
            '.',
          );
        } else {
          showState('unreachable', 'server unreachable');
          showNote(`${origin} does not answer. Start it with `, h('code', {}, serveCommand()), '.');
        }
        after = undefined;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      if (response.status === 403) {
        showState('refused', 'refused');
        showNote(`${origin} refuses this page its controls: ${(await response.text()).slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      const activity = response.ok ? ((await response.json().catch(() => null)) as McpActivity | null) : null;
      if (!activity || typeof activity.seq !== 'number') {
        // A real Pieces OS (no `/__pieces/` controls), or a host without MCP.
        showState('unserved', 'no activity served');
        showNote(
          `${origin} does not tell its MCP activity (${response.status}): the loopback server does; start it with `,
          h('code', {}, serveCommand()),
          '.',
        );
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 5));
        continue;
      }
      showState('open', 'live');
      showNote();
      render(activity);
      after = activity.seq;
    }
  }

  async function connect() {
    if (!target) throw new Error('No mirrored server: MCP is served by the loopback server (see above).');
    await client?.client.close().catch(() => {});
    client = null;
    const versions = (await (await fetch(`${target}/model_context_protocol/schema_versions`)).json()) as {
      iterable: Array<{ version: string; entry_endpoint: string }>;
    };
    const entry = versions.iterable.find((version) => version.version === STREAMABLE_VERSION) ?? versions.iterable.at(-1);
    if (!entry) throw new Error(`${target} lists no MCP entry endpoint.`);
    // The SDK's messages are checked by zod, whose schemas try `new Function` as they are made (a fast path): the
    // demo's CSP forbids eval, so zod is told not to, before the SDK's modules make their schemas.
    (await import('zod/v4')).config({ jitless: true });
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const next = {
      client: new Client({ name: 'pieces-os-worker demo', version: '1.0.0' }),
      transport: new StreamableHTTPClientTransport(new URL(entry.entry_endpoint)),
    };
    await next.client.connect(next.transport);
    client = next;
    tools = (await next.client.listTools()).tools as Tool[];
    toolSelect.replaceChildren(...tools.map((tool) => h('option', { value: tool.name, title: tool.description ?? '' }, tool.name)));
    toolSelect.value = tools.some((tool) => tool.name === 'ask_pieces_ltm') ? 'ask_pieces_ltm' : (tools[0]?.name ?? '');
    $('#mcp-session').textContent =
      `session ${next.transport.sessionId ?? ''} · ${plural(tools.length, 'tool')} at ${entry.entry_endpoint}`;
    for (const control of [toolSelect, input, $<HTMLButtonElement>('#mcp-call-go'), $<HTMLButtonElement>('#mcp-disconnect')]) {
      (control as HTMLInputElement).disabled = false;
    }
  }

  async function call() {
    const tool = tools.find((candidate) => candidate.name === toolSelect.value);
    if (!client || !tool) throw new Error('Connect first.');
    const answer = (await client.client.callTool({ name: tool.name, arguments: argumentsFor(tool, input.value.trim()) })) as {
      content?: Array<{ type: string; text?: string }>;
      isError?: boolean;
    };
    const text = (answer.content ?? []).map((item) => item.text ?? `[${item.type}]`).join('\n');
    let shown = text;
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON: shown as it is.
    }
    result.dataset.ok = String(!answer.isError);
    result.textContent = shown.length > RESULT_SHOWN ? `${shown.slice(0, RESULT_SHOWN)}…` : shown;
  }

  async function disconnect() {
    if (!client) return;
    const { client: ending, transport } = client;
    client = null;
    await transport.terminateSession().catch(() => {});
    await ending.close();
    $('#mcp-session').textContent = 'not connected';
    for (const control of [toolSelect, input, $<HTMLButtonElement>('#mcp-call-go'), $<HTMLButtonElement>('#mcp-disconnect')]) {
      (control as HTMLInputElement).disabled = true;
    }
  }

  $('#mcp-connect').addEventListener('click', act(connect));
  $('#mcp-call').addEventListener('submit', (event) => {
    event.preventDefault();
    act(call)(event);
  });
  $('#mcp-disconnect').addEventListener('click', act(disconnect));

  /** The mirrored server: the `?mirror=` URL, or (with `auto`) the Pieces OS the mirror found. */
  async function found(): Promise<string | null> {
    if (mirror && mirror !== 'auto') return new URL(mirror).origin;
    const upstream = (await service.mirrorStatus())?.upstream;
    return upstream ? new URL(upstream).origin : null;
  }

  return {
    async listen() {
      if (!mirror) return noServer();
      showState('waiting', 'finding the mirrored server…');
      target = await found();
      if (!target) {
        // `auto` and nothing found yet: follow once the mirror finds it.
        const onChange = () => {
          const upstream = watch.mirror?.upstream;
          if (target || !upstream) return;
          target = new URL(upstream).origin;
          watch.removeEventListener('mirrorchange', onChange);
          void follow(target);
        };
        watch.addEventListener('mirrorchange', onChange);
        return;
      }
      void follow(target);
    },
  };
}
