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
 * - identifier streams (one frame of every id, then one per change) and a copilot stream;
 * - persons and workstream summaries (as the SDK writes them, each listing the other), their
 *   associations and identifier streams;
 * - the asset family (assets with their formats, annotations, tags and websites; anchors, and
 * their associations with conversations and assets; activities) in its own internal shapes, written to the
 * SDK 4.1.0 models on the way out:
 *   one `BOTH` format per asset, its own names (the text's first line) and its own DESCRIPTION
 *   ("Saved by <application>") when the seed gives none.
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

type Collection =
  | 'conversation'
  | 'conversationMessage'
  | 'application'
  | 'asset'
  | 'anchor'
  | 'activity'
  | 'person'
  | 'workstream_summary';

/** An asset as this upstream keeps it (written as an SDK Asset on the way out). */
interface AssetRow {
  id: string;
  name: string;
  creator: string;
  created: Json;
  updated: Json;
  mechanism: string;
  format: string;
  favorited?: boolean;
}

interface FormatRow {
  id: string;
  asset: string;
  classification: Json;
  application: Json;
  created: Json;
  updated: Json;
  text: string;
}

interface Stored {
  conversations: Map<string, Json>;
  messages: Map<string, Json>;
  applications: Map<string, Json>;
  sessions: Map<string, Json>;
  events: Json[];
  assets: Map<string, AssetRow>;
  formats: Map<string, FormatRow>;
  /** Annotations as the SDK writes them, `asset` a reference. */
  annotations: Map<string, Json>;
  /** Tags and websites with the ids of their assets (`on`). */
  tags: Map<string, Json & { on: string[] }>;
  websites: Map<string, Json & { on: string[] }>;
  /** Anchors with the ids of their conversations and assets. */
  anchors: Map<string, Json & { conversations: string[]; assets: string[] }>;
  activities: Map<string, Json & { asset?: string }>;
  /** Persons and workstream summaries as the SDK writes them (their lists of each other `Flattened…` lists). */
  persons: Map<string, Json>;
  summaries: Map<string, Json>;
}

const SCHEMA = { migration: 0, semantic: 'MAJOR_0_MINOR_0_PATCH_1' };
const VERSION = '12.1.0';
const STREAMS: Record<string, Collection> = {
  '/conversations/stream/identifiers': 'conversation',
  '/messages/stream/identifiers': 'conversationMessage',
  '/applications/stream/identifiers': 'application',
  '/assets/stream/identifiers': 'asset',
  '/anchors/stream/identifiers': 'anchor',
  '/activities/stream/identifiers': 'activity',
  '/persons/stream/identifiers': 'person',
  '/workstream_summaries/stream/identifiers': 'workstream_summary',
};

/** The asset events it records, with the SDK's values for them. */
const ASSET_EVENTS = {
  asset_created: 'an_asset_was_created',
  asset_updated: 'an_asset_was_updated',
  asset_format_value_edited: 'a_specific_format_value_was_edited_on_an_asset',
} as const;

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
    return {
      conversations: new Map(),
      messages: new Map(),
      applications: new Map(),
      sessions: new Map(),
      events: [],
      assets: new Map(),
      formats: new Map(),
      annotations: new Map(),
      tags: new Map(),
      websites: new Map(),
      anchors: new Map(),
      activities: new Map(),
      persons: new Map(),
      summaries: new Map(),
    };
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
      conversations: this.#newestFirst(this.#data.conversations).map(
        ({ order, gone: _gone, ...c }): Json => ({ ...c, messages: messagesOf({ order }) }),
      ),
      applications: this.#newestFirst(this.#data.applications),
      sessions: [...this.#data.sessions.values()],
      events: [...this.#data.events],
      assets: [...this.#data.assets.values()].reverse().map((a) => this.#assetWire(a, true)),
      anchors: [...this.#data.anchors.values()].reverse().map((a) => this.#anchorWire(a)),
      activities: [...this.#data.activities.values()].map((a) => this.#activityWire(a)),
      annotations: [...this.#data.annotations.values()],
      persons: [...this.#data.persons.values()].reverse(),
      summaries: [...this.#data.summaries.values()].reverse(),
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
    const application = { id: this.#id(), name: 'OS_SERVER', version: VERSION, platform: 'LINUX', onboarded: true, privacy: 'OPEN' };
    for (const [name, language, text] of [
      [
        'retry.py',
        'py',
        'def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except Exception:\n            pass\n',
      ],
      [
        'debounce.ts',
        'ts',
        'export function debounce(fn: () => void, ms: number) {\n  let t: any;\n  return () => { clearTimeout(t); t = setTimeout(fn, ms); };\n}\n',
      ],
    ] as const) {
      this.#createAsset(
        {
          asset: {
            application,
            format: { fragment: { string: { raw: text } }, classification: { specific: language } },
            metadata: { name },
          },
        },
        false,
      );
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
      response.writeHead(fault.status, {
        ...cors,
        'Content-Type': 'text/plain; charset=utf-8',
        ...(fault.retryAfter ? { 'Retry-After': String(fault.retryAfter) } : {}),
      });
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
    const map: Map<string, unknown> = {
      conversation: this.#data.conversations,
      conversationMessage: this.#data.messages,
      application: this.#data.applications,
      asset: this.#data.assets,
      anchor: this.#data.anchors,
      activity: this.#data.activities,
      person: this.#data.persons,
      workstream_summary: this.#data.summaries,
    }[collection];
    return [...map.keys()].reverse();
  }

  #upgrade(request: IncomingMessage, socket: Socket, head: Buffer) {
    const url = new URL(request.url ?? '/', this.url);
    const collection = STREAMS[url.pathname.replace(/\/$/, '')];
    const path = url.pathname;
    if (!collection && path !== '/qgpt/stream' && path !== '/.well-known/stream/health') {
      // A client may reset the connection as it reads the refusal: nothing more to do with it.
      socket.on('error', () => {});
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
      client.send(
        JSON.stringify({ request, conversation, status: 'IN-PROGRESS', question: { answers: { iterable: [{ text: chunk, score: 1 }] } } }),
      );
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
    if (
      header !== undefined &&
      header !== '' &&
      !this.#data.applications.has(header) &&
      method === 'POST' &&
      !path.startsWith('/connect')
    ) {
      throw new Refusal(404, `Unknown application ${header}.`);
    }
    let m: string[] | null;
    if (is('GET', '/.well-known/health')) return 'ok';
    if (is('GET', '/.well-known/version')) return VERSION;
    if (is('POST', '/connect')) return this.#connect(body);
    if (is('GET', '/os/device/information')) return { name: 'independent upstream', os: { id: this.identity } };
    if (is('GET', '/applications')) return { iterable: this.#newestFirst(this.#data.applications) };
    if (is('GET', '/applications/external')) return { iterable: [{ name: 'Visual Studio Code', version: '1.99.0' }] };
    if (is('GET', '/applications/external/related'))
      return { iterable: [{ name: 'Visual Studio Code', version: '1.99.0' }, { name: 'Obsidian' }] };
    if (is('GET', '/user'))
      return {
        user: {
          id: this.identity,
          email: 'someone@example.com',
          username: 'independent',
          name: 'Independent User',
          aesthetics: { theme: { dark: true }, font: { size: 12 } },
        },
      };
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
    if (is('GET', '/conversations'))
      return { iterable: this.#newestFirst(this.#data.conversations).map((c) => this.#conversationWire(c, transferables)) };
    if (is('GET', '/conversations/identifiers')) return { iterable: this.#ids('conversation').map((id) => ({ id })) };
    if (is('POST', '/conversations/create')) return this.#conversationWire(this.#createConversation(body), transferables);
    if ((m = is('POST', '/conversations/create/from_asset/*'))) return this.#fromAsset(m[0]!);
    if ((m = is('POST', '/conversations/*/delete'))) return void this.#deleteConversation(m[0]!);
    if (is('POST', '/conversation/update')) return this.#conversationWire(this.#updateConversation(body), transferables);
    if ((m = is('GET', '/conversation/*'))) return this.#conversationWire(this.#conversation(m[0]!), transferables);
    if ((m = is('GET', '/conversation/*/messages')))
      return { iterable: this.#messageList(this.#conversation(m[0]!)).map((id) => this.#data.messages.get(id)) };
    if ((m = is('POST', '/conversation/*/rename'))) return this.#conversationWire(this.#rename(m[0]!), true);
    if ((m = is('POST', '/conversation/*/assets/associate/*'))) return void this.#associate(m[0]!, m[1]!, true);
    if ((m = is('POST', '/conversation/*/assets/disassociate/*'))) return void this.#associate(m[0]!, m[1]!, false);
    if (is('GET', '/messages')) return { iterable: [...this.#data.messages.values()].reverse() };
    if (is('POST', '/messages/create')) return this.#createMessage(body);
    if ((m = is('POST', '/messages/*/delete'))) return void this.#deleteMessage(m[0]!);
    if ((m = is('GET', '/message/*'))) return this.#found(this.#data.messages, m[0]!, 'message');
    if (is('POST', '/message/update') || is('POST', '/message/update/value')) return this.#updateMessage(body);
    if (is('GET', '/assets')) return { iterable: [...this.#data.assets.values()].reverse().map((a) => this.#assetWire(a, transferables)) };
    if (is('GET', '/assets/identifiers')) return { iterable: this.#ids('asset').map((id) => ({ id })) };
    if (is('POST', '/assets/create')) return this.#assetWire(this.#createAsset(body), transferables);
    if (is('POST', '/asset/update')) return this.#assetWire(this.#updateAsset(body), transferables);
    if (is('POST', '/format/update/value'))
      return this.#formatWire(this.#updateFormat(body), url.searchParams.get('transferable') !== 'false');
    if ((m = is('POST', '/assets/*/delete'))) return this.#deleteAsset(m[0]!);
    if ((m = is('GET', '/assets/*')) || (m = is('GET', '/asset/*'))) return this.#assetWire(this.#asset(m[0]!), transferables);
    if ((m = is('GET', '/format/*')))
      return this.#formatWire(this.#found(this.#data.formats, m[0]!, 'format'), url.searchParams.get('transferable') !== 'false');
    if ((m = is('POST', '/asset/*/tags/associate/*'))) return void this.#label('tags', m[0]!, m[1]!, true);
    if ((m = is('POST', '/asset/*/tags/disassociate/*'))) return void this.#label('tags', m[0]!, m[1]!, false);
    if ((m = is('POST', '/asset/*/websites/associate/*'))) return void this.#label('websites', m[0]!, m[1]!, true);
    if ((m = is('POST', '/asset/*/websites/disassociate/*'))) return void this.#label('websites', m[0]!, m[1]!, false);
    if ((m = is('GET', '/tag/*'))) return this.#labelWire(this.#found(this.#data.tags, m[0]!, 'tag'));
    if ((m = is('GET', '/website/*'))) return this.#labelWire(this.#found(this.#data.websites, m[0]!, 'website'));
    if (is('GET', '/annotations')) return { iterable: [...this.#data.annotations.values()] };
    if (is('POST', '/annotations/create')) return this.#createAnnotation(body);
    if (is('POST', '/annotation/update')) return this.#updateAnnotation(body);
    if ((m = is('POST', '/annotations/*/delete'))) return void this.#deleteAnnotation(m[0]!);
    if ((m = is('GET', '/annotation/*'))) return this.#found(this.#data.annotations, m[0]!, 'annotation');
    if (is('GET', '/anchors')) return { iterable: [...this.#data.anchors.values()].reverse().map((a) => this.#anchorWire(a)) };
    if (is('POST', '/anchors/create')) return this.#anchorWire(this.#createAnchor(body));
    if ((m = is('POST', '/anchors/*/delete'))) return void this.#deleteAnchor(m[0]!);
    if ((m = is('GET', '/anchor/*'))) return this.#anchorWire(this.#found(this.#data.anchors, m[0]!, 'anchor'));
    // Associations of anchors, from either side: [path, anchor index, other index, kind, add].
    for (const [pattern, a, o, kind, add] of [
      ['/anchor/*/conversations/associate/*', 0, 1, 'conversation', true],
      ['/anchor/*/conversations/disassociate/*', 0, 1, 'conversation', false],
      ['/anchor/*/assets/associate/*', 0, 1, 'asset', true],
      ['/anchor/*/assets/disassociate/*', 0, 1, 'asset', false],
      ['/conversation/*/anchors/associate/*', 1, 0, 'conversation', true],
      ['/conversation/*/anchors/disassociate/*', 1, 0, 'conversation', false],
      ['/asset/*/anchors/associate/*', 1, 0, 'asset', true],
      ['/asset/*/anchors/disassociate/*', 1, 0, 'asset', false],
    ] as const) {
      if ((m = is('POST', pattern))) return void this.#relateAnchor(m[a]!, kind, m[o]!, add);
    }
    // Persons and workstream summaries, and their associations (each lists the other).
    for (const [list, item, map, collection] of [
      ['persons', 'person', this.#data.persons, 'person'],
      ['workstream_summaries', 'workstream_summary', this.#data.summaries, 'workstream_summary'],
    ] as const) {
      if (is('GET', `/${list}`)) return { iterable: [...map.values()].reverse() };
      if (is('POST', `/${list}/create`)) return this.#createMaterial(map, collection, body);
      if (is('POST', `/${item}/update`)) return this.#updateMaterial(map, collection, body);
      if ((m = is('POST', `/${list}/*/delete`))) return void this.#deleteMaterial(map, collection, m[0]!);
      if ((m = is('GET', `/${item}/*`))) return this.#found(map, m[0]!, item);
    }
    for (const [pattern, otherMap, key, back, add] of [
      ['/person/*/persons/associate/*', this.#data.persons, 'persons', 'persons', true],
      ['/person/*/persons/disassociate/*', this.#data.persons, 'persons', 'persons', false],
      ['/person/*/workstream_summaries/associate/*', this.#data.summaries, 'summaries', 'persons', true],
      ['/person/*/workstream_summaries/disassociate/*', this.#data.summaries, 'summaries', 'persons', false],
      // A person with a record of a hand-written kind: an annotation.
      ['/person/*/annotations/associate/*', this.#data.annotations, 'annotations', 'persons', true],
      ['/person/*/annotations/disassociate/*', this.#data.annotations, 'annotations', 'persons', false],
    ] as const) {
      if ((m = is('POST', pattern))) return void this.#relatePerson(m[0]!, otherMap, m[1]!, key, back, add);
    }
    if (is('GET', '/activities')) return { iterable: [...this.#data.activities.values()].map((a) => this.#activityWire(a)) };
    if ((m = is('GET', '/activity/*'))) return this.#activityWire(this.#found(this.#data.activities, m[0]!, 'activity'));
    if (is('POST', '/os/sign_in'))
      return { id: this.identity, email: 'someone@example.com', username: 'independent', name: 'Independent User' };
    if (is('POST', '/os/sign_out')) return { iterable: [] };
    // The folders the user picked in the OS's picker (none is shown here: the same ones each time).
    if (is('POST', '/os/filesystem/folders/pick')) return ['/home/independent/projects'];
    throw new Refusal(404, `${method} ${path}: no such operation here.`);
  }

  #found<T>(map: Map<string, T>, id: string, what: string): T {
    const found = map.get(id);
    if (!found) throw new Refusal(404, `No ${what} ${id}.`);
    return found;
  }

  #object(body: unknown, what: string): Json {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, `${what} must be a JSON object.`);
    return body as Json;
  }

  #application(seed: Json): Json {
    for (const key of ['name', 'version', 'platform'])
      if (typeof seed[key] !== 'string') throw new Refusal(400, `application.${key} is required.`);
    return { schema: SCHEMA, onboarded: true, privacy: 'OPEN', ...seed };
  }

  #connect(body: unknown): Json {
    const seed = this.#object(this.#object(body, 'The connection').application, 'application');
    const same = [...this.#data.applications.values()].find(
      (a) => a.name === seed.name && a.platform === seed.platform && a.version === seed.version,
    );
    const application = same ?? this.#application({ ...seed, id: this.#id() });
    if (!same) {
      this.#data.applications.set(application.id, application);
      this.#announce('application', application.id);
    }
    return { os: this.identity, application, health: { os: { id: this.identity, version: VERSION } } };
  }

  #register(body: unknown): Json {
    const application =
      body === undefined
        ? this.#application({ id: this.#id(), name: 'UNKNOWN', version: '1', platform: 'WEB' })
        : this.#application(this.#object(body, 'The application'));
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
    return {
      schema: SCHEMA,
      id: this.#id(),
      created: stamp,
      updated: stamp,
      role,
      fragment: { string: { raw: seed.fragment.string.raw } },
      conversation: { id: conversation },
    };
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
    const asset = this.#asset(assetId);
    const text = this.#data.formats.get(asset.format)!.text;
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
    for (const anchor of this.#data.anchors.values()) {
      if (!anchor.conversations.includes(id)) continue;
      anchor.conversations = anchor.conversations.filter((c) => c !== id);
      this.#announce('anchor', anchor.id);
    }
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
    if (add) this.#asset(assetId);
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

  // ---- the asset family ---------------------------------------------------------------------

  #asset(id: string): AssetRow {
    return this.#found(this.#data.assets, id, 'asset');
  }

  #flatAsset(asset: AssetRow): Json {
    const listed = (map: Map<string, Json & { on: string[] }>) =>
      [...map.values()].filter((item) => item.on.includes(asset.id)).map((item) => ({ id: item.id }));
    const annotations = [...this.#data.annotations.values()].filter((a) => a.asset?.id === asset.id).map((a) => ({ id: a.id }));
    const tags = listed(this.#data.tags);
    const websites = listed(this.#data.websites);
    return {
      schema: SCHEMA,
      id: asset.id,
      name: asset.name,
      creator: asset.creator,
      created: asset.created,
      updated: asset.updated,
      mechanism: asset.mechanism,
      formats: { iterable: [{ id: asset.format }] },
      preview: { base: asset.format },
      original: asset.format,
      ...(asset.favorited !== undefined ? { favorited: asset.favorited } : {}),
      ...(annotations.length ? { annotations: { iterable: annotations } } : {}),
      ...(tags.length ? { tags: { iterable: tags } } : {}),
      ...(websites.length ? { websites: { iterable: websites } } : {}),
    };
  }

  /** A FlattenedFormat (`asset` its id); its value when asked. */
  #flatFormat(format: FormatRow, value: boolean): Json {
    const size = Buffer.byteLength(format.text);
    return {
      schema: SCHEMA,
      id: format.id,
      creator: format.application.id,
      classification: format.classification,
      role: 'BOTH',
      application: format.application,
      asset: format.asset,
      bytes: { value: size, readable: `${size} B` },
      created: format.created,
      updated: format.updated,
      ...(value ? { fragment: { string: { raw: format.text } } } : {}),
    };
  }

  #formatWire(format: FormatRow, value: boolean): Json {
    return { ...this.#flatFormat(format, value), asset: this.#flatAsset(this.#asset(format.asset)) };
  }

  #labelWire(label: Json & { on: string[] }): Json {
    const { on, ...rest } = label;
    return { ...rest, ...(on.length ? { assets: { iterable: on.map((id) => ({ id })) } } : {}) };
  }

  #assetWire(asset: AssetRow, transferables: boolean): Json {
    const format = this.#data.formats.get(asset.format)!;
    const listed = (map: Map<string, Json & { on: string[] }>) =>
      [...map.values()].filter((item) => item.on.includes(asset.id)).map((item) => this.#labelWire(item));
    const annotations = [...this.#data.annotations.values()].filter((a) => a.asset?.id === asset.id);
    const tags = listed(this.#data.tags);
    const websites = listed(this.#data.websites);
    const anchors = [...this.#data.anchors.values()]
      .filter((anchor) => anchor.assets.includes(asset.id))
      .map((anchor) => this.#anchorWire(anchor));
    const reference = { id: format.id, reference: this.#flatFormat(format, transferables) };
    return {
      ...this.#flatAsset(asset),
      formats: { iterable: [this.#formatWire(format, transferables)] },
      preview: { base: reference },
      original: reference,
      ...(annotations.length ? { annotations: { iterable: annotations } } : {}),
      ...(tags.length ? { tags: { iterable: tags } } : {}),
      ...(websites.length ? { websites: { iterable: websites } } : {}),
      ...(anchors.length ? { anchors: { iterable: anchors } } : {}),
    };
  }

  #activityWire(activity: Json & { asset?: string }): Json {
    const { asset, ...rest } = activity;
    const joined = asset ? this.#data.assets.get(asset) : undefined;
    return { ...rest, ...(joined ? { asset: this.#flatAsset(joined) } : {}) };
  }

  /** An activity about an asset: its identifier-description pair (the SDK's TrackedAssetEventIdentifierDescriptionPairs, wire spelling). */
  #record(asset: string, what: keyof typeof ASSET_EVENTS, application: Json) {
    const stamp = this.#now();
    const id = this.#id();
    const activity = {
      schema: SCHEMA,
      id,
      created: stamp,
      updated: stamp,
      event: { asset: { asset: { id: asset }, identifier_description_pair: { [what]: ASSET_EVENTS[what] } } },
      application,
      mechanism: 'MANUAL',
      asset,
    };
    this.#data.activities.set(id, activity);
    this.#announce('activity', id);
  }

  #touchAsset(asset: AssetRow) {
    asset.updated = this.#now();
    this.#announce('asset', asset.id);
  }

  /** A Seed (`{asset: SeededAsset}`) or a bare SeededAsset becomes an asset with one format, its annotations, tags and websites. */
  #createAsset(body: unknown, announce = true): AssetRow {
    const sent = this.#object(body, 'The seed');
    const seeded = this.#object(sent.asset ?? sent, 'seed.asset');
    const application = this.#object(seeded.application, 'seed.asset.application');
    if (typeof application.id !== 'string') throw new Refusal(400, 'seed.asset.application.id is required.');
    const format = this.#object(seeded.format, 'seed.asset.format');
    const text = format.fragment?.string?.raw ?? format.file?.string?.raw;
    if (typeof text !== 'string' || !text) throw new Refusal(400, 'A seed needs its text at format.fragment.string.raw.');
    const metadata = (seeded.metadata ?? {}) as Json;
    const stamp = this.#now();
    const id = this.#id();
    const formatId = this.#id();
    const specific = format.classification?.specific ?? metadata.ext ?? 'txt';
    const name = typeof metadata.name === 'string' && metadata.name.trim() ? metadata.name : text.trim().split('\n')[0]!.slice(0, 40);
    const asset: AssetRow = {
      id,
      name,
      creator: application.id,
      created: stamp,
      updated: stamp,
      mechanism: metadata.mechanism ?? 'MANUAL',
      format: formatId,
    };
    this.#data.assets.set(id, asset);
    this.#data.formats.set(formatId, {
      id: formatId,
      asset: id,
      classification: { generic: 'CODE', specific },
      application,
      created: stamp,
      updated: stamp,
      text,
    });
    const annotations = ((metadata.annotations ?? []) as Json[]).map((a) => ({ type: a.type, text: a.text }));
    if (!annotations.some((a) => a.type === 'DESCRIPTION'))
      annotations.push({ type: 'DESCRIPTION', text: `Saved by ${application.name ?? 'an application'}` });
    for (const annotation of annotations) {
      const annotationId = this.#id();
      this.#data.annotations.set(annotationId, {
        schema: SCHEMA,
        id: annotationId,
        created: stamp,
        updated: stamp,
        type: annotation.type,
        text: annotation.text,
        mechanism: 'MANUAL',
        asset: { id },
      });
    }
    for (const tag of (metadata.tags ?? []) as Json[]) this.#labelled('tags', { text: tag.text, category: tag.category ?? 'UNKNOWN' }, id);
    for (const site of (metadata.websites ?? []) as Json[]) this.#labelled('websites', { url: site.url, name: site.name }, id);
    if (announce) {
      this.#announce('asset', id);
      this.#record(id, 'asset_created', application);
    }
    return asset;
  }

  /** A tag (by text) or website (by URL), the stored one when there is one, with the asset on it. */
  #labelled(kind: 'tags' | 'websites', fields: Json, asset: string) {
    const map = this.#data[kind];
    const key = kind === 'tags' ? 'text' : 'url';
    let label = [...map.values()].find((item) => item[key] === fields[key]);
    if (!label) {
      const stamp = this.#now();
      label = { schema: SCHEMA, id: this.#id(), ...fields, created: stamp, updated: stamp, on: [] };
      map.set(label.id, label);
    }
    if (!label.on.includes(asset)) label.on.push(asset);
  }

  #updateAsset(body: unknown): AssetRow {
    const sent = this.#object(body, 'The asset');
    const asset = this.#asset(String(sent.id));
    for (const item of (sent.annotations?.iterable ?? []) as Json[]) {
      const annotation = this.#data.annotations.get(String(item.id));
      if (!annotation || annotation.asset?.id !== asset.id)
        throw new Refusal(400, `Annotation ${item.id} is not one of asset ${asset.id}.`);
    }
    if (typeof sent.name === 'string') asset.name = sent.name;
    if (typeof sent.favorited === 'boolean') asset.favorited = sent.favorited;
    for (const item of (sent.annotations?.iterable ?? []) as Json[]) {
      const annotation = this.#data.annotations.get(String(item.id))!;
      if (typeof item.text === 'string') annotation.text = item.text;
      if (typeof item.type === 'string') annotation.type = item.type;
      annotation.updated = this.#now();
    }
    this.#touchAsset(asset);
    this.#record(asset.id, 'asset_updated', this.#data.formats.get(asset.format)!.application);
    return asset;
  }

  #updateFormat(body: unknown): FormatRow {
    const sent = this.#object(body, 'The format');
    const format = this.#found(this.#data.formats, String(sent.id), 'format');
    const owner = typeof sent.asset === 'string' ? sent.asset : sent.asset?.id;
    if (owner !== undefined && owner !== format.asset) throw new Refusal(400, `Format ${format.id} is not of asset ${owner}.`);
    const text = sent.fragment?.string?.raw ?? sent.file?.string?.raw;
    if (typeof text !== 'string') throw new Refusal(400, 'The new value goes in fragment.string.raw.');
    format.text = text;
    format.updated = this.#now();
    const asset = this.#asset(format.asset);
    this.#touchAsset(asset);
    this.#record(asset.id, 'asset_format_value_edited', format.application);
    return format;
  }

  #deleteAsset(id: string): string {
    const asset = this.#asset(id);
    this.#data.assets.delete(id);
    this.#data.formats.delete(asset.format);
    for (const [key, annotation] of this.#data.annotations) if (annotation.asset?.id === id) this.#data.annotations.delete(key);
    for (const map of [this.#data.tags, this.#data.websites]) for (const label of map.values()) label.on = label.on.filter((a) => a !== id);
    for (const anchor of this.#data.anchors.values()) {
      if (!anchor.assets.includes(id)) continue;
      anchor.assets = anchor.assets.filter((a) => a !== id);
      this.#announce('anchor', anchor.id);
    }
    this.#announce('asset', id, true);
    return id;
  }

  #label(kind: 'tags' | 'websites', assetId: string, labelId: string, add: boolean) {
    const asset = this.#asset(assetId);
    const label = this.#found(this.#data[kind], labelId, kind === 'tags' ? 'tag' : 'website');
    label.on = add ? [...new Set([...label.on, asset.id])] : label.on.filter((id) => id !== asset.id);
    this.#touchAsset(asset);
  }

  #createAnnotation(body: unknown): Json {
    const seed = this.#object(body, 'The annotation');
    if (typeof seed.type !== 'string' || typeof seed.text !== 'string') throw new Refusal(400, 'An annotation needs a type and a text.');
    const asset = seed.asset === undefined ? undefined : this.#asset(String(seed.asset));
    const stamp = this.#now();
    const id = this.#id();
    const annotation = {
      schema: SCHEMA,
      id,
      created: stamp,
      updated: stamp,
      type: seed.type,
      text: seed.text,
      mechanism: seed.mechanism ?? 'MANUAL',
      ...(asset ? { asset: { id: asset.id } } : {}),
    };
    this.#data.annotations.set(id, annotation);
    if (asset) this.#touchAsset(asset);
    return annotation;
  }

  #updateAnnotation(body: unknown): Json {
    const sent = this.#object(body, 'The annotation');
    const annotation = this.#found(this.#data.annotations, String(sent.id), 'annotation');
    if (typeof sent.text === 'string') annotation.text = sent.text;
    if (typeof sent.type === 'string') annotation.type = sent.type;
    annotation.updated = this.#now();
    const asset = annotation.asset && this.#data.assets.get(annotation.asset.id);
    if (asset) this.#touchAsset(asset);
    return annotation;
  }

  #deleteAnnotation(id: string) {
    const annotation = this.#found(this.#data.annotations, id, 'annotation');
    this.#data.annotations.delete(id);
    const asset = annotation.asset && this.#data.assets.get(annotation.asset.id);
    if (asset) this.#touchAsset(asset);
  }

  #anchorWire(anchor: Json & { conversations: string[]; assets: string[] }): Json {
    const { conversations, assets, point, ...rest } = anchor;
    return {
      ...rest,
      points: { iterable: [{ id: point.id, reference: { ...point, anchor: { id: anchor.id } } }] },
      ...(conversations.length ? { conversations: { iterable: conversations.map((id) => ({ id })) } } : {}),
      ...(assets.length ? { assets: { iterable: assets.map((id) => ({ id })) } } : {}),
    };
  }

  #createAnchor(body: unknown): Json & { conversations: string[]; assets: string[] } {
    const seed = this.#object(body, 'The anchor');
    if (!['FILE', 'DIRECTORY'].includes(seed.type) || typeof seed.fullpath !== 'string')
      throw new Refusal(400, 'An anchor needs a type (FILE, DIRECTORY) and a fullpath.');
    const conversation = seed.conversation === undefined ? undefined : this.#conversation(String(seed.conversation));
    const asset = seed.asset === undefined ? undefined : this.#asset(String(seed.asset));
    const stamp = this.#now();
    const id = this.#id();
    const anchor = {
      schema: SCHEMA,
      id,
      type: seed.type,
      watch: !!seed.watch,
      ...(typeof seed.name === 'string' ? { name: seed.name } : {}),
      created: stamp,
      updated: stamp,
      point: {
        schema: SCHEMA,
        id: this.#id(),
        fullpath: seed.fullpath,
        created: stamp,
        updated: stamp,
        ...(seed.platform ? { platform: seed.platform } : {}),
      },
      conversations: conversation ? [conversation.id] : [],
      assets: asset ? [asset.id] : [],
    };
    this.#data.anchors.set(id, anchor);
    this.#announce('anchor', id);
    if (conversation) {
      const listed = ((conversation.anchors?.iterable ?? []) as Json[]).filter((a) => a.id !== id);
      conversation.anchors = { iterable: [...listed, { id }] };
      this.#touch(conversation);
    }
    return anchor;
  }

  #relateAnchor(id: string, kind: 'conversation' | 'asset', otherId: string, add: boolean) {
    const anchor = this.#found(this.#data.anchors, id, 'anchor');
    const other = kind === 'conversation' ? this.#conversation(otherId) : this.#asset(otherId);
    const list = kind === 'conversation' ? anchor.conversations : anchor.assets;
    if (list.includes(other.id) === add) return;
    if (kind === 'conversation') anchor.conversations = add ? [...list, other.id] : list.filter((c) => c !== other.id);
    else anchor.assets = add ? [...list, other.id] : list.filter((a) => a !== other.id);
    this.#announce('anchor', id);
    if (kind === 'asset') return this.#touchAsset(other as AssetRow);
    const conversation = other as Json;
    const listed = ((conversation.anchors?.iterable ?? []) as Json[]).filter((a) => a.id !== id);
    if (add) conversation.anchors = { iterable: [...listed, { id }] };
    else if (listed.length) conversation.anchors = { iterable: listed };
    else delete conversation.anchors;
    this.#touch(conversation);
  }

  // ---- persons and workstream summaries ------------------------------------------------------

  /** A person (from a SeededPerson) or a workstream summary (from a SeededWorkstreamSummary): the seed's fields, with its own id and dates; the persons a summary lists list it. */
  #createMaterial(map: Map<string, Json>, collection: Collection, body: unknown): Json {
    const { annotations: _annotations, asset: _asset, model, ...seed } = this.#object(body, 'The seed');
    const made: Json = {
      ...seed,
      ...(collection === 'person' ? (model ? { models: { [this.#id()]: model } } : {}) : { model }),
      id: this.#id(),
      created: this.#now(),
      updated: this.#now(),
    };
    if (collection === 'person' && typeof made.type !== 'object') throw new Refusal(400, 'A person needs a type.');
    if (collection === 'workstream_summary' && typeof made.name !== 'string') throw new Refusal(400, 'A summary needs a name.');
    map.set(made.id, made);
    this.#announce(collection, made.id);
    if (collection === 'workstream_summary')
      for (const person of this.#listed(made.persons)) {
        const found = this.#data.persons.get(person);
        if (found) this.#setListed(found, 'summaries', made.id, true, 'person');
      }
    return made;
  }

  #updateMaterial(map: Map<string, Json>, collection: Collection, body: unknown): Json {
    const sent = this.#object(body, 'The record');
    const stored = this.#found(map, String(sent.id), collection);
    const next = { ...sent, created: stored.created, updated: this.#now() };
    map.set(stored.id, next);
    this.#announce(collection, stored.id);
    return next;
  }

  /** Deletes a person or summary; the records that listed it no longer do. */
  #deleteMaterial(map: Map<string, Json>, collection: Collection, id: string) {
    this.#found(map, id, collection);
    map.delete(id);
    this.#announce(collection, id, true);
    for (const [others, key, other] of [
      [this.#data.persons, collection === 'person' ? 'persons' : 'summaries', 'person'],
      [this.#data.summaries, 'persons', 'workstream_summary'],
    ] as const) {
      if (collection === 'workstream_summary' && other === 'workstream_summary') continue;
      for (const record of others.values()) this.#setListed(record, key, id, false, other);
    }
  }

  #listed(list: unknown): string[] {
    const items = typeof list === 'object' && list !== null && Array.isArray((list as Json).iterable) ? (list as Json).iterable : [];
    return items.map((item: Json) => item?.id).filter((id: unknown): id is string => typeof id === 'string');
  }

  /** `record` listing `id` in its list `key` (or no longer); announced when that changed it. */
  #setListed(record: Json, key: string, id: string, add: boolean, collection: Collection) {
    const ids = this.#listed(record[key]);
    if (ids.includes(id) === add) return;
    const next = add ? [...ids, id] : ids.filter((other) => other !== id);
    record[key] = { iterable: next.map((other) => ({ id: other })) };
    record.updated = this.#now();
    this.#announce(collection, record.id);
  }

  /** A person associated with another person or a summary (or no longer): each lists the other. */
  #relatePerson(personId: string, otherMap: Map<string, Json>, otherId: string, key: string, back: string, add: boolean) {
    const person = this.#found(this.#data.persons, personId, 'person');
    const other = this.#found(otherMap, otherId, key === 'persons' ? 'person' : 'workstream_summary');
    this.#setListed(person, key, otherId, add, 'person');
    this.#setListed(other, back, personId, add, key === 'persons' ? 'person' : 'workstream_summary');
  }

  #deleteAnchor(id: string) {
    const anchor = this.#found(this.#data.anchors, id, 'anchor');
    this.#data.anchors.delete(id);
    for (const assetId of anchor.assets) {
      const asset = this.#data.assets.get(assetId);
      if (asset) this.#touchAsset(asset);
    }
    for (const conversationId of anchor.conversations) {
      const conversation = this.#data.conversations.get(conversationId);
      if (!conversation) continue;
      const listed = ((conversation.anchors?.iterable ?? []) as Json[]).filter((a) => a.id !== id);
      if (listed.length) conversation.anchors = { iterable: listed };
      else delete conversation.anchors;
      this.#touch(conversation);
    }
    this.#announce('anchor', id, true);
  }
}

/** Starts an independent Pieces OS on a free port. */
export async function startUpstream(options: UpstreamOptions = {}): Promise<IndependentPiecesOS> {
  return new IndependentPiecesOS(options).start();
}
