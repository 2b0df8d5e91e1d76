/** Carries a served socket to a client connection (an intercepted WebSocket, a loopback client) and back. */

/** The far end of a stream connection (an intercepted socket, a loopback client). */
export interface StreamPeer {
  send(data: string): void;
  close(code: number, reason: string): void;
  /** The stream could not start: fail as a refused connection. */
  refuse(): void;
  onClose(listener: () => void): void;
  /** Frames the client sends (the copilot socket's questions; identifier streams ignore them). */
  onMessage(listener: (data: string) => void): void;
}

/**
 * Carries a socket's messages between the service's socket and a peer, and
 * closes each side with the other. Resolves true once the socket is open (its
 * first message follows), false if refused.
 */
export function bridgeStream(feed: WebSocket, peer: StreamPeer): Promise<boolean> {
  return new Promise((resolve) => {
    let open = false;
    // What the client sends before the service's socket is open waits for it (a loopback client opens first).
    const waiting: string[] = [];
    feed.onopen = () => {
      open = true;
      for (const data of waiting.splice(0)) feed.send(data);
      resolve(true);
    };
    feed.onmessage = (event) => peer.send(String(event.data));
    feed.onclose = (event) => {
      if (open) peer.close(event.code, event.reason);
      else peer.refuse();
      resolve(false);
    };
    peer.onClose(() => {
      if (feed.readyState <= 1) feed.close(); // CONNECTING or OPEN
    });
    peer.onMessage((data) => {
      if (feed.readyState === 1) feed.send(data);
      else if (feed.readyState === 0) waiting.push(data);
    });
  });
}
