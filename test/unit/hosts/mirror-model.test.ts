// @vitest-environment node
/**
 * The mirror against a sequential model (fast-check): random sequences of writes — conversations
 * and messages; assets (create, rename, a format's new value, a comment, delete); anchors (create,
 * on a conversation or not, delete, associated with conversations and assets from either side and
 * disassociated); persons and workstream summaries, the generic path's kinds (create, a summary
 * listing a person or not, rename, delete, associated with each other and disassociated, by the
 * graph table's operations) — with the upstream going away and coming back and faults on
 * its answers (5xx, an answer lost after the work was done, silence) at random points. Whatever
 * the schedule, once the upstream is back and the outbox drained, the upstream holds exactly what
 * the model says (nothing lost, nothing twice, in order), the local copy holds the same, and no
 * id made locally ever reached the upstream.
 */
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import type { MirrorStatus } from '../../../src/core/mirror-spec.js';
import { createService } from '../../../src/core/service.js';
import { createNodeHost, type NodeHost } from '../../../src/node/host.js';
import { KINDS, RELATIONS, type MaterialKind, type OpRole } from '../../../src/shared/graph.js';
import { SUMMARIZER } from '../../material-seeds.js';
import { startUpstream, type FaultAction, type IndependentPiecesOS } from '../../upstream/pieces-os.js';

const BASE = 'http://localhost:1000';

type Action =
  | { kind: 'create'; seed: boolean }
  | { kind: 'message'; at: number }
  | { kind: 'edit'; at: number; message: number }
  | { kind: 'deleteMessage'; at: number; message: number }
  | { kind: 'delete'; at: number }
  | { kind: 'asset' }
  | { kind: 'rename'; at: number }
  | { kind: 'value'; at: number }
  | { kind: 'comment'; at: number }
  | { kind: 'deleteAsset'; at: number }
  | { kind: 'anchor'; at: number; linked: boolean }
  | { kind: 'deleteAnchor'; at: number }
  | { kind: 'link'; at: number; other: number; asset: boolean; add: boolean; fromAnchor: boolean }
  | { kind: 'person' }
  | { kind: 'summary'; at: number; listing: boolean }
  | { kind: 'renameMaterial'; at: number; summary: boolean }
  | { kind: 'deleteMaterial'; at: number; summary: boolean }
  | { kind: 'relate'; at: number; other: number; summary: boolean; add: boolean }
  | { kind: 'down' }
  | { kind: 'up' }
  | { kind: 'fault'; action: 'status' | 'lost' | 'silent'; path: (typeof FAULTED)[number] };

/** The writes a fault may hit. */
const FAULTED = [
  '/conversations/create',
  '/messages/create',
  '/message/update/value',
  '/assets/create',
  '/format/update/value',
  '/annotations/create',
  '/anchors/create',
  '/persons/create',
  '/workstream_summaries/create',
  // A person's update and its associations.
  '/person/',
] as const;

/** A generic kind's operation path from the graph table, its parameter filled in. */
const opOf = (kind: MaterialKind, role: OpRole, id = '') => {
  const path = KINDS.find((row) => row.kind === kind)!.ops[role]!.path;
  return path.replace(/\{\w+\}/, id);
};
/** The association of a person with another person or a summary (the ones the upstream serves), from the graph table. */
const relationOf = (to: 'person' | 'workstreamSummary', add: boolean, from: string, other: string) => {
  const row = RELATIONS.find((r) => r.from === 'person' && r.to === to)!;
  return (add ? row.associate : row.disassociate).path.replace(`{${row.params[0]}}`, from).replace(`{${row.params[1]}}`, other);
};

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), seed: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('message' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), message: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteMessage' as const), at: fc.nat(), message: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('asset' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rename' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('value' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('comment' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteAsset' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('anchor' as const), at: fc.nat(), linked: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteAnchor' as const), at: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('link' as const),
      at: fc.nat(),
      other: fc.nat(),
      asset: fc.boolean(),
      add: fc.boolean(),
      fromAnchor: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('person' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('summary' as const), at: fc.nat(), listing: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('renameMaterial' as const), at: fc.nat(), summary: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteMaterial' as const), at: fc.nat(), summary: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('relate' as const),
      at: fc.nat(),
      other: fc.nat(),
      summary: fc.boolean(),
      // Mostly associations: a disassociation undoes one.
      add: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('down' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('up' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      action: fc.constantFrom('status' as const, 'lost' as const, 'silent' as const),
      path: fc.constantFrom(...FAULTED),
    }),
  },
);

/**
 * The model: conversations in creation order, each with its messages' texts in order; assets with
 * their name, text and comments; anchors by path (what the client holds: the ids it was given);
 * persons with the persons and summaries each is associated with (both sides list each other),
 * and summaries.
 */
interface Model {
  conversations: Array<{ id: string; name: string; messages: Array<{ id: string; text: string }> }>;
  assets: Array<{ id: string; format: string; name: string; text: string; comments: string[] }>;
  /** Each with the conversations and assets it is associated with (the model's own records). */
  anchors: Array<{ id: string; path: string; conversations: Model['conversations']; assets: Model['assets'] }>;
  persons: Array<{ id: string; name: string; persons: Model['persons']; summaries: Model['summaries'] }>;
  summaries: Array<{ id: string; name: string }>;
}

const ID_LIST = (list: any): string[] => ((list?.iterable ?? []) as Array<{ id: string }>).map((r) => r.id);

/** Persons and summaries as names with the names of what each lists (sorted), from wire Persons and WorkstreamSummaries. */
const materialsOf = (persons: any[], summaries: any[]) => {
  const names = new Map<string, string>([
    ...persons.map((p): [string, string] => [p.id, p.type.basic.name]),
    ...summaries.map((s): [string, string] => [s.id, s.name]),
  ]);
  const named = (list: any) =>
    ID_LIST(list)
      .map((id) => names.get(id) ?? `? ${id}`)
      .sort();
  return {
    persons: persons
      .map((p) => ({ name: p.type.basic.name as string, persons: named(p.persons), summaries: named(p.summaries) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    summaries: summaries.map((s) => ({ name: s.name as string, persons: named(s.persons) })).sort((a, b) => a.name.localeCompare(b.name)),
  };
};

/** Each anchor's path with the names of its conversations and assets (sorted), from wire Anchors and the names of ids. */
const linksOf = (anchors: any[], names: Map<string, string>) =>
  anchors
    .map((a) => ({
      path: a.points.iterable[0].reference.fullpath as string,
      conversations: ((a.conversations?.iterable ?? []) as Array<{ id: string }>).map((c) => names.get(c.id) ?? `? ${c.id}`).sort(),
      assets: ((a.assets?.iterable ?? []) as Array<{ id: string }>).map((c) => names.get(c.id) ?? `? ${c.id}`).sort(),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));

/** The application the assets are made by (a client that did not connect sends its own). */
const APPLICATION = {
  id: 'a5a5a5a5-0000-4000-8000-000000000001',
  name: 'VS_CODE',
  version: '1',
  platform: 'LINUX',
  onboarded: true,
  privacy: 'OPEN',
};

/** Assets as name, text and comments (sorted by name), from wire Assets read with their values. */
const assetsOf = (assets: any[]) =>
  assets
    .map((a) => ({
      name: a.name as string,
      text: a.original.reference.fragment.string.raw as string,
      comments: ((a.annotations?.iterable ?? []) as any[])
        .filter((n) => n.type === 'COMMENT')
        .map((n) => n.text as string)
        .sort(),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

const FAULTS: Record<'status' | 'lost' | 'silent', FaultAction> = {
  status: { status: 503 },
  lost: { drop: 'after-commit' },
  silent: { silent: true },
};

let upstream: IndependentPiecesOS | undefined;
let host: NodeHost | undefined;
afterEach(async () => {
  host?.close();
  await upstream?.stop();
});

async function settle(target: NodeHost, up: IndependentPiecesOS) {
  const deadline = Date.now() + 30_000;
  up.clearFaults();
  await up.start();
  for (;;) {
    await target.service.mirrorPermission({ granted: true });
    const status = (await target.service.mirrorStatus()) as MirrorStatus;
    // Drained, and the local copy has caught up with the upstream's assets (read whole once it is up).
    if (status.state === 'up' && status.outbox.length === 0 && (await sameAssetIds(target, up))) return status;
    if (Date.now() > deadline) throw new Error(`not drained: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function sameAssetIds(target: NodeHost, up: IndependentPiecesOS) {
  const ids = (await target.storage.listAssets()).map((a) => a.record.id).sort();
  return (
    JSON.stringify(ids) ===
    JSON.stringify(
      up
        .snapshot()
        .assets.map((a) => a.id as string)
        .sort(),
    )
  );
}

const REKEYED_CONVERSATION_OF_ANCHOR = [
  { kind: 'asset' },
  { kind: 'create', seed: true },
  { kind: 'fault', action: 'status', path: '/assets/create' },
  { kind: 'down' },
  { kind: 'asset' },
  { kind: 'message', at: 453266589 },
  { kind: 'create', seed: false },
  { kind: 'message', at: 1253659308 },
  { kind: 'link', at: 75496091, other: 1254240784, asset: true, add: true, fromAnchor: false },
  { kind: 'down' },
  { kind: 'link', at: 89234729, other: 2003106245, asset: false, add: true, fromAnchor: false },
  { kind: 'link', at: 720227717, other: 1362930098, asset: false, add: true, fromAnchor: true },
  { kind: 'up' },
  { kind: 'deleteAsset', at: 1668954728 },
  { kind: 'deleteAnchor', at: 1230195517 },
  { kind: 'link', at: 1458862424, other: 594975644, asset: false, add: true, fromAnchor: true },
];

/** Found by a run: the person was made, its answer lost, and it was made again on the replay. */
const LOST_PERSON_CREATE = [{ kind: 'fault', action: 'lost', path: '/persons/create' }, { kind: 'person' }];

/**
 * Found by a run: an association taken while up and not read again before the upstream went away
 * was not here; a person read here and renamed then undid it on the upstream.
 */
const ASSOCIATED_THEN_AWAY = [
  { kind: 'relate', at: 0, other: 0, summary: false, add: true },
  { kind: 'down' },
  { kind: 'renameMaterial', at: 0, summary: false },
];

it('random writes, outages and faults end with the upstream and the local copy equal to the model', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(action, { minLength: 4, maxLength: 22 }), async (actions) => {
      upstream = await startUpstream();
      host = createNodeHost({ sampleAssets: false, mirror: { upstream: upstream.url, timeoutMs: 250 } });
      const h = host;
      const up = upstream;
      // The upstream's own sample assets are there from the start.
      const model: Model = {
        conversations: [],
        assets: up.snapshot().assets.map((a) => ({
          id: a.id,
          format: a.formats.iterable[0].id,
          name: a.name,
          text: a.original.reference.fragment.string.raw,
          comments: [],
        })),
        anchors: [],
        persons: [],
        summaries: [],
      };
      const locals = new Set<string>();
      let counter = 0;
      const post = async (path: string, body?: unknown) => {
        const response = await h.fetch(BASE + path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        // While up, the upstream's own refusal (a 503 fault, the work not done) is the client's answer.
        if (response.status === 503) return null;

        expect(response.status, `${path}: ${response.status}`).toBeLessThan(300);
        const text = await response.text();
        // An asset's delete answers its id as text.
        return text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {};
      };
      // Ids the client was given while the upstream was away are the service's own.
      const note = (id: string) => {
        if (!/-0000-5000-9000-/.test(id)) locals.add(id);
      };
      const makePerson = async () => {
        const name = `p${counter++}`;
        const made = await post(opOf('person', 'create'), { type: { basic: { name } } });
        if (!made) return undefined;
        note(made.id);
        model.persons.push({ id: made.id, name, persons: [], summaries: [] });
        return model.persons.at(-1)!;
      };
      /** A summary, listing `person` where given (who then lists it). */
      const makeSummary = async (person?: Model['persons'][number]) => {
        const name = `s${counter++}`;
        const made = await post(opOf('workstreamSummary', 'create'), {
          name,
          model: SUMMARIZER,
          ...(person ? { persons: { iterable: [{ id: person.id }] } } : {}),
        });
        if (!made) return undefined;
        note(made.id);
        model.summaries.push({ id: made.id, name });
        person?.summaries.push(model.summaries.at(-1)!);
        return model.summaries.at(-1)!;
      };
      await settle(h, up);
      for (const step of actions) {
        const live = model.conversations;
        const pick = <T>(list: T[], at: number) => (list.length ? list[at % list.length] : undefined);
        switch (step.kind) {
          case 'create': {
            const name = `c${counter++}`;
            const seeded = step.seed ? [{ role: 'USER', fragment: { string: { raw: `m${counter++}` } } }] : [];
            const made = await post('/conversations/create', { type: 'COPILOT', name, messages: seeded });
            if (!made) break;
            note(made.id);
            const messages = (made.messages.iterable as Array<{ id: string; reference: { fragment: { string: { raw: string } } } }>).map(
              (m) => {
                note(m.id);
                return { id: m.id, text: m.reference.fragment.string.raw };
              },
            );
            live.push({ id: made.id, name, messages });
            break;
          }
          case 'message': {
            const conversation = pick(live, step.at);
            if (!conversation) break;
            const text = `m${counter++}`;
            const made = await post('/messages/create', {
              role: 'USER',
              fragment: { string: { raw: text } },
              conversation: { id: conversation.id },
            });
            if (!made) break;
            note(made.id);
            conversation.messages.push({ id: made.id, text });
            break;
          }
          case 'edit': {
            const conversation = pick(live, step.at);
            const message = conversation && pick(conversation.messages, step.message);
            if (!message) break;
            const text = `m${counter++}`;
            if (await post('/message/update/value', { id: message.id, fragment: { string: { raw: text } } })) message.text = text;
            break;
          }
          case 'deleteMessage': {
            const conversation = pick(live, step.at);
            const message = conversation && pick(conversation.messages, step.message);
            if (!message) break;
            await post(`/messages/${message.id}/delete`);
            conversation.messages.splice(conversation.messages.indexOf(message), 1);
            break;
          }
          case 'delete': {
            const conversation = pick(live, step.at);
            if (!conversation) break;
            await post(`/conversations/${conversation.id}/delete`);
            live.splice(live.indexOf(conversation), 1);
            for (const anchor of model.anchors) anchor.conversations = anchor.conversations.filter((c) => c !== conversation);
            break;
          }
          case 'asset': {
            const name = `a${counter++}.ts`;
            const text = `const v${counter++} = 0;\n`;
            const made = await post('/assets/create', {
              asset: { application: APPLICATION, format: { fragment: { string: { raw: text } } }, metadata: { name } },
            });
            if (!made) break;
            note(made.id);
            note(made.formats.iterable[0].id);
            model.assets.push({ id: made.id, format: made.formats.iterable[0].id, name, text, comments: [] });
            break;
          }
          case 'rename': {
            const asset = pick(model.assets, step.at);
            if (!asset) break;
            const name = `a${counter++}.ts`;
            if (await post('/asset/update', { id: asset.id, name })) asset.name = name;
            break;
          }
          case 'value': {
            const asset = pick(model.assets, step.at);
            if (!asset) break;
            const text = `const v${counter++} = 1;\n`;
            if (await post('/format/update/value', { id: asset.format, asset: { id: asset.id }, fragment: { string: { raw: text } } }))
              asset.text = text;
            break;
          }
          case 'comment': {
            const asset = pick(model.assets, step.at);
            if (!asset) break;
            const text = `c${counter++}`;
            const made = await post('/annotations/create', { type: 'COMMENT', text, asset: asset.id });
            if (!made) break;
            note(made.id);
            asset.comments.push(text);
            break;
          }
          case 'deleteAsset': {
            const asset = pick(model.assets, step.at);
            if (!asset) break;
            if (!(await post(`/assets/${asset.id}/delete`))) break;
            model.assets.splice(model.assets.indexOf(asset), 1);
            for (const anchor of model.anchors) anchor.assets = anchor.assets.filter((a) => a !== asset);
            break;
          }
          case 'anchor': {
            const conversation = step.linked ? pick(live, step.at) : undefined;
            const path = `/src/f${counter++}.ts`;
            const made = await post('/anchors/create', {
              type: 'FILE',
              fullpath: path,
              ...(conversation ? { conversation: conversation.id } : {}),
            });
            if (!made) break;
            note(made.id);
            model.anchors.push({ id: made.id, path, conversations: conversation ? [conversation] : [], assets: [] });
            break;
          }
          case 'link': {
            // An association (or its undoing), from the anchor's side or the record's; twice is once.
            const record = step.asset ? pick(model.assets, step.other) : pick(live, step.other);
            if (!record) break;
            if (!model.anchors.length) {
              // Something to associate: an anchor of its own first.
              const path = `/src/f${counter++}.ts`;
              const made = await post('/anchors/create', { type: 'FILE', fullpath: path });
              if (!made) break;
              note(made.id);
              model.anchors.push({ id: made.id, path, conversations: [], assets: [] });
            }
            const anchor = pick(model.anchors, step.at)!;
            const [list, kind] = step.asset ? (['assets', 'asset'] as const) : (['conversations', 'conversation'] as const);
            const verb = step.add ? 'associate' : 'disassociate';
            const path = step.fromAnchor
              ? `/anchor/${anchor.id}/${list}/${verb}/${record.id}`
              : `/${kind}/${record.id}/anchors/${verb}/${anchor.id}`;
            if (!(await post(path))) break;
            const linked = (anchor[list] as Array<typeof record>).filter((r) => r !== record);
            (anchor as Record<typeof list, Array<typeof record>>)[list] = step.add ? [...linked, record] : linked;
            break;
          }
          case 'deleteAnchor': {
            const anchor = pick(model.anchors, step.at);
            if (!anchor) break;
            if (!(await post(`/anchors/${anchor.id}/delete`))) break;
            model.anchors.splice(model.anchors.indexOf(anchor), 1);
            break;
          }
          case 'person':
            await makePerson();
            break;
          case 'summary': {
            const person = step.listing ? (pick(model.persons, step.at) ?? (await makePerson())) : undefined;
            if (!step.listing || person) await makeSummary(person);
            break;
          }
          case 'renameMaterial': {
            // As a client does: the record read, sent back whole with its new name.
            const [kind, record] = step.summary
              ? (['workstreamSummary', pick(model.summaries, step.at)] as const)
              : (['person', pick(model.persons, step.at)] as const);
            if (!record) break;
            const read = await h.fetch(BASE + opOf(kind, 'item', record.id));
            expect(read.status, `${kind} ${record.id}`).toBe(200);
            const whole = await read.json();
            const name = `${step.summary ? 's' : 'p'}${counter++}`;
            const renamed = step.summary ? { ...whole, name } : { ...whole, type: { basic: { name } } };
            if (await post(opOf(kind, 'update'), renamed)) record.name = name;
            break;
          }
          case 'deleteMaterial': {
            const [kind, list] = step.summary ? (['workstreamSummary', model.summaries] as const) : (['person', model.persons] as const);
            const record = pick<{ id: string }>(list, step.at);
            if (!record) break;
            if (!(await post(opOf(kind, 'delete', record.id)))) break;
            list.splice(list.indexOf(record as never), 1);
            for (const person of model.persons) {
              person.persons = person.persons.filter((p) => p !== record);
              person.summaries = person.summaries.filter((s) => s !== record);
            }
            break;
          }
          case 'relate': {
            // Something to associate: made first where there is none.
            const person = pick(model.persons, step.at) ?? (await makePerson());
            if (!person) break;
            const other = step.summary
              ? (pick(model.summaries, step.other) ?? (await makeSummary()))
              : (pick(
                  model.persons.filter((p) => p !== person),
                  step.other,
                ) ?? (await makePerson()));
            if (!other) break;
            if (!(await post(relationOf(step.summary ? 'workstreamSummary' : 'person', step.add, person.id, other.id)))) break;
            if (step.summary) {
              const summary = other as Model['summaries'][number];
              person.summaries = [...person.summaries.filter((s) => s !== summary), ...(step.add ? [summary] : [])];
            } else {
              const another = other as Model['persons'][number];
              person.persons = [...person.persons.filter((p) => p !== another), ...(step.add ? [another] : [])];
              another.persons = [...another.persons.filter((p) => p !== person), ...(step.add ? [person] : [])];
            }
            break;
          }
          case 'down':
            await up.stop();
            break;
          case 'up':
            await settle(h, up);
            break;
          case 'fault':
            up.fault({ match: `POST ${step.path}`, action: FAULTS[step.action], times: 1 });
            break;
        }
      }
      const status = await settle(h, up);
      expect(status.setAside).toEqual([]);
      // The upstream holds exactly the model: every conversation once, its messages once, in order.
      const expected = model.conversations
        .map((c) => ({ name: c.name, texts: c.messages.map((m) => m.text) }))
        .sort((a, b) => a.name.localeCompare(b.name));
      const theirs = up
        .snapshot()
        .conversations.map((c) => ({
          name: c.name as string,
          texts: (c.messages as Array<{ fragment: { string: { raw: string } } }>).map((m) => m.fragment.string.raw),
        }))
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(theirs).toEqual(expected);
      const expectedAssets = model.assets
        .map(({ name, text, comments }) => ({ name, text, comments: [...comments].sort() }))
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(assetsOf(up.snapshot().assets)).toEqual(expectedAssets);
      const expectedAnchors = model.anchors.map((a) => a.path).sort();
      const pathsOf = (anchors: any[]) => anchors.map((a) => a.points.iterable[0].reference.fullpath as string).sort();
      expect(pathsOf(up.snapshot().anchors)).toEqual(expectedAnchors);
      const expectedLinks = model.anchors
        .map((a) => ({
          path: a.path,
          conversations: a.conversations.map((c) => c.name).sort(),
          assets: a.assets.map((x) => x.name).sort(),
        }))
        .sort((a, b) => a.path.localeCompare(b.path));
      const namesOf = (conversations: any[], assets: any[]) =>
        new Map<string, string>([...conversations, ...assets].map((r) => [r.id as string, r.name as string]));
      expect(linksOf(up.snapshot().anchors, namesOf(up.snapshot().conversations, up.snapshot().assets))).toEqual(expectedLinks);
      const names = (list: Array<{ name: string }>) => list.map((r) => r.name).sort();
      const expectedMaterials = {
        persons: model.persons
          .map((p) => ({ name: p.name, persons: names(p.persons), summaries: names(p.summaries) }))
          .sort((a, b) => a.name.localeCompare(b.name)),
        summaries: model.summaries
          .map((s) => ({ name: s.name, persons: names(model.persons.filter((p) => p.summaries.includes(s))) }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      };
      expect(materialsOf(up.snapshot().persons, up.snapshot().summaries)).toEqual(expectedMaterials);
      // The local copy holds the same, under the upstream's ids.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const data = await h.service.exportData();
        const ours = data.conversations
          .map((c) => ({ name: c.name as string, texts: c.messages.map((m) => (m.fragment as { string: { raw: string } }).string.raw) }))
          .sort((a, b) => a.name.localeCompare(b.name));
        const ids = data.conversations.map((c) => c.id).sort();
        const local = createService({ storage: h.storage });
        const read = async (path: string) => (await local.handle(new Request(BASE + path))).json();
        try {
          expect(ours).toEqual(expected);
          expect(ids).toEqual(
            up
              .snapshot()
              .conversations.map((c) => c.id as string)
              .sort(),
          );
          const assets = (await read('/assets?transferables=true')).iterable;
          expect(assetsOf(assets)).toEqual(expectedAssets);
          expect(assets.map((a: { id: string }) => a.id).sort()).toEqual(
            up
              .snapshot()
              .assets.map((a) => a.id as string)
              .sort(),
          );
          const anchors = (await read('/anchors')).iterable;
          expect(pathsOf(anchors)).toEqual(expectedAnchors);
          expect(linksOf(anchors, namesOf(data.conversations, assets))).toEqual(expectedLinks);
          const persons = data.materials.person ?? [];
          const summaries = data.materials.workstreamSummary ?? [];
          expect(materialsOf(persons, summaries)).toEqual(expectedMaterials);
          const idsOf = (list: any[]) => list.map((r) => r.id as string).sort();
          expect(idsOf(persons)).toEqual(idsOf(up.snapshot().persons));
          expect(idsOf(summaries)).toEqual(idsOf(up.snapshot().summaries));
          // The other side: each asset lists the anchors that list it.
          const anchorsOfAsset = new Map<string, string[]>();
          for (const a of anchors)
            for (const { id } of a.assets?.iterable ?? []) anchorsOfAsset.set(id, [...(anchorsOfAsset.get(id) ?? []), a.id]);
          for (const asset of assets)
            expect(((asset.anchors?.iterable ?? []) as Array<{ id: string }>).map((a) => a.id).sort()).toEqual(
              (anchorsOfAsset.get(asset.id) ?? []).sort(),
            );
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      // No id the service made ever reached the upstream.
      const sent = JSON.stringify(up.log);
      for (const id of locals) expect(sent).not.toContain(id);
      host.close();
      host = undefined;
      await up.stop();
      upstream = undefined;
    }),
    {
      numRuns: Number(process.env.MIRROR_RUNS ?? 25),
      endOnFailure: true,
      // Found by a run: an anchor linked to a conversation created while away, deleted once the
      // conversation had the upstream's id, read the conversation again by its local id.
      examples: [[REKEYED_CONVERSATION_OF_ANCHOR as Action[]], [LOST_PERSON_CREATE as Action[]], [ASSOCIATED_THEN_AWAY as Action[]]],
      // MIRROR_SEED and MIRROR_PATH replay a failure fast-check reported.
      ...(process.env.MIRROR_SEED ? { seed: Number(process.env.MIRROR_SEED), path: process.env.MIRROR_PATH } : {}),
    },
  );
}, 600_000);
