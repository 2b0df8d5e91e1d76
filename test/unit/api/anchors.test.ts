/**
 * AnchorsApi and AnchorApi (anchors: created on their own or with a
 * conversation, the same records either way, kept across the schema upgrade
 * from version 5), RangesApi and RangeApi (none to start with), and their
 * identifier streams, whose first frame comes at once even when empty.
 */
import { AnchorTypeEnum, instanceOfAnchor, PlatformEnum } from '@pieces.app/pieces-os-client';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { UPGRADES, type PiecesDB } from '../../../src/storage/schema.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';
import { sockets, until } from '../support/sockets.js';

const ids = (frame: string, key: string) =>
  (JSON.parse(frame) as { iterable: Array<Record<string, { id: string }>> }).iterable.map((i) => i[key]!.id);

describe('anchors', () => {
  it('creates an anchor with its point; reads it by id and in the snapshot; the stream sends its snapshot at once, then the change', async () => {
    const t = await setup();
    const stream = sockets(t).open('ws://localhost:1000/anchors/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the (empty) snapshot');
    expect(JSON.parse(stream.frames[0]!)).toEqual({ iterable: [] });
    const anchor = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/src/app.ts', name: 'app.ts', platform: PlatformEnum.Linux, watch: true },
    });
    expect(instanceOfAnchor(anchor)).toBe(true);
    expect([anchor.type, anchor.name, anchor.watch]).toEqual(['FILE', 'app.ts', true]);
    const point = anchor.points.iterable[0]!.reference!;
    expect([point.fullpath, point.platform, point.anchor.id]).toEqual(['/src/app.ts', 'LINUX', anchor.id]);
    expect(await t.anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id })).toEqual(anchor);
    expect((await t.anchors.anchorsSnapshot({})).iterable.map((a) => a.id)).toEqual([anchor.id]);
    await until(() => stream.frames.length === 2, 'the change');
    expect(JSON.parse(stream.frames[1]!)).toEqual({ iterable: [{ anchor: { id: anchor.id } }] });
    await t.anchors.anchorsDeleteSpecificAnchor({ anchor: anchor.id });
    await until(() => stream.frames.length === 3, 'the delete');
    expect(JSON.parse(stream.frames[2]!)).toEqual({ iterable: [{ anchor: { id: anchor.id }, deleted: true }] });
    expect((await t.fetch(`${BASE}/anchor/${anchor.id}`)).status).toBe(404);
  });

  it('anchors a conversation was created with are the same records GET /anchor answers; deleting the conversation keeps them', async () => {
    const t = await setup();
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: {
        type: 'COPILOT',
        anchors: [
          { type: AnchorTypeEnum.Directory, fullpath: '/repo' },
          { type: AnchorTypeEnum.File, fullpath: '/repo/a.py' },
        ],
      },
    });
    const held = conversation.anchors!.iterable.map((item) => item.reference!);
    for (const anchor of held) {
      const read = await t.anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id });
      expect(read).toEqual({ ...anchor, conversations: { iterable: [{ id: conversation.id }], indices: { [conversation.id]: 0 } } });
    }
    expect((await t.anchors.anchorsSnapshot({})).iterable.map((a) => a.id)).toEqual(held.map((a) => a.id));
    expect(ids(await waitFirst(t), 'anchor')).toEqual(held.map((a) => a.id));
    await t.conversations.conversationsDeleteSpecificConversation({ conversation: conversation.id });
    const kept = await t.anchor.anchorSpecificAnchorSnapshot({ anchor: held[0]!.id });
    expect(kept.conversations).toBeUndefined();
    expect(kept.points).toEqual(held[0]!.points);
  });

  it('an anchor created for a conversation is listed by it, and no longer once the anchor is deleted', async () => {
    const t = await setup();
    const conversation = await t.conversations.conversationsCreateSpecificConversation({
      seededConversation: { type: 'COPILOT', name: 'c' },
    });
    const anchor = await t.anchors.anchorsCreateNewAnchor({
      seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/x.rs', conversation: conversation.id },
    });
    expect(anchor.conversations).toEqual({ iterable: [{ id: conversation.id }], indices: { [conversation.id]: 0 } });
    const listed = await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id });
    expect(listed.anchors!.iterable.map((a) => [a.id, a.reference?.points.iterable[0]?.reference?.fullpath])).toEqual([
      [anchor.id, '/x.rs'],
    ]);
    expect(listed.updated.value.getTime()).toBeGreaterThanOrEqual(conversation.updated.value.getTime());
    await t.anchors.anchorsDeleteSpecificAnchor({ anchor: anchor.id });
    expect((await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id })).anchors).toBeUndefined();
  });

  it('refuses bad input with a 4xx naming the problem, and changes nothing', async () => {
    const t = await setup();
    const conversation = await t.conversations.conversationsCreateSpecificConversation({ seededConversation: { type: 'COPILOT' } });
    const before = await dump(t.databaseName);
    const unknown = crypto.randomUUID();
    const cases: Array<[string, RequestInit, number, string | RegExp]> = [
      ['/anchors/create', { method: 'POST' }, 400, /The request body is required: send a SeededAnchor/],
      ['/anchors/create', jsonPost({ fullpath: '/a' }), 400, 'seededAnchor.type is required.'],
      ['/anchors/create', jsonPost({ type: 'FILE' }), 400, 'seededAnchor.fullpath is required.'],
      ['/anchors/create', jsonPost({ type: 'SOCKET', fullpath: '/a' }), 400, /seededAnchor\.type must be one of UNKNOWN, FILE, DIRECTORY/],
      [
        '/anchors/create',
        jsonPost({ type: 'FILE', fullpath: '/a', colour: 'red' }),
        400,
        /seededAnchor\.colour is not a field of SeededAnchor/,
      ],
      [
        '/anchors/create',
        jsonPost({ type: 'FILE', fullpath: '/a', conversation: 'nope' }),
        400,
        /seededAnchor\.conversation must be a UUID/,
      ],
      [
        '/anchors/create',
        jsonPost({ type: 'FILE', fullpath: '/a', conversation: unknown }),
        404,
        `No conversation with id ${unknown} (seededAnchor.conversation).`,
      ],
      [
        '/anchors/create',
        jsonPost({ type: 'FILE', fullpath: '/a', asset: unknown }),
        404,
        `No asset with id ${unknown} (seededAnchor.asset).`,
      ],
      [
        '/anchors/create?transferables=maybe',
        jsonPost({ type: 'FILE', fullpath: '/a' }),
        400,
        /transferables query parameter must be true or false/,
      ],
      [`/anchor/${unknown}`, {}, 404, `No anchor with id ${unknown}.`],
      ['/anchor/not-an-id', {}, 400, /The anchor id must be a UUID/],
      [`/anchors/${unknown}/delete`, { method: 'POST' }, 404, `No anchor with id ${unknown}.`],
      [`/anchor/${unknown}/rename`, { method: 'POST' }, 404, `No anchor with id ${unknown}.`],
      ['/anchors/stream/identifiers', {}, 426, /is a WebSocket/],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await t.fetch(`${BASE}${path}`, init);
      expect(response.status, path).toBe(status);
      const text = await response.text();
      if (typeof message === 'string') expect(text, path).toBe(message);
      else expect(text, path).toMatch(message);
    }
    expect(await dump(t.databaseName)).toBe(before);
    expect((await t.conversation.conversationGetSpecificConversation({ conversation: conversation.id })).anchors).toBeUndefined();
  });

  it('are part of the data: exported, seeded, and gone after a reset', async () => {
    const t = await setup();
    const anchor = await t.anchors.anchorsCreateNewAnchor({ seededAnchor: { type: AnchorTypeEnum.File, fullpath: '/kept.go' } });
    const data = await t.service.exportData();
    expect(data.anchors.map((a) => a.id)).toEqual([anchor.id]);
    await t.service.reset();
    expect((await t.anchors.anchorsSnapshot({})).iterable).toEqual([]);
    await t.service.seed({ anchors: data.anchors });
    expect(await t.anchor.anchorSpecificAnchorSnapshot({ anchor: anchor.id })).toEqual(anchor);
    await expect(t.service.seed({ anchors: [{ type: 'FILE' } as never] })).rejects.toThrow('data.anchors[0].points is required.');
  });
});

/** The first frame of the anchors stream of `t` (a socket just opened). */
async function waitFirst(t: Awaited<ReturnType<typeof setup>>): Promise<string> {
  const s = sockets(t).open('ws://localhost:1000/anchors/stream/identifiers');
  await until(() => s.frames.length === 1, 'the snapshot');
  return s.frames[0]!;
}

describe('ranges', () => {
  it("the stream sends the empty snapshot at once; GET /ranges is empty; GET /range/{id} is a 404 naming the range (ranges are the generic path's: materials.test.ts)", async () => {
    const t = await setup();
    const stream = sockets(t).open('ws://localhost:1000/ranges/stream/identifiers');
    await until(() => stream.frames.length === 1, 'the snapshot');
    expect(JSON.parse(stream.frames[0]!)).toEqual({ iterable: [] });
    expect(await t.ranges.rangesSnapshot()).toEqual({ iterable: [] });
    const id = crypto.randomUUID();
    const response = await t.fetch(`${BASE}/range/${id}`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe(`No range with id ${id}.`);
  });
});

describe('the upgrade to schema version 6', () => {
  it('copies the anchors stored inside conversations out as records of their own, each listing its conversations, with nothing else changed', async () => {
    const name = `anchors-upgrade-${Date.now()}`;
    const v5 = await openDB<PiecesDB>(name, 5, {
      upgrade: (db, old, _new, tx) => {
        for (let step = old; step < 5; step++) UPGRADES[step]!(db, tx as never);
      },
    });
    const stamp = { value: '2026-01-01T00:00:00.000Z' };
    const anchor = (id: string, fullpath: string) => ({
      id,
      type: 'FILE',
      created: stamp,
      updated: stamp,
      points: {
        iterable: [
          { id: `${id.slice(0, -1)}f`, reference: { id: `${id.slice(0, -1)}f`, fullpath, created: stamp, updated: stamp, anchor: { id } } },
        ],
      },
    });
    const shared = anchor('aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaa0', '/shared.ts');
    const own = anchor('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbb0', '/own.ts');
    const conversation = (id: string, anchors: object[]) => ({
      id,
      seq: 0,
      messageIds: [],
      json: JSON.stringify({
        id,
        type: 'COPILOT',
        created: stamp,
        updated: stamp,
        anchors: { iterable: anchors.map((a) => ({ id: (a as { id: string }).id, reference: a })) },
      }),
    });
    const first = '11111111-1111-4111-8111-111111111111';
    const second = '22222222-2222-4222-8222-222222222222';
    await v5.put('conversations', { ...conversation(first, [shared, own]), seq: 1 });
    await v5.put('conversations', { ...conversation(second, [shared]), seq: 2 });
    await v5.put('meta', true, 'seeded');
    v5.close();
    const before = JSON.parse(await dump(name));

    const t = await setup({ databaseName: name });
    const after = JSON.parse(await dump(name));
    for (const store of ['conversations', 'messages', 'assets', 'applications', 'changes'])
      expect(after[store], store).toEqual(before[store]);
    expect(await t.anchor.anchorSpecificAnchorSnapshot({ anchor: own.id })).toMatchObject({
      id: own.id,
      conversations: { iterable: [{ id: first }] },
    });
    const read = await (await t.fetch(`${BASE}/anchor/${shared.id}`)).json();
    expect(read).toEqual({ ...shared, conversations: { iterable: [{ id: first }, { id: second }] } });
    expect((await t.anchors.anchorsSnapshot({})).iterable.map((a) => a.id).sort()).toEqual([shared.id, own.id].sort());
    // The conversations read as before; deleting one unlists it from the anchors it held.
    expect(
      (await t.conversation.conversationGetSpecificConversation({ conversation: second })).anchors!.iterable[0]!.reference!.points
        .iterable[0]!.reference!.fullpath,
    ).toBe('/shared.ts');
    await t.conversations.conversationsDeleteSpecificConversation({ conversation: first });
    expect((await t.anchor.anchorSpecificAnchorSnapshot({ anchor: shared.id })).conversations).toEqual({
      iterable: [{ id: second }],
      indices: { [second]: 0 },
    });
  });
});
