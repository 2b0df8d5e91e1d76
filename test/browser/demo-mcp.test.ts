/**
 * The demo's MCP pane against a running loopback server it mirrors (`?mirror=<its URL>`): the
 * sessions and tool calls of an MCP client in Node (the official client) show as they happen; the
 * pane's own connect action opens a session from the page (the official client, loaded then),
 * lists the tools and calls one, which shows too. Without a mirrored server it says where MCP is
 * served and how to start it; a server that does not list the demo's origin is said to refuse it.
 */
import 'fake-indexeddb/auto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../../src/node/serve.js';
import { freePort } from '../free-port.js';
import type { BrowserContext, Page } from './engine.js';
import { contextPerTest } from './pages.js';

declare global {
  interface Window {
    /** CSP violations and uncaught errors seen by the page. */
    problems: string[];
  }
}

const STREAMABLE = '/model_context_protocol/2025-03-26/mcp';

/** Opens the demo (mirroring `mirror` when given), recording CSP violations and errors once it is ready. */
async function openPane(context: BrowserContext, mirror?: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${inject('demoUrl')}${mirror ? `?mirror=${encodeURIComponent(mirror)}` : ''}`);
  await page.evaluate(() => {
    window.problems = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.problems.push(`CSP violation: ${event.violatedDirective} ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}`),
    );
    window.addEventListener('error', (event) => window.problems.push(`error: ${event.message}`));
    window.addEventListener('unhandledrejection', (event) => window.problems.push(`unhandled rejection: ${event.reason}`));
  });
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
  return page;
}

const texts = (page: Page, selector: string) =>
  page.evaluate((s) => [...document.querySelectorAll<HTMLElement>(s)].map((element) => element.textContent ?? ''), selector);

describe('the demo’s MCP pane', () => {
  // A context of its own per test: the worker of each is started with that test's mirror, or none.
  const newContext = contextPerTest();
  let server: LoopbackServer;
  const demoOrigin = new URL(inject('demoUrl')).origin;

  beforeAll(async () => {
    server = await startLoopbackServer({ port: await freePort(), allowedOrigins: [demoOrigin], sampleAssets: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows a Node MCP client’s session and tool calls as they happen, then connects from the page and calls a tool', async () => {
    const page = await openPane(await newContext(), server.url);
    await page.waitForSelector('#mcp[data-state="open"]', { timeout: 15_000 });

    const client = new Client({ name: 'node-host', version: '3.2.1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url + STREAMABLE));
    await client.connect(transport);
    const nodeSession = transport.sessionId!;
    await page.waitForSelector(`#mcp-sessions li[data-id="${nodeSession}"][data-closed="false"]`, { timeout: 15_000 });
    // Shown once opened, then named once its initialize request is read (a moment later, or in the same answer).
    await expect.poll(() => texts(page, `#mcp-sessions li[data-id="${nodeSession}"] .name`)).toEqual(['node-host 3.2.1']);

    await client.callTool({ name: 'material_identifiers', arguments: { material_type: 'WORKSTREAM_SUMMARIES' } });
    await page.waitForSelector(`#mcp-calls li[data-tool="material_identifiers"][data-ok="true"][data-session="${nodeSession}"]`);
    await client.callTool({ name: 'create_pieces_memory', arguments: { summary: 'no description given' } });
    await page.waitForSelector('#mcp-calls li[data-tool="create_pieces_memory"][data-ok="false"]');
    expect((await texts(page, '#mcp-calls li[data-tool="create_pieces_memory"] .muted')).join(' ')).toMatch(/summary_description/);

    // The pane's own session: the official client, loaded by the page when asked.
    await page.click('#mcp-connect');
    await page.waitForSelector('#mcp-call-go:not([disabled])', { timeout: 15_000 });
    expect(await page.evaluate(() => document.querySelector<HTMLSelectElement>('#mcp-tool')!.value)).toBe('ask_pieces_ltm');
    await page.fill('#mcp-input', 'What was I working on?');
    await page.click('#mcp-call-go');
    await page.waitForSelector('#mcp-result[data-ok="true"]', { timeout: 15_000 });
    expect(await page.textContent('#mcp-result')).not.toBe('');
    await page.waitForSelector('#mcp-calls li[data-tool="ask_pieces_ltm"][data-ok="true"]');
    await expect.poll(() => texts(page, '#mcp-sessions li[data-closed="false"] .name')).toContain('pieces-os-worker demo 1.0.0');
    const activity = (await server.mcpActivity())!;
    const demoSession = activity.sessions.find((session) => session.client?.name === 'pieces-os-worker demo')!;
    expect(activity.calls.find((call) => call.tool === 'ask_pieces_ltm')).toMatchObject({ session: demoSession.id, ok: true });

    // Ended by their clients: both show closed.
    await transport.terminateSession();
    await client.close();
    await page.click('#mcp-disconnect');
    await page.waitForSelector(`#mcp-sessions li[data-id="${nodeSession}"][data-closed="true"]`);
    await page.waitForSelector(`#mcp-sessions li[data-id="${demoSession.id}"][data-closed="true"]`);
    expect(await page.evaluate(() => window.problems)).toEqual([]);
  });

  it('says so when the mirrored server does not list the demo’s origin for its controls', async () => {
    const strict = await startLoopbackServer({ port: await freePort(), sampleAssets: false });
    try {
      const page = await openPane(await newContext(), strict.url);
      await page.waitForSelector('#mcp[data-state="refused"]', { timeout: 15_000 });
      expect(await page.textContent('#mcp-note')).toContain(`--allowed-origins ${demoOrigin}`);
    } finally {
      await strict.close();
    }
  });

  it('without a mirrored server, says MCP is served by the loopback server, with the command and the URL to open', async () => {
    const page = await openPane(await newContext());
    await page.waitForSelector('#mcp[data-state="none"]');
    expect(await page.textContent('#mcp-command')).toBe(`npx pieces-os-worker serve --allowed-origins ${demoOrigin}`);
    const href = await page.evaluate(() => document.querySelector<HTMLAnchorElement>('#mcp-open')!.href);
    expect(new URL(href).searchParams.get('mirror')).toBe('http://localhost:39300');
    expect(await texts(page, '#mcp-sessions li')).toEqual([]);
    await page.click('#mcp-connect');
    await expect.poll(() => page.textContent('#error-text')).toContain('MCP is served by the loopback server');
    expect(await page.evaluate(() => window.problems)).toEqual([]);
  });
});
