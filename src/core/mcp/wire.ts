/** What the MCP transports answer on their own: JSON-RPC errors, and a request body read within a limit. */
import { HttpError, readText as readBody } from '../http.js';

/** A JSON-RPC 2.0 error answer (no request id: the request could not be read), with an HTTP status. */
export function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/**
 * The body as text (read as every operation reads one, src/core/http.ts), or a JSON-RPC error
 * answer: larger than `limit` bytes (413), cut off (400), not UTF-8 (400, a parse error).
 */
export async function readText(request: Request, limit: number): Promise<string | Response> {
  try {
    return await readBody(request, limit);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return jsonRpcError(error.status, /UTF-8/.test(error.message) ? -32700 : -32000, error.message);
  }
}
