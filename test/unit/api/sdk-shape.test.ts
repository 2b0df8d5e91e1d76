/** The strict response checker: read from the SDK's own files, it agrees with the SDK and refuses what the SDK would not. */
import { readdirSync } from 'node:fs';
import * as sdk from '@pieces.app/pieces-os-client';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/core/routes.js';
import { checkBody, checkFrame, checkResponse, isInstalled, RETURNS } from '../support/response-check.js';
import {
  check,
  EXTRA_FIELDS,
  isIsoDateTime,
  reachable,
  SDK_MODELS,
  SDK_VERSION,
  sdkHas,
  shape,
  type FieldType,
} from '../support/sdk-shape.js';

const codec = (name: string) => {
  const from = (sdk as Record<string, unknown>)[`${name}FromJSON`] as (json: unknown) => unknown;
  const to = (sdk as Record<string, unknown>)[`${name}ToJSON`] as (value: unknown) => unknown;
  return { from, to };
};

/** Wire JSON through the SDK's own decoder and encoder, as a client would send it back. */
const roundTrip = (name: string, wire: unknown) => JSON.parse(JSON.stringify(codec(name).to(codec(name).from(wire))));

/**
 * A wire sample of a model with every required field and, up to `depth`
 * nested levels, every optional one: first enum value, a date, numbers, …
 */
function sample(name: string, depth = 2): unknown {
  const found = shape(name);
  if (found.kind === 'enum') return [...found.values][0];
  const value: Record<string, unknown> = {};
  for (const f of found.fields.values()) {
    if (f.required || depth > 0) value[f.key] = sampleOf(f.type, f.required ? depth : depth - 1);
  }
  return value;
}

function sampleOf(type: FieldType, depth: number): unknown {
  switch (type.kind) {
    case 'string':
      return 'text';
    case 'number':
      return 3;
    case 'boolean':
      return true;
    case 'date':
      return '2024-02-29T12:34:56.789Z';
    case 'ref':
      return sample(type.name, depth);
    case 'array':
      return [sampleOf(type.of, depth)];
    case 'map':
      return { key: sampleOf(type.of, depth) };
  }
}

const conversationWire = () => ({
  id: crypto.randomUUID(),
  name: 'Hello',
  created: { value: '2024-01-02T03:04:05.006Z' },
  updated: { value: '2024-01-02T03:04:05.006Z', readable: 'just now' },
  type: 'COPILOT',
  messages: {
    iterable: [
      {
        id: 'm1',
        reference: {
          id: 'm1',
          created: { value: '2024-01-02T03:04:05.006Z' },
          updated: { value: '2024-01-02T03:04:05.006Z' },
          role: 'USER',
          conversation: { id: 'c1' },
          fragment: { string: { raw: 'hi' } },
        },
      },
    ],
    indices: { m1: 0 },
  },
});

describe(`the checker reads the models of the SDK ${SDK_VERSION}`, () => {
  const names = readdirSync(SDK_MODELS)
    .filter((file) => file.endsWith('.d.ts') && file !== 'index.d.ts')
    .map((file) => file.slice(0, -'.d.ts'.length));

  it('understands every model and enum the SDK ships, and finds their wire keys where the SDK encodes them', () => {
    expect(names.length).toBeGreaterThan(500);
    let models = 0;
    for (const name of names) {
      const found = shape(name);
      if (found.kind === 'enum') {
        expect((sdk as Record<string, unknown>)[name]).toBeTypeOf('object');
        expect(new Set(Object.values((sdk as unknown as Record<string, object>)[name]!))).toEqual(found.values);
        continue;
      }
      models++;
      // The SDK's encoder writes every key of the model, present or not.
      let encoded: object;
      try {
        encoded = codec(name).to({}) as object;
      } catch {
        continue; // an encoder that dereferences a required field (e.g. a Date); the round trips below cover it
      }
      expect(new Set(Object.keys(encoded)), name).toEqual(new Set(found.fields.keys()));
    }
    expect(models).toBeGreaterThan(300);
  });

  it('accepts what the SDK decodes and encodes back, for a full sample of every model', () => {
    for (const name of names) {
      if (shape(name).kind !== 'model') continue;
      const wire = sample(name);
      const encoded = roundTrip(name, wire);
      expect(check(name, encoded), name).toEqual([]);
      expect(encoded, name).toEqual(wire); // the wire keys and types are the SDK's own
    }
  });

  it('accepts the SDK encoding of a conversation built as a client holds it', () => {
    const conversation = sdk.ConversationFromJSON(conversationWire());
    conversation.favorited = false;
    conversation.application = { id: 'a', name: 'VS_CODE', version: '1', platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
    conversation.annotations = { iterable: [{ id: 'n1' }] };
    const json = JSON.parse(JSON.stringify(sdk.ConversationToJSON(conversation)));
    expect(check('Conversation', json)).toEqual([]);
  });

  it('knows snake_case wire keys and the documented extra fields', () => {
    const event = shape('SeededTrackedInteractionEvent');
    expect(event.kind === 'model' && [...event.fields.keys()]).toContain('identifier_description_pair');
    expect(EXTRA_FIELDS).toEqual({ Application: ['engagement'], Session: ['engagement'] });
  });

  it('throws for a model the SDK does not ship', () => {
    expect(() => shape('NoSuchModel')).toThrow(/no model NoSuchModel/);
    expect(sdkHas('Conversation')).toBe(true);
    expect(sdkHas('TrackedInteractionEvent')).toBe(false); // deprecated: written by hand from the contract
  });
});

describe('checkFrame (every frame every served socket delivers in a unit test)', () => {
  const url = (path: string) => new URL(`ws://localhost:1000${path}`);
  const os = crypto.randomUUID();
  it('passes the frames each socket should send', () => {
    expect(checkFrame(url('/.well-known/stream/health'), `ok:${os}`)).toEqual([]);
    expect(checkFrame(url('/user/stream'), '')).toEqual([]);
    expect(checkFrame(url('/user/stream'), JSON.stringify({ id: os, aesthetics: { theme: { dark: false }, font: { size: 1 } } }))).toEqual(
      [],
    );
    expect(checkFrame(url('/anchors/stream/identifiers'), '{"iterable":[]}')).toEqual([]);
    expect(checkFrame(url(`/model/${os}/download/progress`), '{"status":"IN-PROGRESS","percentage":12.5}')).toEqual([]);
    expect(checkFrame(url('/qgpt/stream'), JSON.stringify({ conversation: os, status: 'COMPLETED' }))).toEqual([]);
  });
  it('fails the frames clients break on', () => {
    expect(checkFrame(url('/.well-known/stream/health'), 'ok')).toMatchObject([{ message: 'expected the text ok:<os id>, got "ok"' }]);
    expect(checkFrame(url('/user/stream'), JSON.stringify({ user: { id: os, aesthetics: {} } })).map((v) => v.message)).toContain(
      'unknown key: UserProfile has no user',
    );
    const scored = { conversation: os, status: 'IN-PROGRESS', relevance: { relevant: { iterable: [{ id: os, score: 3 }] } } };
    expect(checkFrame(url('/qgpt/stream'), JSON.stringify(scored))).toEqual([
      { path: '$.relevance.relevant.iterable[0].score', message: 'unknown key: RelevantQGPTSeed has no score' },
    ]);
    expect(checkFrame(url('/qgpt/stream'), JSON.stringify({ conversation: os, status: 'STARTED' }))[0]!.message).toMatch(
      /is not a QGPTStreamEnum/,
    );
    expect(checkFrame(url(`/model/${os}/download/progress`), '{"status":"DONE"}')[0]!.path).toBe('$.status');
    expect(checkFrame(url('/models/stream/identifiers'), 'not json')[0]!.message).toMatch(/not JSON/);
  });
});

describe('check', () => {
  it('accepts a conversation as the contract shapes it', () => {
    expect(check('Conversation', conversationWire())).toEqual([]);
  });

  it('reports a missing required field, nested, with its path', () => {
    const body = conversationWire();
    delete (body.messages.iterable[0]!.reference as Partial<(typeof body.messages.iterable)[0]['reference']>).role;
    delete (body as Partial<typeof body>).type;
    expect(check('Conversation', body)).toEqual([
      { path: '$.messages.iterable[0].reference.role', message: 'missing required field of FlattenedConversationMessage' },
      { path: '$.type', message: 'missing required field of Conversation' },
    ]);
  });

  it('reports an enum value that is not allowed, listing the allowed ones', () => {
    const body = { ...conversationWire(), type: 'CHAT' };
    expect(check('Conversation', body)).toEqual([
      { path: '$.type', message: 'the string "CHAT" is not a ConversationTypeEnum (allowed: UNKNOWN, COPILOT)' },
    ]);
  });

  it('reports a wrong nested type: a string for a reference, a number for a string, an object for an array', () => {
    const body = conversationWire() as Record<string, unknown>;
    body.annotations = { iterable: ['not-a-reference'] };
    body.name = 5;
    body.websites = { iterable: {} };
    expect(check('Conversation', body)).toEqual([
      { path: '$.name', message: 'expected a string, got number 5' },
      { path: '$.annotations.iterable[0]', message: 'expected a ReferencedAnnotation object, got the string "not-a-reference"' },
      { path: '$.websites.iterable', message: 'expected an array, got object {}' },
    ]);
  });

  it('reports an unknown key, at any depth, but allows engagement on Application and Session', () => {
    const body = conversationWire() as Record<string, unknown>;
    body.engagement = {};
    (body.created as Record<string, unknown>).millis = 1;
    expect(check('Conversation', body)).toEqual([
      { path: '$.engagement', message: 'unknown key: Conversation has no engagement' },
      { path: '$.created.millis', message: 'unknown key: GroupedTimestamp has no millis' },
    ]);
    const application = {
      id: 'a',
      name: 'VS_CODE',
      version: '1',
      platform: 'LINUX',
      onboarded: true,
      privacy: 'OPEN',
      engagement: { interactions: 1 },
    };
    expect(check('Application', application)).toEqual([]);
    expect(check('Session', { id: 's', opened: { value: '2024-01-01T00:00:00.000Z' }, engagement: {} })).toEqual([]);
  });

  it('refuses dates that are not ISO-8601 date-times, and null where the SDK has no null', () => {
    expect(check('GroupedTimestamp', { value: 1704067200000 })).toEqual([
      { path: '$.value', message: 'expected an ISO-8601 date-time string, got number 1704067200000' },
    ]);
    expect(check('GroupedTimestamp', { value: 'yesterday' })).toHaveLength(1);
    expect(check('GroupedTimestamp', { value: '2024-01-01T00:00:00.000Z', readable: null })).toEqual([
      { path: '$.readable', message: 'null is not a value of GroupedTimestamp.readable (omit the key instead)' },
    ]);
    expect(['2024-01-01T00:00:00.000Z', '2024-02-29T23:59:59Z', '2024-01-01T00:00+02:00'].every(isIsoDateTime)).toBe(true);
    expect(
      ['2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-01-01', '2024-01-01T24:00:00Z', 'Mon, 01 Jan 2024'].some(isIsoDateTime),
    ).toBe(false);
  });

  it('checks maps and arrays of numbers (indices, shortcuts)', () => {
    const body = conversationWire();
    (body.messages.indices as Record<string, unknown>).m1 = '0';
    expect(check('Conversation', body)).toEqual([{ path: '$.messages.indices["m1"]', message: 'expected a number, got the string "0"' }]);
    expect(check('TrackedKeyboardEvent', { description: 'Copy', shortcut: [17, 'C'] })).toEqual([
      { path: '$.shortcut[1]', message: 'expected a number, got the string "C"' },
    ]);
  });
});

describe('every response of the route table is checked', () => {
  it('lists a response model for every operation, and each model exists', () => {
    expect(Object.keys(RETURNS).sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    for (const returns of Object.values(RETURNS)) {
      const name = typeof returns === 'function' ? returns(new URL('http://localhost:1000/')) : returns;
      if (typeof name === 'string') expect(reachable(name).size).toBeGreaterThan(0);
    }
  });

  it('wraps every handler of the route table (setup.ts installs it for every unit test)', () => {
    expect(isInstalled()).toBe(true);
  });

  it('fails a response that drifts from its model, and an empty-body operation that sends one', async () => {
    const url = new URL('http://localhost:1000/conversations');
    const drifted = Response.json({ iterable: [{ ...conversationWire(), type: 'CHAT' }] });
    expect(await checkResponse('conversationsSnapshot', url, drifted)).toEqual([
      { path: '$.iterable[0].type', message: 'the string "CHAT" is not a ConversationTypeEnum (allowed: UNKNOWN, COPILOT)' },
    ]);
    expect(await drifted.json()).toHaveProperty('iterable'); // the response itself stays unread
    expect(await checkResponse('conversationsDeleteSpecificConversation', url, new Response('{}'))).toHaveLength(1);
    expect(
      await checkResponse('conversationsSnapshot', url, new Response('{"iterable":[]}', { headers: { 'Content-Type': 'text/plain' } })),
    ).toHaveLength(1);
  });

  it('checks each server-sent event of the copilot socket as a QGPTStreamOutput', () => {
    const url = new URL('http://localhost:1000/qgpt/stream');
    const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
    const good =
      frame({ request: 'r', conversation: 'c', status: 'INITIALIZED' }) + frame({ request: 'r', conversation: 'c', status: 'COMPLETED' });
    expect(checkBody('qgptStream', url, 'text/event-stream; charset=utf-8', good)).toEqual([]);
    expect(checkBody('qgptStream', url, 'text/event-stream', good + frame({ request: 'r', conversation: 'c', status: 'DONE' }))).toEqual([
      {
        path: '$[frame 2].status',
        message:
          'the string "DONE" is not a QGPTStreamEnum (allowed: UNKNOWN, CANCELED, INITIALIZED, IN-PROGRESS, COMPLETED, FAILED, STOPPED, RESET)',
      },
    ]);
  });
});
