// @vitest-environment node
/**
 * Public Node and .NET clients of Pieces OS start unchanged against the
 * loopback server (real HTTP and WebSocket): the C# SDK client's start-up and
 * streamed question, and the Raycast extension's start-up, each re-enacted in
 * the order and with the timeouts of its public code.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Configuration,
  ConnectorApi,
  ConversationApi,
  ConversationsApi,
  ModelsApi,
  StreamedIdentifiersFromJSON,
  UserProfileFromJSON,
  WellKnownApi,
  instanceOfContext,
  type UserProfile,
} from '@pieces.app/pieces-os-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startLoopbackServer, type LoopbackServer } from '../../../src/node/serve.js';

let server: LoopbackServer;
beforeAll(async () => {
  // Both clients scan 39300-39333 when they have no port file: the server takes the first free port there.
  for (let port = 39300; port <= 39333 && !server; port++) {
    try {
      server = await startLoopbackServer({ port });
    } catch {
      // Taken: the next one.
    }
  }
  expect(server).toBeDefined();
});
afterAll(() => server?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A WebSocket whose frames are queued until read. */
function socket(url: string) {
  const ws = new WebSocket(url);
  const frames: string[] = [];
  const waiting: Array<(frame: string) => void> = [];
  ws.on('message', (data) => {
    const frame = String(data);
    const next = waiting.shift();
    if (next) next(frame);
    else frames.push(frame);
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = (ms = 10_000) =>
    new Promise<string>((resolve, reject) => {
      const queued = frames.shift();
      if (queued !== undefined) return resolve(queued);
      const timer = setTimeout(() => reject(new Error(`no frame on ${url} within ${ms} ms`)), ms);
      waiting.push((frame) => {
        clearTimeout(timer);
        resolve(frame);
      });
    });
  return { ws, opened, next };
}

describe('the C# SDK client (pieces-app/pieces-os-client-sdk-for-csharp)', () => {
  it('starts (port scan, health, qgpt socket with connect, models, default model), creates a chat and streams a question to COMPLETED', async () => {
    // src/Client/PiecesClient.cs GetBaseUrlAsync: no .port.txt here, so 39300..39333 in order, each asked
    // GET /.well-known/health until one answers (then the base is http://localhost:<port>).
    let baseUrl: string | undefined;
    for (let port = 39300; port <= 39333 && !baseUrl; port++) {
      const health = await new WellKnownApi(new Configuration({ basePath: `http://localhost:${port}` }))
        .getWellKnownHealth()
        .catch(() => null);
      if (health !== null && port === server.port) baseUrl = `http://localhost:${port}`;
    }
    expect(baseUrl).toBe(`http://localhost:${server.port}`);
    const configuration = new Configuration({ basePath: baseUrl });
    // The constructor asks health again, then starts the qgpt websocket and connects, together.
    expect(await new WellKnownApi(configuration).getWellKnownHealth()).toBe('ok');
    const qgpt = socket(`${baseUrl!.replace('http://', 'ws://')}/qgpt/stream`);
    const [, context] = await Promise.all([
      qgpt.opened,
      new ConnectorApi(configuration).connect({
        seededConnectorConnection: { application: { name: 'OPEN_SOURCE', platform: 'LINUX', version: '0.0.1' } } as never,
      }),
    ]);
    expect(instanceOfContext(context)).toBe(true);
    // "Get all the models to pick a default - choose GPT-4o if it is available", else the first cloud model.
    const models = (await new ModelsApi(configuration).modelsSnapshot()).iterable;
    const model = models.find((m) => m.name.toLowerCase().includes('gpt-4o chat')) ?? models.find((m) => m.cloud)!;
    expect(model.name).toBe('GPT-4o Chat Model');
    // src/Client/Copilot/PiecesCopilot.cs CreateSeededChatAsync: a conversation with a pipeline.
    const conversation = await new ConversationsApi(configuration).conversationsCreateSpecificConversation({
      seededConversation: { name: 'C# chat', type: 'COPILOT', pipeline: { conversation: { generalizedCodeDialog: {} } } } as never,
    });
    // src/Client/Copilot/CopilotChat.cs CreateQuestionInputJsonAsync: Newtonsoft writes the nulls out.
    qgpt.ws.send(
      JSON.stringify({
        relevance: {
          query: 'How do I debounce a function?',
          paths: null,
          application: context.application.id,
          model: model.id,
          messages: conversation.messages,
          assets: { iterable: null },
          temporal: null,
          options: { question: true, pipeline: conversation.pipeline },
        },
        request: null,
        conversation: conversation.id,
      }),
    );
    // AskStreamingQuestionAsync: a token from each frame's first answer; IN-PROGRESS goes on, COMPLETED ends,
    // any other status is an error ("Received error status from Pieces OS").
    let answer = '';
    for (;;) {
      const frame = JSON.parse(await qgpt.next()) as {
        status: string;
        conversation: string;
        question?: { answers: { iterable: Array<{ text?: string }> } };
      };
      answer += frame.question?.answers.iterable[0]?.text ?? '';
      if (frame.status === 'COMPLETED') break;
      expect(frame.status, 'a status the C# client treats as an error').toBe('IN-PROGRESS');
    }
    expect(answer).toMatch(/^No model is configured/);
    // Then it refreshes the conversation: the question and the answer are its messages.
    const refreshed = await new ConversationApi(configuration).conversationGetSpecificConversation({ conversation: conversation.id });
    expect(refreshed.messages.iterable.map((m) => m.reference?.role)).toEqual(['USER', 'ASSISTANT']);
    qgpt.ws.close();
  });
});

describe('the Raycast extension (raycast/extensions, extensions/pieces-raycast)', () => {
  it('reads the port file, gets the user from its socket before the preflight reads it, checks health and version, connects, follows the assets stream', async () => {
    // src/connection/ConnectorSingleton.ts getPort: the port file Pieces OS writes
    // (~/Documents/com.pieces.os/production/Config/.port.txt on Linux) comes before any scan.
    const home = mkdtempSync(join(tmpdir(), 'raycast-home-'));
    const file = join(home, 'Documents/com.pieces.os/production/Config/.port.txt');
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, `${server.port}\n`);
    const host = `http://127.0.0.1:${readFileSync(file, 'utf8').trim()}`;
    const configuration = new Configuration({ basePath: host });
    // src/connection/health/piecesPreflightCheck.ts getInstance opens src/connection/user/UserStream.ts first:
    // `event.data ? UserProfileFromJSON(JSON.parse(event.data)) : null`.
    let user: UserProfile | null | undefined;
    const userStream = socket(`${host.replace('http://', 'ws://')}/user/stream`);
    userStream.ws.on('message', (data) => {
      user = String(data) ? UserProfileFromJSON(JSON.parse(String(data))) : null;
    });
    // performCheck: piecesInstalledCheck (health), piecesUpToDateCheck (version >= 12.0.0 and < 13.0.0,
    // src/utils/constants.ts), then `authenticated = !!this.user` — the user frame must have come by then.
    const wellKnown = new WellKnownApi(configuration);
    expect(await wellKnown.getWellKnownHealth()).toBe('ok');
    const version = await wellKnown.getWellKnownVersion();
    const [major] = version.split('.').map(Number);
    expect(major).toBe(12);
    await userStream.opened;
    // The frame is sent on open; give the event loop the turn the extension's awaits give it.
    for (let i = 0; i < 50 && user === undefined; i++) await sleep(10);
    expect(user?.name).toBe('Local user');
    // src/connection/health/piecesHealthCheck.ts: ContextService.getApplication (connect as RAYCAST), and
    // the capabilities preference written back with applicationUpdate when it differs.
    const context = await new ConnectorApi(configuration).connect({
      seededConnectorConnection: { application: { name: 'RAYCAST', version: '1.4.0', platform: 'LINUX' } } as never,
    });
    const updated = await fetch(`${host}/application/update`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', application: context.application.id },
      body: JSON.stringify({ ...context.application, capabilities: 'BLENDED' }),
    });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as { capabilities: string }).capabilities).toBe('BLENDED');
    // src/connection/assets/AssetsStream.ts: the first message (reversed) validates the cache; every id is fetched.
    const assets = socket(`${host.replace('http://', 'ws://')}/assets/stream/identifiers`);
    const first = StreamedIdentifiersFromJSON(JSON.parse(await assets.next()));
    expect(first.iterable.length).toBeGreaterThan(0);
    expect(first.iterable.every((item) => item.asset && !item.deleted)).toBe(true);
    // src/connection/assets/fetchAsset.ts starts with the asset itself (its formats are the asset half, issue 22).
    const id = first.iterable.reverse()[0]!.asset!.id;
    expect((await fetch(`${host}/asset/${id}?transferables=false`)).status).toBe(200);
    // Signing out reaches the extension as an empty frame: no user.
    await fetch(`${host}/os/sign_out`, { method: 'POST' });
    for (let i = 0; i < 100 && user !== null; i++) await sleep(10);
    expect(user).toBeNull();
    await fetch(`${host}/os/sign_in`, { method: 'POST' });
    userStream.ws.close();
    assets.ws.close();
  });
});

describe('setupPiecesServer (the Node test host)', () => {
  it('serves the vanilla example’s model flow in-process: models by foundation, a mapped model pulled from Ollama with its progress socket, anchors and ranges sockets', async () => {
    const { setupPiecesServer, WebSocket: PiecesWebSocket } = await import('../../../src/node/index.js');
    const { startFakeOllama } = await import('../../fake-ollama.js');
    const ollama = await startFakeOllama();
    const pieces = setupPiecesServer({
      models: { 'Mistral 7B GPU Chat Model': { type: 'ollama', baseUrl: ollama.baseUrl, model: 'mistral:7b' } },
    });
    pieces.listen();
    try {
      const configuration = new Configuration({ basePath: 'http://localhost:1000' });
      const models = (await new ModelsApi(configuration).modelsSnapshot()).iterable;
      const mistral = models.find((m) => m.foundation === 'MISTRAL_7B' && !m.cpu)!;
      const frames: Array<{ status?: string; percentage?: number }> = [];
      const progress = new PiecesWebSocket(`ws://localhost:1000/model/${mistral.id}/download/progress`);
      progress.onmessage = (event) => frames.push(JSON.parse(String(event.data)));
      await new Promise((resolve) => (progress.onopen = resolve));
      await fetch(`http://localhost:1000/model/${mistral.id}/download`, { method: 'POST' });
      for (let i = 0; i < 400 && frames.at(-1)?.status !== 'COMPLETED'; i++) await sleep(5);
      expect(frames[0]).toEqual({ status: 'INITIALIZED', percentage: 0 });
      expect(frames.at(-1)).toEqual({ status: 'COMPLETED', percentage: 100 });
      expect(frames.some((f) => f.status === 'IN-PROGRESS')).toBe(true);
      expect(ollama.pulled.has('mistral:7b')).toBe(true);
      progress.close();
      // The sockets the Python wrapper waits for: each sends its first frame at once, even empty.
      for (const path of [
        '/anchors/stream/identifiers',
        '/ranges/stream/identifiers',
        '/workstream_pattern_engine/processors/vision/status/stream',
      ]) {
        const socket = new PiecesWebSocket(`ws://localhost:1000${path}`);
        const first = await new Promise<string>((resolve) => (socket.onmessage = (event) => resolve(String(event.data))));
        expect(JSON.parse(first), path).toEqual(path.includes('vision') ? { vision: { degraded: false } } : { iterable: [] });
        socket.close();
      }
    } finally {
      pieces.close();
      await ollama.close();
    }
  });
});
