/**
 * A small promise-based interface over the pure-JS `node-zookeeper-client` (bundlable, no native addon).
 * It also keeps the liveness clock that leases are trusted by: the monotonic time at which the last
 * request that the server answered was sent.
 */
import zookeeper from 'node-zookeeper-client';
import { ErrorCode, SpoutError } from '../errors';

import type { ConnectionState, NodeData, TxOp, ZooKeeper, ZooKeeperOptions } from './zooKeeper';

export type Clock = () => number;
const monotonicMs: Clock = () => performance.now();

const Code = zookeeper.Exception;

function zkCode(err: unknown): number | undefined {
  return typeof (err as { getCode?: unknown })?.getCode === 'function' ? (err as { getCode(): number }).getCode() : undefined;
}

function wrap(err: unknown, what: string): SpoutError {
  const code = zkCode(err);
  const retriable = code === Code.CONNECTION_LOSS || code === Code.OPERATION_TIMEOUT;
  return new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what} failed: ${(err as Error)?.message ?? String(err)}`, { retriable, cause: err });
}

export function isSessionExpired(err: unknown): boolean {
  return zkCode((err as { cause?: unknown })?.cause ?? err) === Code.SESSION_EXPIRED;
}

export interface ZkSessionOptions extends ZooKeeperOptions {
  clock?: Clock;
}

export class ZkSession implements ZooKeeper {
  private readonly client: zookeeper.Client;
  private readonly clock: Clock;
  private state: ConnectionState = 'connecting';
  private lastHeardAt = -Infinity;
  private pinger: NodeJS.Timeout | undefined;
  /** Paths with a children watch set and not fired yet: the client adds a listener per call, so arm once. */
  private readonly childWatches = new Map<string, Set<() => void>>();

  private constructor(private readonly options: ZkSessionOptions) {
    this.clock = options.clock ?? monotonicMs;
    this.client = zookeeper.createClient(options.connect, { sessionTimeout: options.sessionTimeoutMs, spinDelay: 200, retries: 0 });
    this.client.on('state', (s: zookeeper.State) => {
      const next = toConnectionState(s);
      if (next === undefined || this.state === 'closed') return;
      this.state = next;
      if (next === 'connected') this.lastHeardAt = this.clock();
      options.onState?.(next);
    });
  }

  /** Connects and waits for the first SYNC_CONNECTED; rejects after `timeoutMs`. */
  static async connect(options: ZkSessionOptions, timeoutMs = options.sessionTimeoutMs): Promise<ZkSession> {
    const session = new ZkSession(options);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        session.close();
        reject(new SpoutError(ErrorCode.ZooKeeper, `could not connect to ZooKeeper at ${options.connect} within ${timeoutMs} ms`, { retriable: true }));
      }, timeoutMs);
      session.client.once('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      session.client.connect();
    });
    session.startPinger();
    return session;
  }

  get sessionId(): string {
    return this.client.getSessionId().toString('hex');
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  /** Session timeout the server granted (it may clamp the one asked for). */
  get sessionTimeoutMs(): number {
    return Math.min(this.options.sessionTimeoutMs, this.client.getSessionTimeout() || this.options.sessionTimeoutMs);
  }

  /**
   * Until when (monotonic ms) this process may trust that its session, and so its ephemeral nodes, are
   * alive: the send time of the last answered request plus the session timeout, less a safety margin.
   * A paused process wakes up past this deadline and stops emitting before it learns anything.
   */
  trustedUntil(): number {
    if (this.state !== 'connected') return -Infinity;
    const timeout = this.sessionTimeoutMs;
    return this.lastHeardAt + timeout - Math.max(500, timeout / 5);
  }

  private startPinger(): void {
    const every = Math.max(100, Math.floor(this.sessionTimeoutMs / 5));
    this.pinger = setInterval(() => {
      if (this.state !== 'connected') return;
      const sentAt = this.clock();
      this.client.exists('/', (err) => {
        if (!err) this.lastHeardAt = Math.max(this.lastHeardAt, sentAt);
      });
    }, every);
    this.pinger.unref();
  }

  private heard<T>(sentAt: number, value: T): T {
    this.lastHeardAt = Math.max(this.lastHeardAt, sentAt);
    return value;
  }

  async create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral'): Promise<'created' | 'exists'> {
    const sentAt = this.clock();
    const createMode = mode === 'ephemeral' ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT;
    return new Promise((resolve, reject) => {
      this.client.create(path, data, createMode, (err) => {
        if (!err) resolve(this.heard(sentAt, 'created'));
        else if (zkCode(err) === Code.NODE_EXISTS) resolve(this.heard(sentAt, 'exists'));
        else reject(wrap(err, `create ${path}`));
      });
    });
  }

  async mkdirp(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.mkdirp(path, (err) => (err ? reject(wrap(err, `mkdirp ${path}`)) : resolve()));
    });
  }

  async getData(path: string, watch?: () => void): Promise<NodeData | undefined> {
    const sentAt = this.clock();
    return new Promise((resolve, reject) => {
      const callback = (err: unknown, data: Buffer, stat: zookeeper.Stat) => {
        if (!err) resolve(this.heard(sentAt, { data: data ?? Buffer.alloc(0), version: stat.version, ephemeralOwner: stat.ephemeralOwner.toString('hex') }));
        else if (zkCode(err) === Code.NO_NODE) resolve(this.heard(sentAt, undefined));
        else reject(wrap(err, `getData ${path}`));
      };
      if (watch) this.client.getData(path, () => watch(), callback);
      else this.client.getData(path, callback);
    });
  }

  /** Returns the new version, or 'conflict' when the version did not match or the node is gone. */
  async setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'> {
    const sentAt = this.clock();
    return new Promise((resolve, reject) => {
      this.client.setData(path, data, version, (err, stat) => {
        if (!err) resolve(this.heard(sentAt, stat.version));
        else if (zkCode(err) === Code.BAD_VERSION || zkCode(err) === Code.NO_NODE) resolve(this.heard(sentAt, 'conflict'));
        else reject(wrap(err, `setData ${path}`));
      });
    });
  }

  /** Children of `path`, [] when it does not exist. `watch` is called once, at the next change. */
  async getChildren(path: string, watch?: () => void): Promise<string[]> {
    const sentAt = this.clock();
    let arm = false;
    if (watch) {
      const pending = this.childWatches.get(path);
      if (pending) pending.add(watch);
      else {
        this.childWatches.set(path, new Set([watch]));
        arm = true;
      }
    }
    return new Promise((resolve, reject) => {
      const callback = (err: unknown, children: string[]) => {
        if (!err) resolve(this.heard(sentAt, children));
        else if (zkCode(err) === Code.NO_NODE) resolve(this.heard(sentAt, []));
        else {
          if (arm) this.childWatches.delete(path);
          reject(wrap(err, `getChildren ${path}`));
        }
      };
      if (arm) {
        this.client.getChildren(path, () => {
          const watchers = this.childWatches.get(path) ?? new Set();
          this.childWatches.delete(path);
          for (const w of watchers) w();
        }, callback);
      } else this.client.getChildren(path, callback);
    });
  }

  /** Removes one node at `version` (-1: any); false when it was already gone or had another version. */
  async remove(path: string, version: number): Promise<boolean> {
    const sentAt = this.clock();
    return new Promise((resolve, reject) => {
      this.client.remove(path, version, (err) => {
        if (!err) resolve(this.heard(sentAt, true));
        else if (zkCode(err) === Code.NO_NODE || zkCode(err) === Code.BAD_VERSION) resolve(this.heard(sentAt, false));
        else reject(wrap(err, `remove ${path}`));
      });
    });
  }

  /** Removes `path` and everything below it (the client's own removeRecursive fails below depth 1). */
  async removeTree(path: string): Promise<void> {
    for (const child of await this.getChildren(path)) await this.removeTree(`${path}/${child}`);
    await this.remove(path, -1);
  }

  /** Atomic multi-op; resolves false when a check/version failed (nothing was applied). */
  async transaction(ops: TxOp[]): Promise<boolean> {
    const sentAt = this.clock();
    const tx = this.client.transaction();
    for (const op of ops) {
      if (op.op === 'create') tx.create(op.path, op.data, op.ephemeral ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT);
      else if (op.op === 'set') tx.setData(op.path, op.data, op.version);
      else if (op.op === 'check') tx.check(op.path, op.version);
      else tx.remove(op.path, op.version);
    }
    return new Promise((resolve, reject) => {
      tx.commit((err) => {
        if (!err) resolve(this.heard(sentAt, true));
        else if ([Code.BAD_VERSION, Code.NO_NODE, Code.NODE_EXISTS].includes(zkCode(err) ?? 0)) resolve(this.heard(sentAt, false));
        else reject(wrap(err, 'transaction'));
      });
    });
  }

  close(): void {
    if (this.pinger) clearInterval(this.pinger);
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.client.close();
  }
}

function toConnectionState(state: zookeeper.State): ConnectionState | undefined {
  switch (state.name) {
    case 'SYNC_CONNECTED':
      return 'connected';
    case 'DISCONNECTED':
      return 'disconnected';
    case 'EXPIRED':
      return 'expired';
    default:
      return undefined;
  }
}
