/**
 * One process's ZooKeeper session against the in-memory server, implementing the `ZooKeeper` interface the
 * coordinator uses. Requests go over one connection: applied by the server in the order sent, answered in
 * that order, each after a seeded delay. The fault plan may, at any request, drop the connection before
 * or after the server applies it (CONNECTION_LOSS either way: the outcome is unknown), blackhole the link
 * (the server hears nothing and may expire the session), answer a read from a follower's older state,
 * or stall the connection (replies stay in order, as ZooKeeper guarantees, but come late).
 */
import zookeeper from 'node-zookeeper-client';
import type {
  AclEntry,
  ConnectionState,
  NodeData,
  TxOp,
  ZooKeeper,
  ZooKeeperOptions,
} from '../../../src/coordination/zooKeeper';
import { ErrorCode, SpoutError } from '../../../src/errors';
import type { Owner, SimLoop } from '../virtualTime';
import type { ZkFaults } from '../faults';
import { ZkCode, type Reply, type Request, type SessionPeer, type ZkServer } from './zkServer';

export interface ClientHooks {
  trace(what: string): void;
  /** Watch callbacks now waiting on one path of this session (a number that keeps growing is a leak). */
  watchers(path: string, pending: number): void;
}

interface Pending {
  request: Request;
  sentAt: number;
  applied: boolean;
  /** The connection dropped: the reply (if any) never arrives; the caller got CONNECTION_LOSS. */
  lost: boolean;
  settle(reply: Reply | 'lost' | 'closed'): void;
}

/** node-zookeeper-client's own factory (its type definitions leave it out). */
const clientException = zookeeper.Exception as unknown as { create(code: number, path?: string): Error };

/** The error the real session (zkErrors.ts `wrap`) raises, with node-zookeeper-client's exception as its cause. */
export function zkError(code: ZkCode, what: string): SpoutError {
  const cause = clientException.create(code, what);
  const retriable = code === ZkCode.ConnectionLoss;
  return new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what} failed: ${cause.message}`, { retriable, cause });
}

export class SimZooKeeper implements ZooKeeper, SessionPeer {
  readonly sessionId: string;
  readonly sessionTimeoutMs: number;
  private state: ConnectionState = 'connected';
  private lastConfirmedSentAt: number;
  private readonly pending = new Set<Pending>();
  /** FIFO on the wire: the server applies and the client receives in the order sent. */
  private applyCursor = 0;
  private deliverCursor = 0;
  /** Highest zxid this session has seen: a follower never answers from before it (ZooKeeper's single system image). */
  private seenZxid = 0;
  private blackholed = false;
  private readonly dataWatchers = new Map<string, (() => void)[]>();
  private readonly childWatchers = new Map<string, (() => void)[]>();
  private heldWatchEvents: (() => void)[] = [];
  private readonly stopPinging: () => void;

  constructor(
    private readonly loop: SimLoop,
    /** The process: its timers (replies, pings, state changes) freeze when it is paused. */
    private readonly owner: Owner,
    private readonly server: ZkServer,
    private readonly faults: ZkFaults,
    private readonly options: ZooKeeperOptions,
    private readonly hooks: ClientHooks,
  ) {
    this.sessionTimeoutMs = options.sessionTimeoutMs;
    this.sessionId = server.openSession(options.sessionTimeoutMs, this);
    this.lastConfirmedSentAt = loop.now;
    this.seenZxid = server.zxid;
    // The real client pings when idle, every third of the timeout.
    const every = Math.max(50, Math.floor(this.sessionTimeoutMs / 3));
    let cancel: () => void = () => undefined;
    const pingLoop = () => {
      cancel = loop.after(owner, every, () => {
        if (this.state === 'connected') void this.send({ op: 'ping' }).catch(() => undefined);
        if (this.state !== 'closed' && this.state !== 'expired') pingLoop();
      });
    };
    pingLoop();
    this.stopPinging = () => cancel();
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  trustedUntil(): number {
    if (this.state !== 'connected') return -Infinity;
    const timeout = this.sessionTimeoutMs;
    return this.lastConfirmedSentAt + timeout - Math.max(500, timeout / 5);
  }

  // ---- the ZooKeeper interface

  async create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral'): Promise<'created' | 'exists'> {
    const reply = await this.send({ op: 'create', path, data, ephemeral: mode === 'ephemeral' });
    if (reply.ok) return 'created';
    if (reply.code === ZkCode.NodeExists) return 'exists';
    throw zkError(reply.code, `create ${path}`);
  }

  async mkdirp(path: string): Promise<void> {
    const reply = await this.send({ op: 'mkdirp', path });
    if (!reply.ok) throw zkError(reply.code, `mkdirp ${path}`);
  }

  async getData(path: string, watch?: () => void): Promise<NodeData | undefined> {
    // Registered when the request is sent, as the real client does.
    if (watch) this.hooks.watchers(path, addTo(this.dataWatchers, path, watch));
    const reply = await this.send({ op: 'getData', path, watch: watch !== undefined }).catch((err: unknown) => {
      if (watch) removeFrom(this.dataWatchers, path, watch);
      throw err;
    });
    if (reply.ok) return reply.value as NodeData;
    if (watch) removeFrom(this.dataWatchers, path, watch);
    if (reply.code === ZkCode.NoNode) return undefined;
    throw zkError(reply.code, `getData ${path}`);
  }

  /** The simulated ensemble keeps no ACLs (no session has credentials): every node is open. */
  async getACL(path: string): Promise<AclEntry[] | undefined> {
    return (await this.getData(path)) && [{ scheme: 'world', id: 'anyone', perms: 31 }];
  }

  async setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'> {
    const reply = await this.send({ op: 'setData', path, data, version });
    if (reply.ok) return reply.value as number;
    if (reply.code === ZkCode.BadVersion || reply.code === ZkCode.NoNode) return 'conflict';
    throw zkError(reply.code, `setData ${path}`);
  }

  async getChildren(path: string, watch?: () => void): Promise<string[]> {
    if (watch) this.hooks.watchers(path, addTo(this.childWatchers, path, watch));
    const reply = await this.send({ op: 'getChildren', path, watch: watch !== undefined }).catch((err: unknown) => {
      if (watch) removeFrom(this.childWatchers, path, watch);
      throw err;
    });
    if (reply.ok) return reply.value as string[];
    if (watch) removeFrom(this.childWatchers, path, watch);
    if (reply.code === ZkCode.NoNode) return [];
    throw zkError(reply.code, `getChildren ${path}`);
  }

  async remove(path: string, version: number): Promise<boolean> {
    const reply = await this.send({ op: 'remove', path, version });
    if (reply.ok) return true;
    if (reply.code === ZkCode.NoNode || reply.code === ZkCode.BadVersion) return false;
    throw zkError(reply.code, `remove ${path}`);
  }

  async transaction(ops: TxOp[]): Promise<boolean> {
    const reply = await this.send({ op: 'multi', ops });
    if (reply.ok) return true;
    if (reply.code === ZkCode.BadVersion || reply.code === ZkCode.NoNode || reply.code === ZkCode.NodeExists)
      return false;
    throw zkError(reply.code, 'transaction');
  }

  close(): void {
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected' && !this.blackholed;
    this.state = 'closed';
    this.stopPinging();
    this.hooks.trace(`zk ${this.sessionId} closed by the process`);
    for (const p of this.pending) p.settle('closed');
    this.pending.clear();
    // The close request travels like any other; on a dead link the session simply expires later.
    if (wasConnected)
      this.loop.after(this.server.owner, this.faults.requestDelay(), () =>
        this.server.apply(this.sessionId, { op: 'close' }),
      );
  }

  // ---- the server's side

  watchFired(kind: 'data' | 'child', path: string): void {
    const deliver = () => {
      const watchers = kind === 'data' ? this.dataWatchers : this.childWatchers;
      const callbacks = watchers.get(path) ?? [];
      watchers.delete(path);
      for (const callback of callbacks) callback();
    };
    this.loop.after(this.owner, this.nextDelivery(this.faults.replyDelay()), () => {
      if (this.state === 'connected') deliver();
      else if (this.state === 'disconnected') this.heldWatchEvents.push(deliver);
    });
  }

  expired(): void {
    // The server closes the connection; the client learns the session is gone when it reconnects
    // (behind a blackhole it hears nothing: its read timeout notices).
    this.loop.after(this.owner, this.faults.replyDelay(), () => {
      if (this.state === 'connected' && !this.blackholed)
        this.disconnect('the server closed the connection', 1 + this.faults.replyDelay());
    });
  }

  // ---- the wire

  private nextDelivery(delay: number): number {
    const at = Math.max(this.deliverCursor, this.loop.now + delay);
    this.deliverCursor = at;
    return at - this.loop.now;
  }

  private send(request: Request): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const what = describe(request);
      if (this.state !== 'connected') {
        const code = this.state === 'expired' ? ZkCode.SessionExpired : ZkCode.ConnectionLoss;
        this.loop.after(this.owner, 1, () => reject(zkError(code, what)));
        return;
      }
      const sentAt = this.loop.now;
      const pending: Pending = {
        request,
        sentAt,
        applied: false,
        lost: false,
        settle: (reply) => {
          if (reply === 'closed')
            return reject(new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what} failed: the session was closed`));
          if (reply === 'lost') return reject(zkError(ZkCode.ConnectionLoss, what));
          if (reply.ok || reply.code !== ZkCode.SessionExpired) this.seenZxid = Math.max(this.seenZxid, reply.zxid);
          resolve(reply);
        },
      };
      this.pending.add(pending);
      const fault = request.op === 'ping' ? 'none' : this.faults.zkRequest(request.op);
      if (fault === 'blackhole') this.blackhole();
      const applyAt = Math.max(this.applyCursor, this.loop.now + this.faults.requestDelay());
      this.applyCursor = applyAt;
      if (fault === 'drop-before') {
        // The request dies with the connection, before it reaches the server.
        pending.lost = true;
        this.loop.after(this.owner, 0, () =>
          this.disconnect(`connection dropped before the server applied ${what}`, this.faults.disconnectMs()),
        );
      }
      this.loop.at(this.server.owner, applyAt, () => {
        if (pending.lost || this.blackholed) return;
        const stale = (request.op === 'getData' || request.op === 'getChildren') && this.faults.staleRead();
        const readAt = stale ? this.staleZxid() : undefined;
        const reply = this.server.apply(this.sessionId, request, readAt);
        pending.applied = true;
        if (readAt !== undefined && readAt < this.server.zxid)
          this.hooks.trace(
            `zk ${this.sessionId} ${what} answered by a follower at zxid ${readAt} (leader at ${this.server.zxid})`,
          );
        if (fault === 'drop-after') {
          this.hooks.trace(
            `zk ${this.sessionId} ${what} applied (${reply.ok ? 'ok' : `code ${reply.code}`}); its reply is lost`,
          );
          this.loop.after(this.owner, 0, () =>
            this.disconnect(`connection dropped after the server applied ${what}`, this.faults.disconnectMs()),
          );
          return;
        }
        const delay = this.nextDelivery(this.faults.replyDelay() + this.faults.stallReply());
        this.loop.after(this.owner, delay, () => {
          if (pending.lost || !this.pending.has(pending)) return;
          this.pending.delete(pending);
          // Only what the leader answered extends trust: a follower may answer after the leader expired us.
          if (readAt === undefined && (reply.ok || reply.code !== ZkCode.SessionExpired)) {
            this.lastConfirmedSentAt = Math.max(this.lastConfirmedSentAt, sentAt);
          }
          if (!reply.ok && reply.code === ZkCode.SessionExpired && this.state === 'connected') {
            pending.settle(reply);
            this.disconnect('the server says the session expired', 1);
            return;
          }
          if (reply.ok && request.op === 'getData')
            this.server.delivered(request.path, this.sessionId, (reply.value as { data: Buffer }).data);
          pending.settle(reply);
        });
      });
    });
  }

  /** A follower's state: behind the leader, but never behind what this session already saw. */
  private staleZxid(): number {
    const oldest = Math.max(this.seenZxid, this.server.oldestReadable());
    return oldest >= this.server.zxid
      ? this.server.zxid
      : oldest + Math.floor(this.faults.fraction() * (this.server.zxid - oldest));
  }

  /**
   * The link goes silent: nothing sent reaches the server (so its session clock runs out), nothing comes
   * back. The client notices after two thirds of the timeout, like the real one's read timeout.
   */
  private blackhole(): void {
    if (this.blackholed) return;
    this.blackholed = true;
    const lasts = this.faults.blackholeMs(this.sessionTimeoutMs);
    const noticed = Math.floor((this.sessionTimeoutMs * 2) / 3);
    this.hooks.trace(`zk ${this.sessionId} link blackholed for ${lasts} ms`);
    this.loop.after(this.owner, noticed, () => {
      if (this.state === 'connected') this.disconnect('no reply within the read timeout', Math.max(1, lasts - noticed));
    });
  }

  /** The connection is gone: every request in flight fails with CONNECTION_LOSS; reconnects after `downMs`. */
  private disconnect(reason: string, downMs: number): void {
    if (this.state !== 'connected') return;
    this.state = 'disconnected';
    this.hooks.trace(`zk ${this.sessionId} disconnected (${reason}); reconnecting in ${downMs} ms`);
    this.options.onState?.('disconnected');
    const lost = [...this.pending];
    this.pending.clear();
    for (const p of lost) {
      p.lost = true;
      if (!p.applied) this.hooks.trace(`zk ${this.sessionId} ${describe(p.request)} lost before the server applied it`);
    }
    this.loop.after(this.owner, 0, () => {
      for (const p of lost) p.settle('lost');
    });
    this.loop.after(this.owner, downMs, () => this.reconnect());
  }

  private reconnect(): void {
    if (this.state !== 'disconnected') return;
    this.blackholed = false;
    this.applyCursor = this.loop.now;
    this.deliverCursor = this.loop.now;
    if (this.server.touch(this.sessionId)) {
      this.state = 'connected';
      this.lastConfirmedSentAt = this.loop.now;
      this.hooks.trace(`zk ${this.sessionId} reconnected`);
      this.options.onState?.('connected');
      const held = this.heldWatchEvents;
      this.heldWatchEvents = [];
      for (const deliver of held) deliver();
    } else {
      this.state = 'expired';
      this.stopPinging();
      this.heldWatchEvents = [];
      this.dataWatchers.clear();
      this.childWatchers.clear();
      this.hooks.trace(`zk ${this.sessionId} reconnected to learn the session expired`);
      this.options.onState?.('expired');
    }
  }
}

function addTo(map: Map<string, (() => void)[]>, path: string, callback: () => void): number {
  const list = map.get(path);
  if (!list) {
    map.set(path, [callback]);
    return 1;
  }
  // As ZkSession does: the same callback armed twice on a path is called once (a new closure each time is the leak).
  if (!list.includes(callback)) list.push(callback);
  return list.length;
}

function removeFrom(map: Map<string, (() => void)[]>, path: string, callback: () => void): void {
  const list = map.get(path);
  const at = list?.indexOf(callback) ?? -1;
  if (list && at >= 0) list.splice(at, 1);
}

function describe(request: Request): string {
  switch (request.op) {
    case 'multi':
      return `multi[${request.ops.map((op) => `${op.op} ${op.path}`).join(', ')}]`;
    case 'ping':
    case 'close':
      return request.op;
    default:
      return `${request.op} ${request.path}`;
  }
}
