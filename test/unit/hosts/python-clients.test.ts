// @vitest-environment node
/**
 * The public Python clients of Pieces OS start unchanged against the loopback
 * server: the Python SDK wrapper, the Pieces CLI, the Sublime Text plugin and
 * the Neovim plugin, each re-enacted in test/clients/python_clients.py (Debian's
 * python3 with python3-websocket) in the order and with the timeouts of its
 * public code (cited there, function by function): the port scan, connect, the
 * user, the version range, the models they look up by name or unique, every
 * websocket they wait for (the anchors and ranges ones included), then a
 * question on /qgpt/stream.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('../../clients/python_clients.py', import.meta.url));

let server: LoopbackServer;
beforeAll(async () => {
  // The clients scan 39300-39333: the server takes the first port of the range that is free.
  for (let port = 39300; port <= 39333 && !server; port++) {
    try {
      server = await startLoopbackServer({ port });
    } catch {
      // Taken (another test run): the next one.
    }
  }
  expect(server, 'a free port in 39300-39333').toBeDefined();
});
afterAll(() => server?.close());

type Outcome = { ok: true; [key: string]: unknown } | { ok: false; error: string };

/** Runs one client's start-up; resolves with what it printed. */
function run(client: string): Promise<Outcome & Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, client, String(server.port)], { timeout: 90_000 }, (error, stdout, stderr) => {
      if (error && !stdout) reject(new Error(`${client}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as never);
    });
  });
}

/** An answer streamed as the clients read it: IN-PROGRESS frames with text, then COMPLETED. */
function expectStreamed(outcome: Record<string, unknown>, text = 'answer') {
  const statuses = outcome.statuses as string[];
  expect(statuses.at(-1)).toBe('COMPLETED');
  expect(statuses.slice(0, -1).every((s) => s === 'IN-PROGRESS')).toBe(true);
  expect(statuses.length).toBeGreaterThan(1);
  expect(String(outcome[text])).toMatch(/^No model is configured/);
}

describe('Python clients against the loopback server', () => {
  it('the Python SDK wrapper: starts, waits for every websocket (anchors and ranges: their empty snapshots), answers a question', async () => {
    const outcome = await run('sdk_wrapper');
    expect(outcome, String((outcome as { error?: string }).error)).toMatchObject({ ok: true });
    expect(outcome.user).toBe('Local user');
    expect(outcome.waited).toEqual({
      conversation: true,
      asset: true,
      user: true,
      health: true,
      anchor: true,
      ltm_vision: true,
      range: true,
    });
    expect(outcome.cached).toMatchObject({ anchor: 0, range: 0 });
    expect((outcome.cached as { asset: number }).asset).toBeGreaterThan(0);
    expect(outcome.cache_errors).toEqual({ conversation: [], asset: [], anchor: [], range: [] });
    expect([outcome.signed_in, outcome.pos_stream, outcome.ltm_enabled]).toEqual([true, true, false]);
    expectStreamed(outcome);
  }, 120_000);

  it('the wrapper’s copilot context: a path becomes an anchor associated with the chat, reused for the same path, listed once, then removed', async () => {
    const outcome = await run('copilot_context');
    expect(outcome, String((outcome as { error?: string }).error)).toMatchObject({ ok: true });
    expect(outcome).toMatchObject({
      waited: { conversation: true, anchor: true },
      created: true,
      reused: true,
      chats_after_add: true,
      conversation_lists: true,
      chats_after_remove: [],
      conversation_lists_after_remove: [],
      cache_errors: { conversation: [], anchor: [] },
    });
  });

  it('the Pieces CLI: version range, login check, its default model by unique, the OS id, the ask; open, logout and login', async () => {
    const outcome = await run('cli');
    expect(outcome, String((outcome as { error?: string }).error)).toMatchObject({ ok: true });
    expect(outcome.model).toBe('Gemini-2.0 Flash Lite Chat Model');
    expect(outcome.os_id).toBe(outcome.context_os);
    expect(Object.values(outcome.waited as object).every(Boolean)).toBe(true);
    expectStreamed(outcome);
    expect(outcome.applet_port).toBe(server.port);
    expect([outcome.signed_out, outcome.after_logout, outcome.signed_in, outcome.allocation]).toEqual([
      { iterable: [] },
      null,
      'Local user',
      'DISCONNECTED',
    ]);
  }, 120_000);

  it('the Sublime Text plugin: its health socket runs start-up, finds o4-mini by unique, opens its websockets, asks', async () => {
    const outcome = await run('sublime');
    expect(outcome, String((outcome as { error?: string }).error)).toMatchObject({ ok: true });
    expect([outcome.application, outcome.startup_ran, outcome.model]).toEqual(['SUBLIME', true, 'o4-mini-2025-04-16']);
    expect((outcome.health_frames as string[])[0]).toMatch(/^ok:[0-9a-f-]{36}$/);
    expect(Object.values(outcome.waited as object).every(Boolean)).toBe(true);
    expectStreamed(outcome);
  }, 120_000);

  it('the Neovim plugin: start-up on the health socket, GPT-4o Chat Model by name, its chat completes', async () => {
    const outcome = await run('neovim');
    expect(outcome, String((outcome as { error?: string }).error)).toMatchObject({ ok: true });
    expect([outcome.ready, outcome.model, outcome.completed]).toEqual([true, 'GPT-4o Chat Model', true]);
    expectStreamed(outcome, 'chat');
  }, 120_000);
});
