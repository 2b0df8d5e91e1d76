/**
 * A free loopback port outside the Pieces OS ports (1000, 5323, 39300–39333): a test server
 * there would be answered by the service under test, not reached. The system's ephemeral
 * range (32768–60999 on Linux) holds 39300–39333, so a plain `listen(0)` lands there now and then.
 */
import { createServer } from 'node:net';

const PIECES_PORTS = (port: number) => port === 1000 || port === 5323 || (port >= 39300 && port <= 39333);

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, host, () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (!PIECES_PORTS(port)) return port;
  }
}
