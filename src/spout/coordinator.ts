/**
 * Owns the ZooKeeper session and the shards this process holds: takes and gives up leases (fair share,
 * parents first), starts readers at the right position, writes checkpoints and SHARD_END, and starts
 * over with fresh state when the session expires. Joining is in joining.ts, the decisions in
 * assignment.ts, one shard's state in ownedShard.ts.
 */
import type { SpoutConfig } from '../config/config';
import { streamNameOf } from '../config/config';
import type { ConnectZooKeeper, ConnectionState, ZooKeeper } from '../coordination/zooKeeper';
import type { Scheduler } from '../core/scheduler';
import { describeError, ErrorCode, SpoutError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import { isThrottling, kinesisProblem } from '../kinesis/errors';
import { describeStream, listShards, listShardsAfter, type StreamRef } from '../kinesis/shards';
import { LogLevel } from '../multilang/protocol';
import { planLeases, readableShards, type ShardNode } from './assignment';
import { identityMismatch, joinSession, type Member, type Session } from './joining';
import { joinFailure, REPORT_AFTER_FAILURES } from './joinFailure';
import { gatherResumePoints, initialPositionNote, resumePointsLine } from './resumePoints';
import { HeldShards, type IoCounters } from './heldShards';
import type { LateOutcomes } from './lateOutcomes';
import { ProcessCounter, SpoutMetrics } from './metrics';
import type { OwnedShard } from './ownedShard';
import { Reporter, type Logger } from './reporting';
import { ShardListing } from './shardListing';
import { LeaseChurn } from './leaseChurn';

export type { Logger } from './reporting';
export type { IoCounters } from './heldShards';

export interface CoordinatorDeps {
  config: SpoutConfig;
  kinesis: KinesisApi;
  zookeeper: ConnectZooKeeper;
  logger: Logger;
  scheduler: Scheduler;
  member: Omit<Member, 'taskCount'> & { taskCount?: number };
}

const MAINTENANCE_MS = 100;
const SLOW_ASSIGNMENT_MS = 2_000;

export class Coordinator {
  readonly io: IoCounters = { getRecords: 0, listShards: 0, checkpointWrites: 0 };
  /** What Storm's metrics get (contract C2); taken by whoever sends them. */
  readonly metrics: SpoutMetrics;
  private readonly held: HeldShards;
  private readonly stream: StreamRef;
  private readonly member: Member;
  private readonly reporter: Reporter;
  private session: Session | undefined;
  private joining = false;
  private joinedBefore = false;
  private readonly listing: ShardListing;
  private readonly churn: LeaseChurn;
  private active = true;
  private stopped = false;
  private rebalancing: Promise<void> | undefined;
  private rebalanceAgain = false;
  private failedAssignments = 0;
  private readonly timers: (() => void)[] = [];
  /** Recorded shards missing from the last unfiltered listing. */
  private missingBefore = new Set<string>();
  /** One watch callback for every path: the client keeps each distinct callback until the watch fires. */
  private readonly onWatch = () => this.scheduleRebalance();

  constructor(private readonly deps: CoordinatorDeps) {
    this.stream = { streamName: streamNameOf(deps.config), streamArn: deps.config.streamArn };
    this.member = { taskCount: 1, ...deps.member };
    this.reporter = new Reporter(deps.logger, deps.scheduler);
    this.metrics = new SpoutMetrics(deps.scheduler.now());
    this.listing = new ShardListing(
      {
        all: () => this.listShards(),
        after: (lastShardId) => {
          this.io.listShards += 1;
          return listShardsAfter(deps.kinesis, this.stream, lastShardId);
        },
      },
      () => deps.scheduler.now(),
      deps.config.shardSyncIntervalMs,
    );
    this.churn = new LeaseChurn({
      clock: () => deps.scheduler.now(),
      report: (shardId, message) => this.reporter.problem(`lease-loop:${shardId}`, message),
      briefMs: 2 * deps.config.rebalanceIntervalMs,
    });
    this.held = new HeldShards({
      ...deps,
      metrics: this.metrics,
      reporter: this.reporter,
      stream: this.stream,
      streamLabel: this.streamLabel,
      io: this.io,
      isActive: () => this.active,
      changed: () => this.scheduleRebalance(),
      relist: () => this.listing.relist(),
      hashRangeOf: (shardId) => this.listing.hashRangeOf(shardId),
      notFound: () => {
        // Transient, expired, or the stream re-created: a fresh listing and the stream's identity decide.
        this.listing.relist(true);
        this.scheduleRebalance();
      },
    });
  }

  /** The shards held here, by id. */
  get shards(): ReadonlyMap<string, OwnedShard> {
    return this.held.byId;
  }

  /** Outcomes Storm may still send for emissions of shards let go. */
  get lateOutcomes(): LateOutcomes {
    return this.held.lateOutcomes;
  }

  private log(level: LogLevel, message: string): void {
    this.reporter.log(level, message);
  }

  private get now(): number {
    return this.deps.scheduler.now();
  }

  /** Starts in the background; never throws (failures are logged and retried). */
  start(): void {
    void this.connectLoop();
    const { config } = this.deps;
    this.every(MAINTENANCE_MS, () => this.session && this.held.maintain(this.session));
    this.every(config.checkpointIntervalMs, () => void this.flushCheckpoints());
    this.every(config.rebalanceIntervalMs, () => this.scheduleRebalance());
    // Jittered so that many tasks do not list shards in step.
    this.every(config.shardSyncIntervalMs * (0.8 + this.deps.scheduler.random() * 0.4), () => void this.syncShards());
  }

  private every(ms: number, task: () => void): void {
    this.timers.push(this.deps.scheduler.every(ms, task));
  }

  /** Until when (monotonic ms) leases may be trusted; -Infinity without a healthy session. */
  trustedUntil(): number {
    return this.session?.zk.trustedUntil() ?? -Infinity;
  }

  get isActive(): boolean {
    return this.active;
  }

  /** True while this process has a ZooKeeper session and is connected to it. */
  get zookeeperConnected(): boolean {
    return this.session?.zk.connectionState === 'connected';
  }

  /** Records of all held shards in memory (prefetched, in flight, acked behind an unacked one). */
  inMemory(): number {
    return this.held.inMemory().records;
  }

  /** Bytes of the records of all held shards in memory. */
  bytesInMemory(): number {
    return this.held.inMemory().bytes;
  }

  deactivate(): void {
    this.active = false;
    this.listing.relist();
    void this.flushCheckpoints();
  }

  activate(): void {
    this.active = true;
    this.listing.relist();
    this.scheduleRebalance();
  }

  private async connectLoop(): Promise<void> {
    if (this.joining) return;
    this.joining = true;
    try {
      for (let attempt = 1; !this.stopped; attempt += 1) {
        try {
          const { session, shards } = await joinSession({
            ...this.deps,
            member: this.member,
            stream: this.stream,
            listShards: () => this.listShards(),
            onState: (zk, state) => this.onZkState(zk, state),
          });
          if (this.stopped) {
            session.zk.close();
            return;
          }
          this.session = session;
          this.listing.accept(shards);
          this.log(
            LogLevel.Info,
            `joined as ${session.store.memberId} (ZooKeeper session ${session.zk.sessionId}, state under ${session.store.base})`,
          );
          if (!this.joinedBefore) void this.logResumePoints(session, shards);
          this.joinedBefore = true;
          this.scheduleRebalance();
          return;
        } catch (err) {
          const failure = joinFailure(err, attempt, this.deps.config, this.streamLabel);
          if (failure.report) this.reporter.problem(failure.key, failure.message);
          else this.log(LogLevel.Warn, failure.message);
          await this.deps.scheduler.sleep(failure.retryInMs);
        }
      }
    } finally {
      this.joining = false;
    }
  }

  /** At the process's first join: where every shard resumes, and what initialPosition still means. */
  private async logResumePoints(session: Session, shards: ShardNode[]): Promise<void> {
    this.log(
      LogLevel.Info,
      initialPositionNote(session.bootstrap, this.deps.config.initialPosition, session.store.base),
    );
    try {
      const { points, finished, corrupt } = await gatherResumePoints(session, shards);
      this.log(LogLevel.Info, resumePointsLine(points, finished));
      for (const { shardId, error } of corrupt)
        this.reporter.problem(`corrupt:${shardId}`, `${error.message}; ${shardId} is not read until then`);
    } catch (err) {
      this.log(LogLevel.Warn, `could not read where shards resume: ${describeError(err)}`);
    }
  }

  private onZkState(zk: ZooKeeper, state: ConnectionState): void {
    if (this.session?.zk !== zk) return;
    if (state === 'expired') {
      this.log(
        LogLevel.Warn,
        `ZooKeeper session ${zk.sessionId} expired: dropping ${this.shards.size} shard(s) and joining again with a new session`,
      );
      this.dropSession();
      void this.connectLoop();
    } else if (state === 'disconnected') {
      this.log(LogLevel.Warn, 'disconnected from ZooKeeper: not emitting until the session is confirmed');
    } else if (state === 'connected') {
      this.log(LogLevel.Info, 'connected to ZooKeeper');
      this.scheduleRebalance();
    }
  }

  /** Forgets everything tied to the current session: its leases may already belong to others. */
  private dropSession(): void {
    this.held.forgetAll();
    this.churn.clear();
    this.session?.zk.close();
    this.session = undefined;
  }

  scheduleRebalance(): void {
    if (this.rebalancing) {
      this.rebalanceAgain = true;
      return;
    }
    this.rebalancing = this.rebalance()
      .then(() => {
        this.failedAssignments = 0;
      })
      .catch((err) => this.assignmentFailed(err))
      .finally(() => {
        this.rebalancing = undefined;
        if (this.rebalanceAgain) {
          this.rebalanceAgain = false;
          this.scheduleRebalance();
        }
      });
  }

  private assignmentFailed(err: unknown): void {
    this.failedAssignments += 1;
    if (isThrottling(err)) this.metrics.count(ProcessCounter.ThrottledCalls);
    const message = `shard assignment failed (${this.failedAssignments} time(s) in a row): ${describeError(err)}`;
    if (err instanceof SpoutError && err.code === ErrorCode.ZooKeeper) {
      if (this.failedAssignments >= REPORT_AFTER_FAILURES)
        this.reporter.problem(
          'assign',
          `${message}; check that ZooKeeper at ${this.deps.config.zookeeper.connect} is healthy`,
        );
      else this.log(LogLevel.Warn, message);
      return;
    }
    const problem = kinesisProblem(err, this.streamLabel);
    if (this.failedAssignments >= problem.reportAfter)
      this.reporter.problem(`kinesis:${problem.name}`, `${message}; ${problem.fix}`);
    else this.log(LogLevel.Warn, message);
    if (problem.name === 'ResourceNotFoundException') this.listing.relist(true);
  }

  private get streamLabel(): string {
    return this.stream.streamArn ?? `stream ${this.stream.streamName} in ${this.deps.config.region}`;
  }

  private isFinished(session: Session, finished: ReadonlySet<string>, shardId: string): boolean {
    return finished.has(shardId) || session.startOf(shardId).kind === 'SHARD_END';
  }

  private async rebalance(): Promise<void> {
    const session = this.session;
    if (!session || !this.active || this.stopped || session.zk.connectionState !== 'connected') return;
    const began = this.now;
    try {
      await this.assign(session);
    } finally {
      const took = this.now - began;
      if (took > SLOW_ASSIGNMENT_MS) this.log(LogLevel.Warn, `shard assignment took ${Math.round(took)} ms`);
    }
  }

  /**
   * Members to share the shards among. For a grace period after joining (up to the session timeout),
   * tasks the topology declares but that have not joined yet count too: a deploy does not start with one
   * task taking every shard and then handing most of them over.
   */
  private sharingMembers(session: Session, members: string[]): string[] {
    const missing = this.member.taskCount - members.length;
    if (missing <= 0 || this.now - session.joinedAt >= session.zk.sessionTimeoutMs) return members;
    return [...members, ...Array.from({ length: missing }, (_, i) => `~not-joined-yet-${i}`)];
  }

  private async assign(session: Session): Promise<void> {
    const { store } = session;
    const ordering = this.deps.config.ordering;
    const letGoBefore = this.held.letGoMark;
    const [finished, leases, members, ended] = await Promise.all([
      store.finishedShards(this.onWatch),
      store.leases(this.onWatch, (err) =>
        this.reporter.problem(`corrupt:${err.message}`, `${err.message}; its shard is not read until then`),
      ),
      store.members(this.onWatch),
      ordering === 'parents-emitted' ? store.endedShards(this.onWatch) : new Set<string>(),
    ]);
    let shards = this.listing.cached(finished, leases);
    if (!shards) {
      const fresh = await this.listing.list();
      if (this.listing.identityCheckDue && !(await this.identityStillHolds(session))) return;
      this.listing.update(fresh, finished, leases);
      if (members[0] === store.memberId) void this.forgetExpired(session, fresh);
      shards = fresh;
    }
    if (this.session !== session) return;
    this.churn.observe(this.shards.keys(), (shardId) => this.held.backingOff(shardId));

    const listed = new Set(shards.map((s) => s.shardId));
    for (const shard of this.shards.values()) {
      if (shard.phase.kind === 'closing' || shard.phase.kind === 'starting' || shard.phase.kind === 'givingBack')
        continue;
      if (leases.get(shard.shardId) !== store.memberId) {
        this.log(LogLevel.Warn, `lease on ${shard.shardId} is no longer ours: stopped emitting from it`);
        this.held.forget(shard);
      } else if (shard.phase.kind === 'reading' && !listed.has(shard.shardId)) {
        // Only an unfiltered listing may say so: the shard expired past retention, nothing more to read.
        this.log(
          LogLevel.Warn,
          `${shard.shardId} is not in the stream any more (expired past retention); finishing it once its records are acked`,
        );
        this.held.drain(shard);
      }
    }
    const isFinished = (id: string) => this.isFinished(session, finished, id);
    const parentDone =
      ordering === 'none'
        ? () => true
        : ordering === 'parents-emitted'
          ? (id: string) => ended.has(id) || isFinished(id)
          : isFinished;
    const readable = readableShards(shards, isFinished, parentDone);
    const plan = planLeases({ readable, leases, members: this.sharingMembers(session, members), me: store.memberId });
    for (const shardId of plan.release) {
      const shard = this.shards.get(shardId);
      if (shard && (shard.phase.kind === 'reading' || shard.phase.kind === 'draining'))
        this.held.beginRelease(shard, 'rebalance: another task is owed a share');
    }
    await this.reconcile(session, leases, letGoBefore, new Set(readable), new Set(plan.release));
    let want = plan.want;
    for (const shardId of plan.candidates) {
      if (want <= 0 || this.session !== session || !this.active) break;
      if (this.shards.has(shardId) || this.held.backingOff(shardId) || !this.churn.mayTake(shardId)) continue;
      if (await store.acquireLease(shardId)) {
        want -= 1;
        this.churn.taken(shardId);
        await this.held.start(session, shardId);
      }
    }
  }

  /**
   * A lease node of our session that this process does not hold is ours all the same: its create was
   * applied and the reply lost, or a release did not get through. Read it, or give it back; never orphan it.
   * A shard let go since `leases` was read is not one: its lease is gone or going.
   */
  private async reconcile(
    session: Session,
    leases: ReadonlyMap<string, string>,
    letGoBefore: number,
    readable: ReadonlySet<string>,
    release: ReadonlySet<string>,
  ): Promise<void> {
    for (const [shardId, owner] of leases) {
      if (owner !== session.store.memberId || this.shards.has(shardId) || this.session !== session) continue;
      if (this.held.letGoSince(shardId, letGoBefore)) continue;
      const mayRead = !this.held.backingOff(shardId) && this.churn.mayTake(shardId) && this.active;
      if (readable.has(shardId) && !release.has(shardId) && mayRead) {
        this.log(LogLevel.Info, `lease on ${shardId} is ours but was not held here (a lost reply): reading it`);
        this.churn.taken(shardId);
        await this.held.start(session, shardId);
      } else {
        this.log(LogLevel.Info, `lease on ${shardId} is ours but not wanted here (a lost reply): giving it back`);
        await session.store.releaseLease(shardId);
      }
    }
  }

  /** True (and the stream refused) when the stream is not the one the checkpoints belong to. */
  private async identityStillHolds(session: Session): Promise<boolean> {
    const identity = await describeStream(this.deps.kinesis, this.stream);
    this.listing.identityChecked();
    const mismatch = identityMismatch(session.bootstrap, identity, session.store.base);
    if (!mismatch || this.session !== session) return true;
    this.reporter.problem('refused', mismatch.message);
    this.dropSession();
    void this.connectLoop();
    return false;
  }

  /**
   * Drops what ZooKeeper holds about shards the stream no longer lists (expired after retention), so the
   * state does not grow as the stream reshards for months. A shard must be missing from two unfiltered
   * listings in a row and leased by no one; one task (the first member) does it.
   */
  private async forgetExpired(session: Session, listing: readonly ShardNode[]): Promise<void> {
    try {
      const listed = new Set(listing.map((s) => s.shardId));
      const leased = await session.store.leasedShards();
      const missing = [...(await session.store.recordedShards())].filter(
        (id) => !listed.has(id) && !this.shards.has(id) && !leased.has(id),
      );
      const confirmed = missing.filter((id) => this.missingBefore.has(id));
      this.missingBefore = new Set(missing);
      for (const shardId of confirmed) await session.store.forgetShard(shardId);
      if (confirmed.length > 0)
        this.log(LogLevel.Info, `forgot ${confirmed.length} shard(s) no longer in the stream: ${confirmed.join(', ')}`);
    } catch (err) {
      this.log(LogLevel.Warn, `cleaning up expired shards failed: ${describeError(err)}`);
    }
  }

  /** Catches shards no reader saw appear (see ShardListing.lookForNewShards). */
  private async syncShards(): Promise<void> {
    try {
      if (await this.listing.lookForNewShards()) this.scheduleRebalance();
    } catch (err) {
      if (isThrottling(err)) this.metrics.count(ProcessCounter.ThrottledCalls);
      this.log(LogLevel.Warn, `checking for new shards failed: ${describeError(err)}`);
    }
  }

  private listShards(): Promise<ShardNode[]> {
    this.io.listShards += 1;
    return listShards(this.deps.kinesis, this.stream);
  }

  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  async flushCheckpoints(): Promise<void> {
    if (this.session) await this.held.flush(this.session);
  }

  /** Flushes checkpoints, gives up leases and membership, closes the session. Bounded by `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers.splice(0)) cancel();
    const session = this.session;
    const work = (async () => {
      await this.held.close(session);
      await session?.store.leaveMembers().catch(() => undefined);
    })();
    let cancel: (() => void) | undefined;
    const expired = new Promise<void>((resolve) => (cancel = this.deps.scheduler.after(timeoutMs, resolve)));
    await Promise.race([work.catch((err) => this.log(LogLevel.Warn, `shutdown: ${describeError(err)}`)), expired]);
    cancel?.();
    session?.zk.close();
    this.held.byId.clear();
  }
}
