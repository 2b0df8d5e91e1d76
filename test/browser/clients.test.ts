/**
 * Real Pieces clients, unchanged, through the official SDK 4.1.0 running in a
 * page: what the Python SDK wrapper (behind pieces-cli and the Sublime/Neovim
 * plugins) does at start-up and in its conversation cache; the copilot SDK's
 * conversation calls; an editor-plugin connector's port probe and streams.
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
  // The page is built with the fast path off in a PIECES_FAST_PATH=off run.
  expect(await page.getAttribute('#status', 'data-fast-path')).toBe(String(process.env.PIECES_FAST_PATH !== 'off'));
});

afterAll(async () => {
  await context?.close();
});

describe(`the Python SDK wrapper's flow in ${engine.name}`, () => {
  it('starts: HEAD health on 127.0.0.1:39300, version, connect, then the application header, the user', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      const host = 'http://127.0.0.1:39300';
      const health = await fetch(`${host}/.well-known/health`, { method: 'HEAD' });
      const wellKnown = new sdk.WellKnownApi(new sdk.Configuration({ basePath: host }));
      const version = await wellKnown.getWellKnownVersion();
      const connector = new sdk.ConnectorApi(new sdk.Configuration({ basePath: host }));
      const context = await connector.connect({
        seededConnectorConnection: { application: { name: 'PIECES_FOR_DEVELOPERS_CLI', version: '1.15.0', platform: 'LINUX' } } as never,
      });
      // From here on every call carries `application: <id>`.
      const configuration = new sdk.Configuration({ basePath: host, headers: { application: context.application.id } });
      const user = await new sdk.UserApi(configuration).userSnapshot();
      const event = await fetch(`${host}/applications/usage/engagement/interaction`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', application: context.application.id },
        body: JSON.stringify({ description: 'cli started' }),
      });
      const application = await (await fetch(`${host}/applications/${context.application.id}`)).json();
      return {
        health: health.status,
        version,
        context: sdk.instanceOfContext(context),
        healthVersion: context.health.os.version,
        user: !!user.user && sdk.instanceOfUserProfile(user.user),
        event: event.status,
        interactions: application.engagement.interactions,
      };
    });
    expect(result.health).toBe(200);
    expect(result.version).toMatch(/^12\.\d+\.\d+$/);
    expect(result.healthVersion).toBe(result.version);
    expect(result.context).toBe(true);
    expect(result.user).toBe(true);
    expect(result.event).toBe(200);
    expect(result.interactions).toBe(1);
  });

  it('fills its conversation cache from the stream: every id read with GET /conversation/{id}, messages through indices, deletes dropped', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      const host = 'http://127.0.0.1:39300';
      const configuration = new sdk.Configuration({ basePath: host });
      const conversations = new sdk.ConversationsApi(configuration);
      const conversationApi = new sdk.ConversationApi(configuration);
      const messageApi = new sdk.ConversationMessageApi(configuration);
      const messagesApi = new sdk.ConversationMessagesApi(configuration);
      const seed = (name: string, texts: string[]) =>
        conversations.conversationsCreateSpecificConversation({
          seededConversation: {
            type: 'COPILOT',
            name,
            messages: texts.map((raw, i) => ({ role: i % 2 ? 'ASSISTANT' : 'USER', fragment: { string: { raw } } })),
          } as never,
        });
      const kept = await seed('kept', ['question', 'answer', 'follow-up']);
      const dropped = await seed('dropped', ['bye']);
      // One message of `kept` is deleted: its index becomes -1.
      await messagesApi.messagesDeleteSpecificMessage({ message: kept.messages.iterable[1]!.id });

      const cache = new Map<string, { name?: string; messages: string[] }>();
      /** What the wrapper does for each id the stream names. */
      const load = async (id: string) => {
        const conversation = await conversationApi.conversationGetSpecificConversation({ conversation: id });
        const indices = Object.entries(conversation.messages.indices ?? {}).sort((a, b) => a[1] - b[1]);
        const messages: string[] = [];
        for (const [messageId, index] of indices) {
          if (index === -1) continue;
          const message = await messageApi.messageSpecificMessageSnapshot({ message: messageId });
          messages.push(message.fragment?.string?.raw ?? '');
        }
        cache.set(id, { name: conversation.name, messages });
      };
      const socket = new WebSocket('ws://127.0.0.1:39300/conversations/stream/identifiers');
      const pending: Array<Promise<void>> = [];
      let frames = 0;
      socket.onmessage = (event) => {
        frames++;
        const streamed = sdk.StreamedIdentifiersFromJSON(JSON.parse(event.data));
        for (const item of streamed.iterable) {
          const id = item.conversation!.id;
          if (item.deleted) cache.delete(id);
          else pending.push(load(id));
        }
      };
      while (frames === 0) await new Promise((r) => setTimeout(r, 10));
      await Promise.all(pending);
      const loaded = [...cache.keys()];
      await conversations.conversationsDeleteSpecificConversation({ conversation: dropped.id });
      while (cache.has(dropped.id)) await new Promise((r) => setTimeout(r, 10));
      socket.close();
      return { loaded, kept: kept.id, dropped: dropped.id, cached: [...cache.keys()], keptEntry: cache.get(kept.id) };
    });
    expect(result.loaded).toEqual(expect.arrayContaining([result.kept, result.dropped]));
    expect(result.cached).toContain(result.kept);
    expect(result.cached).not.toContain(result.dropped);
    expect(result.keptEntry).toEqual({ name: 'kept', messages: ['question', 'follow-up'] });
  });
});

describe(`the copilot SDK's conversation calls in ${engine.name}`, () => {
  it('create with a first message, get, rename, update the name, list, delete', async () => {
    const result = await page.evaluate(async () => {
      const { sdk } = window;
      const configuration = new sdk.Configuration({ basePath: 'http://localhost:1000' });
      const conversations = new sdk.ConversationsApi(configuration);
      const conversationApi = new sdk.ConversationApi(configuration);
      const messagesApi = new sdk.ConversationMessagesApi(configuration);
      const messageApi = new sdk.ConversationMessageApi(configuration);
      // createConversation({ firstMessage })
      const created = await conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT' } as never });
      await messagesApi.messagesCreateSpecificMessage({
        seededConversationMessage: {
          role: 'USER',
          fragment: { string: { raw: 'How do I reverse a list in Python?' } },
          conversation: { id: created.id },
        } as never,
      });
      // getConversation: the conversation, then each message by its id.
      const got = await conversationApi.conversationGetSpecificConversation({ conversation: created.id });
      const messages = [];
      for (const id of Object.keys(got.messages.indices ?? {})) {
        messages.push((await messageApi.messageSpecificMessageSnapshot({ message: id })).fragment?.string?.raw);
      }
      // updateConversationName: rename from the messages; then a name chosen by the user.
      const renamed = await conversationApi.conversationSpecificConversationRename({ conversation: created.id });
      const updated = await conversationApi.conversationUpdate({ conversation: { ...got, name: 'Python lists' } });
      // getConversations
      const listed = await conversations.conversationsSnapshot({});
      const inList = listed.iterable.find((c) => c.id === created.id)?.name;
      await conversations.conversationsDeleteSpecificConversation({ conversation: created.id });
      let afterDelete = 0;
      try {
        await conversationApi.conversationGetSpecificConversation({ conversation: created.id });
      } catch (error) {
        afterDelete = (error as { response?: Response }).response?.status ?? -1;
      }
      return { messages, renamed: renamed.name, updated: updated.name, inList, afterDelete };
    });
    expect(result.messages).toEqual(['How do I reverse a list in Python?']);
    expect(result.renamed).toBe('How do I reverse a list in Python?');
    expect(result.updated).toBe('Python lists');
    expect(result.inList).toBe('Python lists');
    expect(result.afterDelete).toBe(404);
  });
});

describe(`an editor-plugin connector in ${engine.name}`, () => {
  it('finds the port with synchronous XHR probes, follows the applications and assets streams, reopens after a close', async () => {
    const result = await page.evaluate(async () => {
      // The probe: a synchronous XHR to each port until one answers.
      let port: number | undefined;
      for (let p = 39300; p <= 39333 && port === undefined; p++) {
        const xhr = new XMLHttpRequest();
        try {
          xhr.open('GET', `http://localhost:${p}/.well-known/health`, false);
          xhr.send();
          if (xhr.status === 200 && xhr.responseText === 'ok') port = p;
        } catch {
          // Nothing on that port.
        }
      }
      const record = (path: string) => {
        const socket = new WebSocket(`ws://localhost:${port}${path}`);
        const frames: Array<Array<Record<string, { id: string }>>> = [];
        socket.onmessage = (event) => frames.push(JSON.parse(event.data).iterable);
        return { socket, frames };
      };
      const until = async (condition: () => boolean) => {
        for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
        return condition();
      };
      const applications = record('/applications/stream/identifiers');
      const assets = record('/assets/stream/identifiers');
      await until(() => applications.frames.length === 1 && assets.frames.length === 1);
      const initialAssets = assets.frames[0]!.length;
      const context = await (
        await fetch(`http://localhost:${port}/connect`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ application: { name: 'VS_CODE', version: '1.96.0', platform: 'MACOS' } }),
        })
      ).json();
      const assetId = crypto.randomUUID();
      await window.addAssets([{ id: assetId, name: 'probe.ts', text: 'export const port = 39300;\n' }]);
      const heard = await until(() => applications.frames.length >= 2 && assets.frames.length >= 2);
      // The connector closes its socket and opens it again (it does so 15 s after a close).
      assets.socket.close();
      const reopened = record('/assets/stream/identifiers');
      await until(() => reopened.frames.length === 1);
      return {
        port,
        heard,
        application: applications.frames
          .slice(1)
          .flat()
          .map((i) => i.application?.id),
        connected: context.application.id,
        asset: assets.frames
          .slice(1)
          .flat()
          .map((i) => i.asset?.id),
        assetId,
        initialAssets,
        reopened: reopened.frames[0]!.map((i) => i.asset!.id),
      };
    });
    expect(result.port).toBe(39300);
    expect(result.heard).toBe(true);
    expect(result.application).toContain(result.connected);
    expect(result.asset).toEqual([result.assetId]);
    expect(result.initialAssets).toBeGreaterThan(0);
    expect(result.reopened).toContain(result.assetId);
    expect(result.reopened).toHaveLength(result.initialAssets + 1);
  });
});
