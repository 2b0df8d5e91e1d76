/**
 * Who may reach the loopback server: requests whose `Host` names it (its address, `localhost`,
 * an IP address, or a name the user allowed), so that a page on another site cannot reach it
 * under a DNS-rebinding name; web pages of loopback origins and the allowed ones only; and, for
 * the controls, only requests no web page can send cross-site. See docs/testing.md, "Who can reach it".
 */
import { isIP } from 'node:net';

export interface AccessOptions {
  /**
   * Host names, besides the bound address, `localhost`, `*.localhost` and IP addresses, that a
   * request's `Host` may name (a leading dot allows subdomains: `.example.test`); `true` allows
   * any name. Default none: a DNS-rebinding name is refused.
   */
  allowedHosts?: readonly string[] | true;
  /**
   * Origins of web pages allowed, besides loopback ones, to use the API and its sockets, and the only
   * ones allowed to use the controls under `/__pieces/` (`http://localhost:5173`, `https://app.example`).
   * Default none: a request carrying another `Origin` (every cross-site browser request does) is refused.
   */
  allowedOrigins?: readonly string[];
}

/** The header every control request must carry: a web page cannot send it cross-site without a preflight, which is refused. */
export const CONTROL_HEADER = 'x-pieces-control';

/** The host name of a `Host` header (without its port or IPv6 brackets), lower-cased; null when there is none. */
export function hostName(host: string | undefined): string | null {
  if (!host) return null;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return name.toLowerCase().replace(/\.$/, '') || null;
}

/** Why a request naming `host` is refused, or null when the server answers it. */
export function refusedHost(host: string | undefined, bound: string, options: AccessOptions): string | null {
  if (options.allowedHosts === true) return null;
  const name = hostName(host);
  if (name === null) return 'The request has no Host header; the loopback server answers only requests that name it.';
  if (name === bound.toLowerCase() || name === 'localhost' || name.endsWith('.localhost') || isIP(name)) return null;
  const allowed = (options.allowedHosts ?? []).map((h) => h.toLowerCase());
  if (allowed.some((h) => (h.startsWith('.') ? name === h.slice(1) || name.endsWith(h) : name === h))) return null;
  return `The Host ${JSON.stringify(name)} is not allowed (a page reaching this server under another name is refused); start the server with --allowed-hosts ${name} (the allowedHosts option) to allow it.`;
}

/**
 * Whether `origin` is a page served from this machine: http(s) on `localhost`, a `*.localhost` name,
 * `127.0.0.1` or `[::1]`, any port (Vite's default, its answer to CVE-2025-24010).
 */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin !== origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  const name = url.hostname;
  return name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1' || name === '[::1]';
}

/**
 * Why a request (HTTP or a WebSocket upgrade) with this `Origin` is refused, or null: no Origin (not a web
 * page), a loopback or an allowed one.
 */
export function refusedOrigin(origin: string | undefined, options: AccessOptions): string | null {
  if (origin === undefined || isLoopbackOrigin(origin) || (options.allowedOrigins ?? []).includes(origin)) return null;
  return `Web pages of the origin ${JSON.stringify(origin.slice(0, 200))} are refused (only loopback origins are allowed by default); start the server with --allowed-origins ${origin.slice(0, 200)} (the allowedOrigins option) to allow it.`;
}

/** Why a control request is refused, or null when it may run. */
export function refusedControl(headers: { origin?: string; [CONTROL_HEADER]?: string | string[] }, options: AccessOptions): string | null {
  const origin = headers.origin;
  if (origin !== undefined && !(options.allowedOrigins ?? []).includes(origin)) {
    return `Control requests from web pages are refused: the Origin ${JSON.stringify(origin)} is not allowed; start the server with --allowed-origins ${origin} (the allowedOrigins option) to allow it.`;
  }
  if (!headers[CONTROL_HEADER]) {
    return `Control requests must carry the header X-Pieces-Control (any value), which no web page can send to this server cross-site.`;
  }
  return null;
}
