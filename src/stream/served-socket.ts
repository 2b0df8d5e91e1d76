/**
 * What every socket the shim serves shares: a mock-socket WebSocket whose
 * mock server hands it its client end, that refuses `send` while connecting
 * and `close` codes a browser refuses, as a browser's WebSocket does.
 */
import { Server, WebSocket as MockWebSocket } from 'mock-socket';

/** mock-socket's end of a connection: where a served socket's frames are delivered. */
export interface SocketClient {
  target: unknown;
  send(data: string): void;
}

/** What a browser's `WebSocket.close(code, reason)` refuses, refused the same way by every served socket. */
export function checkClose(code?: number, reason?: string): void {
  if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
    throw new DOMException(
      `Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`,
      'InvalidAccessError',
    );
  }
  if (reason !== undefined && new TextEncoder().encode(reason).byteLength > 123) {
    throw new DOMException("Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes.", 'SyntaxError');
  }
}

export abstract class ServedSocket extends MockWebSocket {
  protected client: SocketClient | null = null;
  override readonly extensions = '';
  override readonly bufferedAmount = 0;

  /** Called when mock-socket's server accepts the connection. */
  connected(client: SocketClient): void {
    this.client = client;
  }

  /** Throws as a browser does on `send` before the socket is open; true when the frame may be taken. */
  protected accepts(): boolean {
    if (this.readyState === MockWebSocket.CONNECTING) {
      throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
    // A socket that is closing or closed drops what is sent, as the browser's does.
    return this.readyState === MockWebSocket.OPEN;
  }

  override close(code?: number, reason?: string): void {
    checkClose(code, reason);
    super.close(code, reason);
  }
}

/**
 * Socket URL without its query → its mock-socket server. mock-socket keys its
 * servers by the URL without the query string, so sockets on one path (with
 * or without a query) share one server; each socket is fed on its own.
 */
const servers = new Map<string, Server>();

/** Makes sure a mock server listens at `href`'s path, handing each served socket its client end. */
export function listen(href: string): void {
  const url = href.split('?')[0]!;
  if (servers.has(url)) return;
  const server = new Server(url, { mock: false });
  server.on('connection', (client) => {
    const socket = (client as unknown as SocketClient).target;
    if (socket instanceof ServedSocket) socket.connected(client as unknown as SocketClient);
  });
  servers.set(url, server);
}
