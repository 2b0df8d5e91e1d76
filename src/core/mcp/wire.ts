/** What the MCP transports answer on their own: JSON-RPC errors, and a request body read within a limit. */

/** A JSON-RPC 2.0 error answer (no request id: the request could not be read), with an HTTP status. */
export function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** The body as text, or a JSON-RPC error answer: larger than `limit` bytes (413), not UTF-8 or cut off (400). */
export async function readText(request: Request, limit: number): Promise<string | Response> {
  const tooLarge = () => jsonRpcError(413, -32000, `Payload Too Large: a message is ${limit} bytes at most.`);
  if (Number(request.headers.get('content-length') ?? 0) > limit) return tooLarge();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    return jsonRpcError(400, -32000, `The request body could not be read: ${(error as Error)?.message ?? error}.`);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: the body is not valid UTF-8.');
  }
}
