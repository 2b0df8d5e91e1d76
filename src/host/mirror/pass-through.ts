/**
 * Answering a request under a base: passed through to the upstream while it is up and nothing
 * waits in the outbox (what it took kept here), else answered here, a write queued with it.
 */
import type { Service } from '../../core/service.js';
import { STREAM_HEADER } from '../../core/stream-wire.js';
import type { OutboxInput, Storage } from '../../storage/storage.js';
import type { CopilotBridge } from './copilot.js';
import type { Keeper } from './keep.js';
import type { MirrorLoop } from './loop.js';
import type { MirrorMachine } from './machine.js';
import { queueingStorage } from './queueing.js';
import type { Replayer } from './replayer.js';
import { asIs, rewriteRequest, type Rewritten } from './rewrite-request.js';
import { queuedWhileAway } from './writes.js';
import { PERMISSION_PROBE, type Upstream } from './upstream.js';

const HOP_HEADERS = ['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', STREAM_HEADER];

/** Discovery's paths: answered at once (here, until the first probe says where the upstream stands). */
const DISCOVERY = new Set(['/.well-known/health', '/.well-known/version']);

export class PassThrough {
  constructor(
    private readonly machine: MirrorMachine,
    private readonly loop: MirrorLoop,
    private readonly service: Service,
    private readonly storage: Storage,
    private readonly upstream: Upstream,
    private readonly replayer: Pick<Replayer, 'remapping'>,
    private readonly keeper: Keeper,
    /** The upstream's copilot stream; none without a WebSocket. */
    private readonly copilot: CopilotBridge | null,
    private readonly now: () => number,
  ) {}

  /** The answer to a request under a base (undefined for anything else, and for the page's permission probe). */
  respond(request: Request): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = this.service.pathUnderBase(url);
    if (path === null) return undefined;
    // The page's own first request to the upstream (the Local Network Access step) goes to the network.
    if (url.searchParams.has(PERMISSION_PROBE)) return undefined;
    return this.#handle(request, url, path);
  }

  async #handle(request: Request, url: URL, path: string): Promise<Response> {
    const { machine, loop, service, keeper } = this;
    // Used again after a pause: where things stand is looked at once.
    loop.used();
    const kind = request.headers.get(STREAM_HEADER);
    if (kind === 'handshake') {
      // The service's sockets are fed from the local change log, which follows the upstream.
      loop.needUpstream('socket');
      return service.respond(request)!;
    }
    // Discovery never waits (a client's health probe on a cold worker gives up after 100 ms); the rest waits for the first probe.
    if (!machine.known && !DISCOVERY.has(path)) await loop.firstProbe();
    const base = machine.base;
    const up = machine.state === 'up' && !machine.waiting() && base !== null;
    if (kind === 'qgpt') {
      if (up && this.copilot) {
        const input = await request.text();
        try {
          return await this.copilot.answer(`${base.replace(/^http/, 'ws')}${path}`, input);
        } catch {
          return service.respond(new Request(request.url, { method: 'POST', headers: request.headers, body: input }))!;
        }
      }
      return service.respond(request)!;
    }
    loop.needUpstream('request');
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const text = hasBody ? await request.text() : null;
    if (this.replayer.remapping !== null) await this.replayer.remapping;
    // A read when no id was ever re-keyed goes as it is (the common case: no route to look up).
    const context =
      !hasBody && !machine.upstreamOf.size ? asIs(request, path) : rewriteRequest(request, url, path, text, machine.upstreamOf);
    if (up) {
      const answer = await this.#passThrough(context, url, base);
      if (answer) {
        keeper.keep(context, answer);
        return answer;
      }
      // It went away with the request: answered here; a write is queued as sent (it may have been done there).
      await keeper.keeping;
      return this.#answerHere(context, url, true);
    }
    // What the upstream took last is in the local copy before anything is answered from it.
    await keeper.keeping;
    const answer = await this.#answerHere(context, url, false);
    if (answer.status !== 404 || !context.found) return answer;
    // An id made here may have been re-keyed a moment ago (by this host's replay, or another tab's): read the map again.
    machine.outboxChanged();
    await machine.reload();
    const again = rewriteRequest(request, url, path, text, machine.upstreamOf);
    if (!again.changed || (again.path === context.path && again.text === context.text)) return answer;
    await answer.body?.cancel().catch(() => {});
    return this.#answerHere(again, url, false);
  }

  /** The answer from here; a write the route table declares is queued with it. */
  async #answerHere(context: Rewritten, url: URL, sent: boolean): Promise<Response> {
    const { service } = this;
    const { request, text } = context;
    const local =
      text === null
        ? request
        : new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) });
    const operation = context.found?.operation;
    // Not a write, a body that cannot be queued, or the upstream's business (answered here, not queued).
    if (!operation || !queuedWhileAway(operation.name) || !context.parseable) return service.respond(local)!;
    const input: OutboxInput = {
      operation: operation.name,
      params: context.entry.params,
      ...(url.search ? { query: url.search.slice(1) } : {}),
      ...(context.entry.body === undefined ? {} : { body: context.entry.body }),
      ...(context.entry.application ? { application: context.entry.application } : {}),
      created: [],
      at: new Date(this.now()).toISOString(),
      ...(sent ? { state: 'sent' as const } : {}),
    };
    const queueing = queueingStorage(this.storage, input);
    const response = await service.respond(local, { storage: queueing.storage })!;
    if (queueing.queued()) {
      if (!this.machine.replays) this.machine.tell({ type: 'mirror-queued' });
      this.loop.queued();
    }
    return response;
  }

  /** The upstream's answer to the request, or null when it gave none (then it is away). */
  async #passThrough({ request, text, path }: Rewritten, url: URL, base: string): Promise<Response | null> {
    const { machine } = this;
    let headers = request.headers;
    if (HOP_HEADERS.some((name) => headers.has(name))) {
      headers = new Headers(headers);
      for (const name of HOP_HEADERS) headers.delete(name);
    }
    let response: Response;
    try {
      response = await this.upstream.request(`${base}${path}${url.search}`, {
        method: request.method,
        headers,
        ...(text ? { body: text } : {}),
        redirect: 'manual',
        cache: 'no-store',
      });
    } catch (error) {
      if (machine.replays) this.loop.unreachable(error);
      else machine.tell({ type: 'mirror-ask', failed: (error as Error)?.message ?? String(error) });
      return null;
    }
    // Node's fetch decodes compressed bodies: the encoding no longer applies.
    if (response.headers.has('content-encoding')) {
      const cleaned = new Headers(response.headers);
      cleaned.delete('content-encoding');
      cleaned.delete('content-length');
      response = new Response(response.body, { status: response.status, statusText: response.statusText, headers: cleaned });
    }
    return response;
  }
}
