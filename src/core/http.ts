/**
 * HTTP plumbing shared by every operation: typed errors, the one response maker (`reply`) and
 * a body reader that enforces the size limit, the content type and safe JSON.
 */
import { say } from '../shared/console.js';
import { EVENT_STREAM_HEADERS, EventFrames, eventStream } from './event-frames.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Text echoed in a message, cut to `max` characters: an error never repeats a huge input whole. */
export function clip(value: string, max = 200): string {
  return value.length <= max ? value : `${value.slice(0, max)}… (${value.length} characters)`;
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message: string) => new HttpError(404, message);

/** Default and ceiling for request bodies: 16 MiB. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Nesting deeper than this is refused: no Pieces model comes close. */
export const MAX_JSON_DEPTH = 64;

const COMMON_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': '*',
  'Cache-Control': 'no-store',
};

/**
 * Responses made here (`reply`) from text or a Blob, with that body: a host that can carry it as it is
 * (the fast path's port) sends it whole, without reading the body stream (a Blob's bytes never
 * pass through its heap). Only what reads the body (never the service) may use it.
 */
const bodies = new WeakMap<Response, string | Blob>();

/** The text or Blob a response was made from here, if it was (see `bodies`). */
export const wholeBody = (response: Response): string | Blob | undefined => bodies.get(response);

const rerunnable = new WeakSet<Response>();

/** Marks the answer of an operation that changed nothing: asked for again, it can be made again. */
export function markRerunnable(response: Response): Response {
  rerunnable.add(response);
  return response;
}

/** Whether a response answers an operation that changed nothing (see markRerunnable). */
export const isRerunnable = (response: Response): boolean => rerunnable.has(response);

export interface ReplyInit {
  /** Default 200; 204 when there is no body. */
  status?: number;
  /** Beside (or in place of) the usual ones: CORS, `Cache-Control: no-store`, the content type. */
  headers?: Readonly<Record<string, string>> | Headers;
  /** What a text, Blob or stream body is: JSON text (the default) or plain text. */
  type?: 'json' | 'text';
}

const JSON_HEADERS = { ...COMMON_HEADERS, 'Content-Type': 'application/json; charset=utf-8' };
const TEXT_HEADERS = { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' };

/** `base` with `given` in place of any of the same name (in any case). */
function withHeaders(base: Readonly<Record<string, string>>, given: ReplyInit['headers']): HeadersInit {
  if (!given) return base;
  const headers = new Headers(base);
  for (const [name, value] of given instanceof Headers ? given : Object.entries(given)) headers.set(name, value);
  return headers;
}

/**
 * The one way a response is made here. `body` is
 * - `undefined`: no body (204 unless `init.status` says otherwise);
 * - an `Error`: its answer, plain text: an `HttpError` its status and headers, `QuotaExceededError`
 *   507, `StorageUnavailableError` (wiped under the worker, an upgrade blocked) 503 with
 *   `Retry-After`, anything else a 500 naming the fault (and printed);
 * - `EventFrames`: an event stream of them (a host may read the frames themselves, see `framesOf`);
 * - text, a Blob or a byte stream: sent as it is, labelled JSON unless `init.type` is `'text'`;
 * - any other value: sent as JSON.
 */
export function reply(body?: unknown, init: ReplyInit = {}): Response {
  if (body instanceof Error) return failed(body);
  const { status, headers, type = 'json' } = init;
  if (body === undefined) return new Response(null, { status: status ?? 204, headers: withHeaders(COMMON_HEADERS, headers) });
  if (body instanceof EventFrames) return eventStream(body, { status: status ?? 200, headers: withHeaders(EVENT_STREAM_HEADERS, headers) });
  const sent =
    typeof body === 'string' || (typeof Blob !== 'undefined' && body instanceof Blob) || body instanceof ReadableStream
      ? body
      : JSON.stringify(body);
  const response = new Response(sent, {
    status: status ?? 200,
    headers: withHeaders(type === 'json' ? JSON_HEADERS : TEXT_HEADERS, headers),
  });
  if (!(sent instanceof ReadableStream)) bodies.set(response, sent);
  return response;
}

function failed(error: Error): Response {
  if (error instanceof HttpError) return reply(error.message, { status: error.status, headers: error.headers, type: 'text' });
  if (error.name === 'QuotaExceededError') {
    return reply('The browser storage is full: the write was not made. Free some space and try again.', { status: 507, type: 'text' });
  }
  if (error.name === 'StorageUnavailableError') return reply(error.message, { status: 503, headers: { 'Retry-After': '1' }, type: 'text' });
  say('error', 'internal error', error);
  return reply(`Internal error: ${error.message}.`, { status: 500, type: 'text' });
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const mime = value.split(';')[0]!.trim().toLowerCase();
  return mime === 'application/json' || /^application\/[\w.+-]+\+json$/.test(mime);
}

/**
 * Reads at most `limit` bytes, failing with 413 as soon as the body is known to
 * be larger. Streams `request.body` where the engine has it; Firefox has no
 * `Request.prototype.body`, so there the body is read whole with `arrayBuffer()`
 * (after the declared Content-Length check) and its size checked after.
 */
export async function readText(request: Request, limit: number): Promise<string> {
  const tooLarge = () => new HttpError(413, `The request body is larger than the limit of ${limit} bytes.`);
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const body = request.body;
  if (body === null) return '';
  let bytes: Uint8Array;
  try {
    bytes = body === undefined ? new Uint8Array(await request.arrayBuffer()) : await readStream(body, limit, tooLarge);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    // The client went away while sending it (a reset, a cut connection).
    throw badRequest(`The request body could not be read: ${clip((error as Error)?.message ?? String(error))}.`);
  }
  if (bytes.byteLength > limit) throw tooLarge();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('The request body is not valid UTF-8.');
  }
}

async function readStream(body: ReadableStream<Uint8Array>, limit: number, tooLarge: () => HttpError): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function checkDepth(value: unknown): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) {
      throw badRequest(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
    }
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/**
 * Parses a JSON body. Returns `undefined` when there is no body (the SDK sends
 * `Content-Type: application/json` with no body for parameterless calls).
 * Keys that could reach `Object.prototype` are refused, never copied.
 */
export async function readJson(request: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  const raw = await readText(request, limit);
  if (raw.trim() === '') return undefined;
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new HttpError(
      415,
      `The request body must be JSON (Content-Type: application/json), not ${clip(
        request.headers.get('content-type') ?? 'an unlabelled body',
      )}.`,
    );
  }
  let value: unknown;
  try {
    // A reviver makes parsing several times slower: it is used only on text that names a
    // forbidden key or has a \u escape (the one way JSON text spells a letter otherwise).
    value = mayNameForbiddenKey(raw)
      ? JSON.parse(raw, (key, v) => {
          if (FORBIDDEN_KEYS.has(key)) throw new ForbiddenKey(key);
          return v;
        })
      : JSON.parse(raw);
  } catch (error) {
    if (error instanceof ForbiddenKey) {
      throw badRequest(`The request body uses the reserved key "${error.key}".`);
    }
    throw badRequest(`The request body is not valid JSON: ${(error as Error).message}.`);
  }
  checkDepth(value);
  return value;
}

/**
 * Reads the fields of a form body (`application/x-www-form-urlencoded`, as OAuth endpoints take
 * and the SDK sends them) or of a JSON object of strings (which OAuth servers take too); an
 * empty body has no fields. A repeated field, or another content type, is refused.
 */
export async function readForm(request: Request, limit = MAX_BODY_BYTES): Promise<Record<string, string>> {
  const type = request.headers.get('content-type');
  if (isJsonContentType(type)) {
    const body = await readJson(request, limit);
    if (body === undefined) return {};
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('The request body must be a JSON object of fields.');
    for (const [key, value] of Object.entries(body)) {
      if (typeof value !== 'string') throw badRequest(`The field ${clip(key)} must be a string.`);
    }
    return body as Record<string, string>;
  }
  const raw = await readText(request, limit);
  if (raw.trim() === '') return {};
  if ((type ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    throw new HttpError(
      415,
      `The request body must be a form (Content-Type: application/x-www-form-urlencoded) or JSON, not ${clip(type ?? 'an unlabelled body')}.`,
    );
  }
  const fields: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (FORBIDDEN_KEYS.has(key)) throw badRequest(`The request body uses the reserved key "${key}".`);
    if (Object.hasOwn(fields, key)) throw badRequest(`The field ${clip(key)} is given more than once.`);
    fields[key] = value;
  }
  return fields;
}

function mayNameForbiddenKey(raw: string): boolean {
  if (raw.includes('\\u')) return true;
  for (const key of FORBIDDEN_KEYS) if (raw.includes(key)) return true;
  return false;
}

class ForbiddenKey extends Error {
  constructor(readonly key: string) {
    super(key);
  }
}
