/**
 * Answering a request under a base: passed through to the upstream while it is up and nothing
 * waits in the outbox (what it took kept here), else answered here, a write queued with it.
 */
import { STREAM_HEADER } from '../../core/stream-wire.js';
import type { OutboxInput } from '../../storage/storage.js';
import type { Connection } from './connection.js';
import type { MirrorContext } from './context.js';
import { CopilotBridge } from './copilot.js';
import type { Keeper } from './keep.js';
import { queueingStorage } from './queueing.js';
import type { Replayer } from './replayer.js';
import { asIs, rewriteRequest, type Rewritten } from './rewrite-request.js';
import { queuedWhileAway } from './writes.js';
import { PERMISSION_PROBE } from './upstream.js';

const HOP_HEADERS = ['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', STREAM_HEADER];

/** Discovery's paths: answered at once (here, until the first probe says where the upstream stands). */
const DISCOVERY = new Set(['/.well-known/health', '/.well-known/version']);

export class PassThrough {
  readonly #copilot: CopilotBridge | null;

  constructor(
    private readonly ctx: MirrorContext,
    private readonly connection: Connection,
    private readonly replayer: Replayer,
    private readonly keeper: Keeper,
  ) {
    this.#copilot = ctx.io.WebSocket ? new CopilotBridge((url) => new ctx.io.WebSocket!(url)) : null;
  }

  /** The answer to a request under a base (undefined for anything else, and for the page's permission probe). */
  respond(request: Request): Promise<Response> | undefined {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return undefined;
    }
    const path = this.ctx.service.pathUnderBase(url);
    if (path === null) return undefined;
    // The page's own first request to the upstream (the Local Network Access step) goes to the network.
    if (url.searchParams.has(PERMISSION_PROBE)) return undefined;
    return this.#handle(request, url, path);
  }

  async #handle(request: Request, url: URL, path: string): Promise<Response> {
    const { ctx, connection, keeper } = this;
    if (ctx.paused) {
      // Used again: where things stand is looked at once.
      ctx.paused = false;
      if (ctx.replayer) void connection.probe();
    }
    const kind = request.headers.get(STREAM_HEADER);
    if (kind === 'handshake') {
      // The service's sockets are fed from the local change log, which follows the upstream.
      connection.needUpstream('socket');
      return ctx.service.respond(request)!;
    }
    // Discovery never waits (a client's health probe on a cold worker gives up after 100 ms); the rest waits for the first probe.
    if (!connection.known && !DISCOVERY.has(path)) await connection.firstProbe();
    const up = ctx.state === 'up' && !ctx.waiting() && ctx.base !== null && !ctx.blocked;
    if (kind === 'qgpt') {
      if (up && this.#copilot) {
        const input = await request.text();
        try {
          return await this.#copilot.answer(`${ctx.base!.replace(/^http/, 'ws')}${path}`, input);
        } catch {
          return ctx.service.respond(new Request(request.url, { method: 'POST', headers: request.headers, body: input }))!;
        }
      }
      return ctx.service.respond(request)!;
    }
    connection.needUpstream('request');
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const text = hasBody ? await request.text() : null;
    if (this.replayer.remapping) await this.replayer.remapping;
    // A read when no id was ever re-keyed goes as it is (the common case: no route to look up).
    const context = !hasBody && !ctx.upstreamOf.size ? asIs(request, path) : rewriteRequest(request, url, path, text, ctx.upstreamOf);
    if (up) {
      const answer = await this.#passThrough(context, url);
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
    ctx.dirty = true;
    await ctx.reload();
    const again = rewriteRequest(request, url, path, text, ctx.upstreamOf);
    if (!again.changed || (again.path === context.path && again.text === context.text)) return answer;
    await answer.body?.cancel().catch(() => {});
    return this.#answerHere(again, url, false);
  }

  /** The answer from here; a write the route table declares is queued with it. */
  async #answerHere(context: Rewritten, url: URL, sent: boolean): Promise<Response> {
    const { ctx } = this;
    const { request, text } = context;
    const local = text === null ? request : new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) });
    const operation = context.found?.operation;
    // Not a write, a body that cannot be queued, or the upstream's business (answered here, not queued).
    if (!operation || !queuedWhileAway(operation.name) || !context.parseable) return ctx.service.respond(local)!;
    const input: OutboxInput = {
      operation: operation.name,
      params: context.entry.params,
      ...(url.search ? { query: url.search.slice(1) } : {}),
      ...(context.entry.body === undefined ? {} : { body: context.entry.body }),
      ...(context.entry.application ? { application: context.entry.application } : {}),
      created: [],
      at: new Date(ctx.now()).toISOString(),
      ...(sent ? { state: 'sent' as const } : {}),
    };
    const queueing = queueingStorage(ctx.storage, input);
    const response = await ctx.service.respond(local, { storage: queueing.storage })!;
    if (queueing.queued()) {
      ctx.dirty = true;
      if (!ctx.replayer) ctx.tell({ type: 'mirror-queued' });
      this.replayer.scheduleReload();
    }
    return response;
  }

  /** The upstream's answer to the request, or null when it gave none (then it is away). */
  async #passThrough({ request, text, path }: Rewritten, url: URL): Promise<Response | null> {
    const { ctx } = this;
    let headers = request.headers;
    if (HOP_HEADERS.some((name) => headers.has(name))) {
      headers = new Headers(headers);
      for (const name of HOP_HEADERS) headers.delete(name);
    }
    let response: Response;
    try {
      response = await ctx.upstream.request(`${ctx.base}${path}${url.search}`, {
        method: request.method,
        headers,
        ...(text ? { body: text } : {}),
        redirect: 'manual',
        cache: 'no-store',
      });
    } catch (error) {
      if (ctx.replayer) this.connection.wentDown(error);
      else ctx.tell({ type: 'mirror-ask', failed: (error as Error)?.message ?? String(error) });
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
