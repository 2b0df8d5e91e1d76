/**
 * Every operation that reads a request body, posted the same bodies (valid,
 * non-ASCII, malformed, not UTF-8, not JSON, the wrong shape, a reserved key,
 * one byte over the limit) from a page: the answers, with ids and times
 * replaced by placeholders, must equal __snapshots__/bodies.json, one file for
 * every engine, so all engines give the same answers; and a body answered 4xx
 * changes nothing in the store, in any engine.
 */
import { describe, expect, inject, it } from 'vitest';
import { OPERATIONS } from '../../src/core/routes.js';
import { HOST_CANNOT } from '../../src/core/handlers/host-cannot.js';
import { MAX_BODY_BYTES } from '../../src/core/http.js';
import { APP, BODILESS, GENERIC_STAND_INS, MODEL, VALID } from '../post-bodies.js';
import { engine, launch, type BrowserContext } from './engine.js';
import { openDemo } from './pages.js';

/** The operations posted a body one byte over the limit: an object, a string, a model's, an association's, the generic path's. */
const OVER_THE_LIMIT = new Set([
  'applicationsRegister',
  'applicationsSessionClose',
  'conversationsCreateSpecificConversation',
  'assetsCreateNewAsset',
  'modelScoresIncrement',
  'personsCreateNewPerson',
  'question',
]);

type Body = { text: string } | { bytes: number[] } | { repeat: number };
interface Case {
  operation: string;
  path: string;
  label: string;
  contentType: string;
  body: Body;
}

function cases(): Case[] {
  const list: Case[] = [];
  for (const [operation, valid] of Object.entries(VALID)) {
    // {application}: the application the first body registers (the connector's operations name it in their path).
    const path = OPERATIONS.find((o) => o.name === operation)!
      .path.replace('{model}', MODEL)
      .replace('{application}', APP.id);
    const json = 'application/json';
    const add = (label: string, body: Body, contentType = json) => list.push({ operation, path, label, contentType, body });
    add('valid', { text: JSON.stringify(valid) });
    add('valid, application/vnd.api+json; charset=utf-8', { text: JSON.stringify(valid) }, 'application/vnd.api+json; charset=utf-8');
    add('malformed JSON', { text: '{nope' });
    add('not UTF-8', { bytes: [0x7b, 0xff, 0xfe, 0x7d] });
    add('text/plain', { text: JSON.stringify(valid) }, 'text/plain');
    add('an array', { text: '[]' });
    add('a reserved key', { text: '{"__proto__":{"polluted":true}}' });
    add('nested too deep', { text: '['.repeat(100) + ']'.repeat(100) });
    // 16 MiB through the page and the worker takes half a second: a few operations, one per kind of
    // body, show the limit holds on the way; test/unit/api/body-limit.test.ts checks every operation.
    if (OVER_THE_LIMIT.has(operation)) add('one byte over the limit', { repeat: MAX_BODY_BYTES + 1 });
    // An empty register registers the browser itself: checked per engine below.
    if (operation !== 'applicationsRegister') add('empty', { text: '' });
  }
  return list;
}

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

/** Posts every case in order from the page; answers in the same order. */
const post = (context: BrowserContext, list: Case[]) =>
  openDemo(context).then((page) =>
    page.evaluate(async (all) => {
      const base = 'http://localhost:1000';
      const session = ((await (await fetch(`${base}/applications/session/open`, { method: 'POST' })).json()) as { id: string }).id;
      // A conversation with one message, for the operations that name them.
      const made = (await (
        await fetch(`${base}/conversations/create`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'COPILOT', messages: [{ role: 'USER', fragment: { string: { raw: 'first' } } }] }),
        })
      ).json()) as { id: string; messages: { iterable: Array<{ id: string }> } };
      // A sample asset (ids fixed), its format and its DESCRIPTION annotation, for the asset operations.
      const asset = ((await (await fetch(`${base}/assets/identifiers`)).json()) as { iterable: Array<{ id: string }> }).iterable[0]!.id;
      const whole = (await (await fetch(`${base}/asset/${asset}`)).json()) as {
        original: { id: string };
        annotations: { iterable: Array<{ id: string }> };
      };
      // A person, for the generic path's operations that name one.
      const person = (
        (await (
          await fetch(`${base}/persons/create`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ type: { basic: { name: 'first' } } }),
          })
        ).json()) as { id: string }
      ).id;
      // Records of other kinds, for the operations that name one: a tag, a website, an activity, an anchor.
      const create = async (path: string, body: unknown) =>
        (
          (await (
            await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
          ).json()) as { id: string }
        ).id;
      const tag = await create('/tags/create', { text: 'first' });
      const website = await create('/websites/create', { url: 'https://first.test/', name: 'first' });
      const app = { id: crypto.randomUUID(), name: 'VS_CODE', version: '1.2.3', platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
      const activity = await create('/activities/create', { event: { interaction: { description: 'first' } }, application: app });
      const anchor = await create('/anchors/create', { type: 'FILE', fullpath: '/src/first.ts' });
      // The local user, for the identity's operations that name it.
      const user = ((await (await fetch(`${base}/user`)).json()) as { user: { id: string } }).user.id;
      const fill = (text: string) =>
        text
          .replaceAll('{tag}', tag)
          .replaceAll('{website}', website)
          .replaceAll('{user}', user)
          .replaceAll('{activity}', activity)
          .replaceAll('{anchor}', anchor)
          .replaceAll('{person}', person)
          .replaceAll('{session}', session)
          .replaceAll('{conversation}', made.id)
          .replaceAll('{message}', made.messages.iterable[0]!.id)
          .replaceAll('{asset}', asset)
          .replaceAll('{format}', whole.original.id)
          .replaceAll('{annotation}', whole.annotations.iterable[0]!.id)
          .replaceAll('"{wholeAsset}"', JSON.stringify(whole));
      const answers: Answer[] = [];
      /** One connection for every dump, closed (and opened again at the next) if the worker asks to upgrade or delete the database. */
      let connection: Promise<IDBDatabase> | undefined;
      /** Every record of the store (not the caches derived from them: kept snapshots and search index). */
      const dump = async () => {
        connection ??= new Promise<IDBDatabase>((resolve, reject) => {
          const request = indexedDB.open('pieces-os-worker');
          request.onsuccess = () => {
            request.result.onversionchange = () => {
              request.result.close();
              connection = undefined;
            };
            resolve(request.result);
          };
          request.onerror = () => reject(request.error);
        });
        const db = await connection;
        const names = [...db.objectStoreNames].filter((name) => name !== 'snapshots' && name !== 'search');
        const tx = db.transaction(names);
        const rows = await Promise.all(
          names.map(
            (name) =>
              new Promise<unknown>((resolve, reject) => {
                const request = tx.objectStore(name).getAll();
                request.onsuccess = () => resolve(request.result);
                request.onerror = () => reject(request.error);
              }),
          ),
        );
        return JSON.stringify(rows);
      };
      /** The cases answered 4xx that changed the store anyway (none may). */
      const changedByRejected: string[] = [];
      const big = new Map<number, Blob>();
      /** The store as the last case answered 4xx left it (unchanged by it: checked), for the next case's "before". */
      let kept: string | undefined;
      for (const c of all) {
        const before = kept ?? (await dump());
        let body: BodyInit;
        if ('text' in c.body) body = fill(c.body.text);
        else if ('bytes' in c.body) body = new Uint8Array(c.body.bytes);
        else {
          const size = c.body.repeat;
          if (!big.has(size)) big.set(size, new Blob([' '.repeat(size)]));
          body = big.get(size)!;
        }
        const response = await fetch(base + fill(c.path), { method: 'POST', headers: { 'Content-Type': c.contentType }, body });
        answers.push({ status: response.status, type: response.headers.get('content-type'), body: await response.text() });
        kept = response.status >= 400 ? await dump() : undefined;
        if (kept !== undefined && kept !== before) changedByRejected.push(`${c.operation}: ${c.label}`);
      }
      (await connection)?.close();
      return { answers, changedByRejected };
    }, list),
  );

/**
 * Ids and times as placeholders (ids numbered by first appearance), and the
 * JSON parser's own message, which is each engine's; JSON answers parsed for reading.
 */
function normalise(answers: Answer[]) {
  const ids = new Map<string, string>();
  return answers.map(({ status, type, body }) => {
    const text = body
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
        if (!ids.has(id)) ids.set(id, `<id ${ids.size + 1}>`);
        return ids.get(id)!;
      })
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/not valid JSON: .*\.$/s, "not valid JSON: <the engine's parser message>.")
      // (And inside a JSON answer: an OAuth error's description.)
      .replace(/not valid JSON: (?:[^"\\]|\\.)*\."/g, 'not valid JSON: <the engine\'s parser message>."')
      // The browser's own application (in the assets it made: a page's), named after the engine.
      .replace(
        /"name":"(?:GOOGLE_CHROME_EXTENSION_MV3|FIREFOX_ADDON_MV3|SAFARI_EXTENSION_MV3)","version":"[^"]*"/g,
        '"name":"<the browser>","version":"<its version>"',
      )
      // A backup names the device it was made on (the engine's user agent), and its size counts that name.
      .replace(
        /"bytes":\d+,("created":\{"value":"<time>"\},)?"device_name":"[^"]*"/g,
        '"bytes":"<its size>",$1"device_name":"<the browser>"',
      )
      // Notifications the user was never asked about: "default" in one engine, "denied" in a headless other.
      .replace(/Notification\.permission is \\?"(?:default|denied)\\?"/g, 'Notification.permission is <not granted>')
      // A share's short name and link: made from its id.
      .replace(/\?p=[0-9a-f]{12}\b/g, '?p=<short>')
      .replace(/"short":"[0-9a-f]{12}"/g, '"short":"<short>"');
    return { status, type, answer: type?.startsWith('application/json') ? (JSON.parse(text) as unknown) : text };
  });
}

/** The application an empty register makes: the browser itself. */
const BROWSER_APPLICATION = { chromium: 'GOOGLE_CHROME_EXTENSION_MV3', firefox: 'FIREFOX_ADDON_MV3', webkit: 'SAFARI_EXTENSION_MV3' }[
  engine.name
];

describe(`request bodies in ${engine.name}`, () => {
  it('names every POST operation as taking a body or not', () => {
    // What no host can do is answered 501 without reading its body (test/unit/api/host-cannot.test.ts).
    const cannot = new Set<string>(HOST_CANNOT.map((row) => row.name));
    const posts = OPERATIONS.filter((o) => o.method === 'POST' && !GENERIC_STAND_INS.has(o.name) && !cannot.has(o.name)).map((o) => o.name);
    expect([...Object.keys(VALID), ...BODILESS].sort()).toEqual(posts.sort());
  });

  it('answers every body of every body-taking operation as in every other engine', { timeout: 240_000 }, async () => {
    const { context } = await launch();
    try {
      const list = cases();
      const { answers: raw, changedByRejected } = await post(context, list);
      // Every rejected body left the store as it was.
      expect(changedByRejected).toEqual([]);
      const answers = normalise(raw);
      const report = list.map((c, i) => ({ operation: c.operation, sent: c.label, contentType: c.contentType, ...answers[i]! }));
      await expect(`${JSON.stringify(report, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/bodies.json');
      const page = await context.newPage();
      await page.goto(inject('demoUrl'));
      await page.waitForSelector('#status[data-state="ready"]');
      const itself = await page.evaluate(async () => {
        const response = await fetch('http://localhost:1000/applications/register', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
        });
        return { status: response.status, body: (await response.json()) as { name: string; platform: string } };
      });
      expect(itself).toMatchObject({ status: 200, body: { name: BROWSER_APPLICATION, platform: 'WEB' } });
    } finally {
      await context.close();
    }
  });
});
