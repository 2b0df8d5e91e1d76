/**
 * Reaching the mirrored Pieces OS: over the host's unpatched `fetch` (a service worker's own
 * fetch never re-enters its fetch handler; the page and Node hosts capture theirs before
 * their interceptors patch the globals), with a limit on how long it may stay silent, its
 * answers sorted into what the replayer does with them, and finding it (`'auto'`) the way
 * clients do.
 */
import { VERSION } from '../../shared/version.js';

/** The query parameter of the page's own first request to the upstream (the Local Network Access step): never answered by the service. */
export const PERMISSION_PROBE = 'pieces-os-worker-permission';

/** What the host gives the mirror to reach the upstream with: never a patched global. */
export interface UpstreamIo {
  fetch(input: string, init?: RequestInit): Promise<Response>;
  /** A WebSocket constructor (the upstream's identifier and copilot streams); none: streams are not followed. */
  WebSocket?: new (
    url: string,
  ) => WebSocketLike;
  /** The addresses the service itself listens on (the loopback server's): never taken for the upstream. */
  own?: readonly string[];
}

/** What the mirror needs of a WebSocket (the browser's, or the `ws` package's). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}

/**
 * Why a request to the upstream failed: `network` (refused, reset, no route: it is away),
 * `silent` (no answer in time: it may have done the work), `status` (it answered 5xx or 429:
 * try again later). A permanent refusal (another 4xx) is an answer, not an error.
 */
export class UpstreamError extends Error {
  constructor(
    readonly kind: 'network' | 'silent' | 'status',
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** An answer to try again later: 5xx (the upstream is there but failing) and 429 (too many requests). */
export const isTemporary = (status: number) => status >= 500 || status === 429 || status === 408;

/** The ports clients look for Pieces OS on: 39300–39333 (current), 1000 (the SDK's default), 5323 (older Linux builds). */
export const DISCOVERY_PORTS = [...Array.from({ length: 34 }, (_, i) => 39300 + i), 1000, 5323];

/** The base URLs `'auto'` tries, in order, without `own` (addresses the service itself listens on: it must never mirror itself). */
export function discoveryCandidates(own: readonly string[] = []): string[] {
  return DISCOVERY_PORTS.map((port) => `http://localhost:${port}`).filter((base) => !own.some((mine) => sameOrigin(mine, base)));
}

/** A base URL without its trailing slash. */
export const trimBase = (base: string) => base.replace(/\/+$/, '');

/** The same origin, whichever loopback name it is written with. */
export const sameOrigin = (a: string, b: string) => {
  const origin = (url: string) => {
    try {
      return new URL(url).origin.replace('//localhost', '//127.0.0.1').replace('//[::1]', '//127.0.0.1');
    } catch {
      return url;
    }
  };
  return origin(a) === origin(b);
};

export class Upstream {
  constructor(
    readonly io: UpstreamIo,
    readonly timeoutMs: number,
  ) {}

  /**
   * Sends a request; resolves with any answer the upstream gave (check `ok`, or
   * `isTemporary(status)`), rejects with an UpstreamError when it gave none in time.
   * The limit covers the answer's head; a body (an event stream) may take longer.
   */
  async request(url: string, init: RequestInit = {}, timeoutMs = this.timeoutMs): Promise<Response> {
    // Timed by a race, not an abort signal: a signal costs a fifth of a small read in Node's fetch.
    // A request the upstream never answers is left to the engine's own limits.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silence = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new UpstreamError('silent', `${url} gave no answer in ${timeoutMs} ms`)), timeoutMs);
    });
    const answer = this.io.fetch(url, init).catch((error: unknown) => {
      if (init.signal?.aborted) throw error;
      throw new UpstreamError('network', `${url} could not be reached (${(error as Error)?.message ?? error})`);
    });
    // Settled after the race was lost: nothing waits for it any more.
    answer.catch(() => {});
    try {
      return await Promise.race([answer, silence]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A request whose answer must be a success: 5xx and 429 become UpstreamErrors; other refusals are returned. */
  async call(url: string, init: RequestInit = {}): Promise<Response> {
    const response = await this.request(url, init);
    if (isTemporary(response.status)) {
      const retry = Number(response.headers.get('retry-after'));
      await response.body?.cancel().catch(() => {});
      throw new UpstreamError(
        'status',
        `${url} answered ${response.status}`,
        response.status,
        Number.isFinite(retry) && retry > 0 ? retry * 1000 : undefined,
      );
    }
    return response;
  }

  /** A JSON read that must succeed. */
  async json(url: string): Promise<unknown> {
    const response = await this.call(url);
    if (!response.ok) throw new UpstreamError('status', `${url} answered ${response.status}`, response.status);
    return response.json();
  }

  /** Whether the base answers its health check `ok…` (Pieces OS may add its id: `ok:<id>`). */
  async healthy(base: string, timeoutMs = Math.min(this.timeoutMs, 3_000)): Promise<boolean> {
    try {
      const response = await this.request(`${base}/.well-known/health`, { cache: 'no-store' }, timeoutMs);
      return response.ok && (await response.text()).startsWith('ok');
    } catch {
      return false;
    }
  }

  /** The first candidate that answers its health check, in the candidates' order; null when none does. */
  async discover(candidates: readonly string[]): Promise<string | null> {
    const answers = candidates.map((base) => this.healthy(base));
    for (let i = 0; i < candidates.length; i++) if (await answers[i]) return candidates[i]!;
    return null;
  }

  /**
   * The upstream's identity: `health.os.id` of the Context its connect answers (connecting as
   * this service, an open-source web application). A wiped and reinstalled Pieces OS has another.
   */
  async identity(base: string): Promise<string> {
    const response = await this.call(`${base}/connect`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ application: { name: 'OPEN_SOURCE', version: VERSION, platform: 'WEB' } }),
    });
    if (!response.ok) throw new UpstreamError('status', `${base}/connect answered ${response.status}`, response.status);
    const context = (await response.json()) as { health?: { os?: { id?: unknown } }; os?: unknown };
    const id = context.health?.os?.id ?? context.os;
    if (typeof id !== 'string') throw new UpstreamError('status', `${base}/connect gave no health.os.id`);
    return id;
  }
}
