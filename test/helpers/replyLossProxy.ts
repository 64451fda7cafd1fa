/**
 * A loopback TCP proxy in front of ZooKeeper that loses the reply to one request, the fault a closed socket
 * or a stopped server cannot make: armed with a text the request carries (a node's path), it lets that
 * request through, drops what the server sends back from then on, and resets the client's connection. The
 * server has applied the request; the client sees a lost connection, and reconnects to the same session
 * through the proxy. Everything else passes untouched.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface ReplyLossProxy {
  port: number;
  /**
   * Loses the reply to the next request whose bytes contain `marker`. Resolves once the server answered
   * it (so it was applied) and the client's connection was reset.
   */
  loseReplyTo(marker: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReplyLossProxy(upstreamPort: number): Promise<ReplyLossProxy> {
  let armed: { marker: Buffer; lost: () => void } | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    /** Set once this connection carried the armed request: nothing more reaches the client. */
    let cut: (() => void) | undefined;
    client.on('data', (chunk) => {
      if (armed && chunk.includes(armed.marker)) {
        cut = armed.lost;
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cut) {
        client.write(chunk);
        return;
      }
      // The server answered, so it applied the request: the answer goes nowhere, the connection dies.
      const lost = cut;
      cut = () => undefined;
      client.resetAndDestroy();
      upstream.destroy();
      lost();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    loseReplyTo(marker) {
      return new Promise((resolve) => {
        armed = { marker: Buffer.from(marker), lost: resolve };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
