import { GENERIC_KINDS } from '../../../src/core/handlers/materials.js';
import { describe, expect, it, vi } from 'vitest';
import {
  ConversationFromJSON,
  ConversationsCreateFromAssetOutputFromJSON,
  ConversationsFromJSON,
  FlattenedConversationsFromJSON,
  instanceOfConversation,
  instanceOfConversations,
  instanceOfConversationsCreateFromAssetOutput,
  instanceOfFlattenedConversations,
} from '@pieces.app/pieces-os-client';
import { SAMPLE_ASSETS } from '../../../src/core/fixtures/sample-assets.js';
import { BASE, MODEL, dump, jsonPost, seeded, setup } from '../support/harness.js';
import { isRerunnable } from '../../../src/core/http.js';
import { OPERATIONS } from '../../../src/core/routes.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const getJson = async (t: Harness, path: string) => {
  const response = await t.fetch(`${BASE}${path}`);
  expect(response.status).toBe(200);
  return response.json();
};

describe('conversationsCreateSpecificConversation', () => {
  it('stores seeded messages and references them by id, with their text (transferables default true)', async () => {
    const t = await setup();
    const created = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: seeded('pair', ['hello', 'hi there']),
    });
    expect(instanceOfConversation(created)).toBe(true);
    expect(created.type).toBe('COPILOT');
    const messages = created.messages.iterable;
    expect(messages).toHaveLength(2);
    expect(messages.map((m) => m.reference?.fragment?.string?.raw)).toEqual(['hello', 'hi there']);
    expect(messages.map((m) => m.reference?.role)).toEqual(['USER', 'ASSISTANT']);
    for (const m of messages) {
      expect(m.reference?.id).toBe(m.id);
      expect(m.reference?.conversation.id).toBe(created.id);
    }
  });

  it('with no body (the SDK sends Content-Type and nothing) creates a COPILOT conversation', async () => {
    const t = await setup();
    const created = await t.conversations.conversationsCreateSpecificConversation({});
    expect(created.type).toBe('COPILOT');
    expect(created.messages.iterable).toEqual([]);
    expect(created.created.value).toBeInstanceOf(Date);
  });

  it('drops nothing the client sent: every seeded field comes back', async () => {
    const t = await setup();
    const assetId = crypto.randomUUID();
    const body = {
      type: 'COPILOT',
      name: 'full',
      favorited: true,
      demo: false,
      pipeline: { conversation: { contextualized_code_dialog: {} } },
      model: { id: 'model-1' },
      assets: { iterable: [{ id: assetId }] },
      websites: { iterable: [{ id: 'w1' }] },
      annotations: [{ type: 'DESCRIPTION', text: 'about it' }],
      anchors: [{ type: 'FILE', fullpath: '/src/a.ts', name: 'a.ts', platform: 'LINUX', watch: true }],
      messages: [
        {
          role: 'USER',
          fragment: { string: { raw: 'q' } },
          created: { value: '2026-01-02T03:04:05.000Z' },
          sentiment: 'LIKE',
          model: MODEL,
          tags: { iterable: [] },
        },
      ],
    };
    const raw = await (await t.fetch(`${BASE}/conversations/create`, jsonPost(body))).json();
    expect(instanceOfConversation(ConversationFromJSON(raw))).toBe(true);
    expect(raw).toMatchObject({
      name: 'full',
      favorited: true,
      demo: false,
      pipeline: body.pipeline,
      model: body.model,
      assets: body.assets,
      websites: body.websites,
    });
    expect(raw.annotations.iterable[0].reference).toMatchObject({ type: 'DESCRIPTION', text: 'about it', conversation: { id: raw.id } });
    // The anchor's path and platform are its point's.
    const anchor = raw.anchors.iterable[0].reference;
    expect(anchor).toMatchObject({ type: 'FILE', name: 'a.ts', watch: true });
    expect(anchor).not.toHaveProperty('fullpath');
    expect(anchor.points.iterable[0].reference).toMatchObject({ fullpath: '/src/a.ts', platform: 'LINUX', anchor: { id: anchor.id } });
    const message = raw.messages.iterable[0].reference;
    expect(message).toMatchObject({
      role: 'USER',
      sentiment: 'LIKE',
      created: { value: '2026-01-02T03:04:05.000Z' },
      model: MODEL,
      tags: { iterable: [] },
    });
    // And the same when read back.
    const listed = (await getJson(t, '/conversations')).iterable[0];
    expect(listed).toEqual(raw);
  });

  it('refuses fields the SDK models do not have, at every level it stores, naming the field and changing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const message = { role: 'USER', fragment: { string: { raw: 'q' } } };
    for (const [body, refused] of [
      [{ type: 'COPILOT', custom: { kept: [1] } }, 'conversation.custom is not a field of SeededConversation'],
      [
        { type: 'COPILOT', model: { id: 'm', reference: { name: 'GPT' } } },
        'conversation.model.reference is not a field of ReferencedModel',
      ],
      [
        { type: 'COPILOT', anchors: [{ type: 'FILE', fullpath: '/a', colour: 'red' }] },
        'conversation.anchors[0].colour is not a field of SeededAnchor',
      ],
      [
        { type: 'COPILOT', annotations: [{ type: 'COMMENT', text: 'x', note: 1 }] },
        'conversation.annotations[0].note is not a field of SeededAnnotation',
      ],
      [
        { type: 'COPILOT', messages: [{ ...message, extra: true }] },
        'conversation.messages[0].extra is not a field of SeededConversationMessage',
      ],
      [{ type: 'COPILOT', schema: { migration: 0 } }, 'conversation.schema.semantic is required'],
      [
        { type: 'COPILOT', messages: [{ role: 'USER', fragment: { string: { raw: 'q', colour: 1 } } }] },
        'conversation.messages[0].fragment.string.colour is not a field of TransferableString',
      ],
      [
        { type: 'COPILOT', messages: [{ role: 'USER', fragment: { text: 'q' } }] },
        'conversation.messages[0].fragment.text is not a field of FragmentFormat',
      ],
      [
        { type: 'COPILOT', messages: [{ ...message, created: { value: '2026-01-01T00:00:00Z', millis: 1 } }] },
        'conversation.messages[0].created.millis is not a field of GroupedTimestamp',
      ],
    ] as const) {
      const response = await t.fetch(`${BASE}/conversations/create`, jsonPost(body));
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(refused);
    }
    expect(await dump(t.databaseName)).toBe(before);
    // Every field a FragmentFormat has is kept (and the response checker reads it back against the SDK).
    const fragment = { string: { raw: 'q', base64: 'cQ==' }, bytes: { raw: [113] }, metadata: { ext: 'ts' } };
    const kept = await (
      await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: 'COPILOT', messages: [{ role: 'USER', fragment }] }))
    ).json();
    expect(kept.messages.iterable[0].reference.fragment).toEqual(fragment);
    // null for an optional field means absent: the key is not stored, nor served.
    const nulls = await (
      await t.fetch(
        `${BASE}/conversations/create`,
        jsonPost({
          type: 'COPILOT',
          name: null,
          messages: [{ role: 'USER', fragment: { string: null, bytes: { raw: [1] } }, sentiment: null }],
        }),
      )
    ).json();
    expect(nulls).not.toHaveProperty('name');
    expect(nulls.messages.iterable[0].reference).not.toHaveProperty('sentiment');
    expect(nulls.messages.iterable[0].reference.fragment).toEqual({ bytes: { raw: [1] } });
    // conversationUpdate takes the whole Conversation: a key it does not have is refused too.
    const created = await (await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: 'COPILOT', name: 'n' }))).json();
    const refused = await t.fetch(`${BASE}/conversation/update`, jsonPost({ ...created, custom: 1 }));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('conversation.custom is not a field of Conversation');
  });

  it('with transferables=false answers message ids only', async () => {
    const t = await setup();
    const created = await t.conversations.conversationsCreateSpecificConversation({
      transferables: false,
      seededConversation: seeded('ids only', ['a', 'b']),
    });
    expect(created.messages.iterable).toHaveLength(2);
    expect(created.messages.iterable.every((m) => m.id && m.reference === undefined)).toBe(true);
    const raw = await (await t.fetch(`${BASE}/conversations/create?transferables=false`, jsonPost(seeded('raw', ['a'])))).json();
    expect(raw.messages.iterable.map((m: object) => Object.keys(m))).toEqual([['id']]);
  });

  it.each([
    ['a missing type', { name: 'x' }, 'conversation.type is required'],
    ['a bad type', { type: 'CHAT' }, 'conversation.type must be one of UNKNOWN, COPILOT'],
    [
      'a bad role',
      { type: 'COPILOT', messages: [{ role: 'BOT', fragment: {} }] },
      'conversation.messages[0].role must be one of UNKNOWN, USER, SYSTEM, ASSISTANT',
    ],
    ['a message without fragment', { type: 'COPILOT', messages: [{ role: 'USER' }] }, 'conversation.messages[0].fragment is required'],
    ['a non-string name', { type: 'COPILOT', name: 5 }, 'conversation.name must be a string'],
    ['an id the service assigns', { type: 'COPILOT', id: crypto.randomUUID() }, 'conversation.id is assigned by the service'],
    ['a bad created time', { type: 'COPILOT', messages: [{ role: 'USER', fragment: {}, created: { value: 'yesterday' } }] }, 'ISO-8601'],
    [
      'an annotation without text',
      { type: 'COPILOT', annotations: [{ type: 'DESCRIPTION' }] },
      'conversation.annotations[0].text is required',
    ],
    ['a non-array body', [1], 'conversation must be a JSON object'],
  ])('refuses %s with 400 and stores nothing', async (_what, body, message) => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const response = await t.fetch(`${BASE}/conversations/create`, jsonPost(body));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(message);
    expect(await dump(t.databaseName)).toBe(before);
    expect(t.changes).toEqual([]);
  });
});

describe('conversationsSnapshot and conversationsIdentifiersSnapshot', () => {
  it('list every conversation in creation order, oldest first, in both snapshots', async () => {
    const t = await setup();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      ids.push((await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded(name, [name]) })).id);
    }
    const raw = await getJson(t, '/conversations');
    expect(instanceOfConversations(ConversationsFromJSON(raw))).toBe(true);
    expect(raw.iterable.map((c: { id: string }) => c.id)).toEqual(ids);
    const identifiers = await getJson(t, '/conversations/identifiers');
    expect(instanceOfFlattenedConversations(FlattenedConversationsFromJSON(identifiers))).toBe(true);
    expect(identifiers.iterable).toEqual(ids.map((id) => ({ id })));
    const sdk = await t.conversations.conversationsIdentifiersSnapshot();
    expect(sdk.iterable.map((c) => c.id)).toEqual(ids);
  });

  it('transferables: true returns references, false only ids — same records, same order, fewer bytes', async () => {
    const t = await setup();
    for (let i = 0; i < 5; i++) {
      await t.conversations.conversationsCreateSpecificConversation({
        seededConversation: seeded(`c${i}`, ['a long message '.repeat(20), 'b']),
      });
    }
    const withText = await (await t.fetch(`${BASE}/conversations?transferables=true`)).text();
    const idsOnly = await (await t.fetch(`${BASE}/conversations?transferables=false`)).text();
    const absent = await (await t.fetch(`${BASE}/conversations`)).text();
    expect(absent).toBe(withText);
    const full = JSON.parse(withText);
    const light = JSON.parse(idsOnly);
    expect(light.iterable.map((c: { id: string }) => c.id)).toEqual(full.iterable.map((c: { id: string }) => c.id));
    for (const [i, conversation] of light.iterable.entries()) {
      const { messages, ...rest } = conversation;
      const { messages: fullMessages, ...fullRest } = full.iterable[i];
      expect(rest).toEqual(fullRest);
      expect(messages.iterable).toEqual(fullMessages.iterable.map((m: { id: string }) => ({ id: m.id })));
    }
    expect(idsOnly.length).toBeLessThan(withText.length / 2);
    const sdk = await t.conversations.conversationsSnapshot({ transferables: false });
    expect(sdk.iterable[0]!.messages.iterable[0]!.reference).toBeUndefined();
  });

  it.each(['yes', '1', 'TRUE', ''])('refuses transferables=%s with 400', async (value) => {
    const t = await setup();
    const response = await t.fetch(`${BASE}/conversations?transferables=${value}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('transferables');
    const create = await t.fetch(`${BASE}/conversations/create?transferables=${value}`, jsonPost({ type: 'COPILOT' }));
    expect(create.status).toBe(400);
    expect((await t.conversations.conversationsIdentifiersSnapshot()).iterable).toEqual([]);
  });

  it('reads a snapshot of many conversations in a constant number of transactions (no N+1)', async () => {
    const t = await setup();
    const count = 500;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        t.fetch(`${BASE}/conversations/create`, jsonPost(seeded(`c${i}`, ['1', '2', '3', '4', '5']))),
      ),
    );
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    try {
      const full = await getJson(t, '/conversations');
      const light = await getJson(t, '/conversations?transferables=false');
      const ids = await getJson(t, '/conversations/identifiers');
      expect(full.iterable).toHaveLength(count);
      expect(full.iterable.every((c: { messages: { iterable: unknown[] } }) => c.messages.iterable.length === 5)).toBe(true);
      expect(light.iterable).toHaveLength(count);
      expect(ids.iterable).toHaveLength(count);
      // A read each, and the kept segments of the two snapshots written back.
      expect(spy).toHaveBeenCalledTimes(5);
      spy.mockClear();
      // Read again: the kept segments, one transaction each.
      expect(await getJson(t, '/conversations')).toEqual(full);
      expect(await getJson(t, '/conversations?transferables=false')).toEqual(light);
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  }, 60_000); // many conversations: more time than the default on a busy machine.
});

describe('conversationsCreateFromAsset and assetsIdentifiersSnapshot', () => {
  it('lists the sample assets stored on first start', async () => {
    const t = await setup();
    const raw = await getJson(t, '/assets/identifiers');
    expect(raw.iterable.map((a: { id: string }) => a.id).sort()).toEqual(SAMPLE_ASSETS.map((a) => a.id).sort());
  });

  it('creates a conversation named after the asset, referencing it, opened by a SYSTEM summary', async () => {
    const t = await setup();
    const asset = SAMPLE_ASSETS[0]!;
    const output = await t.conversations.conversationsCreateFromAsset({ asset: asset.id });
    expect(instanceOfConversationsCreateFromAssetOutput(output)).toBe(true);
    const conversation = output.conversation.reference!;
    expect(output.conversation.id).toBe(conversation.id);
    expect(conversation.name).toBe('debounce.ts');
    expect(conversation.assets?.iterable?.map((a) => a.id)).toEqual([asset.id]);
    const [message] = conversation.messages.iterable;
    expect(message!.reference!.role).toBe('SYSTEM');
    const summary = message!.reference!.fragment!.string!.raw!;
    expect(summary).toContain('Asset: debounce.ts');
    expect(summary).toContain('Language: TypeScript');
    expect(summary).toContain(`Size: 17 lines, ${new TextEncoder().encode(asset.text).byteLength} bytes`);
    expect(summary).toContain('type Procedure');
    expect(summary).toContain('interface DebounceOptions');
    expect(summary).toContain('function debounce');
    expect(summary).toContain('export type Procedure = (...args: never[]) => void;');
    // It is stored like any conversation.
    const ids = await t.conversations.conversationsIdentifiersSnapshot();
    expect(ids.iterable.map((c) => c.id)).toEqual([conversation.id]);
  });

  it('summarises deterministically, with the declarations of each language', async () => {
    const a = await setup();
    const b = await setup();
    for (const asset of SAMPLE_ASSETS) {
      const one = await (await a.fetch(`${BASE}/conversations/create/from_asset/${asset.id}`, { method: 'POST' })).json();
      const two = await (await b.fetch(`${BASE}/conversations/create/from_asset/${asset.id}`, { method: 'POST' })).json();
      expect(instanceOfConversationsCreateFromAssetOutput(ConversationsCreateFromAssetOutputFromJSON(one))).toBe(true);
      const text = (output: typeof one) => output.conversation.reference.messages.iterable[0].reference.fragment.string.raw;
      expect(text(one)).toBe(text(two));
    }
    const text = async (id: string) =>
      (await (await a.fetch(`${BASE}/conversations/create/from_asset/${id}`, { method: 'POST' })).json()).conversation.reference.messages
        .iterable[0].reference.fragment.string.raw as string;
    expect(await text(SAMPLE_ASSETS[1]!.id)).toContain('class RetryError, def retry');
    expect(await text(SAMPLE_ASSETS[2]!.id)).toContain('type entry, type Cache, func New, func Get, func Put');
    expect(await text(SAMPLE_ASSETS[3]!.id)).toContain('const SEPARATOR, fn slugify, mod tests');
  });

  it('answers 404 for an unknown asset and 400 for a non-UUID, storing nothing', async () => {
    const t = await setup();
    const before = await dump(t.databaseName);
    const unknown = crypto.randomUUID();
    const missing = await t.fetch(`${BASE}/conversations/create/from_asset/${unknown}`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain(unknown);
    expect((await t.fetch(`${BASE}/conversations/create/from_asset/abc`, { method: 'POST' })).status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });
});

describe('conversationsDeleteSpecificConversation', () => {
  it('removes the conversation and all its messages, answering 204', async () => {
    const t = await setup();
    const keep = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('keep', ['k']) });
    const gone = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('gone', ['1', '2', '3']) });
    const response = await t.fetch(`${BASE}/conversations/${gone.id}/delete`, { method: 'POST' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const after = JSON.parse(await dump(t.databaseName));
    expect(after.conversations.map(([id]: [string]) => id)).toEqual([keep.id]);
    expect(after.messages.map(([, m]: [string, { conversation: string }]) => m.conversation)).toEqual([keep.id]);
    // The conversation's deletion, then each of its messages' (then the activity recording it).
    const own = t.changes.filter((c) => c.collection !== 'activity');
    expect(t.changes.at(-1)).toMatchObject({ collection: 'activity' });
    expect(own.slice(-4).map((c) => [c.collection, c.deleted])).toEqual([
      ['conversation', true],
      ['conversationMessage', true],
      ['conversationMessage', true],
      ['conversationMessage', true],
    ]);
    expect(own.at(-4)).toMatchObject({ id: gone.id });
  });

  it('answers 404 for an unknown id and changes nothing; 400 for a non-UUID', async () => {
    const t = await setup();
    await t.conversations.conversationsCreateSpecificConversation({ seededConversation: seeded('x', ['1']) });
    const before = await dump(t.databaseName);
    await expect(t.conversations.conversationsDeleteSpecificConversation({ conversation: crypto.randomUUID() })).rejects.toMatchObject({
      response: { status: 404 },
    });
    expect((await t.fetch(`${BASE}/conversations/zzz/delete`, { method: 'POST' })).status).toBe(400);
    expect(await dump(t.databaseName)).toBe(before);
  });

  it('records every create and delete in the change log, in order', async () => {
    const t = await setup({ sampleAssets: false });
    const a = await t.conversations.conversationsCreateSpecificConversation({});
    const b = await t.conversations.conversationsCreateSpecificConversation({});
    await t.conversations.conversationsDeleteSpecificConversation({ conversation: a.id });
    // Each followed by the activity recording it (written after the conversation's own transaction).
    expect(
      t.changes.map(({ seq, ...c }) => [seq, c.collection, c.id === a.id ? 'a' : c.id === b.id ? 'b' : 'activity', c.deleted]),
    ).toEqual([
      [1, 'conversation', 'a', undefined],
      [2, 'activity', 'activity', undefined],
      [3, 'conversation', 'b', undefined],
      [4, 'activity', 'activity', undefined],
      [5, 'conversation', 'a', true],
      [6, 'activity', 'activity', undefined],
    ]);
    expect(await t.storage.changesSince(1)).toEqual({ changes: t.changes.slice(1), complete: true, seq: 6 });
  });
});

describe('operations that change nothing', () => {
  it('marks the answers of POST searches as made again when asked for again (never kept for a replay), and no write', async () => {
    const t = await setup();
    const search = await t.fetch(`${BASE}/conversations/search`, jsonPost({ query: 'x' }));
    expect(search.status).toBe(200);
    expect(isRerunnable(search)).toBe(true);
    const relevance = await t.fetch(`${BASE}/qgpt/relevance`, jsonPost({ query: 'debounce', options: { question: false } }));
    expect([relevance.status, isRerunnable(relevance)]).toEqual([200, true]);
    const created = await t.fetch(`${BASE}/conversations/create`, jsonPost({ type: 'COPILOT' }));
    expect([created.status, isRerunnable(created)]).toEqual([200, false]);
    // (And the searches of the generic path, one per kind that has one: materials.test.ts.)
    const genericSearches = GENERIC_KINDS.flatMap((kind) => (kind.ops.search ? [kind.ops.search.name] : []));
    // (And the rest of the hand-written kinds' searches and reads by POST: own-rest.test.ts.)
    const ownRest = [
      'assetsSearchWithFilters',
      'searchAnchors',
      'searchAnnotations',
      'searchMessages',
      'assetSnapshotPost',
      'searchConversationSpecificMessages',
      'conversationSpecificConversationPrepare',
    ];
    expect(
      OPERATIONS.filter((o) => o.readOnly)
        .map((o) => o.name)
        .sort(),
    ).toEqual(
      [
        'searchConversations',
        'assetsDraft',
        'relevance',
        // Finding a tag or website by its text or URL, and their searches (tags-websites.test.ts).
        'tagsExists',
        'searchTags',
        'websitesExists',
        'searchWebsites',
        // (The vision events' search: pattern-engine.test.ts.)
        'workstreamPatternEngineProcessorsVisionEventsSearch',
        'openAiModelsList',
        ...ownRest,
        // Classification, machine learning, tag-based search, the copilot's helpers, the workstream's suggestions, the
        // connector's suggestion (ml-misc.test.ts).
        'convertGenericClassification',
        'personificationTechnicalLanguageGeneration',
        'segmentTechnicalLanguage',
        'tagBasedSearch',
        'hints',
        'personsRelated',
        'reprompt',
        'workstreamSuggestionsRefresh',
        'suggest',
        ...genericSearches,
      ].sort(),
    );
  });
});
