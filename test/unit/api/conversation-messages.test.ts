/** ConversationApi, ConversationMessagesApi, ConversationMessageApi and searchConversations, through the SDK 4.1.0. */
import { describe, expect, it } from 'vitest';
import {
  ConversationFromJSON,
  ConversationMessageFromJSON,
  ConversationMessagesFromJSON,
  ModelFromJSON,
  instanceOfConversation,
  instanceOfConversationMessage,
  instanceOfConversationMessages,
  instanceOfSearchedConversations,
  SearchedConversationsFromJSON,
  ConversationTypeEnum,
  QGPTConversationMessageRoleEnum,
  type Conversation,
} from '@pieces.app/pieces-os-client';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { BASE, MODEL, dump, jsonPost, seeded, setup } from '../support/harness.js';

type Harness = Awaited<ReturnType<typeof setup>>;

/** A clock the test moves: every write's `updated` is known. */
function clock() {
  let now = Date.parse('2026-03-01T00:00:00.000Z');
  return { now: () => new Date(now), tick: () => (now += 60_000), at: () => new Date(now).toISOString() };
}

const create = (t: Harness, name: string, texts: string[] = []) =>
  t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(name, texts) });

const raw = async (t: Harness, path: string, init?: RequestInit) => {
  const response = await t.fetch(`${BASE}${path}`, init);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
};

/** Expects a 4xx with a message and the store unchanged. */
async function refused(t: Harness, path: string, init: RequestInit, status: number, message: RegExp) {
  const before = await dump(t.databaseName);
  const response = await t.fetch(`${BASE}${path}`, init);
  expect(response.status).toBe(status);
  expect(await response.text()).toMatch(message);
  expect(await dump(t.databaseName)).toBe(before);
}

const texts = (conversation: Conversation) => conversation.messages.iterable.map((m) => m.reference?.fragment?.string?.raw);

describe('ConversationApi.conversationGetSpecificConversation', () => {
  it('answers the same record as the snapshot, with indices, under the same transferables rule', async () => {
    const t = await setup();
    await create(t, 'other', ['x']);
    const made = await create(t, 'mine', ['hello', 'hi']);
    const one = await raw(t, `/conversation/${made.id}`);
    const listed = (await raw(t, '/conversations')).iterable[1];
    expect(one).toEqual(listed);
    expect(instanceOfConversation(ConversationFromJSON(one))).toBe(true);
    expect(one.messages.indices).toEqual(Object.fromEntries(made.messages.iterable.map((m, i) => [m.id, i])));
    const ids = await raw(t, `/conversation/${made.id}?transferables=false`);
    expect(ids).toEqual((await raw(t, '/conversations?transferables=false')).iterable[1]);
    expect(ids.messages.iterable.every((m: object) => Object.keys(m).join() === 'id')).toBe(true);
    const viaSdk = await t.conversation.conversationGetSpecificConversation({ conversation: made.id });
    expect(texts(viaSdk)).toEqual(['hello', 'hi']);
  });

  it('answers 404 for an unknown id, 400 for a non-UUID and for a bad transferables', async () => {
    const t = await setup();
    expect((await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await t.fetch(`${BASE}/conversation/nope`)).status).toBe(400);
    const made = await create(t, 'x');
    expect((await t.fetch(`${BASE}/conversation/${made.id}?transferables=yes`)).status).toBe(400);
  });
});

describe('ConversationApi.conversationUpdate', () => {
  it('takes the whole Conversation: changeable fields as sent, id and created kept, updated now, messages untouched', async () => {
    const time = clock();
    const t = await setup({ now: time.now });
    const made = await create(t, 'before', ['q']);
    time.tick();
    const edited: Conversation = {
      ...made,
      id: made.id,
      name: 'after',
      favorited: true,
      created: { value: new Date('2000-01-01T00:00:00Z') },
      annotations: { iterable: [{ id: 'a1' }] },
      websites: { iterable: [{ id: 'w1' }] },
      model: { id: 'model-1' },
      messages: { iterable: [] },
    };
    const updated = await t.conversation.conversationUpdate({ conversation: edited });
    expect(instanceOfConversation(updated)).toBe(true);
    expect(updated).toMatchObject({ id: made.id, name: 'after', favorited: true });
    expect(updated.created.value.toISOString()).toBe(made.created.value.toISOString());
    expect(updated.updated.value.toISOString()).toBe(time.at());
    expect(texts(updated)).toEqual(['q']);
    const read = await raw(t, `/conversation/${made.id}`);
    expect(read).toMatchObject({ name: 'after', annotations: { iterable: [{ id: 'a1' }] }, model: { id: 'model-1' } });
    // (After it, the activity recording the rename.)
    expect(t.changes.filter((c) => c.collection !== 'activity').at(-1)).toMatchObject({ collection: 'conversation', id: made.id });
  });

  it('refuses an unknown id (404), a missing or bad id and bad fields (400), changing nothing', async () => {
    const t = await setup();
    const made = await raw(t, '/conversations/create', jsonPost({ type: 'COPILOT', name: 'x' }));
    await refused(t, '/conversation/update', jsonPost({ ...made, id: crypto.randomUUID() }), 404, /No conversation/);
    await refused(t, '/conversation/update', jsonPost({ ...made, id: undefined }), 400, /conversation.id is required/);
    await refused(t, '/conversation/update', jsonPost({ ...made, name: 5 }), 400, /conversation.name must be a string/);
    await refused(t, '/conversation/update', jsonPost({ ...made, type: 'CHAT' }), 400, /conversation.type must be one of/);
    await refused(t, '/conversation/update', jsonPost({ ...made, assets: { iterable: [{}] } }), 400, /assets.iterable\[0\].id is required/);
  });
});

describe('ConversationApi: messages, rename, assets', () => {
  it('conversationSpecificConversationMessages answers ConversationMessages with indices', async () => {
    const t = await setup();
    const made = await create(t, 'c', ['one', 'two', 'three']);
    const body = await raw(t, `/conversation/${made.id}/messages`);
    expect(instanceOfConversationMessages(ConversationMessagesFromJSON(body))).toBe(true);
    expect(body.iterable.map((m: { fragment: { string: { raw: string } } }) => m.fragment.string.raw)).toEqual(['one', 'two', 'three']);
    expect(body.indices).toEqual(Object.fromEntries(made.messages.iterable.map((m, i) => [m.id, i])));
    expect((await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}/messages`)).status).toBe(404);
  });

  it('conversationSpecificConversationRename names it from the first USER message: one line, at most 60 characters', async () => {
    const t = await setup();
    const long = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: {
        type: ConversationTypeEnum.Copilot,
        messages: [
          { role: QGPTConversationMessageRoleEnum.System, fragment: { string: { raw: 'system prompt' } } },
          {
            role: QGPTConversationMessageRoleEnum.User,
            fragment: { string: { raw: '\n  How do I   debounce a function in TypeScript without losing the latest arguments?\nMore.' } },
          },
        ],
      },
    });
    const renamed = await t.conversation.conversationSpecificConversationRename({ conversation: long.id });
    expect(instanceOfConversation(renamed)).toBe(true);
    expect(renamed.name).toBe('How do I debounce a function in TypeScript without losing…');
    expect(renamed.name!.length).toBeLessThanOrEqual(60);
    expect((await t.conversation.conversationSpecificConversationRename({ conversation: long.id })).name).toBe(renamed.name);
    const short = await create(t, 'old', ['Short question']);
    expect((await t.conversation.conversationSpecificConversationRename({ conversation: short.id })).name).toBe('Short question');
    const none = await create(t, 'kept');
    expect((await t.conversation.conversationSpecificConversationRename({ conversation: none.id })).name).toBe('kept');
    expect((await t.fetch(`${BASE}/conversation/${crypto.randomUUID()}/rename`, { method: 'POST' })).status).toBe(404);
  });

  it('conversationAssociateAsset / conversationDisassociateAsset answer 204 and change `assets`', async () => {
    const t = await setup();
    const made = await create(t, 'c');
    const asset = SAMPLE_ASSETS[0]!.id;
    const associate = await t.fetch(`${BASE}/conversation/${made.id}/assets/associate/${asset}`, { method: 'POST' });
    expect(associate.status).toBe(204);
    expect((await raw(t, `/conversation/${made.id}`)).assets).toEqual({ iterable: [{ id: asset }] });
    await t.conversation.conversationAssociateAsset({ conversation: made.id, asset });
    expect((await raw(t, `/conversation/${made.id}`)).assets).toEqual({ iterable: [{ id: asset }] });
    await t.conversation.conversationDisassociateAsset({ conversation: made.id, asset });
    expect((await raw(t, `/conversation/${made.id}`)).assets).toEqual({ iterable: [] });
    await refused(t, `/conversation/${made.id}/assets/associate/${crypto.randomUUID()}`, { method: 'POST' }, 404, /No asset/);
    await refused(t, `/conversation/${crypto.randomUUID()}/assets/associate/${asset}`, { method: 'POST' }, 404, /No conversation/);
    await refused(t, `/conversation/${made.id}/assets/associate/x`, { method: 'POST' }, 400, /asset id must be a UUID/);
  });
});

describe('ConversationsApi.searchConversations', () => {
  it('searches names and message text, best first, with exact and similarity', async () => {
    const t = await setup();
    const debounce = await create(t, 'Debounce in TypeScript', ['how to debounce a debounce handler']);
    const retry = await create(t, 'Retries', ['exponential backoff with jitter', 'you can debounce too']);
    await create(t, 'Unrelated', ['nothing here']);
    const body = await raw(t, '/conversations/search', jsonPost({ engines: { iterable: [{ query: 'debounce' }] } }));
    expect(instanceOfSearchedConversations(SearchedConversationsFromJSON(body))).toBe(true);
    expect(body.iterable.map((s: { identifier: string }) => s.identifier)).toEqual([debounce.id, retry.id]);
    expect(body.iterable[0]).toMatchObject({ exact: true, similarity: 1 });
    expect(body.iterable[1].similarity).toBeGreaterThan(0);
    expect(body.iterable[1].similarity).toBeLessThan(1);
    expect(body.iterable[1].messages.iterable.map((m: { identifier: string }) => m.identifier)).toEqual([retry.messages.iterable[1]!.id]);
    const viaSdk = await t.conversations.searchConversations({ searchInput: { engines: { iterable: [{ query: 'backoff jitter' }] } } });
    expect(viaSdk.iterable.map((s) => s.identifier)).toEqual([retry.id]);
    expect((await raw(t, '/conversations/search', jsonPost({ engines: { iterable: [{ query: 'zebra' }] } }))).iterable).toEqual([]);
    await refused(t, '/conversations/search', jsonPost({ engines: { iterable: [] } }), 400, /query is required/);
  });
});

describe('messages', () => {
  it('messagesCreateSpecificMessage appends to its conversation, bumps `updated` and announces both', async () => {
    const time = clock();
    const t = await setup({ now: time.now });
    const made = await create(t, 'c', ['first']);
    time.tick();
    const message = await t.messages.messagesCreateSpecificMessage({
      seededConversationMessage: {
        role: QGPTConversationMessageRoleEnum.Assistant,
        fragment: { string: { raw: 'second' } },
        conversation: { id: made.id },
        model: ModelFromJSON(MODEL),
      },
    });
    expect(instanceOfConversationMessage(message)).toBe(true);
    expect(message.conversation.id).toBe(made.id);
    expect(message.model).toMatchObject({ id: 'model-1', name: 'GPT-4o', cloud: true });
    const read = await t.conversation.conversationGetSpecificConversation({ conversation: made.id });
    expect(texts(read)).toEqual(['first', 'second']);
    expect(read.updated.value.toISOString()).toBe(time.at());
    expect(t.changes.slice(-2).map((c) => [c.collection, c.id])).toEqual([
      ['conversationMessage', message.id],
      ['conversation', made.id],
    ]);
  });

  it('messagesCreateSpecificMessage refuses what is not a valid message, changing nothing', async () => {
    const t = await setup();
    const made = await create(t, 'c');
    const base = { role: 'USER', fragment: { string: { raw: 'x' } }, conversation: { id: made.id } };
    await refused(t, '/messages/create', jsonPost({ ...base, conversation: undefined }), 400, /message.conversation is required/);
    await refused(t, '/messages/create', jsonPost({ ...base, conversation: { id: crypto.randomUUID() } }), 404, /No conversation/);
    await refused(t, '/messages/create', jsonPost({ ...base, role: 'BOT' }), 400, /message.role must be one of/);
    await refused(t, '/messages/create', jsonPost({ ...base, model: { id: 'm' } }), 400, /message.model.version is required/);
    await refused(
      t,
      '/messages/create',
      jsonPost({ ...base, model: { ...MODEL, usage: 'CHAT' } }),
      400,
      /message.model.usage must be one of/,
    );
    await refused(
      t,
      '/messages/create',
      jsonPost({ ...base, model: { ...MODEL, foundation: 'GPT_5' } }),
      400,
      /message.model.foundation must be one of/,
    );
    await refused(
      t,
      '/messages/create',
      jsonPost({ ...base, model: { ...MODEL, provider: 'ACME' } }),
      400,
      /message.model.provider must be one of/,
    );
    await refused(t, '/messages/create', jsonPost({ ...base, id: crypto.randomUUID() }), 400, /message.id is assigned by the service/);
  });

  it('messageSpecificMessageSnapshot, messageSpecificMessageUpdate, messageUpdateValue and messagesDeleteSpecificMessage', async () => {
    const time = clock();
    const t = await setup({ now: time.now });
    const made = await create(t, 'c', ['a', 'b', 'c']);
    const [a, b, c] = made.messages.iterable.map((m) => m.id);
    const got = await t.message.messageSpecificMessageSnapshot({ message: b! });
    expect(instanceOfConversationMessage(got)).toBe(true);
    expect(got.fragment?.string?.raw).toBe('b');

    time.tick();
    const value = await t.message.messageUpdateValue({ conversationMessage: { ...got, fragment: { string: { raw: 'b2' } } } });
    expect(value).toMatchObject({ id: b, role: 'ASSISTANT', fragment: { string: { raw: 'b2' } } });
    expect(value.updated.value.toISOString()).toBe(time.at());
    expect(value.created.value.toISOString()).toBe(got.created.value.toISOString());

    const whole = await t.message.messageSpecificMessageUpdate({
      conversationMessage: {
        ...value,
        role: QGPTConversationMessageRoleEnum.User,
        sentiment: 'LIKE' as never,
        fragment: { string: { raw: 'b3' } },
      },
    });
    expect(whole).toMatchObject({ role: 'USER', sentiment: 'LIKE', fragment: { string: { raw: 'b3' } }, conversation: { id: made.id } });

    await t.messages.messagesDeleteSpecificMessage({ message: a! });
    const read = await raw(t, `/conversation/${made.id}`);
    expect(read.messages.iterable.map((m: { id: string }) => m.id)).toEqual([b, c]);
    expect(read.messages.indices).toEqual({ [b!]: 0, [c!]: 1, [a!]: -1 });
    expect((await t.fetch(`${BASE}/message/${a}`)).status).toBe(404);
    expect(t.changes.slice(-2).map((ch) => [ch.collection, ch.id, ch.deleted])).toEqual([
      ['conversationMessage', a, true],
      ['conversation', made.id, undefined],
    ]);
    const messages = await raw(t, `/conversation/${made.id}/messages`);
    expect(messages.indices[a!]).toBe(-1);
  });

  it('refuses bad updates and deletes, changing nothing', async () => {
    const t = await setup();
    const made = await create(t, 'c', ['a']);
    const other = await create(t, 'd');
    const message = await raw(t, `/message/${made.messages.iterable[0]!.id}`);
    await refused(t, '/message/update', jsonPost({ ...message, id: crypto.randomUUID() }), 404, /No message/);
    await refused(t, '/message/update', jsonPost({ ...message, conversation: { id: other.id } }), 400, /cannot move/);
    await refused(t, '/message/update/value', jsonPost({ ...message, fragment: undefined }), 400, /message.fragment is required/);
    await refused(t, '/message/update', jsonPost({ ...message, role: undefined }), 400, /message.role is required/);
    await refused(t, `/messages/${crypto.randomUUID()}/delete`, { method: 'POST' }, 404, /No message/);
    await refused(t, '/messages/nope/delete', { method: 'POST' }, 400, /UUID/);
  });

  it('messagesSnapshot answers every message with its index in its conversation', async () => {
    const t = await setup();
    const one = await create(t, 'one', ['1a', '1b']);
    const two = await create(t, 'two', ['2a']);
    const body = await raw(t, '/messages');
    expect(instanceOfConversationMessages(ConversationMessagesFromJSON(body))).toBe(true);
    expect(body.iterable.map((m: { fragment: { string: { raw: string } } }) => m.fragment.string.raw)).toEqual(['1a', '1b', '2a']);
    expect(body.indices).toEqual({
      [one.messages.iterable[0]!.id]: 0,
      [one.messages.iterable[1]!.id]: 1,
      [two.messages.iterable[0]!.id]: 0,
    });
    expect((await t.messages.messagesSnapshot({})).iterable).toHaveLength(3);
  });

  it('loses no message when many are added to one conversation at once', async () => {
    const t = await setup();
    const made = await create(t, 'busy');
    const added = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        raw(t, '/messages/create', jsonPost({ role: 'USER', fragment: { string: { raw: `m${i}` } }, conversation: { id: made.id } })),
      ),
    );
    const read = await raw(t, `/conversation/${made.id}`);
    expect(read.messages.iterable.map((m: { id: string }) => m.id).sort()).toEqual(added.map((m) => m.id).sort());
  });
});

describe('whole nested models', () => {
  it('anchors come back with points, annotation links as references, message models whole, a seeded message may name a conversation', async () => {
    const t = await setup();
    const asset = SAMPLE_ASSETS[0]!.id;
    const body = await raw(
      t,
      '/conversations/create',
      jsonPost({
        type: 'COPILOT',
        annotations: [{ type: 'DESCRIPTION', text: 'about', asset }],
        anchors: [{ type: 'FILE', fullpath: '/src/a.ts', platform: 'LINUX', annotations: [{ type: 'COMMENT', text: 'here' }] }],
        messages: [{ role: 'USER', fragment: { string: { raw: 'q' } }, model: MODEL, conversation: { id: crypto.randomUUID() } }],
      }),
    );
    const conversation = ConversationFromJSON(body);
    expect(instanceOfConversation(conversation)).toBe(true);
    const anchor = body.anchors.iterable[0].reference;
    expect(anchor.points.iterable[0].reference).toMatchObject({ fullpath: '/src/a.ts', platform: 'LINUX', anchor: { id: anchor.id } });
    expect(anchor.annotations.iterable[0].reference).toMatchObject({ type: 'COMMENT', text: 'here', anchor: { id: anchor.id } });
    expect(body.annotations.iterable[0].reference).toMatchObject({ asset: { id: asset }, conversation: { id: body.id } });
    const message = body.messages.iterable[0].reference;
    expect(message.model).toEqual(MODEL);
    expect(message.conversation).toEqual({ id: body.id });
    expect(instanceOfConversationMessage(ConversationMessageFromJSON(message))).toBe(true);
  });
});
