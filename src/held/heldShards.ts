/**
 * The shards this process holds a lease on. Each one's life is shard/lifecycle.ts, carried out by
 * shard/executor.ts; this is the world it acts on: the readers, the ZooKeeper writes (each shard's through
 * its own queue), the set of held shards and the log. Which shards to hold is the coordinator's decision.
 */
import type { SpoutConfig } from '../config/config';
import { describePosition } from '../core/position';
import type { Scheduler } from '../core/scheduler';
import type { ShardNode } from '../core/shard';
import { describeError, ErrorCode, SpoutError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import type { HashRange } from '../kinesis/aggregation';
import type { ShardReaderFactory } from '../kinesis/reader';
import { messageIdOfKey } from '../kinesis/records';
import { pollingReaders } from '../kinesis/shardReader';
import { listShards, type StreamRef } from '../kinesis/shards';
import { LogLevel, type Reporter } from '../core/log';
import type { Session } from '../coordination/session';
import { LateOutcomes } from './lateOutcomes';
import { heldIn, type Held } from './memory';
import { ProcessCounter, type SpoutMetrics } from './metrics';
import { OwnedShard } from './ownedShard';
import { advanceCheckpoint, checkpointToWrite, confirmShardEnd } from './checkpoints';
import { type PendingCheckpoint, pickCheckpoints } from './checkpointCap';
import { execute, type LetGo, type ShardWorld } from './executor';
import { mayEmit, type ShardEvent } from './lifecycle';
import { readerEvents, type ReaderContext } from './readerEvents';
import { RetakeBackoff, SHORT_TENURE_MS } from './retakeBackoff';
import { deliveryOf, type ShardDelivery } from './delivery';

/** How long an ack or fail of an emission made before a shard was let go may still come. */
const LATE_OUTCOME_WAIT_MS = 10 * 60_000;

export interface IoCounters {
  getRecords: number;
  listShards: number;
  checkpointWrites: number;
  /** Changed checkpoints a capped flush left for a later one (`maxCheckpointWritesPerSecond`), counted at each flush. */
  checkpointWritesDeferred: number;
}

/** What a capped flush did. */
export interface CappedFlush {
  /** Changed checkpoints whose write it began (at most the allowance). */
  written: number;
  /** Changed checkpoints it left for a later flush. */
  deferred: number;
  /** When the longest-unwritten changed checkpoint was last written (monotonic ms); none changed: undefined. */
  oldestWrittenAt: number | undefined;
  /** Settles once its writes have. */
  done: Promise<void>;
}

export interface HeldShardsDeps {
  config: SpoutConfig;
  kinesis: KinesisApi;
  scheduler: Scheduler;
  reporter: Reporter;
  stream: StreamRef;
  /** How the stream is named in messages. */
  streamLabel: string;
  io: IoCounters;
  metrics: SpoutMetrics;
  isActive(): boolean;
  /** Something changed that the assignment should look at (a shard finished or was released). */
  changed(): void;
  /** A shard was read to its end: its children (ChildShards; may be none) may not be in the cached listing yet. */
  childrenFound(parentId: string, children: readonly ShardNode[]): void;
  /** A reader was told its shard does not exist: a fresh listing and the stream's identity must decide; it reads again once the latter is confirmed. */
  notFound(): Promise<void>;
  /** The shard's hash key range from the last listing, if known (to report KPL user records routed by a stale shard map). */
  hashRangeOf?(shardId: string): HashRange | undefined;
  /** How shards are read (default: GetRecords polling). */
  readers?: ShardReaderFactory;
}

export class HeldShards {
  readonly byId = new Map<string, OwnedShard>();
  readonly lateOutcomes: LateOutcomes;
  /** Counts shards let go; per shard, the count when it last was. */
  private letGoCount = 0;
  private readonly lastLetGo = new Map<string, number>();
  /** Shards whose start failed, or that were taken and given back in a loop, and when they may be taken again. */
  private readonly retake: RetakeBackoff;
  private readonly readers: ShardReaderFactory;
  private readonly readerContext: ReaderContext;
  private readonly delivery: ShardDelivery;
  /** The session of the last call that had one: the lease writes of events without one go there. */
  private session: Session | undefined;

  constructor(private readonly deps: HeldShardsDeps) {
    this.lateOutcomes = new LateOutcomes(deps.config.maxRecordsInMemory, LATE_OUTCOME_WAIT_MS);
    this.retake = new RetakeBackoff(() => this.now);
    this.delivery = deliveryOf(deps.config);
    const { kinesis, scheduler, stream, config } = deps;
    const { maxRecordsPerRequest, idlePollIntervalMs, tricklePollIntervalMs, trickleHoldMs, maxGetRecordsPerSecond } =
      config;
    this.readers =
      deps.readers ??
      pollingReaders({
        kinesis,
        scheduler,
        stream,
        maxRecordsPerRequest,
        idlePollIntervalMs,
        tricklePollIntervalMs,
        trickleHoldMs,
        maxGetRecordsPerSecond,
      });
    this.readerContext = {
      ...deps,
      reading: (shard) => this.byId.get(shard.shardId) === shard && shard.phase.kind === 'reading',
      held: () => ({ total: heldIn(this.byId.values()), shards: this.byId.size }),
      ended: (shard, children) => this.drain(shard, children),
      // At most once, a fetched batch is emitted only once a checkpoint past it is stored: one write per batch (coalesced).
      fetched: (shard) => {
        if (this.delivery.mode === 'at-most-once') void this.apply(shard, { kind: 'flush' });
      },
      requested: () => {
        deps.io.getRecords += 1;
      },
      now: () => this.now,
      wallNow: () => deps.scheduler.wallNow(),
    };
  }

  private get now(): number {
    return this.deps.scheduler.now();
  }

  private log(level: LogLevel, message: string): void {
    this.deps.reporter.log(level, message);
  }

  /** What all held shards keep in memory: prefetched, in flight, acked behind an unacked one, reserved. */
  inMemory(): Held {
    return heldIn(this.byId.values());
  }

  /** A mark to tell, later, which shards were let go after it. */
  get letGoMark(): number {
    return this.letGoCount;
  }

  letGoSince(shardId: string, mark: number): boolean {
    return (this.lastLetGo.get(shardId) ?? 0) > mark;
  }

  /** True while a shard whose start failed, or that went round a take/release loop, is left alone. */
  backingOff(shardId: string): boolean {
    return this.retake.backingOff(shardId);
  }

  private apply(shard: OwnedShard, event: ShardEvent, session = this.session): Promise<void> {
    return execute(this.world(session), shard, event);
  }

  /** Stops a shard here at once, without writing anything: its records still out may be acked or failed later. */
  forget(shard: OwnedShard): void {
    void this.apply(shard, { kind: 'forget' });
  }

  forgetAll(): void {
    for (const shard of this.byId.values()) this.forget(shard);
    this.session = undefined;
  }

  /**
   * The lease is ours: read from the checkpoint (written first from the start position when there is none;
   * looked for first when the shard was `leasedBefore`, round.ts).
   */
  async start(session: Session, shardId: string, leasedBefore = false): Promise<void> {
    this.session = session;
    const shard = new OwnedShard(shardId, this.now, {
      deaggregate: this.deps.config.deaggregate,
      hashRange: this.deps.hashRangeOf?.(shardId),
      delivery: this.delivery,
    });
    this.byId.set(shardId, shard);
    this.deps.metrics.leaseTaken(shardId);
    try {
      const checkpoint = await session.store.checkpointOrStart(shardId, session.startOf(shardId), leasedBefore);
      if (this.byId.get(shardId) !== shard) return;
      shard.checkpointStored(checkpoint);
      const from = checkpoint.position;
      if (from.kind === 'SHARD_END') {
        const restored = await confirmShardEnd(
          session.store,
          shardId,
          () => this.freshListing(),
          this.deps.streamLabel,
        );
        if (restored) this.deps.reporter.problem(`finished:${shardId}`, restored);
      } else {
        this.log(LogLevel.Info, `lease on ${shardId} taken; reading ${describePosition(from)}`);
        shard.startsAt(from);
      }
      this.retake.started(shardId);
      await this.apply(shard, { kind: 'started', from }, session);
    } catch (err) {
      const backoff = this.retake.startFailed(shardId);
      const message = `could not start ${shardId}: ${describeError(err)}; giving its lease back, trying again in ${Math.round(backoff / 1000)} s`;
      if (err instanceof SpoutError && err.code === ErrorCode.CorruptState)
        this.deps.reporter.problem(`corrupt:${shardId}`, message);
      else this.log(LogLevel.Warn, message);
      await this.apply(shard, { kind: 'startFailed' }, session);
    }
  }

  private freshListing() {
    this.deps.io.listShards += 1;
    return listShards(this.deps.kinesis, this.deps.stream);
  }

  /** Read to its end (or expired from the stream): emit the rest, then SHARD_END once every record is acked. */
  drain(shard: OwnedShard, children: readonly ShardNode[] = []): void {
    void this.apply(shard, { kind: 'endReached', now: this.now, children });
  }

  /** Hand a shard over: stop reading, re-emit failed records until acked (bounded in time), checkpoint, release. */
  beginRelease(shard: OwnedShard, reason: string): void {
    const { handoffTimeoutMs } = this.deps.config;
    this.log(
      LogLevel.Info,
      `handing ${shard.shardId} over (${reason}); waiting up to ${handoffTimeoutMs} ms for ${shard.inFlight.size} in-flight record(s)`,
    );
    void this.apply(shard, { kind: 'release', deadline: this.now + handoffTimeoutMs, reason });
  }

  /** Moves shards whose wait is over: drained ones to SHARD_END, released ones to their last checkpoint. */
  maintain(session: Session): void {
    this.session = session;
    const now = this.now;
    const active = this.deps.isActive();
    const announceEnd = this.deps.config.ordering === 'parents-emitted';
    for (const shard of this.byId.values()) {
      void this.apply(shard, { kind: 'active', active });
      void this.apply(shard, {
        kind: 'tick',
        now,
        buffered: shard.buffered,
        inFlight: shard.awaited,
        announceEnd,
      });
    }
  }

  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  async flush(session: Session): Promise<void> {
    this.session = session;
    await Promise.all([...this.byId.values()].map((shard) => this.apply(shard, { kind: 'flush' }, session)));
  }

  /**
   * The periodic flush, capped: of the changed checkpoints, at most `allowance` are written, those stored
   * longest ago first (checkpointCap.ts); the others wait for a later flush. With `delivery: "at-most-once"`
   * every one is written: its emits wait for them.
   */
  flushCapped(session: Session, allowance: number): CappedFlush {
    this.session = session;
    const exempt: OwnedShard[] = [];
    const pending: PendingCheckpoint[] = [];
    for (const shard of this.byId.values()) {
      // A flush acts only where records may be emitted (held/lifecycle.ts).
      if (!mayEmit(shard.phase)) continue;
      if (shard.delivery.mode === 'at-most-once') exempt.push(shard);
      else if (checkpointToWrite(shard.stored?.position, shard.committable()))
        pending.push({ shardId: shard.shardId, writtenAt: shard.checkpointWrittenAt });
    }
    const picked = pickCheckpoints(pending, allowance);
    const chosen = [...exempt, ...picked.map((id) => this.byId.get(id)!)];
    let oldestWrittenAt: number | undefined;
    for (const p of pending) oldestWrittenAt = Math.min(oldestWrittenAt ?? p.writtenAt, p.writtenAt);
    return {
      written: picked.length,
      deferred: pending.length - picked.length,
      oldestWrittenAt,
      done: Promise.all(chosen.map((shard) => this.apply(shard, { kind: 'flush' }, session))).then(() => undefined),
    };
  }

  /** At exit: stop reading, write the last checkpoints, give the leases back. */
  async close(session: Session | undefined): Promise<void> {
    await Promise.all([...this.byId.values()].map((shard) => this.apply(shard, { kind: 'shutdown' }, session)));
  }

  /** What the lifecycle's effects act on, with `session`'s store (none: nothing is written). */
  private world(session: Session | undefined): ShardWorld<OwnedShard> {
    const { deps } = this;
    const store = session?.store;
    return {
      now: () => this.now,
      startReader: (shard, from) => {
        const reader = this.readers(shard.shardId, readerEvents(shard, this.readerContext));
        shard.attachReader(reader);
        reader.start(from);
      },
      pauseReader: (shard) => shard.reader?.pause(),
      resumeReader: (shard) => shard.reader?.resume(),
      stopReader: async (shard) => shard.reader?.stop(),
      dropBuffer: (shard) => shard.dropBuffer(),
      learnChildren: (shard, children) => deps.childrenFound(shard.shardId, children),
      writeCheckpoint: (shard) =>
        shard.writes.coalesce(async () => {
          if (store && (await advanceCheckpoint(store, shard))) {
            deps.io.checkpointWrites += 1;
            shard.checkpointWritten(this.now);
          }
        }),
      writeShardEnd: async (shard) => {
        const done = await shard.writes.run(
          async () =>
            store !== undefined &&
            shard.stored !== undefined &&
            (await store.finishShard(shard.shardId, shard.stored.version, shard.lastSequenceNumber)),
        );
        deps.io.checkpointWrites += 1;
        return done;
      },
      markEnded: async (shard) => store?.markEnded(shard.shardId),
      deleteLease: (shard) => shard.writes.run(async () => store?.releaseLease(shard.shardId)),
      letGo: (shard, how) => this.letGo(shard, how),
      changed: () => deps.changed(),
      writeFailed: (what, shard, err) => {
        const message = `${what} failed: ${describeError(err)}; retrying`;
        // A failed write is retried; one that found a node nobody can read is also an operator's problem.
        if (err instanceof SpoutError && err.code === ErrorCode.CorruptState)
          deps.reporter.problem(`corrupt:${shard.shardId}`, message);
        else this.log(LogLevel.Warn, message);
      },
      log: (level, message) => this.log(level, message),
    };
  }

  private letGo(shard: OwnedShard, how: LetGo): void {
    if (this.byId.get(shard.shardId) !== shard) return;
    const held = Math.round(this.now - shard.acquiredAt);
    if (how.how === 'released')
      this.log(
        LogLevel.Info,
        `${shard.shardId} released at ${shard.stored ? describePosition(shard.stored.position) : 'its start'} after holding it ${held} ms; ${shard.inFlight.size} record(s) left in flight`,
      );
    this.byId.delete(shard.shardId);
    this.deps.metrics.count(ProcessCounter.LeasesGiven);
    this.lastLetGo.set(shard.shardId, ++this.letGoCount);
    this.lateOutcomes.expect(
      [...shard.inFlight.outstanding()].map((key) => messageIdOfKey(shard.shardId, key)),
      this.now,
    );
    if (how.how === 'finished')
      this.log(
        LogLevel.Info,
        `reshard: ${shard.shardId} finished: SHARD_END written ${Math.round(this.now - how.endedAt)} ms after its end was reached, lease released; its children may be read`,
      );
    if (how.how === 'released') this.noticeLoop(shard.shardId, held);
  }

  /** A lease taken and given back over and over, whatever the cause, waits before it is taken here again; said once per wait. */
  private noticeLoop(shardId: string, heldMs: number): void {
    const loop = this.retake.gaveBack(shardId, heldMs);
    if (loop)
      this.deps.reporter.problem(
        `loop:${shardId}`,
        `lease on ${shardId} taken and given back ${loop.inARow} times in a row, each within ${SHORT_TENURE_MS / 1000} s: not taking it here again for ${Math.round(loop.waitMs / 1000)} s (see the log for why it was given back)`,
      );
  }
}
