/**
 * Public browser clients of Pieces OS start unchanged in a page the service
 * runs in, each re-enacted with the official SDK 4.1.0 (window.sdk) in the order
 * its public code uses:
 *
 * - Pieces's React example web app, pieces-app/example-typescript: src/platform.config.ts (the port from
 *   navigator.platform: 5323 on Linux), src/app/utils/Connect.tsx and src/app/App.tsx (connect, then
 *   `user.name` and `health.os.version`, the assets snapshot read through
 *   `original.reference.classification.specific`, sign in and out with `new OSApi()` on port 1000),
 *   src/app/components/Copilot/Copilot.tsx (the conversations through the copilot SDK, the first one's messages);
 * - the vanilla TypeScript copilot example, pieces-app/pieces-copilot-vanilla-typescript-example:
 *   src/index.ts main() and src/ModelProgressController.ts (models by foundation and `cpu`, a progress socket
 *   per local model, a download ending COMPLETED, then `downloaded`, delete-cache), src/CopilotStreamController.ts
 *   (relevance, then the question on /qgpt/stream; an error if no text came before COMPLETED);
 * - the copilot TypeScript SDK, mason-at-pieces/pieces-copilot-typescript-sdk: index.ts PiecesClient
 *   (createConversation with a pipeline, promptConversation, updateConversationName, getUserProfilePicture);
 * - an IDE integration, the Pieces JupyterLab extension's connector (ConnectorSingleton.ts, as stored in the
 *   public code index: synchronous XHR health probes of 39300-39333 in batches of five, connect as
 *   JUPYTER_HUB with BLENDED capabilities, the `application` header, then a health check).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, launch, type BrowserContext, type Page } from './engine.js';

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ context } = await launch());
  page = await context.newPage();
  await page.goto(new URL('clients/', inject('demoUrl')).href);
  await page.waitForSelector('#status[data-state="ready"]');
});

afterAll(async () => {
  await context?.close();
});

describe(`Pieces's React example web app in ${engine.name}`, () => {
  it('connects on the port navigator.platform picks, shows the user and OS version, lists assets by classification, signs in and out', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      const platform = navigator.platform.toLowerCase();
      const port = platform.includes('win') || platform.includes('mac') ? 1000 : platform.includes('linux') ? 5323 : undefined;
      const config = new sdk.Configuration({ basePath: `http://localhost:${port}` });
      const context = await new sdk.ConnectorApi(config).connect({
        seededConnectorConnection: { application: { name: 'UNKNOWN', version: '0.0.1', platform: 'MACOS' } } as never,
      });
      const full = JSON.parse(JSON.stringify(context));
      const assets = await new sdk.AssetsApi(config).assetsSnapshot({});
      const snippets = assets.iterable.map((a) => ({
        id: a.id,
        name: a.name,
        classification: a.original.reference!.classification.specific,
      }));
      // Copilot.tsx: piecesClient.getConversations(), then the first one's messages (none yet here).
      const conversations = await new sdk.ConversationsApi(config).conversationsSnapshot({});
      // Login and logout: `new OSApi()`, the SDK's default base (port 1000).
      const os = new sdk.OSApi();
      const out = await os.signOutOfOS();
      const userAfterLogout = (await new sdk.UserApi(config).userSnapshot()).user ?? null;
      const userDetails = await os.signIntoOS();
      return {
        port,
        userName: full.user?.name,
        osVersion: full.health.os.version,
        snippets: snippets.length,
        classified: snippets.every((s) => typeof s.classification === 'string'),
        conversations: conversations.iterable.length >= 0,
        out: sdk.instanceOfUsers(out),
        userAfterLogout,
        signedIn: userDetails.name,
      };
    });
    expect(result.port).toBe(5323);
    expect(result.userName).toBe('Local user');
    expect(result.osVersion).toMatch(/^12\./);
    expect(result.snippets).toBeGreaterThan(0);
    expect(result.classified).toBe(true);
    expect([result.out, result.userAfterLogout, result.signedIn]).toEqual([true, null, 'Local user']);
  });
});

describe(`the vanilla TypeScript copilot example in ${engine.name}`, () => {
  it('finds its models by foundation and cpu, downloads one with progress on its socket, deletes it, and streams an answer', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      // getApplication: `new ConnectorApi()` on the SDK's default base.
      const application = (
        await new sdk.ConnectorApi().connect({
          seededConnectorConnection: { application: { name: 'OPEN_SOURCE', version: '0.0.0', platform: 'LINUX' } } as never,
        })
      ).application;
      // ModelProgressController: the models, and a progress socket for each local LLAMA_2_7B, MISTRAL_7B and PHI_2 model.
      const models = await new sdk.ModelsApi().modelsSnapshot();
      const find = (foundation: string, cpu?: boolean) =>
        models.iterable.find((m) => m.foundation === foundation && (cpu === undefined ? !m.name.includes('16k') : !!m.cpu === cpu));
      const picked = {
        gpt35: find('GPT_3.5'),
        gpt4: find('GPT_4'),
        llamaCpu: find('LLAMA_2_7B', true),
        llamaGpu: find('LLAMA_2_7B', false),
        mistralCpu: find('MISTRAL_7B', true),
        mistralGpu: find('MISTRAL_7B', false),
        phiCpu: find('PHI_2', true),
        phiGpu: find('PHI_2', false),
      };
      const local = models.iterable.filter(
        (m) => ['LLAMA_2_7B', 'MISTRAL_7B', 'PHI_2'].includes(m.foundation!) && m.unique !== 'llama-2-7b-chat.ggmlv3.q4_K_M',
      );
      const frames: Record<string, Array<{ status?: string; percentage?: number | null }>> = {};
      const sockets = local.map((model) => {
        const ws = new WebSocket(`ws://localhost:${1000}/model/${model.id}/download/progress`);
        frames[model.id] = [];
        ws.onmessage = (event) => frames[model.id]!.push(sdk.ModelDownloadProgressFromJSON(JSON.parse(event.data)));
        return new Promise<WebSocket>((resolve) => (ws.onopen = () => resolve(ws)));
      });
      const open = await Promise.all(sockets);
      // The "Download Phi-2 CPU" button, then the page reloads on COMPLETED and finds it downloaded.
      const phi = picked.phiCpu!;
      await new sdk.ModelApi().modelSpecificModelDownload({ model: phi.id });
      for (let i = 0; i < 200 && !frames[phi.id]!.some((f) => f.status === 'COMPLETED'); i++) await new Promise((r) => setTimeout(r, 10));
      const reloaded = (await new sdk.ModelsApi().modelsSnapshot()).iterable.find((m) => m.id === phi.id)!;
      // The "Delete Phi2 CPU" button.
      await new sdk.ModelsApi().modelsDeleteSpecificModelCache({ model: phi.id, modelDeleteCacheInput: {} });
      const deleted = (await new sdk.ModelsApi().modelsSnapshot()).iterable.find((m) => m.id === phi.id)!;
      for (const ws of open) ws.close();
      // CopilotStreamController.askQGPT: relevance, then the question on the socket with the selected model.
      const relevance = await new sdk.QGPTApi().relevance({ qGPTRelevanceInput: { query: 'debounce a function', paths: [] } });
      const ws = new WebSocket('ws://localhost:1000/qgpt/stream');
      await new Promise((resolve) => (ws.onopen = resolve));
      let total = '';
      let error = '';
      const done = new Promise<void>((resolve) => {
        ws.onmessage = (msg) => {
          const output = sdk.QGPTStreamOutputFromJSON(JSON.parse(msg.data));
          if (output.status === 'COMPLETED') {
            if (!total) error = 'ERROR: received no messages from the copilot websockets';
            resolve();
          } else if (output.status === 'FAILED' || output.status === 'UNKNOWN') {
            error = 'Message failed';
            resolve();
          } else if (output.question?.answers.iterable[0]?.text) total += output.question.answers.iterable[0].text;
        };
      });
      ws.send(JSON.stringify({ question: { query: 'debounce a function', relevant: relevance.relevant, model: picked.gpt35!.id } }));
      await done;
      ws.close();
      return {
        application: !!application.id,
        picked: Object.fromEntries(Object.entries(picked).map(([k, m]) => [k, m?.name ?? null])),
        sockets: open.length,
        phiFrames: frames[phi.id]!.map((f) => f.status),
        otherFrames: local.filter((m) => m.id !== phi.id).every((m) => frames[m.id]!.length === 0),
        downloaded: [reloaded.downloaded, deleted.downloaded],
        total,
        error,
      };
    });
    expect(result.application).toBe(true);
    expect(Object.values(result.picked).every((name) => typeof name === 'string')).toBe(true);
    expect(result.picked.gpt35).toBe('GPT-3.5-turbo Chat Model');
    expect(result.sockets).toBe(6);
    expect(result.phiFrames).toEqual(['INITIALIZED', 'COMPLETED']);
    expect(result.otherFrames).toBe(true);
    expect(result.downloaded).toEqual([true, false]);
    expect(result.error).toBe('');
    expect(result.total).toMatch(/^No model is configured/);
  });
});

describe(`the copilot TypeScript SDK in ${engine.name}`, () => {
  it('creates a conversation with its pipeline, prompts it, renames it, reads the profile picture', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      const config = new sdk.Configuration({ basePath: 'http://localhost:1000' });
      const trackedApplication = {
        id: 'DEFAULT',
        name: 'OPEN_SOURCE',
        version: '0.0.1',
        platform: 'MACOS',
        onboarded: false,
        privacy: 'ANONYMOUS',
      };
      const conversations = new sdk.ConversationsApi(config);
      const conversationApi = new sdk.ConversationApi(config);
      const messages = new sdk.ConversationMessagesApi(config);
      const messageApi = new sdk.ConversationMessageApi(config);
      const created = await conversations.conversationsCreateSpecificConversation({
        seededConversation: {
          name: 'New Conversation',
          pipeline: { conversation: { contextualizedCodeDialog: {} } },
          type: 'COPILOT',
        } as never,
      });
      // promptConversation: the user message, the conversation's raw messages, the question, the bot message.
      const message = 'How do I memoize a function?';
      await messages.messagesCreateSpecificMessage({
        seededConversationMessage: { role: 'USER', fragment: { string: { raw: message } }, conversation: { id: created.id } } as never,
      });
      const got = await conversationApi.conversationGetSpecificConversation({ conversation: created.id });
      const raw: string[] = [];
      for (const id of Object.keys(got.messages.indices ?? {})) {
        const m = await messageApi.messageSpecificMessageSnapshot({ message: id });
        if (m.fragment?.string?.raw) raw.push(m.fragment.string.raw);
      }
      const answer = await new sdk.QGPTApi(config).question({
        qGPTQuestionInput: {
          query: message,
          pipeline: { conversation: { contextualizedCodeDialog: {} } },
          relevant: {
            iterable: raw.map((text) => ({
              seed: { type: 'ASSET', asset: { application: trackedApplication, format: { fragment: { string: { raw: text } } } } },
            })),
          },
        } as never,
      });
      await messages.messagesCreateSpecificMessage({
        seededConversationMessage: {
          role: 'ASSISTANT',
          fragment: { string: { raw: answer.answers.iterable[0]!.text } },
          conversation: { id: created.id },
        } as never,
      });
      const renamed = await conversationApi.conversationSpecificConversationRename({ conversation: created.id });
      const picture = (await new sdk.UserApi(config).userSnapshot()).user?.picture;
      const final = await conversationApi.conversationGetSpecificConversation({ conversation: created.id });
      return {
        pipeline: created.pipeline,
        raw,
        answer: answer.answers.iterable[0]!.text,
        renamed: renamed.name,
        picture: picture ?? null,
        count: final.messages.iterable.length,
      };
    });
    expect(result.pipeline).toEqual({ conversation: { contextualizedCodeDialog: {} } });
    expect(result.raw).toEqual(['How do I memoize a function?']);
    expect(result.answer).toMatch(/^No model is configured/);
    expect(result.renamed).toBe('How do I memoize a function?');
    expect(result.picture).toBeNull();
    expect(result.count).toBe(2);
  });
});

describe(`an IDE integration (the JupyterLab extension's connector) in ${engine.name}`, () => {
  it('finds the port with synchronous probes in batches of five, connects as JUPYTER_HUB, then checks health with the application header', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      let port: string | undefined;
      const ports = Array.from({ length: 34 }, (_, i) => 39300 + i);
      for (let i = 0; i < ports.length && !port; i += 5) {
        const batch = ports.slice(i, i + 5).map((p) => {
          const xhr = new XMLHttpRequest();
          xhr.open('GET', `http://localhost:${p}/.well-known/health`, false);
          return { xhr, p };
        });
        for (const { xhr, p } of batch) {
          try {
            xhr.send();
            if (xhr.status === 200) {
              port = String(p);
              break;
            }
          } catch {}
        }
      }
      const host = `http://localhost:${port}`;
      const context = await new sdk.ConnectorApi(new sdk.Configuration({ basePath: host })).connect({
        seededConnectorConnection: {
          application: { name: 'JUPYTER_HUB', version: '2.0.0', platform: 'LINUX', capabilities: 'BLENDED' },
        } as never,
      });
      const headers = { application: context.application.id };
      const health = await fetch(`${host}/.well-known/health`, { headers });
      const user = await new sdk.UserApi(new sdk.Configuration({ basePath: host, headers })).userSnapshot();
      return {
        port,
        name: context.application.name,
        capabilities: context.application.capabilities,
        health: health.status,
        user: user.user?.name,
      };
    });
    expect(result).toEqual({ port: '39300', name: 'JUPYTER_HUB', capabilities: 'BLENDED', health: 200, user: 'Local user' });
  });
});
