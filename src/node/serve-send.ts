/**
 * The loopback server's writing of answers: a service's Response onto a node:http answer with
 * back-pressure (a client that does not read holds up its own answer only, never the server's
 * memory), and a short text answer on a raw socket.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
export const noop = () => {};

/** Writes a short text answer on a raw socket (an upgrade or a connection refused) and closes it. */
export function refuseRaw(socket: Duplex, status: string, message: string) {
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}

/** Resolves once `outgoing` may take more (drain) or is gone (close). */
const drained = (outgoing: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });

/** Headers of one connection, not of the answer: never passed on from the service's Response. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** Body bytes gathered before they are written: a body that ends within them goes with its length. */
const GATHER_BYTES = 1024 * 1024;

/**
 * Sends `response` on `outgoing`, its body piece by piece, each once the client took what came before
 * (a client that does not read holds up its own answer only). A stream of events goes out as it comes;
 * any other body in pieces of up to GATHER_BYTES (the service's come in many small chunks), with its
 * length when it is no larger.
 */
export async function send(response: Response, outgoing: ServerResponse, head: boolean): Promise<void> {
  // How the body is framed on this connection is Node's to say (a mirrored answer may bring its upstream's).
  const headers = Object.fromEntries([...response.headers].filter(([name]) => !HOP_BY_HOP.has(name)));
  const reader = head ? null : response.body?.getReader();
  if (head) void response.body?.cancel().catch(noop);
  if (!reader) return void outgoing.writeHead(response.status, headers).end();
  // A client that leaves cancels the body at once (an event stream may wait long before its next event).
  outgoing.once('close', () => void reader.cancel().catch(noop));
  const gather = response.headers.get('content-type')?.startsWith('text/event-stream') ? 1 : GATHER_BYTES;
  try {
    let started = false;
    for (;;) {
      const pieces: Uint8Array[] = [];
      let size = 0;
      let done = false;
      while (size < gather) {
        const chunk = await reader.read();
        if (chunk.done) {
          done = true;
          break;
        }
        pieces.push(chunk.value);
        size += chunk.value.byteLength;
      }
      const piece = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, size);
      if (!started && done) return void outgoing.writeHead(response.status, { ...headers, 'content-length': String(size) }).end(piece);
      if (!started)
        outgoing.writeHead(response.status, Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-length')));
      started = true;
      if (size > 0 && !outgoing.write(piece)) await drained(outgoing);
      if (outgoing.destroyed) return;
      if (done) return void outgoing.end();
    }
  } catch {
    // The body failed midway: the client sees the connection drop, not a truncated answer taken as whole.
    outgoing.destroy();
  } finally {
    if (outgoing.destroyed) void reader.cancel().catch(noop);
  }
}
