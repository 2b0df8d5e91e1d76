/**
 * The legacy MCP transport (HTTP with server-sent events, protocol 2024-11-05) on web-standard
 * Request and Response, as the SDK's Node-only SSEServerTransport speaks it: the stream's first
 * event, `endpoint`, names where the client posts its messages (`…/messages?sessionId=…`); each
 * message the server sends is a `message` event; a POST is answered 202 once its message is taken.
 * The stream is this session: cancelled by its client (or closed by the server) it ends the session.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from '../../shared/uuid.js';
import { jsonRpcError, readText } from './wire.js';

const encoder = new TextEncoder();

/** Events the client has not read yet, at most: past them it is taken for gone and the session ends (its memory is not held). */
const MAX_UNREAD_EVENTS = 256;
/** A comment sent this often keeps an idle stream from looking dead to the client and the connection's idle timeout. */
const KEEP_ALIVE_MS = 15_000;

export class SseServerTransport implements Transport {
  readonly sessionId = randomUUID();
  readonly stream: ReadableStream<Uint8Array>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #closed = false;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  /** `endpoint`: the path messages are posted to (the session id is added to it). */
  constructor(
    endpoint: string,
    private readonly maxBodyBytes: number,
  ) {
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          controller.enqueue(encoder.encode(`event: endpoint\ndata: ${endpoint}?sessionId=${this.sessionId}\n\n`));
        },
        cancel: () => void this.close(),
      },
      { highWaterMark: MAX_UNREAD_EVENTS },
    );
    this.#keepAlive = setInterval(() => this.#write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    (this.#keepAlive as { unref?: () => void }).unref?.();
  }

  async start(): Promise<void> {}

  #write(text: string): boolean {
    if (this.#closed) return false;
    if ((this.#controller.desiredSize ?? 0) <= 0) {
      // The client stopped reading: the session ends rather than hold what it does not take.
      void this.close();
      return false;
    }
    this.#controller.enqueue(encoder.encode(text));
    return true;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)) throw new Error('The SSE stream of this session is closed.');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    try {
      this.#controller.close();
    } catch {
      // Already cancelled by its reader.
    }
    this.onclose?.();
  }

  /**
   * A POST of one message (or a batch) to this session: 202 once taken. A body that is not JSON, or
   * not JSON-RPC, is answered with a JSON-RPC error (400) and reaches nothing.
   */
  async handlePost(request: Request): Promise<Response> {
    const type = request.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) {
      return jsonRpcError(
        415,
        -32000,
        `Unsupported Media Type: the body must be application/json, not ${JSON.stringify(type.slice(0, 100))}.`,
      );
    }
    const text = await readText(request, this.maxBodyBytes);
    if (typeof text !== 'string') return text;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return jsonRpcError(400, -32700, `Parse error: ${(error as Error).message}`);
    }
    const list = Array.isArray(parsed) ? parsed : [parsed];
    const messages: JSONRPCMessage[] = [];
    for (const item of list) {
      const checked = JSONRPCMessageSchema.safeParse(item);
      if (!checked.success) return jsonRpcError(400, -32600, 'Invalid Request: the body is not a JSON-RPC 2.0 message.');
      messages.push(checked.data);
    }
    if (list.length === 0) return jsonRpcError(400, -32600, 'Invalid Request: an empty batch.');
    if (this.#closed) return jsonRpcError(404, -32001, 'Session not found: its event stream is closed.');
    for (const message of messages) this.onmessage?.(message);
    return new Response('Accepted', { status: 202, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }
}
