/**
 * A loopback TCP proxy in front of ZooKeeper that decodes the client's side of the ZooKeeper wire protocol
 * and counts what each task asks: every frame is a 4-byte length and a body; the first body of a connection
 * is the ConnectRequest, every later one starts with xid (int32) and the request type (int32), then, for the
 * requests on one node, the path (int32 length, UTF-8). The server's replies start with the same xid, so
 * each request's round trip is timed here; xid -1 is a watch notification. One proxy per task: the counts
 * are that task's, independent of the spout's own code.
 */
import { connect, createServer, type Socket } from 'node:net';

/** Request types (ZooDefs.OpCode) that change the tree. */
const WRITES = new Map<number, string>([
  [1, 'create'],
  [2, 'delete'],
  [5, 'setData'],
  [7, 'setACL'],
  [13, 'check'],
  [14, 'multi'],
  [15, 'create2'],
  [19, 'createContainer'],
  [20, 'deleteContainer'],
  [21, 'createTTL'],
]);
/** Request types that only read. */
const READS = new Map<number, string>([
  [3, 'exists'],
  [4, 'getData'],
  [6, 'getACL'],
  [8, 'getChildren'],
  [9, 'sync'],
  [12, 'getChildren2'],
  [22, 'multiRead'],
  [103, 'getEphemerals'],
  [104, 'getAllChildrenNumber'],
]);
/** Types whose body starts with the path. */
const WITH_PATH = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 19, 20, 21, 103, 104]);
const PING = 11;
const NOTIFICATION_XID = -1;

export interface ZkRequestEvent {
  /** performance.now() when the request passed the proxy. */
  at: number;
  kind: 'read' | 'write' | 'other';
  op: string;
  /** The folder below the application's base (`leases`, `checkpoints`, ...) or the last path part. */
  folder: string | undefined;
  /** Round trip through the server, ms; undefined until (or unless) answered. */
  rttMs?: number;
}

export interface ZkCounts {
  reads: number;
  writes: number;
  pings: number;
  other: number;
  notifications: number;
  byOp: Record<string, number>;
}

export interface ZkCounter {
  port: number;
  /** Every request seen, in order (pings excepted). */
  readonly events: ZkRequestEvent[];
  readonly notifications: number[];
  readonly pings: number;
  /** Counts of the requests made in [from, to) (performance.now()). */
  counts(from?: number, to?: number): ZkCounts;
  close(): Promise<void>;
}

/** Splits a byte stream into ZooKeeper frames (4-byte big-endian length, then the body). */
class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0);
  push(chunk: Buffer, onFrame: (body: Buffer) => void): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 4) {
      const length = this.pending.readInt32BE(0);
      if (this.pending.length < 4 + length) return;
      onFrame(this.pending.subarray(4, 4 + length));
      this.pending = this.pending.subarray(4 + length);
    }
  }
}

function folderOf(path: string): string | undefined {
  const parts = path.split('/').filter(Boolean);
  const known = ['leases', 'checkpoints', 'finished', 'ended', 'members', 'bootstrap'];
  const at = parts.findIndex((p) => known.includes(p));
  return at >= 0 ? parts[at] : parts[parts.length - 1];
}

/** Counts of the requests in `events` made in [from, to), the notifications in it, every ping. */
export function zkCounts(
  events: readonly ZkRequestEvent[],
  notifications: readonly number[],
  pings: number,
  from = 0,
  to = Infinity,
): ZkCounts {
  const counts: ZkCounts = { reads: 0, writes: 0, pings: 0, other: 0, notifications: 0, byOp: {} };
  for (const e of events) {
    if (e.at < from || e.at >= to) continue;
    if (e.kind === 'read') counts.reads += 1;
    else if (e.kind === 'write') counts.writes += 1;
    else counts.other += 1;
    const key = e.folder ? `${e.op} ${e.folder}` : e.op;
    counts.byOp[key] = (counts.byOp[key] ?? 0) + 1;
  }
  counts.notifications = notifications.filter((t) => t >= from && t < to).length;
  counts.pings = pings;
  return counts;
}

export async function startZkCounter(targetPort: number): Promise<ZkCounter> {
  const events: ZkRequestEvent[] = [];
  const notifications: number[] = [];
  let pings = 0;
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const fromClient = new FrameSplitter();
    const fromServer = new FrameSplitter();
    let clientFrames = 0;
    let serverFrames = 0;
    const open = new Map<number, ZkRequestEvent>();
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      fromClient.push(chunk, (body) => {
        clientFrames += 1;
        if (clientFrames === 1 || body.length < 8) return; // the ConnectRequest has no header
        const xid = body.readInt32BE(0);
        const type = body.readInt32BE(4);
        if (type === PING) {
          pings += 1;
          return;
        }
        let path = '';
        if (WITH_PATH.has(type) && body.length >= 12) {
          const length = body.readInt32BE(8);
          if (length > 0 && body.length >= 12 + length) path = body.toString('utf8', 12, 12 + length);
        }
        const kind = WRITES.has(type) ? 'write' : READS.has(type) ? 'read' : 'other';
        const op = WRITES.get(type) ?? READS.get(type) ?? `type${type}`;
        const event: ZkRequestEvent = { at: performance.now(), kind, op, folder: path ? folderOf(path) : undefined };
        events.push(event);
        open.set(xid, event);
      });
    });
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      fromServer.push(chunk, (body) => {
        serverFrames += 1;
        if (serverFrames === 1 || body.length < 4) return; // the ConnectResponse
        const xid = body.readInt32BE(0);
        if (xid === NOTIFICATION_XID) {
          notifications.push(performance.now());
          return;
        }
        const event = open.get(xid);
        if (event) {
          event.rttMs = performance.now() - event.at;
          open.delete(xid);
        }
      });
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    port: (server.address() as { port: number }).port,
    events,
    notifications,
    get pings() {
      return pings;
    },
    counts(from = 0, to = Infinity) {
      return zkCounts(events, notifications, pings, from, to);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
