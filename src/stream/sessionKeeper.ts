/**
 * The ZooKeeper session this process works under: joining (retried with back-off, reported when it
 * persists), how long its leases may be trusted, its expiry (everything tied to it dropped, a new join),
 * and the refusal of a stream that is not the one the checkpoints belong to (dropped and joined again).
 * Joining itself is joining.ts; what a failed join means is assignment/failures.ts.
 */
import type { SpoutConfig } from '../config/config';
import type { ConnectionState, ZooKeeper } from '../coordination/zooKeeper';
import type { Bootstrap } from '../core/position';
import type { Scheduler } from '../core/scheduler';
import type { ShardNode } from '../core/shard';
import { describeError } from '../errors';
import { backoffMs } from '../kinesis/shardReader';
import type { StreamIdentity } from '../kinesis/shards';
import { identityMismatch } from '../coordination/streamIdentity';
import type { Session } from '../coordination/session';
import { joinFailure } from '../assignment/failures';
import { LogLevel, type Reporter } from '../core/log';
import { gatherResumePoints, initialPositionNote, resumePointsLine } from './resumePoints';

/** What the keeper needs of a session (joining.ts's Session has it). */
export interface KeptSession {
  zk: Pick<ZooKeeper, 'sessionId' | 'connectionState' | 'trustedUntil' | 'close'>;
  store: { readonly memberId: string; readonly base: string };
  bootstrap: Bootstrap;
}

export interface SessionDeps<Sess extends KeptSession> {
  config: SpoutConfig;
  scheduler: Scheduler;
  reporter: Reporter;
  /** How the stream is named in messages. */
  streamLabel: string;
  /** One join attempt (joinSession with everything but the state callback bound). */
  join(
    onState: (zk: KeptSession['zk'], state: ConnectionState) => void,
  ): Promise<{ session: Sess; shards: ShardNode[] }>;
  /** The stream's identity as Kinesis describes it now. */
  describeStream(): Promise<StreamIdentity>;
  /** A session was joined, with the listing the join took; `first` at the process's first join. */
  joined(session: Sess, shards: ShardNode[], first: boolean): void;
  /** The session is gone (expired, or the stream refused): drop everything tied to it, now. */
  dropped(): void;
  /** Connected again (to the same session): worth an assignment round. */
  reconnected(): void;
  /** Shards held now (for the expiry's log line). */
  heldCount(): number;
}

export class SessionKeeper<Sess extends KeptSession> {
  private session: Sess | undefined;
  private joining = false;
  private joinedBefore = false;
  private stopped = false;
  private confirming: Promise<void> | undefined;
  private describing: Promise<StreamIdentity> | undefined;

  constructor(private readonly deps: SessionDeps<Sess>) {}

  /** The session joined and not dropped since, if any. */
  get current(): Sess | undefined {
    return this.session;
  }

  /** Until when (monotonic ms) leases may be trusted; -Infinity without a healthy session. */
  trustedUntil(): number {
    return this.session?.zk.trustedUntil() ?? -Infinity;
  }

  get connected(): boolean {
    return this.session?.zk.connectionState === 'connected';
  }

  /** Joins (unless joined or joining) until it succeeds or `stop()`; never throws (failures are reported and retried). */
  async join(): Promise<void> {
    if (this.joining || this.session) return;
    this.joining = true;
    try {
      for (let attempt = 1; !this.stopped; attempt += 1) {
        try {
          const { session, shards } = await this.deps.join((zk, state) => this.onState(zk, state));
          if (this.stopped) {
            session.zk.close();
            return;
          }
          this.session = session;
          this.deps.reporter.log(
            LogLevel.Info,
            `joined as ${session.store.memberId} (ZooKeeper session ${session.zk.sessionId}, state under ${session.store.base})`,
          );
          const first = !this.joinedBefore;
          this.joinedBefore = true;
          this.deps.joined(session, shards, first);
          return;
        } catch (err) {
          const failure = joinFailure(err, attempt, this.deps.config, this.deps.streamLabel);
          if (failure.report) this.deps.reporter.problem(failure.key, failure.message);
          else this.deps.reporter.log(LogLevel.Warn, failure.message);
          await this.deps.scheduler.sleep(failure.retryInMs);
        }
      }
    } finally {
      this.joining = false;
    }
  }

  /**
   * True when the stream is still the one the checkpoints belong to. Otherwise it is refused (reported),
   * the session dropped and joined again (the join refuses it until someone fixes it). Throws when
   * Kinesis cannot say.
   */
  async streamStillHolds(session: Sess): Promise<boolean> {
    const identity = await this.describe();
    const mismatch = identityMismatch(session.bootstrap, identity, session.store.base);
    if (!mismatch || this.session !== session) return true;
    this.deps.reporter.problem('refused', mismatch.message);
    this.drop();
    void this.join();
    return false;
  }

  /**
   * One DescribeStreamSummary for every check made while one is out: a reader's ResourceNotFound asks both
   * for a round (whose fresh listing checks the identity first) and for `confirmStream`, at the same time.
   */
  private describe(): Promise<StreamIdentity> {
    this.describing ??= this.deps.describeStream().finally(() => {
      this.describing = undefined;
    });
    return this.describing;
  }

  /**
   * Resolves once Kinesis has described the stream again and it is still the one the checkpoints belong
   * to, or it was refused (the session dropped, its readers stopped), or there is no session to keep.
   * Readers told their shard does not exist wait on it: a stream deleted and re-created under the same
   * name has the same shard ids, and a reader that sought again at its checkpoint would read the new
   * stream's records as the old shard's. While the stream is gone it keeps asking, with back-off. One
   * check at a time, whichever readers wait on it.
   */
  confirmStream(): Promise<void> {
    this.confirming ??= this.confirmLoop().finally(() => {
      this.confirming = undefined;
    });
    return this.confirming;
  }

  private async confirmLoop(): Promise<void> {
    const { scheduler, reporter } = this.deps;
    for (let attempt = 1; !this.stopped; attempt += 1) {
      const session = this.session;
      if (!session) return;
      try {
        await this.streamStillHolds(session);
        return;
      } catch (err) {
        const delay = backoffMs(attempt, () => scheduler.random());
        reporter.log(
          attempt === 1 ? LogLevel.Warn : LogLevel.Debug,
          `a shard of ${this.deps.streamLabel} was not found and the stream cannot be described (${describeError(err)}); its readers wait, asking again in ${delay} ms`,
        );
        await scheduler.sleep(delay);
      }
    }
  }

  /** No more joins; the current session (if any) is left for the caller to close after its last writes. */
  stop(): Sess | undefined {
    this.stopped = true;
    return this.session;
  }

  private onState(zk: KeptSession['zk'], state: ConnectionState): void {
    if (this.session?.zk !== zk) return;
    const { reporter } = this.deps;
    if (state === 'expired') {
      reporter.log(
        LogLevel.Warn,
        `ZooKeeper session ${zk.sessionId} expired: dropping ${this.deps.heldCount()} shard(s) and joining again with a new session`,
      );
      this.drop();
      void this.join();
    } else if (state === 'disconnected') {
      reporter.log(LogLevel.Warn, 'disconnected from ZooKeeper: not emitting until the session is confirmed');
    } else if (state === 'connected') {
      reporter.log(LogLevel.Info, 'connected to ZooKeeper');
      this.deps.reconnected();
    }
  }

  /** Forgets everything tied to the current session: its leases may already belong to others. */
  private drop(): void {
    this.deps.dropped();
    this.session?.zk.close();
    this.session = undefined;
  }
}

/** At the process's first join: where every shard resumes, and what initialPosition still means. */
export async function logResumePoints(
  reporter: Reporter,
  config: SpoutConfig,
  session: Session,
  shards: ShardNode[],
): Promise<void> {
  reporter.log(LogLevel.Info, initialPositionNote(session.bootstrap, config.initialPosition, session.store.base));
  try {
    const { points, finished, corrupt } = await gatherResumePoints(session, shards);
    reporter.log(LogLevel.Info, resumePointsLine(points, finished));
    for (const { shardId, error } of corrupt)
      reporter.problem(`corrupt:${shardId}`, `${error.message}; ${shardId} is not read until then`);
  } catch (err) {
    reporter.log(LogLevel.Warn, `could not read where shards resume: ${describeError(err)}`);
  }
}
