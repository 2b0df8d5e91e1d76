/**
 * `npx pieces-os-worker serve` for clients outside the test's process: curl, the
 * official SDK, a WebSocket client, Python. Its answers are the worker's, byte for
 * byte, for the same data.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Configuration, ConversationsApi } from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { piecesControls } from 'pieces-os-worker/node';
import { launchChromium, startApp } from '../playwright/app-server.js';
import { startUpstream } from '../../test/upstream/pieces-os.js';

const run = promisify(execFile);

/** Data as `exportData()` writes it: ids and times are kept, so both services hold the same records. */
const data = {
  conversations: [
    {
      id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e0001',
      type: 'COPILOT',
      name: 'Refactor the parser',
      created: { value: '2025-01-01T09:00:00.000Z' },
      messages: [
        { id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e1001', role: 'USER', fragment: { string: { raw: 'Where does the tokenizer start?' } } },
        { id: '0f0e8a52-5b37-4d3a-9c55-1a9a7b9e1002', role: 'ASSISTANT', fragment: { string: { raw: 'In lexer.ts, at tokenize().' } } },
      ],
    },
  ],
};

/** Starts the CLI as installed (`pieces-os-worker serve`); resolves with its base URL. */
async function serve(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const cli = resolve(inject('packageRoot'), 'src/cli/pieces-os-worker.js');
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /answering (http:\/\/\S+)/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
  return { url, child };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });

describe('pieces-os-worker serve', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'pieces-serve-')), 'data.json');
  let server: { url: string; child: ChildProcess };

  beforeAll(async () => {
    writeFileSync(file, JSON.stringify(data));
    server = await serve(['--port', '0', '--data', file]);
  });
  afterAll(async () => {
    if (server.child.exitCode === null) await stop(server.child);
  });

  it('answers curl', async () => {
    const { stdout } = await run('curl', ['-s', `${server.url}/conversations/identifiers`]);
    expect(JSON.parse(stdout)).toEqual({ iterable: [{ id: data.conversations[0]!.id }] });
    const { stdout: status } = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-X',
      'POST',
      `${server.url}/conversations/create`,
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"type":"CHAT"}',
    ]);
    expect(status).toBe('400');
  });

  it('answers the official SDK and streams over a real WebSocket', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/conversations/stream/identifiers`);
    const messages: Array<{ iterable: Array<{ conversation: { id: string } }> }> = [];
    const second = new Promise<void>((done) =>
      socket.on('message', (frame) => {
        messages.push(JSON.parse(String(frame)));
        if (messages.length === 2) done();
      }),
    );
    const api = new ConversationsApi(new Configuration({ basePath: server.url }));
    await new Promise((open) => socket.once('open', open));
    const created = await api.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT', name: 'From the SDK' } });
    await second;
    expect(messages[1]).toEqual({ iterable: [{ conversation: { id: created.id } }] });
    socket.close();
  });

  it('answers Python', async () => {
    const { stdout } = await run('python3', [resolve(import.meta.dirname, 'client.py'), server.url]);
    expect(JSON.parse(stdout).names).toContain('From Python');
  });

  it('gives the bytes the worker gives, for the same data', async () => {
    const app = await startApp(inject('packageRoot'));
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(app.url);
      await page.waitForSelector('#conversations[data-status]', { state: 'attached' });
      // The same data in both: serve loads it from --data, the worker gets it through its controls.
      const same = file.replace('data.json', 'same.json');
      writeFileSync(same, JSON.stringify(data));
      const fresh = await serve(['--port', '0', '--data', same]);
      try {
        const pieces = piecesControls(page);
        await pieces.reset();
        await pieces.seed(data);
        const id = data.conversations[0]!.id;
        for (const path of [
          '/conversations',
          '/conversations?transferables=false',
          '/conversations/identifiers',
          `/conversation/${id}`,
          `/conversation/${id}/messages`,
          '/message/0f0e8a52-5b37-4d3a-9c55-1a9a7b9e1002',
        ]) {
          const worker = await page.evaluate(async (url) => {
            const response = await fetch(url);
            return `${await response.text()}\n${response.status}`;
          }, `http://localhost:1000${path}`);
          const { stdout } = await run('curl', ['-s', '-w', '\n%{http_code}', `${fresh.url}${path}`]);
          expect(worker.endsWith('\n200'), `${path} answered ${worker}`).toBe(true);
          expect(stdout, path).toBe(worker);
        }
      } finally {
        await stop(fresh.child);
      }
    } finally {
      await browser.close();
      await app.server.close();
    }
  });

  it('writes the store back to --data on exit, and loads it on the next start', async () => {
    await run('curl', [
      '-s',
      '-X',
      'POST',
      `${server.url}/conversations/create`,
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"type":"COPILOT","name":"Kept on disk"}',
    ]);
    await stop(server.child);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { conversations: Array<{ name: string }> };
    expect(saved.conversations.map((c) => c.name)).toContain('Kept on disk');
    server = await serve(['--port', '0', '--data', file]);
    const { stdout } = await run('curl', ['-s', `${server.url}/conversations?transferables=false`]);
    expect(stdout).toContain('Kept on disk');
  });

  it('mirrors a real Pieces OS with --mirror: its answers while it runs, answered and queued while it does not, GET /__pieces/mirror tells', async () => {
    const upstream = await startUpstream();
    const mirrored = await serve(['--port', '0', '--mirror', upstream.url, '--no-sample-assets']);
    try {
      const status = async () =>
        JSON.parse((await run('curl', ['-s', '-H', 'X-Pieces-Control: 1', `${mirrored.url}/__pieces/mirror`])).stdout) as {
          state: string;
          outbox: unknown[];
        };
      // The first request waits for the first probe: by then the mirror is up.
      const { stdout: headers } = await run('curl', ['-s', '-D', '-', '-o', '/dev/null', `${mirrored.url}/conversations`]);
      expect(headers.toLowerCase()).toContain('x-upstream: independent');
      expect((await status()).state).toBe('up');
      await upstream.stop();
      // Answered here (not by the upstream: no x-upstream header), and queued; the status may be read a moment before the queue is.
      const { stdout: written } = await run('curl', [
        '-s',
        '-i',
        '-X',
        'POST',
        `${mirrored.url}/conversations/create`,
        '-H',
        'Content-Type: application/json',
        '-d',
        '{"type":"COPILOT","name":"Written while away"}',
      ]);
      expect(written.split('\r\n\r\n')[0], written.slice(0, 600)).toMatch(/^HTTP\/1\.1 200/);
      expect(written.toLowerCase()).not.toContain('x-upstream:');
      await expect
        .poll(status, { timeout: 5_000, interval: 100 })
        .toMatchObject({ state: 'down', outbox: [{ operation: 'conversationsCreateSpecificConversation' }] });
      await upstream.start();
      await expect
        .poll(
          async () => {
            await run('curl', ['-s', `${mirrored.url}/.well-known/health`]);
            return status();
          },
          { timeout: 20_000, interval: 500 },
        )
        .toMatchObject({ state: 'up', outbox: [] });
      expect(upstream.snapshot().conversations.map((c) => c.name)).toEqual(['Written while away']);
    } finally {
      await stop(mirrored.child);
      await upstream.stop();
    }
  });

  it('refuses a --mirror that is not a URL', async () => {
    const cli = resolve(inject('packageRoot'), 'src/cli/pieces-os-worker.js');
    const failed = await run(process.execPath, [cli, 'serve', '--mirror', 'localhost']).catch(
      (error: { stderr: string; code: number }) => error,
    );
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stderr: string }).stderr).toContain(
      '--mirror must be a Pieces OS URL (http://localhost:39300) or auto, not localhost.',
    );
  });
});
