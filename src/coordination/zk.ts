/**
 * A small promise-based interface over the pure-JS `node-zookeeper-client` (bundlable, no native addon), and
 * what that client lacks: every request settles within a bound, a silent connection is abandoned, a session
 * nobody answers for a whole session timeout is given up, `expired` is final, and lease trust comes only from
 * what the leader confirmed (sessionTrust.ts).
 */
import { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import { realScheduler, type Scheduler } from '../core/scheduler';
import { sessionTimings } from '../core/timings';
import { ErrorCode, SpoutError } from '../errors';
import { NewerCode, tolerateUnknownCodes } from './clientCodes';
import { SessionTrust } from './sessionTrust';

import type { ConnectionState, NodeData, TxOp, ZooKeeper, ZooKeeperOptions } from './zooKeeper';

const Code = zookeeper.Exception;

/**
 * Outcomes in which a server handled the request with our session valid. For a write, that server is the
 * leader: followers forward every write, and these checks run in the leader's request pipeline.
 */
const ANSWERED: ReadonlySet<number> = new Set([
  Code.OK,
  Code.NO_NODE,
  Code.NODE_EXISTS,
  Code.BAD_VERSION,
  Code.NOT_EMPTY,
]);

function zkCode(err: unknown): number | undefined {
  return typeof (err as { getCode?: unknown })?.getCode === 'function'
    ? (err as { getCode(): number }).getCode()
    : undefined;
}

/** What the operator can do about an answer that retrying alone will not change. */
const REFUSALS: ReadonlyMap<number, string> = new Map([
  [
    Code.NO_AUTH,
    "the node's ACL refuses these ZooKeeper credentials (NO_AUTH): the state was created with other ones. Use the credentials it was created with " +
      '(kinesis.spout.zookeeper.auth, or a fixed storm.zookeeper.topology.auth.payload), or another zookeeper.root or applicationName',
  ],
  [
    Code.AUTH_FAILED,
    'ZooKeeper refused the credentials (AUTH_FAILED): check kinesis.spout.zookeeper.auth (or storm.zookeeper.topology.auth.payload)',
  ],
  [
    NewerCode.SESSION_CLOSED_REQUIRE_SASL_AUTH,
    "the ensemble requires SASL authentication (sessionRequireClientSASLAuth, or enforce.auth.schemes=sasl), which this spout's ZooKeeper client (node-zookeeper-client) cannot do: " +
      'give the spout an ensemble (kinesis.spout.zookeeper.connect) that accepts digest authentication (kinesis.spout.zookeeper.auth) or none',
  ],
]);

function wrap(err: unknown, what: string): SpoutError {
  const code = zkCode(err);
  const retriable = code === Code.CONNECTION_LOSS || code === Code.OPERATION_TIMEOUT;
  const refusal = code === undefined ? undefined : REFUSALS.get(code);
  const message = `ZooKeeper ${what} failed: ${(err as Error)?.message ?? String(err)}${refusal ? `; ${refusal}` : ''}`;
  return new SpoutError(ErrorCode.ZooKeeper, message, { retriable, cause: err });
}

const anyone = new zookeeper.Id('world', 'anyone');
/** The session's own authenticated identities (ZooKeeper's `auth` scheme): the creator. */
const creator = new zookeeper.Id('auth', '');
const Acl = {
  open: [new zookeeper.ACL(zookeeper.Permission.ALL, anyone)],
  creatorOnly: [new zookeeper.ACL(zookeeper.Permission.ALL, creator)],
  /** Readable and extendable by anyone, changed only by its creator: a root several applications share. */
  shared: [
    new zookeeper.ACL(zookeeper.Permission.READ | zookeeper.Permission.CREATE, anyone),
    new zookeeper.ACL(zookeeper.Permission.ALL, creator),
  ],
};

/** An error carrying a ZooKeeper code the way the client's own do, for outcomes we decide ourselves. */
function coded(code: number, message: string): Error {
  return Object.assign(new Error(message), { getCode: () => code });
}

/** A code a server answered that this operation does not expect (e.g. NOT_EMPTY for a remove). */
function unexpected(code: number, what: string): SpoutError {
  return wrap(coded(code, `unexpected answer ${code}`), what);
}

/** How a connect that got no session in time fails (diagnose.ts finds out why). */
export const NO_SESSION = 'could not connect to ZooKeeper';

export function isNoSession(err: unknown): boolean {
  return err instanceof SpoutError && err.code === ErrorCode.ZooKeeper && err.message.startsWith(NO_SESSION);
}

export interface ZkSessionOptions extends ZooKeeperOptions {
  /** Time and timers (real by default). */
  scheduler?: Scheduler;
  /** Every request settles within this (default: core/timings.ts); no reply by then rejects, retriable. */
  requestTimeoutMs?: number;
  /** How often the heartbeat write goes to the leader (default: core/timings.ts, a seventh of the session timeout). */
  heartbeatEveryMs?: number;
}

type Kind = 'read' | 'write';
type Reply<R> = (err: unknown, result?: R) => void;

/** Connection manager states of node-zookeeper-client (lib/ConnectionManager.js). */
const MANAGER_CONNECTED = 2;
const MANAGER_CLOSED = -2;

export class ZkSession implements ZooKeeper {
  private readonly client: zookeeper.Client;
  private readonly scheduler: Scheduler;
  private readonly trust: SessionTrust;
  private state: ConnectionState = 'connecting';
  /** onState is told only once `connect` has resolved: until then its outcome says it all. */
  private announced = false;
  /** Start of the current connect attempt: the leader created or revalidated the session after it. */
  private connectingSince: number;
  private opening: { resolve(): void; reject(err: Error): void } | undefined;
  private stopHeartbeat: (() => void) | undefined;
  private heartbeatInFlight = false;
  /** Requests not settled yet, with their send time, so close and expiry settle them at once. */
  private readonly pending = new Map<number, { sentAt: number; fail(err: Error): void }>();
  private nextRequest = 0;
  /** Paths with a children watch set and not fired yet: the client adds a listener per call, so arm once. */
  private readonly childWatches = new Map<string, Set<() => void>>();

  private constructor(private readonly options: ZkSessionOptions) {
    this.scheduler = options.scheduler ?? realScheduler;
    this.connectingSince = this.scheduler.now();
    this.trust = new SessionTrust(() => this.sessionTimeoutMs);
    tolerateUnknownCodes();
    this.client = zookeeper.createClient(options.connect, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    // Sent with every (re)connect, before any request.
    if (options.auth) this.client.addAuthInfo(options.auth.scheme, Buffer.from(options.auth.payload));
    this.client.on('state', (s: zookeeper.State) => this.onClientState(s));
  }

  /**
   * Connects and waits for the first SYNC_CONNECTED. Rejects (and closes everything it opened) after
   * `timeoutMs`, or at once when the session expires or is refused before that.
   */
  static async connect(
    options: ZkSessionOptions,
    timeoutMs = sessionTimings(options.sessionTimeoutMs).connectTimeoutMs,
  ): Promise<ZkSession> {
    const session = new ZkSession(options);
    await new Promise<void>((resolve, reject) => {
      const cancel = session.scheduler.after(timeoutMs, () => {
        session.opening = undefined;
        session.close();
        reject(
          new SpoutError(ErrorCode.ZooKeeper, `${NO_SESSION} at ${options.connect} within ${timeoutMs} ms`, {
            retriable: true,
          }),
        );
      });
      session.opening = {
        resolve: () => {
          cancel();
          resolve();
        },
        reject: (err) => {
          cancel();
          reject(err);
        },
      };
      session.connectingSince = session.scheduler.now();
      session.client.connect();
    });
    session.announced = true;
    session.startHeartbeat();
    return session;
  }

  get sessionId(): string {
    return this.client.getSessionId().toString('hex');
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  /** Session timeout the server granted (it may clamp the one asked for); the smaller of the two. */
  get sessionTimeoutMs(): number {
    return Math.min(this.options.sessionTimeoutMs, this.client.getSessionTimeout() || this.options.sessionTimeoutMs);
  }

  private get requestTimeoutMs(): number {
    return this.options.requestTimeoutMs ?? sessionTimings(this.sessionTimeoutMs).requestTimeoutMs;
  }

  /**
   * Until when (monotonic ms) this process may trust that its session, and so its ephemeral nodes, are
   * alive: derived only from what the leader confirmed (see sessionTrust.ts for the reasoning and the clock
   * assumptions). A paused process wakes up past this deadline and stops emitting before it learns anything.
   */
  trustedUntil(): number {
    if (this.state !== 'connected') return -Infinity;
    return this.trust.trustedUntil();
  }

  private onClientState(s: zookeeper.State): void {
    const now = this.scheduler.now();
    if (s === zookeeper.State.SYNC_CONNECTED) {
      if (this.terminal()) return;
      this.trust.connected({ sentAt: this.connectingSince, answeredAt: now });
      this.move('connected');
      const opening = this.opening;
      this.opening = undefined;
      opening?.resolve();
    } else if (s === zookeeper.State.DISCONNECTED) {
      if (this.terminal()) return;
      this.trust.disconnected();
      this.connectingSince = now;
      this.move('disconnected');
    } else if (s === zookeeper.State.EXPIRED) {
      this.expire('ZooKeeper expired the session');
    } else if (s === zookeeper.State.AUTH_FAILED) {
      const opening = this.opening;
      this.opening = undefined;
      this.close();
      opening?.reject(
        new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper at ${this.options.connect} refused our credentials`),
      );
    }
  }

  private terminal(): boolean {
    return this.state === 'expired' || this.state === 'closed';
  }

  /** Every state change but close(): `expired` and `closed` are final, and each real change is told once. */
  private move(next: ConnectionState): void {
    if (this.terminal() || this.state === next) return;
    this.state = next;
    if (this.announced && next !== 'closed') this.options.onState?.(next);
  }

  /** Expired, by the server's word or because nobody answered for a session timeout: final. */
  private expire(why: string): void {
    if (this.terminal()) return;
    this.move('expired');
    const err = new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper session ${this.sessionId} expired: ${why}`, {
      cause: coded(Code.SESSION_EXPIRED, 'session expired'),
    });
    this.shutDown(err);
    const opening = this.opening;
    this.opening = undefined;
    opening?.reject(err);
  }

  /**
   * Two timers: the heartbeat (trust grows from its confirmations, each crediting a request answered about
   * three periods earlier: every seventh of the timeout keeps the deadline ahead of now by a third of the
   * timeout or more), and a watchdog that abandons a silent connection and gives up a session nobody has
   * answered for a session timeout.
   */
  private startHeartbeat(): void {
    const every = this.options.heartbeatEveryMs ?? sessionTimings(this.sessionTimeoutMs).heartbeatEveryMs;
    const stopBeat = this.scheduler.every(every, () => {
      if (this.state !== 'connected' || this.heartbeatInFlight) return;
      this.heartbeatInFlight = true;
      this.heartbeat()
        .catch(() => undefined)
        .finally(() => (this.heartbeatInFlight = false));
    });
    const stopWatch = this.scheduler.every(sessionTimings(this.sessionTimeoutMs).watchdogEveryMs, () => {
      const now = this.scheduler.now();
      if (now > this.trust.givenUpAt())
        this.expire(`no server answered anything sent in the last ${this.sessionTimeoutMs} ms`);
      // The client has no read timeout: a silent connection would be kept until the session is lost.
      else if (this.state === 'connected' && this.stalled(now)) this.abandonConnection();
    });
    this.stopHeartbeat = () => {
      stopBeat();
      stopWatch();
    };
  }

  /**
   * A write the leader must confirm, and that changes nothing: a multi is always proposed through the
   * leader, even when its only op is a version check (ZooKeeper has `sync`, but this client does not).
   * '/' always exists (or is the chroot, whose absence is also the leader's answer).
   */
  private heartbeat(): Promise<number> {
    return this.exchange<unknown>('heartbeat', 'write', (reply) =>
      this.client.transaction().check('/', -1).commit(reply),
    );
  }

  /** No answer to anything for two thirds of the session timeout while a request waits (as the Java client's read timeout). */
  private stalled(now: number): boolean {
    const limit = sessionTimings(this.sessionTimeoutMs).stalledAfterMs;
    if (now - this.trust.lastAnsweredAt() < limit) return false;
    for (const request of this.pending.values()) if (now - request.sentAt >= limit) return true;
    return false;
  }

  /** Drops the current socket: the client reconnects (to the next server of the connect string). */
  private abandonConnection(): void {
    socketOf(this.client)?.destroy();
  }

  /**
   * Sends one request and settles within `timeoutMs`: with its outcome code when a server handled it
   * (ANSWERED), rejected otherwise. A late reply still counts for trust (it was sent when we say) but
   * settles nothing.
   */
  private exchange<R>(
    what: string,
    kind: Kind,
    send: (reply: Reply<R>) => void,
    timeoutMs = this.requestTimeoutMs,
  ): Promise<number> {
    return this.exchangeWith<R>(what, kind, send, timeoutMs).then((o) => o.code);
  }

  private exchangeWith<R>(
    what: string,
    kind: Kind,
    send: (reply: Reply<R>) => void,
    timeoutMs = this.requestTimeoutMs,
  ): Promise<{ code: number; result?: R }> {
    if (this.state === 'expired') {
      return Promise.reject(
        new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what}: session ${this.sessionId} expired`, {
          cause: coded(Code.SESSION_EXPIRED, 'session expired'),
        }),
      );
    }
    if (this.state === 'closed')
      return Promise.reject(new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what}: session closed`));
    const id = this.nextRequest++;
    const sentAt = this.scheduler.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        cancel();
        this.pending.delete(id);
        return true;
      };
      const cancel = this.scheduler.after(Math.max(0, timeoutMs), () => {
        if (settle())
          reject(
            new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what}: no reply within ${Math.round(timeoutMs)} ms`, {
              retriable: true,
            }),
          );
      });
      this.pending.set(id, { sentAt, fail: (err) => settle() && reject(err) });
      const reply: Reply<R> = (err, result) => {
        const code = err ? zkCode(err) : Code.OK;
        if (code !== undefined && ANSWERED.has(code) && !this.terminal()) {
          const exchange = { sentAt, answeredAt: this.scheduler.now() };
          if (kind === 'write') this.trust.confirmedByLeader(exchange);
          else this.trust.answered(exchange);
        }
        if (!settle()) return;
        if (code !== undefined && ANSWERED.has(code)) resolve({ code, result });
        else reject(wrap(err, what));
      };
      try {
        send(reply);
      } catch (err) {
        // The client validates paths synchronously.
        if (settle()) reject(wrap(err, what));
      }
    });
  }

  /** The ACL a node created at `path` gets (see ZooKeeperOptions.creatorOnlyBelow). */
  aclFor(path: string): zookeeper.ACL[] {
    const below = this.options.creatorOnlyBelow;
    if (!this.options.auth || below === undefined) return Acl.open;
    return path.startsWith(`${below.replace(/\/+$/, '')}/`) ? Acl.creatorOnly : Acl.shared;
  }

  async create(
    path: string,
    data: Buffer,
    mode: 'persistent' | 'ephemeral',
    timeoutMs = this.requestTimeoutMs,
  ): Promise<'created' | 'exists'> {
    const createMode = mode === 'ephemeral' ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT;
    const code = await this.exchange<string>(
      `create ${path}`,
      'write',
      (reply) => this.client.create(path, data, this.aclFor(path), createMode, reply),
      timeoutMs,
    );
    if (code === Code.OK) return 'created';
    if (code === Code.NODE_EXISTS) return 'exists';
    throw unexpected(code, `create ${path}`);
  }

  /** Creates `path` and its missing parents, one create each; the whole settles within one request bound. */
  async mkdirp(path: string): Promise<void> {
    const deadline = this.scheduler.now() + this.requestTimeoutMs;
    let prefix = '';
    for (const part of path.split('/').filter((p) => p.length > 0)) {
      prefix += `/${part}`;
      const left = deadline - this.scheduler.now();
      if (left <= 0)
        throw new SpoutError(
          ErrorCode.ZooKeeper,
          `ZooKeeper mkdirp ${path}: no reply within ${this.requestTimeoutMs} ms`,
          { retriable: true },
        );
      await this.create(prefix, Buffer.alloc(0), 'persistent', left);
    }
  }

  async getData(path: string, watch?: () => void): Promise<NodeData | undefined> {
    const { code, result } = await this.exchangeWith<{ data: Buffer; stat: zookeeper.Stat }>(
      `getData ${path}`,
      'read',
      (reply) => {
        const callback = (err: unknown, data: Buffer, stat: zookeeper.Stat) => reply(err, { data, stat });
        if (watch) this.client.getData(path, () => watch(), callback);
        else this.client.getData(path, callback);
      },
    );
    if (code !== Code.OK || !result) return undefined;
    return {
      data: result.data ?? Buffer.alloc(0),
      version: result.stat.version,
      ephemeralOwner: result.stat.ephemeralOwner.toString('hex'),
    };
  }

  /** Returns the new version, or 'conflict' when the version did not match or the node is gone. */
  async setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'> {
    const { code, result } = await this.exchangeWith<zookeeper.Stat>(`setData ${path}`, 'write', (reply) =>
      this.client.setData(path, data, version, reply),
    );
    if (code === Code.OK && result) return result.version;
    if (code === Code.BAD_VERSION || code === Code.NO_NODE) return 'conflict';
    throw unexpected(code, `setData ${path}`);
  }

  /** Children of `path`, [] when it does not exist. `watch` is called once, at the next change. */
  async getChildren(path: string, watch?: () => void): Promise<string[]> {
    let arm = false;
    if (watch) {
      const pending = this.childWatches.get(path);
      if (pending) pending.add(watch);
      else {
        this.childWatches.set(path, new Set([watch]));
        arm = true;
      }
    }
    try {
      const { code, result } = await this.exchangeWith<string[]>(`getChildren ${path}`, 'read', (reply) => {
        const callback = (err: unknown, children: string[]) => reply(err, children);
        if (arm) {
          this.client.getChildren(
            path,
            () => {
              const watchers = this.childWatches.get(path) ?? new Set();
              this.childWatches.delete(path);
              for (const w of watchers) w();
            },
            callback,
          );
        } else this.client.getChildren(path, callback);
      });
      return code === Code.OK && result ? result : [];
    } catch (err) {
      // Not armed after all: the next call arms again (a late reply may still arm the client's watcher,
      // which then only fires the watchers pending at that time: early, never lost).
      if (arm) this.childWatches.delete(path);
      throw err;
    }
  }

  /** Removes one node at `version` (-1: any); false when it was already gone or had another version. */
  async remove(path: string, version: number): Promise<boolean> {
    const code = await this.exchange<void>(`remove ${path}`, 'write', (reply) =>
      this.client.remove(path, version, reply),
    );
    if (code === Code.OK) return true;
    if (code === Code.NO_NODE || code === Code.BAD_VERSION) return false;
    throw unexpected(code, `remove ${path}`);
  }

  /** Removes `path` and everything below it (the client's own removeRecursive fails below depth 1). */
  async removeTree(path: string): Promise<void> {
    for (const child of await this.getChildren(path)) await this.removeTree(`${path}/${child}`);
    await this.remove(path, -1);
  }

  /** Atomic multi-op; resolves false when a check/version failed (nothing was applied). */
  async transaction(ops: TxOp[]): Promise<boolean> {
    const code = await this.exchange<unknown>('transaction', 'write', (reply) => {
      const tx = this.client.transaction();
      for (const op of ops) {
        if (op.op === 'create')
          tx.create(
            op.path,
            op.data,
            this.aclFor(op.path),
            op.ephemeral ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT,
          );
        else if (op.op === 'set') tx.setData(op.path, op.data, op.version);
        else if (op.op === 'check') tx.check(op.path, op.version);
        else tx.remove(op.path, op.version);
      }
      tx.commit(reply);
    });
    if (code === Code.OK) return true;
    if (code === Code.BAD_VERSION || code === Code.NO_NODE || code === Code.NODE_EXISTS) return false;
    throw unexpected(code, 'transaction');
  }

  /** Ends the session (the server deletes our ephemeral nodes at once when it hears of it). Final. */
  close(): void {
    if (this.state === 'closed') return;
    const wasExpired = this.state === 'expired';
    this.state = 'closed';
    if (!wasExpired) this.shutDown(new SpoutError(ErrorCode.ZooKeeper, 'ZooKeeper session closed'));
  }

  /**
   * Stops the heartbeat, settles every pending request with `err` and closes the client. Its close sends
   * CLOSE_SESSION and waits for the server, and a reconnect attempt may be under way: if the client is not
   * closed soon, its socket is abandoned (again, for a socket a pending reconnect opens later), so that no
   * connection outlives the session.
   */
  private shutDown(err: Error): void {
    this.stopHeartbeat?.();
    this.stopHeartbeat = undefined;
    for (const request of [...this.pending.values()]) request.fail(err);
    // Only a connected client can get CLOSE_SESSION through; otherwise there is nothing to wait for.
    const graceMs =
      managerState(this.client) === MANAGER_CONNECTED ? sessionTimings(this.sessionTimeoutMs).closeGraceMs : 0;
    try {
      this.client.close();
    } catch {
      // The client throws when closed before its first socket exists; the abandoning below finishes the job.
    }
    let tries = 0;
    const abandon = () => {
      if (managerState(this.client) === MANAGER_CLOSED || tries++ > 20) return;
      socketOf(this.client)?.destroy();
      this.scheduler.after(250, abandon);
    };
    this.scheduler.after(graceMs, abandon);
  }
}

/** node-zookeeper-client keeps its socket to itself; it has no read timeout and no way to abandon a connection. */
function socketOf(client: zookeeper.Client): Socket | undefined {
  const socket = (client as unknown as { connectionManager?: { socket?: unknown } }).connectionManager?.socket;
  return socket instanceof Socket ? socket : undefined;
}

function managerState(client: zookeeper.Client): number | undefined {
  const state = (client as unknown as { connectionManager?: { state?: unknown } }).connectionManager?.state;
  return typeof state === 'number' ? state : undefined;
}
