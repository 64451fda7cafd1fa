/**
 * A loopback TCP proxy that fails the way networks do, which a closed socket or a stopped server cannot
 * imitate: it goes silent and delivers later (pause), resets every connection at once (a reset, also at
 * seeded random moments), or drops every byte without closing anything (a partition: blackhole).
 */
import { createServer, connect, type Socket } from 'node:net';
import { between, seededRandom } from './seededRandom';

export const ProxyMode = {
  /** Bytes pass both ways. */
  Open: 'open',
  /** Bytes are held both ways and delivered on resume. */
  Paused: 'paused',
  /** Bytes are dropped both ways; connections are accepted and held open. */
  Blackholed: 'blackholed',
} as const;
export type ProxyMode = (typeof ProxyMode)[keyof typeof ProxyMode];

export interface RandomResets {
  /** Seeds the gaps: the same seed resets at the same offsets. */
  seed: number;
  /** Stops by itself after this many resets. */
  resets: number;
  minGapMs: number;
  maxGapMs: number;
}

export interface RandomResetRun {
  /** Resolves once the last reset is done (or the run is stopped) with the connections reset each time. */
  done: Promise<number[]>;
  stop(): void;
}

export interface TcpProxy {
  port: number;
  readonly mode: ProxyMode;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now (both ends, as one). */
  readonly open: number;
  /** Holds all traffic both ways (delivered later if resumed). */
  pause(): void;
  resume(): void;
  /** Destroys every open connection with a TCP reset, as a network reset would; returns how many. */
  resetAll(): number;
  /**
   * Accepts and holds connections and drops every byte both ways, without closing anything. New
   * connections get no upstream until restored.
   */
  blackhole(): void;
  /**
   * Lets the next chunk from the server through, then blackholes: a partition that falls right after a
   * session is established, while the client's first requests are in flight.
   */
  blackholeAfterNextReply(): void;
  /**
   * Lets bytes through again. A connection that lost bytes cannot carry its protocol any more: it is
   * reset, as a TCP stack gives up after its retransmissions; one that lost nothing goes on.
   */
  restore(): void;
  /** Resets every connection at seeded random gaps, a bounded number of times. */
  resetRandomly(plan: RandomResets): RandomResetRun;
  close(): Promise<void>;
}

/** The waits before each reset of a random run: a pure function of the plan, so a seed replays a run. */
export function resetGaps(plan: RandomResets): number[] {
  const random = seededRandom(plan.seed);
  return Array.from({ length: plan.resets }, () => between(random, plan.minGapMs, plan.maxGapMs));
}

interface Connection {
  client: Socket;
  upstream: Socket | undefined;
  /** Bytes held while paused, per direction. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  /** Some bytes were dropped: the stream is broken. */
  broken: boolean;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let mode: ProxyMode = ProxyMode.Open;
  let accepted = 0;
  let blackholeArmed = false;
  const connections = new Set<Connection>();
  const runs = new Set<() => void>();

  const reset = (connection: Connection) => {
    connection.client.resetAndDestroy();
    connection.upstream?.resetAndDestroy();
    connections.delete(connection);
  };

  const carry = (
    connection: Connection,
    chunk: Buffer,
    held: Buffer[],
    to: () => Socket | undefined,
    fromServer: boolean,
  ) => {
    if (mode === ProxyMode.Blackholed) connection.broken = true;
    else if (mode === ProxyMode.Paused) held.push(chunk);
    else to()?.write(chunk);
    if (fromServer && blackholeArmed && mode === ProxyMode.Open) {
      blackholeArmed = false;
      mode = ProxyMode.Blackholed;
    }
  };

  // A close travels to the other end unless the network is cut: then nobody hears it.
  const closed = (connection: Connection, other: () => Socket | undefined) => {
    if (mode === ProxyMode.Blackholed) {
      connection.broken = true;
      return;
    }
    other()?.destroy();
    connections.delete(connection);
  };

  const attachUpstream = (connection: Connection) => {
    const upstream = connect(targetPort, '127.0.0.1');
    connection.upstream = upstream;
    upstream.on('data', (chunk: Buffer) =>
      carry(connection, chunk, connection.toClient, () => connection.client, true),
    );
    upstream.on('close', () => closed(connection, () => connection.client));
    upstream.on('error', () => closed(connection, () => connection.client));
  };

  const server = createServer((client) => {
    accepted += 1;
    const connection: Connection = { client, upstream: undefined, toUpstream: [], toClient: [], broken: false };
    connections.add(connection);
    client.on('data', (chunk: Buffer) =>
      carry(connection, chunk, connection.toUpstream, () => connection.upstream, false),
    );
    client.on('close', () => closed(connection, () => connection.upstream));
    client.on('error', () => closed(connection, () => connection.upstream));
    if (mode !== ProxyMode.Blackholed) attachUpstream(connection);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const proxy: TcpProxy = {
    port: (server.address() as { port: number }).port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return connections.size;
    },
    pause() {
      mode = ProxyMode.Paused;
    },
    resume() {
      mode = ProxyMode.Open;
      for (const connection of connections) {
        for (const chunk of connection.toUpstream.splice(0))
          if (connection.upstream && !connection.upstream.destroyed) connection.upstream.write(chunk);
        for (const chunk of connection.toClient.splice(0))
          if (!connection.client.destroyed) connection.client.write(chunk);
      }
    },
    resetAll() {
      const all = [...connections];
      for (const connection of all) reset(connection);
      return all.length;
    },
    blackhole() {
      mode = ProxyMode.Blackholed;
    },
    blackholeAfterNextReply() {
      blackholeArmed = true;
    },
    restore() {
      blackholeArmed = false;
      mode = ProxyMode.Open;
      for (const connection of [...connections]) {
        if (connection.broken) reset(connection);
        else if (!connection.upstream) attachUpstream(connection);
      }
    },
    resetRandomly(plan) {
      const gaps = resetGaps(plan);
      let stopped = false;
      let wake: (() => void) | undefined;
      const stop = () => {
        stopped = true;
        wake?.();
      };
      runs.add(stop);
      const done = (async () => {
        const counts: number[] = [];
        for (const gap of gaps) {
          if (stopped) break;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, gap);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          if (!stopped) counts.push(proxy.resetAll());
        }
        runs.delete(stop);
        return counts;
      })();
      return { done, stop };
    },
    async close() {
      for (const stop of [...runs]) stop();
      for (const connection of [...connections]) {
        connection.client.destroy();
        connection.upstream?.destroy();
      }
      connections.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
