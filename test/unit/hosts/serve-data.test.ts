// @vitest-environment node
/**
 * `serve --data`: what a write's answer acknowledged is kept (kill -9 at any moment loses none),
 * the JSON file is never left torn, a write that cannot be made is reported. The claims about
 * the process are tested on the real CLI (built as installed, into node_modules/.cache).
 */
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeBuild } from '../../../vite.config.js';
import { createNodeHost } from '../../../src/node/host.js';
import { openDataFile, storePathFor } from '../../../src/node/data-file.js';
import { openKeptStore, replaceFile } from '../../../src/node/kept-store.js';
import { openStorage } from '../../../src/storage/idb/storage.js';
import { DB_NAME, DB_VERSION, STORES, type PiecesDB } from '../../../src/storage/schema.js';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { wrap } from 'idb';
import { createService } from '../../../src/core/service.js';

const repository = resolve(import.meta.dirname, '../../..');
/** The package as installed (dist/ and src/cli/), under the repository's node_modules so that its imports resolve. */
const packageRoot = resolve(repository, 'node_modules/.cache/pieces-os-worker-serve-data');
const cli = join(packageRoot, 'src/cli/pieces-os-worker.js');
let folder: string;

beforeAll(async () => {
  await build({ configFile: false, logLevel: 'warn', ...nodeBuild(join(packageRoot, 'dist')) });
  cpSync(join(repository, 'src/cli'), join(packageRoot, 'src/cli'), { recursive: true });
  folder = mkdtempSync(join(tmpdir(), 'serve-data-'));
}, 180_000);
/** Every server a test started: killed after it, also when the test failed before killing it. */
const started = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  started.clear();
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let files = 0;
const newFile = (name = 'data') => join(folder, `${name}-${++files}.json`);

/** `serve --data file` as a process: its URL once it listens, its exit code, what it printed. */
function serve(data: string, ...args: string[]) {
  return spawnServer(process.execPath, [cli, 'serve', '--port', '0', '--no-sample-assets', '--data', data, ...args]);
}
/** As `serve`, with files of at most `blocks` × 512 bytes (`ulimit -f`): a write past that fails (EFBIG). */
function serveWithFilesUpTo(blocks: number, data: string) {
  return spawnServer('/bin/sh', [
    '-c',
    `ulimit -f ${blocks} && exec "$0" "$@"`,
    process.execPath,
    cli,
    'serve',
    '--port',
    '0',
    '--no-sample-assets',
    '--data',
    data,
  ]);
}
function spawnServer(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const url = new Promise<string>((done, fail) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /answering (http:\/\/[^\s]+) \(/.exec(out);
      if (found) done(found[1]!);
    });
    void exited.then((code) => fail(new Error(`serve exited (${code}) before listening: ${err}`)));
  });
  child.stderr.on('data', (chunk) => (err += chunk));
  // Awaited by the tests that expect it to listen; the others wait for the exit.
  url.catch(() => {});
  return { child, url, exited, output: () => ({ out, err }) };
}
type Served = ReturnType<typeof serve>;

const kill = async (served: Served) => {
  served.child.kill('SIGKILL');
  await served.exited;
};
const stop = async (served: Served) => {
  served.child.kill('SIGTERM');
  return served.exited;
};

const json = { 'Content-Type': 'application/json' };
const control = { 'X-Pieces-Control': '1' };
const create = (url: string, name: string) =>
  fetch(`${url}/conversations/create`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'COPILOT', name }) });
const ids = async (url: string) => {
  const body = (await (await fetch(`${url}/conversations/identifiers`)).json()) as { iterable: Array<{ id: string }> };
  return body.iterable.map((item) => item.id);
};
const exported = async (url: string) => (await fetch(`${url}/__pieces/export`, { headers: control })).json();

describe('serve --data: the process', () => {
  it('keeps every create answered before kill -9, during a burst', async () => {
    const data = newFile();
    const first = serve(data);
    const url = await first.url;
    const acknowledged: string[] = [];
    let killed = false;
    // Eight clients creating without pause; the process is killed once 150 creates were answered.
    const client = async (n: number) => {
      for (let i = 0; !killed; i++) {
        const response = await create(url, `c${n}-${i}`).catch(() => null);
        if (response?.status !== 200) continue;
        acknowledged.push(((await response.json().catch(() => ({}))) as { id?: string }).id ?? 'unread');
        if (acknowledged.length >= 150 && !killed) {
          killed = true;
          await kill(first);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, n) => client(n)));
    const answered = acknowledged.filter((id) => id !== 'unread');
    expect(answered.length).toBeGreaterThanOrEqual(150);

    const second = serve(data);
    const kept = await ids(await second.url);
    expect(answered.filter((id) => !kept.includes(id))).toEqual([]);
    expect(second.output().err).toBe('');
    await kill(second);
  });

  it('does not serve a delete answered before kill -9, and serves the rest as before', async () => {
    const data = newFile();
    const first = serve(data);
    const url = await first.url;
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push(((await (await create(url, `d${i}`)).json()) as { id: string }).id);
    for (const id of made.slice(0, 6)) expect((await fetch(`${url}/conversations/${id}/delete`, { method: 'POST' })).status).toBe(204);
    const before = await (await fetch(`${url}/conversations`)).text();
    await kill(first);

    const second = serve(data);
    const again = await second.url;
    expect((await ids(again)).sort()).toEqual(made.slice(6).sort());
    for (const id of made.slice(0, 6)) expect((await fetch(`${again}/conversation/${id}`)).status).toBe(404);
    // The kept snapshot bodies are not stored: rebuilt, they are the same bytes.
    expect(await (await fetch(`${again}/conversations`)).text()).toBe(before);
    await kill(second);
  });

  it('starts from a --data file written by the previous version, and loses none of it', async () => {
    const data = newFile('previous');
    // What the previous version wrote on exit: the export, as JSON.stringify(…, null, 2).
    const host = createNodeHost({ newId: counter(), now: () => new Date(Date.UTC(2025, 0, 1)) });
    for (let i = 0; i < 5; i++)
      await host.fetch('http://localhost:39300/conversations/create', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ type: 'COPILOT', name: `p${i}` }),
      });
    const previous = await host.service.exportData();
    host.close();
    writeFileSync(data, `${JSON.stringify(previous, null, 2)}\n`);

    const first = serve(data, '--no-sample-assets');
    expect(await exported(await first.url)).toEqual(previous);
    await kill(first);
    const second = serve(data);
    expect(await exported(await second.url)).toEqual(previous);
    // A clean stop writes the export: the same data, and the next start reads the store, not a stale copy.
    expect(await stop(second)).toBe(0);
    expect(JSON.parse(readFileSync(data, 'utf8'))).toEqual(previous);
    const third = serve(data);
    expect(await exported(await third.url)).toEqual(previous);
    await kill(third);
  });

  it('starts again from the JSON file when it was changed since the server wrote it', async () => {
    const data = newFile();
    const first = serve(data);
    await create(await first.url, 'kept');
    expect(await stop(first)).toBe(0);
    const edited = JSON.parse(readFileSync(data, 'utf8')) as { conversations: Array<{ name: string }> };
    edited.conversations[0]!.name = 'edited by hand';
    writeFileSync(data, JSON.stringify(edited));

    const second = serve(data);
    const after = (await exported(await second.url)) as typeof edited;
    expect(after.conversations.map((c) => c.name)).toEqual(['edited by hand']);
    expect(second.output().err).toContain('is not the export this server last wrote');
    expect(second.output().err).toContain(`kept as ${storePathFor(data)}-journal.replaced`);
    expect(existsSync(`${storePathFor(data)}-journal.replaced`)).toBe(true);
    await kill(second);
  });

  it('skips and reports a journal entry left unfinished, and keeps those before it', async () => {
    const data = newFile();
    const first = serve(data);
    const url = await first.url;
    const made = [];
    for (let i = 0; i < 3; i++) made.push(((await (await create(url, `t${i}`)).json()) as { id: string }).id);
    await kill(first);
    // What a write cut off in the middle leaves: the start of an entry (its length says more follows).
    const journal = `${storePathFor(data)}-journal`;
    const size = statSync(journal).size;
    appendFileSync(journal, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5, 6]));

    const second = serve(data);
    const again = await second.url;
    expect((await ids(again)).sort()).toEqual([...made].sort());
    expect(second.output().err).toMatch(/skipped 10 bytes at its end, a write that never finished/);
    // Cut off there, the journal goes on after the last whole entry.
    expect(statSync(journal).size).toBe(size);
    const later = ((await (await create(again, 'after')).json()) as { id: string }).id;
    await kill(second);
    const third = serve(data);
    expect((await ids(await third.url)).sort()).toEqual([...made, later].sort());
    expect(third.output().err).toBe('');
    await kill(third);

    // A whole entry damaged in its last byte is not read either.
    truncateSync(journal, statSync(journal).size - 1);
    const fourth = serve(data);
    expect((await ids(await fourth.url)).sort()).toEqual([...made].sort());
    expect(fourth.output().err).toMatch(/skipped \d+ bytes at its end/);
    await kill(fourth);
  });

  it('leaves the old or the new JSON file when SIGKILL follows SIGTERM during the export, never a torn one', async () => {
    const data = newFile('large');
    const first = serve(data);
    const url = await first.url;
    // A few MB of data, so that writing the export takes a while.
    const text = 'x'.repeat(1_500);
    const conversations = Array.from({ length: 1_000 }, (_, i) => ({
      id: `0f0e8a52-5b37-4d3a-9c55-${String(i).padStart(12, '0')}`,
      type: 'COPILOT',
      name: `large ${i} ${text}`,
    }));
    expect(
      (await fetch(`${url}/__pieces/seed`, { method: 'POST', headers: { ...json, ...control }, body: JSON.stringify({ conversations }) }))
        .status,
    ).toBe(204);
    expect(await stop(first)).toBe(0);
    let previous = readFileSync(data, 'utf8');
    for (const delay of [0, 20, 100]) {
      const served = serve(data);
      const at = await served.url;
      await create(at, `after ${delay}`);
      served.child.kill('SIGTERM');
      await new Promise((done) => setTimeout(done, delay));
      served.child.kill('SIGKILL');
      await served.exited;
      const now = readFileSync(data, 'utf8');
      expect(() => JSON.parse(now)).not.toThrow();
      const names = (JSON.parse(now) as { conversations: Array<{ name: string }> }).conversations.map((c) => c.name);
      // The old file, or the new one with the last create.
      if (now !== previous) expect(names).toContain(`after ${delay}`);
      previous = now;
      // Whichever it is, the next start has every create.
      const check = serve(data);
      const kept = (await exported(await check.url)) as { conversations: Array<{ name: string }> };
      expect(kept.conversations.map((c) => c.name)).toContain(`after ${delay}`);
      expect(check.output().err).toBe('');
      await kill(check);
    }
  }, 120_000);

  it('stops without answering a write it cannot keep (the disk full), and keeps every write it answered', async () => {
    const data = newFile();
    // Room for the journal's first few dozen creates only.
    const first = serveWithFilesUpTo(64, data);
    const url = await first.url;
    const answered: string[] = [];
    for (let i = 0; i < 200; i++) {
      const response = await create(url, `${i} ${'x'.repeat(1_500)}`).catch(() => null);
      if (response?.status !== 200) break;
      answered.push(((await response.json()) as { id: string }).id);
    }
    expect(await first.exited).toBe(1);
    expect(first.output().err).toMatch(/a write could not be kept in .*\.store \(EFBIG: file too large/);
    expect(answered.length).toBeGreaterThan(0);

    const second = serve(data);
    expect((await ids(await second.url)).sort()).toEqual(answered.sort());
    await kill(second);
  });

  it('refuses a second server on the same --data while the first runs, and takes over after kill -9', async () => {
    const data = newFile();
    const first = serve(data);
    await create(await first.url, 'first');
    const second = serve(data);
    expect(await second.exited).toBe(1);
    expect(second.output().err).toMatch(/cannot keep the data in .*\.store: it is in use by another process \(\d+\)/);
    await kill(first);
    const third = serve(data);
    expect(((await exported(await third.url)) as { conversations: Array<{ name: string }> }).conversations.map((c) => c.name)).toEqual([
      'first',
    ]);
    await kill(third);
  });

  it('reports a store that cannot be written and exits with 1, before listening', async () => {
    const served = serve(join(folder, 'missing', 'folder', 'data.json'));
    const outcome = await Promise.race([
      served.exited,
      served.url.then(
        () => 'listening' as const,
        () => 'failed' as const,
      ),
    ]);
    if (outcome === 'listening') await kill(served);
    expect(await served.exited).toBe(1);
    expect(served.output().err).toMatch(/cannot serve: cannot keep the data in .*missing\/folder\/data\.store: ENOENT/);
  });

  it('reports an export that cannot be written on exit, exits with 1 and leaves the file as it was', async () => {
    const data = newFile();
    const first = serve(data);
    await create(await first.url, 'one');
    expect(await stop(first)).toBe(0);
    const before = readFileSync(data, 'utf8');
    const second = serve(data);
    await create(await second.url, 'two');
    // Where the export is written first: a folder, which no file can replace.
    mkdirSync(`${data}.tmp`);
    expect(await stop(second)).toBe(1);
    expect(second.output().err).toMatch(/could not write the store to .*: EISDIR/);
    expect(readFileSync(data, 'utf8')).toBe(before);
    rmSync(`${data}.tmp`, { recursive: true });
    // The write itself was kept.
    const third = serve(data);
    const names = ((await exported(await third.url)) as { conversations: Array<{ name: string }> }).conversations.map((c) => c.name);
    expect(names.sort()).toEqual(['one', 'two']);
    await kill(third);
  });
});

function counter() {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

describe('the kept store', () => {
  it('never leaves a file it replaces in part: a write stopped half-way leaves the old file whole', async () => {
    const path = newFile('replaced');
    writeFileSync(path, '{"old":true}');
    const stopped = (function* () {
      yield Buffer.from('{"new":');
      throw new Error('stopped');
    })();
    await expect(replaceFile(path, stopped)).rejects.toThrow('stopped');
    expect(readFileSync(path, 'utf8')).toBe('{"old":true}');
    await replaceFile(path, ['{"new":', 'true}']);
    expect(readFileSync(path, 'utf8')).toBe('{"new":true}');
  });

  it('reads back the same data after writes interleaved with compactions', async () => {
    const data = newFile('compact');
    const open = async () => {
      const file = await openDataFile(data, { compactFromBytes: 1, warn: (message) => warnings.push(message) });
      const storage = await file.open(() => ({}) as never);
      return { file, service: createService({ storage, newId: counter(), now: () => new Date(Date.UTC(2025, 0, 1)) }) };
    };
    const warnings: string[] = [];
    const first = await open();
    // Writes while compactions run: each one starts a compaction as the last one ends.
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await first.service.handle(
          new Request('http://localhost:39300/conversations/create', {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ type: 'COPILOT', name: `k${i}` }),
          }),
        );
      }),
    );
    const expected = await first.service.exportData();
    await new Promise((done) => setTimeout(done, 200));
    first.file.close();
    expect(existsSync(storePathFor(data))).toBe(true);

    const second = await open();
    expect(await second.service.exportData()).toEqual(expected);
    second.file.close();
    expect(warnings).toEqual([]);
  });
});

/** The frames of a kept store's file (length, CRC-32, v8 serialization), read and written as the format says. */
/** Another connection to the storage's database in `factory`, whose writes are kept as the storage's are. */
async function wrapDb(factory: IDBFactory) {
  const request = factory.open(DB_NAME);
  const db = await new Promise<IDBDatabase>((done, fail) => {
    request.onsuccess = () => done(request.result);
    request.onerror = () => fail(request.error);
  });
  return wrap(db) as unknown as import('idb').IDBPDatabase<PiecesDB>;
}

function framesOf(bytes: Buffer): unknown[] {
  const values = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUInt32LE(at);
    values.push(deserialize(bytes.subarray(at + 8, at + 8 + length)));
    at += 8 + length;
  }
  return values;
}
function framed(values: unknown[]): Buffer {
  return Buffer.concat(
    values.map((value) => {
      const payload = serialize(value);
      const head = Buffer.alloc(8);
      head.writeUInt32LE(payload.length, 0);
      head.writeUInt32LE(crc32(payload), 4);
      return Buffer.concat([head, payload]);
    }),
  );
}

describe('an auto-incremented store', () => {
  it('goes on from the last key it generated after a start, also when that record was deleted, through compactions', async () => {
    const path = join(folder, 'generated.store');
    const warn = (message: string) => expect.fail(message);
    const keys = async (kept: Awaited<ReturnType<typeof openKeptStore>>, compact: boolean) => {
      const storage = await openStorage({ factory: kept.factory, initialData: {} });
      await kept.opened();
      const db = await wrapDb(kept.factory);
      const tx = db.transaction('outbox', 'readwrite');
      const added = await Promise.all([tx.store.add({ operation: 'a' } as never), tx.store.add({ operation: 'b' } as never)]);
      await tx.store.clear();
      await tx.done;
      if (compact) await kept.compact();
      db.close();
      storage.close();
      kept.close();
      return added;
    };
    const first = await keys(await openKeptStore(path, { warn }), false);
    const second = await keys(await openKeptStore(path, { warn }), true);
    const third = await keys(await openKeptStore(path, { warn }), false);
    expect([...first, ...second, ...third]).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('a store written by an earlier version', () => {
  it('is upgraded as a browser database is, and written whole at the new version before any write', async () => {
    const path = join(folder, 'older.store');
    const warn = (message: string) => expect.fail(message);
    const first = await openKeptStore(path, { warn });
    const storage = await openStorage({ factory: first.factory, initialData: {} });
    await first.opened();
    const service = createService({ storage, newId: counter(), now: () => new Date(Date.UTC(2025, 0, 1)) });
    for (const name of ['one', 'two']) {
      await service.handle(
        new Request('http://localhost:39300/conversations/create', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ type: 'COPILOT', name }),
        }),
      );
    }
    const expected = await service.exportData();
    await first.compact();
    storage.close();
    first.close();

    // The same records as the previous layout held them: without the stores its last step added.
    const [header, ...rest] = framesOf(readFileSync(path)) as [{ version: number }, ...Array<{ store?: string; end?: number }>];
    const rows = rest.slice(0, -1).filter((frame) => STORES[frame.store as keyof typeof STORES] < DB_VERSION);
    writeFileSync(path, framed([{ ...header, version: DB_VERSION - 1 }, ...rows, { end: rows.length }]));

    const second = await openKeptStore(path, { warn });
    const upgraded = await openStorage({ factory: second.factory });
    await second.opened();
    expect((framesOf(readFileSync(path))[0] as { version: number }).version).toBe(DB_VERSION);
    expect(await createService({ storage: upgraded }).exportData()).toEqual(expected);
    upgraded.close();
    second.close();

    const third = await openKeptStore(path, { warn });
    const again = await openStorage({ factory: third.factory });
    await third.opened();
    expect(await createService({ storage: again }).exportData()).toEqual(expected);
    again.close();
    third.close();
  });
});

describe('materials', () => {
  it('are kept across starts of the store (keyed by [kind, id], in creation order), from the journal and after a compaction', async () => {
    const path = join(folder, 'materials.store');
    const warn = (message: string) => expect.fail(message);
    const stamp = { value: '2025-01-01T00:00:00.000Z' };
    const person = (id: string) => ({ kind: 'person' as const, id, value: { id, created: stamp, updated: stamp } });
    const reopen = async (compact: boolean) => {
      const kept = await openKeptStore(path, { warn });
      const storage = await openStorage({ factory: kept.factory, initialData: {} });
      await kept.opened();
      const read = { listed: await storage.listMaterials('person'), ids: (await storage.listIds('person')).ids };
      if (compact) await kept.compact();
      return { kept, storage, read };
    };
    const first = await reopen(false);
    await first.storage.editMaterials([], () => ({ put: [person('p2'), person('p1')] }));
    await first.storage.editMaterials([], () => ({ put: [person('p3')], delete: [{ kind: 'person', id: 'p2' }] }));
    const expected = await first.storage.listMaterials('person');
    expect(expected.map((m) => m.id)).toEqual(['p1', 'p3']);
    first.storage.close();
    first.kept.close();
    for (const compact of [true, false]) {
      const next = await reopen(compact);
      expect(next.read.listed).toEqual(expected);
      expect(next.read.ids).toEqual(['p1', 'p3']);
      expect(await next.storage.getMaterial('person', 'p3')).toEqual(expected[1]);
      next.storage.close();
      next.kept.close();
    }
  });
});
