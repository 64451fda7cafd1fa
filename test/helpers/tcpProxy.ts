/**
 * A loopback TCP proxy that can go silent without closing anything: a partition as a process sees it
 * (connection up, no replies), which a closed socket or a stopped server cannot imitate.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Holds all traffic both ways (delivered later if resumed). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let paused = false;
  const pipes: { from: Socket; to: Socket; held: Buffer[] }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      const pipe = { from, to, held: [] as Buffer[] };
      pipes.push(pipe);
      sockets.add(from);
      from.on('data', (chunk: Buffer) => (paused ? pipe.held.push(chunk) : to.write(chunk)));
      from.on('close', () => to.destroy());
      from.on('error', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const pipe of pipes) {
        for (const chunk of pipe.held.splice(0)) if (!pipe.to.destroyed) pipe.to.write(chunk);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
