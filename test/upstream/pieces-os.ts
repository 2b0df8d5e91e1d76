/**
 * An independent Pieces OS for the mirror's tests: a real HTTP and WebSocket server
 * (node:http and ws) that speaks the SDK 4.1.0 wire shapes of the operations the service
 * mirrors, and shares no code with src/. It behaves as another implementation would:
 *
 * - its own ids (UUID-shaped, `<identity prefix>-0000-5000-9000-<counter>`), its own list
 *   order (newest first), its own names (rename: the first user message's first 40 characters),
 *   its own clock and latency, its own identity (`health.os.id`, new after `wipe()`);
 * - an append-only log of what it received (`log`, and `GET /__upstream/log`), with each
 *   request's outcome;
 * - faults (`fault()`, and `POST /__upstream/faults`): answer a status, commit and then drop
 *   the connection without answering, stay silent, or refuse the connection; `stop()` and
 *   `start()` take it off the network and back on the same port, its data kept.
 * - identifier streams (one frame of every id, then one per change) and a copilot stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { freePort } from '../free-port.js';

type Json = Record<string, any>;

/** What a fault does to a request it matches. */
export type FaultAction =
  /** Answers this status (and text) without doing the work. */
  | { status: number; body?: string; retryAfter?: number }
  /** Does the work, then drops the connection without answering (a lost answer). */
  | { drop: 'after-commit' }
  /** Drops the connection before doing anything. */
  | { drop: 'before' }
  /** Never answers (the connection stays open). */
  | { silent: true };

export interface Fault {
  /** `METHOD /path` prefix, e.g. `POST /conversations/create`, or `*` for every request (the fault-control paths never match). */
  match: string;
  action: FaultAction;
  /** How many matching requests it applies to; default every one. */
  times?: number;
}

export interface LogEntry {
  seq: number;
  method: string;
  path: string;
  query: string;
  body?: unknown;
  application?: string;
  /** The status answered, or what happened instead. */
  outcome: number | 'dropped' | 'silent' | 'refused';
}

type Collection = 'conversation' | 'conversationMessage' | 'application' | 'asset';

interface Stored {
  conversations: Map<string, Json>;
  messages: Map<string, Json>;
  applications: Map<string, Json>;
  sessions: Map<string, Json>;
  events: Json[];
  assets: Map<string, Json>;
}

const SCHEMA = { migration: 0, semantic: 'MAJOR_0_MINOR_0_PATCH_1' };
const VERSION = '12.1.0';
const STREAMS: Record<string, Collection> = {
  '/conversations/stream/identifiers': 'conversation',
  '/messages/stream/identifiers': 'conversationMessage',
  '/applications/stream/identifiers': 'application',
  '/assets/stream/identifiers': 'asset',
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

export interface UpstreamOptions {
  /** Milliseconds before each answer; default 0. */
  latencyMs?: number;
  /** The port; default a free one outside the Pieces OS ports. */
  port?: number;
}

export class IndependentPiecesOS {
  readonly log: LogEntry[] = [];
  identity = '';
  port = 0;
  latencyMs: number;
  #prefix = '';
  #counter = 0;
  #data: Stored = IndependentPiecesOS.#empty();
  #faults: Array<Fault & { used: number }> = [];
  #server: Server | null = null;
  #sockets = new WebSocketServer({ noServer: true });
  #connections = new Set<Socket>();
  #watchers = new Map<Collection, Set<WebSocket>>();

  constructor(options: UpstreamOptions = {}) {
    this.latencyMs = options.latencyMs ?? 0;
    this.port = options.port ?? 0;
    this.#newIdentity();
    this.#seedAssets();
  }

  static #empty(): Stored {
    return { conversations: new Map(), messages: new Map(), applications: new Map(), sessions: new Map(), events: [], assets: new Map() };
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts listening (again, on the same port, with the same data after `stop()`). */
  async start(): Promise<this> {
    if (this.#server) return this;
    if (!this.port) this.port = await freePort();
    const server = createServer((request, response) => void this.#handle(request, response));
    server.on('connection', (socket) => {
      this.#connections.add(socket);
      socket.on('close', () => this.#connections.delete(socket));
    });
    server.on('upgrade', (request, socket, head) => this.#upgrade(request, socket as Socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    return this;
  }

  /** Goes off the network: the port refuses connections, open ones (and streams) are cut; the data stays. */
  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = null;
    for (const client of this.#sockets.clients) client.terminate();
    this.#watchers.clear();
    for (const socket of this.#connections) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Its data wiped (a reinstall): another identity, nothing stored but its sample assets. */
  wipe(): void {
    this.#data = IndependentPiecesOS.#empty();
    this.#newIdentity();
    this.#seedAssets();
    for (const client of this.#sockets.clients) client.terminate();
    this.#watchers.clear();
  }

  fault(...faults: Fault[]): void {
    this.#faults.push(...faults.map((fault) => ({ ...fault, used: 0 })));
  }

  clearFaults(): void {
    this.#faults = [];
  }

  /** Every record, as its snapshots list them. */
  snapshot() {
    const messagesOf = (conversation: Json) => this.#messageList(conversation).map((m) => this.#data.messages.get(m)!);
    return {
      conversations: this.#newestFirst(this.#data.conversations).map(({ order, gone: _gone, ...c }): Json => ({ ...c, messages: messagesOf({ order }) })),
      applications: this.#newestFirst(this.#data.applications),
      sessions: [...this.#data.sessions.values()],
      events: [...this.#data.events],
      assets: this.#newestFirst(this.#data.assets),
    };
  }

  /** How many identifier-stream sockets are open on it. */
  openStreams(): number {
    return [...this.#watchers.values()].reduce((n, set) => n + set.size, 0);
  }

  /** What it received, as `METHOD /path` lines (fault-control requests excluded). */
  received(): string[] {
    return this.log.map((entry) => `${entry.method} ${entry.path}`);
  }

  #newIdentity() {
    const bytes = crypto.getRandomValues(new Uint8Array(4));
    this.#prefix = [...bytes].map((b) => hex(b, 2)).join('');
    this.identity = `${this.#prefix}-1d00-4000-8000-${hex(Date.now() % 0xffffffffffff, 12)}`;
    this.#counter = 0;
  }

  #id(): string {
    this.#counter += 1;
    return `${this.#prefix}-0000-5000-9000-${hex(this.#counter, 12)}`;
  }

  #now() {
    return { value: new Date().toISOString() };
  }

  #seedAssets() {
    for (const [name, language, text] of [
      ['retry.py', 'py', 'def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except Exception:\n            pass\n'],
      ['debounce.ts', 'ts', 'export function debounce(fn: () => void, ms: number) {\n  let t: any;\n  return () => { clearTimeout(t); t = setTimeout(fn, ms); };\n}\n'],
    ] as const) {
      const id = this.#id();
      const formatId = this.#id();
      const stamp = this.#now();
      const creator = this.#id();
      // A Format names its asset as a FlattenedAsset; a FlattenedFormat (a reference's) by its id.
      const flattened = {
        id: formatId,
        creator,
        classification: { generic: 'CODE', specific: language },
        role: 'BOTH',
        application: { id: creator, name: 'OS_SERVER', version: VERSION, platform: 'LINUX', onboarded: true, privacy: 'OPEN' },
        asset: id,
        bytes: { value: text.length, readable: `${text.length} B` },
        created: stamp,
        updated: stamp,
        fragment: { string: { raw: text } },
      };
      const reference = { id: formatId };
      const format = {
        ...flattened,
        asset: { id, creator, created: stamp, updated: stamp, mechanism: 'MANUAL', formats: { iterable: [reference] }, preview: { base: formatId }, original: formatId },
      };
      this.#data.assets.set(id, {
        schema: SCHEMA,
        id,
        name,
        creator,
        created: stamp,
        updated: stamp,
        formats: { iterable: [format] },
        preview: { base: { id: formatId, reference: flattened } },
        original: { id: formatId, reference: flattened },
        mechanism: 'MANUAL',
      });
    }
  }

  #newestFirst(map: Map<string, Json>): Json[] {
    return [...map.values()].reverse();
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  async #handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': '*',
      'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
      'Access-Control-Expose-Headers': '*',
      // Readable from cross-origin-isolated pages too (the benchmark's).
      'Cross-Origin-Resource-Policy': 'cross-origin',
    };
    if (request.method === 'OPTIONS') {
      response.writeHead(204, cors).end();
      return;
    }
    if (url.pathname.startsWith('/__upstream/')) return this.#control(url, text, response, cors);
    const entry: LogEntry = {
      seq: this.log.length + 1,
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      outcome: 0,
      ...(request.headers.application ? { application: String(request.headers.application) } : {}),
    };
    try {
      if (text) entry.body = JSON.parse(text);
    } catch {
      entry.body = text;
    }
    this.log.push(entry);
    const fault = this.#faultFor(`${entry.method} ${entry.path}`);
    if (this.latencyMs) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    if (fault && 'drop' in fault && fault.drop === 'before') {
      entry.outcome = 'refused';
      request.socket.destroy();
      return;
    }
    if (fault && 'silent' in fault) {
      entry.outcome = 'silent';
      return;
    }
    if (fault && 'status' in fault) {
      entry.outcome = fault.status;
      response.writeHead(fault.status, { ...cors, 'Content-Type': 'text/plain; charset=utf-8', ...(fault.retryAfter ? { 'Retry-After': String(fault.retryAfter) } : {}) });
      response.end(fault.body ?? `Fault: ${fault.status}.`);
      return;
    }
    let status = 200;
    let body: string | null;
    let type = 'application/json; charset=utf-8';
    try {
      const result = this.#answer(entry.method, url, entry.body, entry.application);
      if (result === undefined) {
        status = 204;
        body = null;
      } else if (typeof result === 'string') {
        body = result;
        type = 'text/plain; charset=utf-8';
      } else {
        body = JSON.stringify(result);
      }
    } catch (error) {
      status = error instanceof Refusal ? error.status : 500;
      body = (error as Error).message;
      type = 'text/plain; charset=utf-8';
    }
    if (fault && 'drop' in fault) {
      // The work is done; the answer is lost.
      entry.outcome = 'dropped';
      request.socket.destroy();
      return;
    }
    entry.outcome = status;
    response.writeHead(status, { ...cors, ...(body === null ? {} : { 'Content-Type': type }), 'X-Upstream': 'independent' });
    response.end(body ?? undefined);
  }

  #faultFor(line: string): FaultAction | undefined {
    for (const fault of this.#faults) {
      if (fault.times !== undefined && fault.used >= fault.times) continue;
      if (fault.match !== '*' && !line.startsWith(fault.match)) continue;
      fault.used += 1;
      return fault.action;
    }
    return undefined;
  }

  #control(url: URL, text: string, response: ServerResponse, cors: Record<string, string>) {
    const send = (value: unknown) => {
      response.writeHead(200, { ...cors, 'Content-Type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case '/__upstream/log':
        return send(this.log);
      case '/__upstream/data':
        return send(this.snapshot());
      case '/__upstream/faults':
        if (text) this.fault(...((Array.isArray(JSON.parse(text)) ? JSON.parse(text) : [JSON.parse(text)]) as Fault[]));
        else this.clearFaults();
        return send({ faults: this.#faults.length });
      case '/__upstream/wipe':
        this.wipe();
        return send({ identity: this.identity });
      default:
        response.writeHead(404, cors).end();
    }
  }

  #announce(collection: Collection, id: string, deleted = false) {
    const frame = JSON.stringify({ iterable: [{ [collection]: { id }, ...(deleted ? { deleted: true } : {}) }] });
    for (const socket of this.#watchers.get(collection) ?? []) socket.send(frame);
  }

  #ids(collection: Collection): string[] {
    const map = { conversation: this.#data.conversations, conversationMessage: this.#data.messages, application: this.#data.applications, asset: this.#data.assets }[collection];
    return [...map.keys()].reverse();
  }

  #upgrade(request: IncomingMessage, socket: Socket, head: Buffer) {
    const url = new URL(request.url ?? '/', this.url);
    const collection = STREAMS[url.pathname.replace(/\/$/, '')];
    const path = url.pathname;
    if (!collection && path !== '/qgpt/stream' && path !== '/.well-known/stream/health') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    this.#sockets.handleUpgrade(request, socket, head, (client) => {
      if (collection) {
        const set = this.#watchers.get(collection) ?? new Set();
        this.#watchers.set(collection, set);
        set.add(client);
        client.on('close', () => set.delete(client));
        client.send(JSON.stringify({ iterable: this.#ids(collection).map((id) => ({ [collection]: { id } })) }));
      } else if (path === '/qgpt/stream') {
        client.on('message', (data) => this.#copilot(client, String(data)));
      } else {
        client.send(`ok:${this.identity}`);
      }
    });
  }

  /** The copilot: a short canned answer in three chunks, ending COMPLETED; `stop` ends it STOPPED. */
  #copilot(client: WebSocket, text: string) {
    let input: Json;
    try {
      input = JSON.parse(text) as Json;
    } catch {
      client.send(JSON.stringify({ conversation: '', status: 'FAILED', statusCode: 400, errorMessage: 'not JSON' }));
      return;
    }
    const request = typeof input.request === 'string' ? input.request : this.#id();
    const conversation = typeof input.conversation === 'string' ? input.conversation : '';
    if (input.stop) {
      client.send(JSON.stringify({ request, conversation, status: 'STOPPED' }));
      return;
    }
    const chunks = ['The upstream ', 'answers: ', String(input.question?.query ?? '')];
    for (const chunk of chunks) {
      client.send(JSON.stringify({ request, conversation, status: 'IN-PROGRESS', question: { answers: { iterable: [{ text: chunk, score: 1 }] } } }));
    }
    client.send(JSON.stringify({ request, conversation, status: 'COMPLETED' }));
  }

  // ---- the operations -----------------------------------------------------------------------

  #answer(method: string, url: URL, body: unknown, header?: string): Json | string | undefined {
    const path = url.pathname.replace(/\/$/, '') || '/';
    const transferables = url.searchParams.get('transferables') !== 'false';
    const parts = path.split('/').slice(1);
    const is = (m: string, pattern: string) => {
      if (m !== method) return null;
      const p = pattern.split('/').slice(1);
      if (p.length !== parts.length) return null;
      const params: string[] = [];
      for (let i = 0; i < p.length; i++) {
        if (p[i] === '*') params.push(decodeURIComponent(parts[i]!));
        else if (p[i] !== parts[i]) return null;
      }
      return params;
    };
    if (header !== undefined && header !== '' && !this.#data.applications.has(header) && method === 'POST' && !path.startsWith('/connect')) {
      throw new Refusal(404, `Unknown application ${header}.`);
    }
    let m: string[] | null;
    if (is('GET', '/.well-known/health')) return 'ok';
    if (is('GET', '/.well-known/version')) return VERSION;
    if (is('POST', '/connect')) return this.#connect(body);
    if (is('GET', '/os/device/information')) return { name: 'independent upstream', os: { id: this.identity } };
    if (is('GET', '/applications')) return { iterable: this.#newestFirst(this.#data.applications) };
    if (is('GET', '/applications/external')) return { iterable: [{ name: 'Visual Studio Code', version: '1.99.0' }] };
    if (is('GET', '/applications/external/related')) return { iterable: [{ name: 'Visual Studio Code', version: '1.99.0' }, { name: 'Obsidian' }] };
    if (is('GET', '/user')) return { user: { id: this.identity, email: 'someone@example.com', username: 'independent', name: 'Independent User', aesthetics: { theme: { dark: true }, font: { size: 12 } } } };
    if (is('POST', '/applications/register')) return this.#register(body);
    if (is('POST', '/application/update')) return this.#updateApplication(body);
    if (is('POST', '/applications/session/open')) return this.#openSession();
    if (is('POST', '/applications/session/close')) return this.#closeSession(body);
    if ((m = is('GET', '/applications/sessions/*'))) return this.#session(m[0]!);
    if (is('POST', '/applications/usage/engagement/interaction')) return this.#event('interaction', body, ['description', 'element']);
    if (is('POST', '/applications/usage/engagement/keyboard')) return this.#event('keyboard', body, ['description', 'shortcut']);
    if (is('POST', '/applications/usage/installation')) return void this.#event('installation', body, []);
    if (is('POST', '/applications/usage/updated')) return void this.#event('updated', body, []);
    if ((m = is('GET', '/applications/*'))) return this.#found(this.#data.applications, m[0]!, 'application');
    if (is('GET', '/conversations')) return { iterable: this.#newestFirst(this.#data.conversations).map((c) => this.#conversationWire(c, transferables)) };
    if (is('GET', '/conversations/identifiers')) return { iterable: this.#ids('conversation').map((id) => ({ id })) };
    if (is('POST', '/conversations/create')) return this.#conversationWire(this.#createConversation(body), transferables);
    if ((m = is('POST', '/conversations/create/from_asset/*'))) return this.#fromAsset(m[0]!);
    if ((m = is('POST', '/conversations/*/delete'))) return void this.#deleteConversation(m[0]!);
    if (is('POST', '/conversation/update')) return this.#conversationWire(this.#updateConversation(body), transferables);
    if ((m = is('GET', '/conversation/*'))) return this.#conversationWire(this.#conversation(m[0]!), transferables);
    if ((m = is('GET', '/conversation/*/messages'))) return { iterable: this.#messageList(this.#conversation(m[0]!)).map((id) => this.#data.messages.get(id)) };
    if ((m = is('POST', '/conversation/*/rename'))) return this.#conversationWire(this.#rename(m[0]!), true);
    if ((m = is('POST', '/conversation/*/assets/associate/*'))) return void this.#associate(m[0]!, m[1]!, true);
    if ((m = is('POST', '/conversation/*/assets/disassociate/*'))) return void this.#associate(m[0]!, m[1]!, false);
    if (is('GET', '/messages')) return { iterable: [...this.#data.messages.values()].reverse() };
    if (is('POST', '/messages/create')) return this.#createMessage(body);
    if ((m = is('POST', '/messages/*/delete'))) return void this.#deleteMessage(m[0]!);
    if ((m = is('GET', '/message/*'))) return this.#found(this.#data.messages, m[0]!, 'message');
    if (is('POST', '/message/update') || is('POST', '/message/update/value')) return this.#updateMessage(body);
    if (is('GET', '/assets')) return { iterable: this.#newestFirst(this.#data.assets) };
    if (is('GET', '/assets/identifiers')) return { iterable: this.#ids('asset').map((id) => ({ id })) };
    if ((m = is('GET', '/assets/*')) || (m = is('GET', '/asset/*'))) return this.#found(this.#data.assets, m[0]!, 'asset');
    throw new Refusal(404, `${method} ${path}: no such operation here.`);
  }

  #found(map: Map<string, Json>, id: string, what: string): Json {
    const found = map.get(id);
    if (!found) throw new Refusal(404, `No ${what} ${id}.`);
    return found;
  }

  #object(body: unknown, what: string): Json {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, `${what} must be a JSON object.`);
    return body as Json;
  }

  #application(seed: Json): Json {
    for (const key of ['name', 'version', 'platform']) if (typeof seed[key] !== 'string') throw new Refusal(400, `application.${key} is required.`);
    return { schema: SCHEMA, onboarded: true, privacy: 'OPEN', ...seed };
  }

  #connect(body: unknown): Json {
    const seed = this.#object(this.#object(body, 'The connection').application, 'application');
    const same = [...this.#data.applications.values()].find((a) => a.name === seed.name && a.platform === seed.platform && a.version === seed.version);
    const application = same ?? this.#application({ ...seed, id: this.#id() });
    if (!same) {
      this.#data.applications.set(application.id, application);
      this.#announce('application', application.id);
    }
    return { os: this.identity, application, health: { os: { id: this.identity, version: VERSION } } };
  }

  #register(body: unknown): Json {
    const application = body === undefined ? this.#application({ id: this.#id(), name: 'UNKNOWN', version: '1', platform: 'WEB' }) : this.#application(this.#object(body, 'The application'));
    if (typeof application.id !== 'string') application.id = this.#id();
    this.#data.applications.set(application.id, application);
    this.#announce('application', application.id);
    return application;
  }

  #updateApplication(body: unknown): Json {
    const application = this.#application(this.#object(body, 'The application'));
    this.#found(this.#data.applications, application.id, 'application');
    this.#data.applications.set(application.id, application);
    this.#announce('application', application.id);
    return application;
  }

  #openSession(): Json {
    const session = { schema: SCHEMA, id: this.#id(), opened: this.#now() };
    this.#data.sessions.set(session.id, session);
    return session;
  }

  #closeSession(body: unknown): Json {
    if (typeof body !== 'string') throw new Refusal(400, 'The body must be the session id as a JSON string.');
    const session = this.#session(body);
    session.closed ??= this.#now();
    return session;
  }

  #session(id: string): Json {
    return this.#found(this.#data.sessions, id, 'session');
  }

  #event(kind: string, body: unknown, echo: string[]): Json {
    const event = this.#object(body, 'The event');
    if (echo.includes('description') && typeof event.description !== 'string') throw new Refusal(400, 'description is required.');
    for (const key of ['application', 'current', 'previous']) {
      if (event[key] && typeof event[key] === 'object') {
        const application = this.#application(event[key] as Json);
        this.#data.applications.set(application.id, application);
        this.#announce('application', application.id);
      }
    }
    this.#data.events.push({ kind, at: new Date().toISOString(), ...event });
    return Object.fromEntries(echo.filter((key) => event[key] !== undefined).map((key) => [key, event[key]]));
  }

  #conversation(id: string): Json {
    return this.#found(this.#data.conversations, id, 'conversation');
  }

  #messageList(conversation: Json): string[] {
    return (conversation.order as string[]).filter((id) => this.#data.messages.has(id));
  }

  #conversationWire(conversation: Json, transferables: boolean): Json {
    const { order, gone, ...rest } = conversation;
    const ids = this.#messageList(conversation);
    const indices: Record<string, number> = Object.fromEntries(ids.map((id, i) => [id, i]));
    for (const id of gone as string[]) indices[id] = -1;
    return {
      ...rest,
      messages: {
        iterable: ids.map((id) => (transferables ? { id, reference: this.#data.messages.get(id) } : { id })),
        indices,
      },
    };
  }

  #message(seed: Json, conversation: string): Json {
    const role = seed.role;
    if (!['USER', 'ASSISTANT', 'SYSTEM', 'UNKNOWN'].includes(role)) throw new Refusal(400, 'A message needs a role.');
    if (typeof seed.fragment?.string?.raw !== 'string') throw new Refusal(400, 'A message needs fragment.string.raw.');
    const stamp = this.#now();
    return { schema: SCHEMA, id: this.#id(), created: stamp, updated: stamp, role, fragment: { string: { raw: seed.fragment.string.raw } }, conversation: { id: conversation } };
  }

  #createConversation(body: unknown): Json {
    const seed = body === undefined ? { type: 'COPILOT' } : this.#object(body, 'The conversation');
    const id = this.#id();
    const stamp = this.#now();
    const messages = ((seed.messages ?? []) as Json[]).map((m) => this.#message(m, id));
    const conversation: Json = {
      schema: SCHEMA,
      id,
      created: stamp,
      updated: stamp,
      type: seed.type ?? 'COPILOT',
      ...(typeof seed.name === 'string' ? { name: seed.name } : {}),
      ...(seed.assets ? { assets: seed.assets } : {}),
      order: messages.map((m) => m.id),
      gone: [],
    };
    this.#data.conversations.set(id, conversation);
    for (const message of messages) this.#data.messages.set(message.id, message);
    this.#announce('conversation', id);
    for (const message of messages) this.#announce('conversationMessage', message.id);
    return conversation;
  }

  #fromAsset(assetId: string): Json {
    const asset = this.#found(this.#data.assets, assetId, 'asset');
    const text = asset.original.reference.fragment.string.raw as string;
    const conversation = this.#createConversation({
      type: 'COPILOT',
      name: `About ${asset.name}`,
      assets: { iterable: [{ id: assetId }] },
      messages: [{ role: 'SYSTEM', fragment: { string: { raw: `${asset.name}: ${text.split('\n')[0]}` } } }],
    });
    return { conversation: { id: conversation.id, reference: this.#conversationWire(conversation, true) } };
  }

  #deleteConversation(id: string) {
    const conversation = this.#conversation(id);
    for (const message of this.#messageList(conversation)) {
      this.#data.messages.delete(message);
      this.#announce('conversationMessage', message, true);
    }
    this.#data.conversations.delete(id);
    this.#announce('conversation', id, true);
  }

  #touch(conversation: Json) {
    conversation.updated = this.#now();
    this.#announce('conversation', conversation.id);
  }

  #updateConversation(body: unknown): Json {
    const sent = this.#object(body, 'The conversation');
    const conversation = this.#conversation(String(sent.id));
    for (const key of ['name', 'favorited', 'assets', 'type', 'annotations', 'model', 'pipeline', 'grounding', 'websites', 'anchors']) {
      if (sent[key] === undefined || sent[key] === null) delete conversation[key];
      else conversation[key] = sent[key];
    }
    conversation.type ??= 'COPILOT';
    this.#touch(conversation);
    return conversation;
  }

  #rename(id: string): Json {
    const conversation = this.#conversation(id);
    const first = this.#messageList(conversation)
      .map((m) => this.#data.messages.get(m)!)
      .find((m) => m.role === 'USER');
    if (first) conversation.name = String(first.fragment.string.raw).slice(0, 40);
    this.#touch(conversation);
    return conversation;
  }

  #associate(id: string, assetId: string, add: boolean) {
    const conversation = this.#conversation(id);
    if (add) this.#found(this.#data.assets, assetId, 'asset');
    const others = ((conversation.assets?.iterable ?? []) as Json[]).filter((a) => a.id !== assetId);
    conversation.assets = { iterable: add ? [...others, { id: assetId }] : others };
    this.#touch(conversation);
  }

  #createMessage(body: unknown): Json {
    const seed = this.#object(body, 'The message');
    const conversation = this.#conversation(String(seed.conversation?.id));
    const message = this.#message(seed, conversation.id);
    this.#data.messages.set(message.id, message);
    conversation.order.push(message.id);
    this.#announce('conversationMessage', message.id);
    this.#touch(conversation);
    return message;
  }

  #deleteMessage(id: string) {
    const message = this.#found(this.#data.messages, id, 'message');
    const conversation = this.#data.conversations.get(message.conversation.id);
    this.#data.messages.delete(id);
    if (conversation) {
      conversation.gone.push(id);
      this.#touch(conversation);
    }
    this.#announce('conversationMessage', id, true);
  }

  #updateMessage(body: unknown): Json {
    const sent = this.#object(body, 'The message');
    const message = this.#found(this.#data.messages, String(sent.id), 'message');
    if (typeof sent.fragment?.string?.raw === 'string') message.fragment = { string: { raw: sent.fragment.string.raw } };
    if (typeof sent.role === 'string') message.role = sent.role;
    if (typeof sent.sentiment === 'string') message.sentiment = sent.sentiment;
    message.updated = this.#now();
    this.#announce('conversationMessage', message.id);
    const conversation = this.#data.conversations.get(message.conversation.id);
    if (conversation) this.#touch(conversation);
    return message;
  }
}

/** Starts an independent Pieces OS on a free port. */
export async function startUpstream(options: UpstreamOptions = {}): Promise<IndependentPiecesOS> {
  return new IndependentPiecesOS(options).start();
}
