/**
 * The spout's coordination, wired from the parts that each own their state: the ZooKeeper session
 * (sessionKeeper.ts: join, trust, expiry, restart), the assignment round (assignment/round.ts, with the
 * listing cache in assignment/listing.ts and the plan in assignment/plan.ts), the checkpoint
 * schedule (checkpointSchedule.ts) and the held shards themselves (held/heldShards.ts). This file only connects
 * them and is what the spout, the entry point and the simulation use.
 */
import type { SpoutConfig } from '../config/config';
import { streamNameOf } from '../config/config';
import type { ConnectZooKeeper } from '../coordination/zooKeeper';
import type { Scheduler } from '../core/scheduler';
import { folderResyncEveryMs, shardSyncEveryMs } from '../core/timings';
import { describeError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import { isThrottling } from '../kinesis/errors';
import { describeStream, listShards, listShardsAfter, type StreamRef } from '../kinesis/shards';
import { AssignmentRound } from '../assignment/round';
import { LOAD_CHECK_MS } from '../core/load';
import { publishLoads } from '../held/loadPublisher';
import { CheckpointSchedule } from './checkpointSchedule';
import { ExpiredShards } from '../assignment/expiredShards';
import { type CappedFlush, HeldShards, type IoCounters } from '../held/heldShards';
import { taskShare } from '../held/checkpointCap';
import type { Session } from '../coordination/session';
import type { MemberPresence } from '../coordination/store';
import { joinSession, type Member } from './joining';
import type { LateOutcomes } from '../held/lateOutcomes';
import { ProcessCounter, SpoutMetrics } from '../held/metrics';
import { readersFor } from '../held/readMode';
import type { OwnedShard } from '../held/ownedShard';
import { LogLevel, Reporter, type Logger } from '../core/log';
import { logResumePoints, SessionKeeper } from './sessionKeeper';
import { ShardListing } from '../assignment/listing';

export type { IoCounters } from '../held/heldShards';

/** While the cap on checkpoint writes bites, it is said this often. */
const CAP_NOTICE_EVERY_MS = 60_000;

export interface CoordinatorDeps {
  config: SpoutConfig;
  kinesis: KinesisApi;
  zookeeper: ConnectZooKeeper;
  logger: Logger;
  scheduler: Scheduler;
  member: Omit<Member, 'taskCount'> & { taskCount?: number };
  /** With `readMode: "fanOut"`: the HTTP/2 client subscriptions go through (default: `kinesis`). */
  fanOutKinesis?: KinesisApi;
}

export class Coordinator {
  readonly io: IoCounters = { getRecords: 0, listShards: 0, checkpointWrites: 0, checkpointWritesDeferred: 0 };
  /** What Storm's metrics get (contract C2); taken by whoever sends them. */
  readonly metrics: SpoutMetrics;
  private readonly held: HeldShards;
  private readonly reporter: Reporter;
  private readonly listing: ShardListing;
  private readonly sessions: SessionKeeper<Session>;
  private readonly round: AssignmentRound<Session, OwnedShard>;
  private readonly checkpoints: CheckpointSchedule<Session>;
  private stopped = false;
  /** This task's topology and whether Storm has it active, as its member node says them (assignment/topologies.ts). */
  private readonly presence: MemberPresence;
  private readonly timers: (() => void)[] = [];

  constructor(private readonly deps: CoordinatorDeps) {
    const { config, kinesis, scheduler } = deps;
    const stream: StreamRef = { streamName: streamNameOf(config), streamArn: config.streamArn };
    const streamLabel = stream.streamArn ?? `stream ${stream.streamName} in ${config.region}`;
    const member: Member = { taskCount: 1, ...deps.member };
    this.presence = { topology: member.topology, active: true, standby: false };
    const presence = this.presence;
    const clock = () => scheduler.now();
    const countListing = () => {
      this.io.listShards += 1;
    };
    this.reporter = new Reporter(deps.logger, scheduler);
    this.metrics = new SpoutMetrics(scheduler.now());
    const reporter = this.reporter;
    const fullListing = () => {
      countListing();
      return listShards(kinesis, stream);
    };
    this.listing = new ShardListing(
      {
        all: fullListing,
        after: (lastShardId) => {
          countListing();
          return listShardsAfter(kinesis, stream, lastShardId);
        },
      },
      clock,
      config.shardSyncIntervalMs,
    );
    this.held = new HeldShards({
      ...deps,
      readers: readersFor(config, { ...deps, stream, streamLabel, reporter }),
      metrics: this.metrics,
      reporter,
      stream,
      streamLabel,
      io: this.io,
      isActive: () => this.presence.active,
      changed: () => this.round.schedule(),
      childrenFound: (parentId, children) => this.listing.learnChildren(parentId, children),
      hashRangeOf: (shardId) => this.listing.hashRangeOf(shardId),
      notFound: () => {
        // Transient, expired, or the stream re-created: a fresh listing and the stream's identity decide.
        this.listing.relist(true);
        this.round.schedule();
        return this.sessions.confirmStream();
      },
    });
    this.sessions = new SessionKeeper({
      config,
      scheduler,
      reporter,
      streamLabel,
      join: (onState) =>
        joinSession({
          ...deps,
          member,
          presence: () => presence,
          stream,
          listShards: fullListing,
          onState: (zk, state) => onState(zk, state),
        }),
      describeStream: () => describeStream(kinesis, stream),
      joined: (session, shards, first) => {
        // One task says it for the stream: it reads every checkpoint, which by every task cost tasks x shards reads.
        if (first && member.taskIndex === 0) void logResumePoints(reporter, config, session, shards);
        this.listing.accept(shards);
        this.round.schedule();
      },
      dropped: () => this.held.forgetAll(),
      reconnected: () => {
        // A watch may have fired while the connection was down: the watched folders are read again in full.
        this.sessions.current?.store.resync();
        this.round.schedule();
      },
      heldCount: () => this.held.byId.size,
    });
    const expired = new ExpiredShards(reporter);
    this.round = new AssignmentRound<Session, OwnedShard>({
      config,
      scheduler,
      reporter,
      streamLabel,
      taskCount: member.taskCount,
      held: this.held,
      listing: this.listing,
      session: () => this.sessions.current,
      streamStillHolds: (session) => this.sessions.streamStillHolds(session),
      listed: (session, shards) => void expired.forget(session, shards, (id) => this.held.byId.has(id)),
      mayRead: () => this.presence.active && !this.stopped,
      stopping: () => this.stopped,
      presence,
      throttled: () => this.metrics.count(ProcessCounter.ThrottledCalls),
    });
    this.checkpoints = new CheckpointSchedule(
      scheduler,
      config.checkpointIntervalMs,
      this.held,
      () => this.sessions.current,
      {
        share: () => taskShare(config.maxCheckpointWritesPerSecond, this.round.membersSharing),
        deferred: (flush, share) => this.checkpointsDeferred(flush, share),
      },
    );
  }

  /** The cap on checkpoint writes bit: counted, and said once a minute. */
  private checkpointsDeferred(flush: CappedFlush, share: number): void {
    const { config, scheduler } = this.deps;
    this.io.checkpointWritesDeferred += flush.deferred;
    this.metrics.count(ProcessCounter.CheckpointWritesDeferred, flush.deferred);
    const age = flush.oldestWrittenAt === undefined ? 0 : scheduler.now() - flush.oldestWrittenAt;
    this.reporter.warn(
      'checkpointCap',
      `checkpoint writes capped: ${flush.deferred} of ${flush.deferred + flush.written} changed checkpoints left for a later flush (this task's share: ${Math.round(share * 10) / 10} writes/s, maxCheckpointWritesPerSecond ${config.maxCheckpointWritesPerSecond} over ${this.round.membersSharing} member(s)); the oldest was written ${(age / 1000).toFixed(1)} s ago. Nothing is lost, a crash re-emits more; raise maxCheckpointWritesPerSecond if ZooKeeper takes more writes`,
      CAP_NOTICE_EVERY_MS,
    );
  }

  /** The shards held here, by id. */
  get shards(): ReadonlyMap<string, OwnedShard> {
    return this.held.byId;
  }

  /** Outcomes Storm may still send for emissions of shards let go. */
  get lateOutcomes(): LateOutcomes {
    return this.held.lateOutcomes;
  }

  /** Starts in the background; never throws (failures are logged and retried). */
  start(): void {
    void this.sessions.join();
    const { config, scheduler } = this.deps;
    this.checkpoints.start();
    this.timers.push(scheduler.every(config.rebalanceIntervalMs, () => this.scheduleRebalance()));
    // Jittered so that many tasks do not list shards in step.
    const syncMs = shardSyncEveryMs(config.shardSyncIntervalMs, scheduler.random());
    this.timers.push(scheduler.every(syncMs, () => void this.syncShards()));
    this.timers.push(
      scheduler.every(folderResyncEveryMs(scheduler.random()), () => {
        this.sessions.current?.store.resync();
        this.scheduleRebalance();
      }),
    );
    if (config.balance === 'throughput')
      this.timers.push(
        scheduler.every(LOAD_CHECK_MS, () => {
          const session = this.sessions.current;
          if (session) publishLoads(this.held.byId.values(), session, scheduler.now(), this.reporter);
        }),
      );
  }

  /** Until when (monotonic ms) leases may be trusted; -Infinity without a healthy session. */
  trustedUntil(): number {
    return this.sessions.trustedUntil();
  }

  get isActive(): boolean {
    return this.presence.active;
  }

  /** True while this process has a ZooKeeper session and is connected to it. */
  get zookeeperConnected(): boolean {
    return this.sessions.connected;
  }

  /** Records of all held shards in memory (prefetched, in flight, acked behind an unacked one). */
  inMemory(): number {
    return this.held.inMemory().records;
  }

  /** What the held shards deliver now, smoothed: the load this task holds (bytes/s, records/s). */
  heldLoad(): { bytesPerSec: number; recordsPerSec: number } {
    const now = this.deps.scheduler.now();
    let bytesPerSec = 0;
    let recordsPerSec = 0;
    for (const shard of this.held.byId.values()) {
      const load = shard.throughput.load(now);
      bytesPerSec += load.bytesPerSec;
      recordsPerSec += load.recordsPerSec;
    }
    return { bytesPerSec, recordsPerSec };
  }

  /** Bytes of the records of all held shards in memory. */
  bytesInMemory(): number {
    return this.held.inMemory().bytes;
  }

  /**
   * Reading stops; leases stay, unless another topology of this application is active: then the round hands
   * them over to it (assignment/topologies.ts). The member node says so either way.
   */
  deactivate(): void {
    this.presence.active = false;
    this.listing.relist();
    void this.flushCheckpoints();
    this.round.schedule();
  }

  activate(): void {
    this.presence.active = true;
    this.listing.relist();
    this.scheduleRebalance();
  }

  scheduleRebalance(): void {
    this.round.schedule();
  }

  /** Catches shards no reader saw appear (see ShardListing.lookForNewShards). */
  private async syncShards(): Promise<void> {
    try {
      if (await this.listing.lookForNewShards()) this.scheduleRebalance();
    } catch (err) {
      if (isThrottling(err)) this.metrics.count(ProcessCounter.ThrottledCalls);
      this.reporter.log(LogLevel.Warn, `checking for new shards failed: ${describeError(err)}`);
    }
  }

  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  flushCheckpoints(): Promise<void> {
    return this.checkpoints.flush();
  }

  /** Flushes checkpoints, gives up leases and membership, closes the session. Bounded by `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.checkpoints.stop();
    for (const cancel of this.timers.splice(0)) cancel();
    const session = this.sessions.stop();
    const work = (async () => {
      await this.held.close(session);
      await session?.store.leaveMembers().catch(() => undefined);
    })();
    let cancel: (() => void) | undefined;
    const expired = new Promise<void>((resolve) => (cancel = this.deps.scheduler.after(timeoutMs, resolve)));
    await Promise.race([
      work.catch((err) => this.reporter.log(LogLevel.Warn, `shutdown: ${describeError(err)}`)),
      expired,
    ]);
    cancel?.();
    session?.zk.close();
    this.held.byId.clear();
  }
}
