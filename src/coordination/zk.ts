/**
 * The ZooKeeper session over the pure-JS `node-zookeeper-client` (bundlable, no native addon), with what that
 * client lacks: every request settles within a bound (zkRequests.ts), a silent connection is abandoned, a
 * session nobody answers for a whole session timeout is given up, `expired` is final, and lease trust comes
 * only from what the leader confirmed (sessionTrust.ts). The operations themselves are in zkOperations.ts.
 */
import zookeeper from 'node-zookeeper-client';
import { realScheduler, type Scheduler } from '../core/scheduler';
import { sessionTimings } from '../core/timings';
import { ErrorCode, SpoutError } from '../errors';
import { unreadableChroot } from './acl';
import { tolerateUnknownCodes } from './clientCodes';
import { SessionTrust } from './sessionTrust';
import { abandonConnection, closeClient, isConnected } from './zkClientInternals';
import { Code, coded, NO_SESSION, REFUSALS, wrappedCode } from './zkErrors';
import { ZkOperations } from './zkOperations';
import { BoundedRequests, type Kind, type Reply } from './zkRequests';
import type { ConnectionState, ZooKeeper, ZooKeeperOptions } from './zooKeeper';

export interface ZkSessionOptions extends ZooKeeperOptions {
  /** Time and timers (real by default). */
  scheduler?: Scheduler;
  /** Every request settles within this (default: core/timings.ts); no reply by then rejects, retriable. */
  requestTimeoutMs?: number;
  /** How often the heartbeat write goes to the leader (default: core/timings.ts, a seventh of the session timeout). */
  heartbeatEveryMs?: number;
}

export class ZkSession extends ZkOperations implements ZooKeeper {
  private readonly trust: SessionTrust;
  private state: ConnectionState = 'connecting';
  /** onState is told only once `connect` has resolved: until then its outcome says it all. */
  private announced = false;
  /** Start of the current connect attempt: the leader created or revalidated the session after it. */
  private connectingSince: number;
  private opening: { resolve(): void; reject(err: Error): void } | undefined;
  private stopHeartbeat: (() => void) | undefined;
  private heartbeatInFlight = false;
  private readonly requests: BoundedRequests;

  private constructor(private readonly options: ZkSessionOptions) {
    super(createClient(options), options.scheduler ?? realScheduler, options);
    this.connectingSince = this.scheduler.now();
    this.trust = new SessionTrust(() => this.sessionTimeoutMs);
    this.requests = new BoundedRequests(this.scheduler, this.trust, () => this.terminal());
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
    const deadline = session.scheduler.now() + timeoutMs;
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
    await session.firstHeartbeat(deadline - session.scheduler.now());
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

  protected get requestTimeoutMs(): number {
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
        .catch((err: unknown) => {
          // Trust could never grow again: a session given up is joined again, and that join says why.
          if (wrappedCode(err) === Code.NO_AUTH)
            this.expire(`the heartbeat was refused: ${unreadableChroot(this.options.connect).message}`);
        })
        .finally(() => (this.heartbeatInFlight = false));
    });
    const stopWatch = this.scheduler.every(sessionTimings(this.sessionTimeoutMs).watchdogEveryMs, () => {
      const now = this.scheduler.now();
      if (now > this.trust.givenUpAt())
        this.expire(`no server answered anything sent in the last ${this.sessionTimeoutMs} ms`);
      // The client has no read timeout: a silent connection would be kept until the session is lost.
      else if (this.state === 'connected' && this.stalled(now)) abandonConnection(this.client);
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
  private heartbeat(timeoutMs = this.requestTimeoutMs): Promise<number> {
    return this.exchange<unknown>(
      'heartbeat',
      'write',
      (reply) => this.client.transaction().check('/', -1).commit(reply),
      timeoutMs,
    );
  }

  /**
   * One heartbeat before the session is handed out: its check needs READ on `/` (the chroot), and a `/`
   * that denies it is a configuration error to say at once, not a spout that silently never trusts a lease.
   * So is any other refusal (SASL required); what may pass by itself is left to the periodic heartbeat.
   */
  private async firstHeartbeat(timeoutMs: number): Promise<void> {
    try {
      await this.heartbeat(Math.max(1, timeoutMs));
    } catch (err) {
      const code = wrappedCode(err);
      if (code === undefined || !REFUSALS.has(code)) return;
      this.close();
      throw code === Code.NO_AUTH ? unreadableChroot(this.options.connect) : err;
    }
  }

  /** No answer to anything for two thirds of the session timeout while a request waits (as the Java client's read timeout). */
  private stalled(now: number): boolean {
    const limit = sessionTimings(this.sessionTimeoutMs).stalledAfterMs;
    return now - this.trust.lastAnsweredAt() >= limit && this.requests.waitingFor(now, limit);
  }

  /** One request, refused at once when the session is over (see BoundedRequests.send). */
  protected exchangeWith<R>(
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
    return this.requests.send(what, kind, send, timeoutMs);
  }

  /** Ends the session (the server deletes our ephemeral nodes at once when it hears of it). Final. */
  close(): void {
    if (this.state === 'closed') return;
    const wasExpired = this.state === 'expired';
    this.state = 'closed';
    if (!wasExpired) this.shutDown(new SpoutError(ErrorCode.ZooKeeper, 'ZooKeeper session closed'));
  }

  /** Stops the heartbeat, settles every pending request with `err` and closes the client (zkClientInternals.ts). */
  private shutDown(err: Error): void {
    this.stopHeartbeat?.();
    this.stopHeartbeat = undefined;
    this.requests.failAll(err);
    // Only a connected client can get CLOSE_SESSION through; otherwise there is nothing to wait for.
    closeClient(
      this.client,
      this.scheduler,
      isConnected(this.client) ? sessionTimings(this.sessionTimeoutMs).closeGraceMs : 0,
    );
  }
}

/** The client for one session: unknown answer codes tolerated, the credentials sent with every (re)connect. */
function createClient(options: ZooKeeperOptions): zookeeper.Client {
  tolerateUnknownCodes();
  const client = zookeeper.createClient(options.connect, {
    sessionTimeout: options.sessionTimeoutMs,
    spinDelay: 200,
    retries: 0,
  });
  // Sent with every (re)connect, before any request.
  if (options.auth) client.addAuthInfo(options.auth.scheme, Buffer.from(options.auth.payload));
  return client;
}
