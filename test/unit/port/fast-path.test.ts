// @vitest-environment node
/**
 * The fast path's port protocol (src/port/): request and response framing,
 * streamed bodies, a dead port's fallback to fetch, and no write run twice.
 */
import { MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PortClient } from '../../../src/port/client.js';
import { ID_HEADER, LOCK_PREFIX, REPLAY_HEADER, type ToPage, type ToWorker } from '../../../src/port/protocol.js';
import { createPortServer } from '../../../src/port/server.js';
import { channel, closePorts, joined } from '../support/ports.js';
import { markRerunnable, reply } from '../../../src/core/http.js';

afterEach(closePorts);

/** A service that records what it ran: echoes writes, counts them. */
function service() {
  const ran: string[] = [];
  const respond = (request: Request): Promise<Response> => {
    ran.push(`${request.method} ${new URL(request.url).pathname}`);
    return (async () => {
      if (request.method === 'GET') return Response.json({ path: new URL(request.url).pathname, accept: request.headers.get('accept') });
      if (request.method === 'DELETE') return new Response(null, { status: 204 });
      return new Response(`wrote ${await request.text()}`, {
        status: 201,
        statusText: 'Created',
        headers: { 'Content-Type': 'text/plain', 'X-Id': '7' },
      });
    })();
  };
  return { ran, respond };
}

/** Records every message posted on a port (the worker's replies among them) until `spy.mockRestore()`. */
function recordPosted() {
  const posted: ToPage[] = [];
  const send = MessagePort.prototype.postMessage;
  const spy = vi.spyOn(MessagePort.prototype, 'postMessage').mockImplementation(function (
    this: MessagePort,
    ...args: Parameters<MessagePort['postMessage']>
  ) {
    posted.push(args[0] as ToPage);
    return send.apply(this, args);
  });
  return { posted, spy };
}

/**
 * A page whose first port leads to a stopped worker (nothing reads it) and whose next ones are
 * served by another instance of the same worker; its fetches are recorded and answered as the
 * Service Worker's fetch handler does.
 */
function firstPortStopped(respond: (request: Request) => Promise<Response>) {
  const server = createPortServer(respond);
  const fetched: Request[] = [];
  let connects = 0;
  const client = new PortClient({
    expiryMs: 20,
    graceMs: 20,
    connect: async () => {
      const { page, worker } = channel();
      if (connects++ === 0) return { port: page, instance: 'stopped', worker: 'w' };
      server.serve(worker);
      return { port: page, instance: server.instance, worker: 'w' };
    },
    fetch: async (request) => {
      fetched.push(request);
      return (server.answerRetry(request) ?? respond(request))!;
    },
  });
  return { client, fetched };
}

/** A raw port served by `server`: what the worker sent on it, and when it sent a message of type `until`. */
function served(server: ReturnType<typeof createPortServer>, until: ToPage['type']) {
  const { page, worker } = channel();
  const received: ToPage[] = [];
  const done = new Promise<void>((resolve) => {
    page.onmessage = (event) => {
      received.push(event.data as ToPage);
      if ((event.data as ToPage).type === until) resolve();
    };
  });
  server.serve(worker);
  return { page, received, done };
}

/** The ids of the requests the worker acknowledged, in order. */
const acceptedIds = (posted: ToPage[]) =>
  posted.filter((m): m is Extract<ToPage, { type: 'accepted' }> => m.type === 'accepted').map((m) => m.id);

describe('fast path framing', () => {
  it('remembers no read (a read is run again when asked again), only writes, for as long as a replay may ask', async () => {
    const { respond } = service();
    const { server, client } = joined(respond);
    for (let i = 0; i < 200; i++) {
      const read = await client.request(new Request(`http://localhost:1000/applications/${crypto.randomUUID()}`));
      expect(read.status).toBe(200);
    }
    expect(server.remembered).toBe(0);
    // A read retried by fetch after the port failed is run again, and not remembered either.
    const retried = await server.answerRetry(
      new Request('http://localhost:1000/assets', { headers: { [ID_HEADER]: crypto.randomUUID(), [REPLAY_HEADER]: 'only' } }),
    );
    expect(retried?.status).toBe(200);
    expect(server.remembered).toBe(0);
    await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'x' }));
    expect(server.remembered).toBe(1);
  });

  it('carries method, URL, headers and body, and answers with status, status text, headers and body', async () => {
    const { ran, respond } = service();
    const { client, fetched } = joined(respond);
    const read = await client.request(new Request('http://localhost:1000/conversations', { headers: { Accept: 'application/json' } }));
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toMatch(/application\/json/);
    expect(await read.json()).toEqual({ path: '/conversations', accept: 'application/json' });
    const write = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'Grüße ✓' }));
    expect([write.status, write.statusText, write.headers.get('x-id')]).toEqual([201, 'Created', '7']);
    expect(await write.text()).toBe('wrote Grüße ✓');
    const deleted = await client.request(new Request('http://localhost:1000/conversation/1/delete', { method: 'DELETE' }));
    expect([deleted.status, deleted.body]).toEqual([204, null]);
    expect(ran).toEqual(['GET /conversations', 'POST /conversations/create', 'DELETE /conversation/1/delete']);
    expect(fetched).toEqual([]);
    expect(client.counts).toEqual({ port: 3, fetch: 0 });
  });

  it("reads a request's body once, without cloning it (a clone tees the body stream), and keeps a whole copy for a fallback", async () => {
    const { ran, respond } = service();
    const { client, fetched } = firstPortStopped(respond);
    const clone = vi.spyOn(Request.prototype, 'clone');
    try {
      const request = new Request('http://localhost:1000/conversations/create', {
        method: 'POST',
        body: 'Grüße',
        headers: { 'X-Trace': 'abc' },
      });
      expect(await (await client.request(request)).text()).toBe('wrote Grüße');
      expect(clone).not.toHaveBeenCalled();
    } finally {
      clone.mockRestore();
    }
    expect(fetched.map((r) => [r.method, r.headers.get('x-trace')])).toEqual([['POST', 'abc']]);
    expect(ran).toEqual(['POST /conversations/create']);
  });

  it("sends a body given as text without reading the Request's (encoded from the text), over the port and in a fallback's copy", async () => {
    const { ran, respond } = service();
    const { client } = joined(respond);
    const arrayBuffer = vi.spyOn(Request.prototype, 'arrayBuffer');
    try {
      const request = new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'Grüße ✓ \u{1F600}' });
      expect(await (await client.request(request, 'Grüße ✓ \u{1F600}')).text()).toBe('wrote Grüße ✓ \u{1F600}');
      expect(request.bodyUsed).toBe(false);
      expect(arrayBuffer).not.toHaveBeenCalled();
      // Without the text, the body is read from the Request.
      expect(
        await (await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'plain' }))).text(),
      ).toBe('wrote plain');
      expect(arrayBuffer).toHaveBeenCalledTimes(1);
    } finally {
      arrayBuffer.mockRestore();
    }
    const fallback = firstPortStopped(respond);
    const request = new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'Grüße' });
    // The copy sent by fetch (the port led to a stopped worker) carries the text's bytes.
    expect(await (await fallback.client.request(request, 'Grüße')).text()).toBe('wrote Grüße');
    expect([fallback.fetched.length, request.bodyUsed]).toEqual([1, false]);
    expect(ran).toEqual(['POST /conversations/create', 'POST /conversations/create', 'POST /conversations/create']);
  });

  it("sends an answer the service made from text in one message (head, body, end), and keeps a write's for a replay", async () => {
    const ran: string[] = [];
    const server = createPortServer(async (request) => {
      ran.push(request.method);
      if (request.method === 'HEAD') return reply('', { type: 'text' });
      return request.method === 'POST'
        ? reply(`{"wrote":${JSON.stringify(await request.text())}}`, { status: 201 })
        : reply('Grüße ✓', { status: 404, type: 'text' });
    });
    const sent: ToPage[] = [];
    const client = new PortClient({
      connect: async () => {
        const { page, worker } = channel();
        // Every message the worker sends, recorded on its way.
        server.serve({
          set onmessage(listener) {
            worker.onmessage = listener;
          },
          get onmessage() {
            return worker.onmessage;
          },
          postMessage: (message, transfer) => {
            sent.push(message);
            worker.postMessage(message, transfer);
          },
        });
        return { port: page, instance: server.instance, worker: 'w' };
      },
      fetch: async () => {
        throw new Error('no fetch expected');
      },
    });
    const created = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'Grüße' }));
    expect([created.status, created.headers.get('content-type')]).toEqual([201, 'application/json; charset=utf-8']);
    expect(await created.json()).toEqual({ wrote: 'Grüße' });
    const missing = await client.request(new Request('http://localhost:1000/conversation/x'));
    expect([missing.status, await missing.text()]).toEqual([404, 'Grüße ✓']);
    const head = await client.request(new Request('http://localhost:1000/conversation/x', { method: 'HEAD' }));
    expect([head.status, head.body]).toEqual([200, null]);
    expect(sent.map((m) => m.type)).toEqual(['ready', 'accepted', 'answer', 'accepted', 'answer', 'accepted', 'answer']);
    // A write's answer is kept: asked for again with its id, it is answered from memory, not run again.
    const id = (sent[1] as { id: string }).id;
    const replayed = await server.answerRetry(
      new Request('http://localhost:1000/conversations/create', { method: 'POST', headers: { [ID_HEADER]: id, [REPLAY_HEADER]: 'only' } }),
    )!;
    expect([replayed.status, await replayed.json()]).toEqual([201, { wrote: 'Grüße' }]);
    expect(ran).toEqual(['POST', 'GET', 'HEAD']);
  });

  it('keeps no answer of a POST that changed nothing (a search): asked for again, it runs again', async () => {
    let runs = 0;
    const { client, server } = joined(async (request) =>
      new URL(request.url).pathname === '/conversations/search' ? markRerunnable(reply({ run: ++runs })) : reply({ wrote: ++runs }),
    );
    const { posted, spy } = recordPosted();
    try {
      const searched = await client.request(new Request('http://localhost:1000/conversations/search', { method: 'POST', body: '{}' }));
      expect(await searched.json()).toEqual({ run: 1 });
      const wrote = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: '{}' }));
      expect(await wrote.json()).toEqual({ wrote: 2 });
      const [search, create] = acceptedIds(posted);
      const again = (path: string, id: string) =>
        server.answerRetry(
          new Request(`http://localhost:1000${path}`, {
            method: 'POST',
            body: '{}',
            headers: { [ID_HEADER]: id, [REPLAY_HEADER]: 'only' },
          }),
        )!;
      // The search runs again; the create is answered from memory, not run again.
      expect(await (await again('/conversations/search', search!)).json()).toEqual({ run: 3 });
      expect(await (await again('/conversations/create', create!)).json()).toEqual({ wrote: 2 });
      expect(runs).toBe(3);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps write answers for replays within a total: past it the oldest is let go, and its replay is reported lost, not run again', async () => {
    let runs = 0;
    const { client, server } = joined(async () => reply(`wrote ${++runs} ${'x'.repeat(100)}`, { status: 201, type: 'text' }), {
      keptLimit: 500,
    });
    const { posted, spy } = recordPosted();
    try {
      for (let i = 0; i < 3; i++)
        await (await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: '{}' }))).text();
      const ids = acceptedIds(posted);
      const again = (id: string) =>
        server.answerRetry(
          new Request('http://localhost:1000/conversations/create', {
            method: 'POST',
            body: '{}',
            headers: { [ID_HEADER]: id, [REPLAY_HEADER]: 'only' },
          }),
        )!;
      const oldest = await again(ids[0]!);
      expect([oldest.status, oldest.headers.get(REPLAY_HEADER)]).toEqual([503, 'lost']);
      const newest = await again(ids[2]!);
      expect([newest.status, (await newest.text()).slice(0, 7)]).toEqual([201, 'wrote 3']);
      expect(runs).toBe(3);
    } finally {
      spy.mockRestore();
    }
  });

  it('passes a read whose body is a Blob (a snapshot kept ready to send) whole, without chunks', async () => {
    const wire = `{"iterable":[${'{"id":"é"},'.repeat(50_000)}{"id":"last"}]}`;
    const { client } = joined(async () => reply(new Blob([wire])));
    const { posted, spy } = recordPosted();
    try {
      const response = await client.request(new Request('http://localhost:1000/conversations'));
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.text()).toBe(wire);
      const answer = posted.find((m) => m.type === 'answer') as Extract<ToPage, { type: 'answer' }>;
      expect(answer.body).toBeInstanceOf(Blob);
      expect(posted.some((m) => m.type === 'chunk')).toBe(false);
      // A write is never answered that way (its answer is kept for a replay from its bytes).
      posted.length = 0;
      const { client: writer } = joined(async () => reply(new Blob(['{"written":true}'])));
      expect(
        await (await writer.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: '{}' }))).json(),
      ).toEqual({ written: true });
      expect(posted.some((m) => m.type === 'chunk')).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('answers a page that does not take whole answers (an older page library) with head, chunks and end', async () => {
    const server = createPortServer(async () => reply('{"id":"1"}', { status: 201 }));
    const { page, received, done: ended } = served(server, 'end');
    const message: ToWorker = {
      type: 'request',
      id: 'r1',
      sent: Date.now(),
      method: 'POST',
      url: 'http://localhost:1000/conversations/create',
      headers: [],
      body: null,
    };
    page.postMessage(message);
    await ended;
    expect(received.map((m) => m.type)).toEqual(['ready', 'accepted', 'head', 'chunk', 'end']);
    const chunk = received.find((m) => m.type === 'chunk') as Extract<ToPage, { type: 'chunk' }>;
    expect(new TextDecoder().decode(chunk.chunk)).toBe('{"id":"1"}');
  });

  it('streams a body: each chunk is readable before the next is written', async () => {
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = c) });
    const { client } = joined(async () => new Response(body, { headers: { 'Content-Type': 'application/x-ndjson' } }));
    const response = await client.request(new Request('http://localhost:1000/qgpt/stream', { method: 'POST', body: '{}' }));
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    push.enqueue(new TextEncoder().encode('{"a":1}\n'));
    expect(decoder.decode((await reader.read()).value)).toBe('{"a":1}\n');
    push.enqueue(new TextEncoder().encode('{"b":2}\n'));
    expect(decoder.decode((await reader.read()).value)).toBe('{"b":2}\n');
    push.close();
    expect((await reader.read()).done).toBe(true);
  });

  it('fails like fetch when the service answers with a network error', async () => {
    const { client } = joined(async () => Response.error());
    await expect(client.request(new Request('http://localhost:1000/applications'))).rejects.toThrow(TypeError);
  });

  it('fails the body like a dropped connection when the answer breaks off', async () => {
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = c) });
    const { client } = joined(async () => new Response(body));
    const response = await client.request(new Request('http://localhost:1000/conversations'));
    push.error(new Error('disk gone'));
    await expect(response.body!.getReader().read()).rejects.toThrow(/Failed to fetch: disk gone/);
  });
});

describe('fast path failures', () => {
  it('uses fetch when no worker can be reached', async () => {
    const { ran, respond } = service();
    const client = new PortClient({ connect: async () => null, fetch: respond });
    expect(
      await (await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'x' }))).text(),
    ).toBe('wrote x');
    expect(ran).toEqual(['POST /conversations/create']);
    expect(client.counts).toEqual({ port: 0, fetch: 1 });
  });

  it('judges a port that never acknowledges dead and sends its request by fetch, with its id, once', async () => {
    const { ran, respond } = service();
    const { client, fetched } = firstPortStopped(respond);
    const response = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'one' }));
    expect(await response.text()).toBe('wrote one');
    expect(fetched.map((r) => [r.headers.has(ID_HEADER), r.headers.get(REPLAY_HEADER)])).toEqual([[true, null]]);
    expect(ran).toEqual(['POST /conversations/create']);
    // The next request connects again and goes over the new port.
    expect(
      await (await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'two' }))).text(),
    ).toBe('wrote two');
    expect(client.counts).toEqual({ port: 2, fetch: 1 });
    expect(ran).toHaveLength(2);
  });

  it('a slow worker (the same instance answers the check) is waited for: the request runs there, once, not by fetch', async () => {
    const { ran, respond } = service();
    const server = createPortServer(respond);
    let release!: () => void;
    const checked = new Promise<void>((resolve) => (release = resolve));
    let connects = 0;
    const client = new PortClient({
      checkMs: 5,
      connect: async () => {
        const { page, worker } = channel();
        server.serve(worker);
        if (connects++ === 0) {
          // The worker is busy: it reads the port only after the page has checked on it.
          const serve = worker.onmessage!;
          worker.onmessage = (event) => void checked.then(() => serve(event));
        } else {
          release();
        }
        return { port: page, instance: server.instance, worker: 'w' };
      },
      fetch: async () => {
        throw new Error('not by fetch');
      },
    });
    const response = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'slow' }));
    expect(await response.text()).toBe('wrote slow');
    expect(connects).toBe(2);
    expect(ran).toEqual(['POST /conversations/create']);
    expect(client.counts).toEqual({ port: 1, fetch: 0 });
  });

  it('after a quiet spell, the next request goes by fetch (which wakes a stopped worker) and the port is opened afresh', async () => {
    const { ran, respond } = service();
    let clock = 1_000_000;
    const server = createPortServer(respond, { now: () => clock });
    let connects = 0;
    const client = new PortClient({
      now: () => clock,
      // Acknowledgements are not what this test is about: a slow one on a loaded machine must not add a check.
      checkMs: 60_000,
      connect: async () => {
        connects++;
        const { page, worker } = channel();
        server.serve(worker);
        return { port: page, instance: server.instance, worker: 'w' };
      },
      fetch: async (request) => (server.answerRetry(request) ?? respond(request))!,
    });
    const get = () =>
      client.request(new Request('http://localhost:1000/applications')).then(async (r) => {
        await r.text();
        return r.status;
      });
    expect(await get()).toBe(200);
    clock += 60_000;
    expect(await get()).toBe(200);
    expect(await get()).toBe(200);
    expect(client.counts).toEqual({ port: 2, fetch: 1 });
    expect(connects).toBe(2);
    expect(ran).toHaveLength(3);
  });

  it('a request the worker received too late is refused there and run once, by fetch', async () => {
    const { ran, respond } = service();
    // The worker's clock says the request is older than the expiry.
    const server = createPortServer(respond, { now: () => Date.now() + 60_000 });
    const client = new PortClient({
      connect: async () => {
        const { page, worker } = channel();
        server.serve(worker);
        return { port: page, instance: server.instance, worker: 'w' };
      },
      fetch: async (request) => (server.answerRetry(request) ?? respond(request))!,
    });
    expect(
      await (await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'late' }))).text(),
    ).toBe('wrote late');
    expect(ran).toEqual(['POST /conversations/create']);
    expect(client.counts).toEqual({ port: 1, fetch: 1 });
  });

  it('a write acknowledged by a worker that then stops answering is answered from its memory, not run again', async () => {
    const { ran } = service();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const respond = async (request: Request) => {
      ran.push(`${request.method} ${new URL(request.url).pathname}`);
      await gate;
      return new Response(`wrote ${await request.text()}`, { status: 201 });
    };
    const server = createPortServer(respond);
    const fetched: Request[] = [];
    const client = new PortClient({
      expiryMs: 20,
      graceMs: 20,
      pingMs: 10,
      connect: async () => {
        const { page, worker } = channel();
        server.serve(worker);
        // The port goes silent after the acknowledgement (pings are never answered).
        const serve = (worker as unknown as { onmessage: (event: { data: ToWorker }) => void }).onmessage;
        worker.onmessage = (event) => (event.data as ToWorker).type === 'request' && serve(event as { data: ToWorker });
        return { port: page, instance: server.instance, worker: 'w' };
      },
      fetch: async (request) => {
        fetched.push(request);
        const answer = server.answerRetry(request) ?? respond(request);
        release();
        return answer;
      },
    });
    const response = await client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'once' }));
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('wrote once');
    expect(fetched.map((r) => r.headers.get(REPLAY_HEADER))).toEqual(['only']);
    expect(ran).toEqual(['POST /conversations/create']);
  });

  it('a write acknowledged by a worker that stopped is reported as a network error when the worker that answers never received it', async () => {
    const stopped = createPortServer(() => new Promise<Response>(() => {}));
    const restarted = createPortServer(async () => new Response('ran again'));
    const client = new PortClient({
      expiryMs: 20,
      graceMs: 20,
      pingMs: 10,
      connect: async () => {
        const { page, worker } = channel();
        stopped.serve(worker);
        // The worker stops after acknowledging: pings go unanswered.
        const serve = worker.onmessage!;
        worker.onmessage = (event) => (event.data as ToWorker).type === 'request' && serve(event);
        return { port: page, instance: stopped.instance, worker: 'w' };
      },
      fetch: async (request) => (restarted.answerRetry(request) ?? new Response('ran again'))!,
    });
    await expect(client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'x' }))).rejects.toThrow(
      TypeError,
    );
  });

  it('a worker instance known to have stopped: its unacknowledged request goes by fetch at once, and so does the next while a port is opened afresh', async () => {
    const { ran, respond } = service();
    const server = createPortServer(respond);
    const fetched: Request[] = [];
    let stop!: () => void;
    let unwatched = 0;
    let connects = 0;
    let received!: () => void;
    const sent = new Promise<void>((resolve) => (received = resolve));
    const client = new PortClient({
      // Far longer than the test: only the stop notice can tell the port is dead.
      checkMs: 60_000,
      connect: async () => {
        const { page, worker } = channel();
        if (connects++ > 0) {
          server.serve(worker);
          return { port: page, instance: server.instance, worker: 'w' };
        }
        // The first port's worker never acknowledges; its host tells when the instance stops.
        worker.onmessage = () => received();
        return {
          port: page,
          instance: 'stopped',
          worker: 'w',
          watch: (stopped) => {
            stop = stopped;
            return () => void unwatched++;
          },
        };
      },
      fetch: async (request) => {
        fetched.push(request);
        return (server.answerRetry(request) ?? respond(request))!;
      },
    });
    const create = (body: string) =>
      client.request(new Request('http://localhost:1000/conversations/create', { method: 'POST', body })).then((r) => r.text());
    const first = create('one');
    await sent;
    stop();
    expect(await first).toBe('wrote one');
    expect(fetched.map((r) => [r.headers.has(ID_HEADER), r.headers.get(REPLAY_HEADER)])).toEqual([[true, null]]);
    expect(unwatched).toBe(1);
    // The next request goes by fetch (no port message to a stopped worker), while a port is opened.
    expect(await create('two')).toBe('wrote two');
    expect(fetched).toHaveLength(2);
    expect(fetched[1]!.headers.has(ID_HEADER)).toBe(false);
    expect(await create('three')).toBe('wrote three');
    expect(connects).toBe(2);
    expect(client.counts).toEqual({ port: 2, fetch: 2 });
    expect(ran).toEqual(['POST /conversations/create', 'POST /conversations/create', 'POST /conversations/create']);
  });

  it('the worker names in `ready` the lock it holds while it runs, where it holds one', async () => {
    const readyOf = async (server: ReturnType<typeof createPortServer>) => {
      const { page, worker } = channel();
      const ready = new Promise<ToPage>((resolve) => (page.onmessage = (event) => resolve(event.data as ToPage)));
      server.serve(worker);
      return ready;
    };
    const names: string[] = [];
    const locking = createPortServer(service().respond, {
      lock: async (name) => {
        names.push(name);
        return true;
      },
    });
    expect(await readyOf(locking)).toEqual({ type: 'ready', instance: locking.instance, lock: LOCK_PREFIX + locking.instance });
    expect(names).toEqual([LOCK_PREFIX + locking.instance]);
    const refused = createPortServer(service().respond, { lock: async () => false });
    expect(await readyOf(refused)).toEqual({ type: 'ready', instance: refused.instance });
    const none = createPortServer(service().respond);
    expect(await readyOf(none)).toEqual({ type: 'ready', instance: none.instance });
  });

  it('a request that came by fetch first is not run again when its port message arrives late', async () => {
    const { ran, respond } = service();
    const server = createPortServer(respond);
    const id = 'b7d1b8a6-8a51-4a54-9d3c-111111111111';
    const first = await server.answerRetry(
      new Request('http://localhost:1000/conversations/create', { method: 'POST', body: 'a', headers: { [ID_HEADER]: id } }),
    )!;
    expect(await first.text()).toBe('wrote a');
    const { page, received: replies, done } = served(server, 'expired');
    page.postMessage({
      type: 'request',
      id,
      sent: Date.now(),
      method: 'POST',
      url: 'http://localhost:1000/conversations/create',
      headers: [],
      body: new TextEncoder().encode('a').buffer as ArrayBuffer,
    });
    await done;
    expect(replies.map((r) => r.type)).toEqual(['ready', 'expired']);
    expect(ran).toEqual(['POST /conversations/create']);
  });
});
