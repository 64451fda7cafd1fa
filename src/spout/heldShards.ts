/**
 * The shards this process holds a lease on, through their lifecycle: started at their checkpoint, read,
 * drained to SHARD_END, handed over (failed records re-emitted first) or forgotten at once. Each shard's
 * ZooKeeper writes go through its own queue. Which shards to hold is the coordinator's decision.
 */
import type { SpoutConfig } from '../config/config';
import { describePosition, isAhead, isNotBehind, type Position } from '../core/position';
import type { Scheduler } from '../core/scheduler';
import { describeError, ErrorCode, SpoutError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import { isThrottling, kinesisProblem } from '../kinesis/errors';
import type { HashRange } from '../kinesis/aggregation';
import { messageId, messageIdOfKey, type KinesisRecord } from '../kinesis/records';
import { ShardReader } from '../kinesis/shardReader';
import { listShards, type StreamRef } from '../kinesis/shards';
import { LogLevel } from '../multilang/protocol';
import type { Session } from './joining';
import { LateOutcomes } from './lateOutcomes';
import { fetchRoom, heldIn, type Held } from './memory';
import { ProcessCounter, type SpoutMetrics } from './metrics';
import { OwnedShard, type AggregateNotices } from './ownedShard';
import type { Reporter } from './reporting';
import { RetakeBackoff, SHORT_TENURE_MS } from './shard/retakeBackoff';

/** How long an ack or fail of an emission made before a shard was let go may still come. */
const LATE_OUTCOME_WAIT_MS = 10 * 60_000;
const WRITE_RETRY_MS = 500;

export interface IoCounters {
  getRecords: number;
  listShards: number;
  checkpointWrites: number;
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
  /** A shard was read to its end: its children may not be in the cached listing yet. */
  relist(): void;
  /** A reader was told its shard does not exist: a fresh listing and the stream's identity must decide. */
  notFound(): void;
  /** The shard's hash key range from the last listing, if known (to report KPL user records routed by a stale shard map). */
  hashRangeOf?(shardId: string): HashRange | undefined;
}

export class HeldShards {
  readonly byId = new Map<string, OwnedShard>();
  readonly lateOutcomes: LateOutcomes;
  /** Counts shards let go; per shard, the count when it last was. */
  private letGoCount = 0;
  private readonly lastLetGo = new Map<string, number>();
  /** Shards whose start failed, or that were taken and given back in a loop, and when they may be taken again. */
  private readonly retake: RetakeBackoff;

  constructor(private readonly deps: HeldShardsDeps) {
    this.lateOutcomes = new LateOutcomes(deps.config.maxRecordsInMemory, LATE_OUTCOME_WAIT_MS);
    this.retake = new RetakeBackoff(() => this.now);
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

  /** True while a shard whose start failed is left alone. */
  backingOff(shardId: string): boolean {
    return this.retake.backingOff(shardId);
  }

  /** Stops a shard here at once, without writing anything: its records still out may be acked or failed later. */
  forget(shard: OwnedShard): void {
    if (shard.phase.kind === 'reading') void shard.phase.reader.stop();
    shard.phase = { kind: 'closing' };
    this.letGo(shard);
  }

  forgetAll(): void {
    for (const shard of this.byId.values()) this.forget(shard);
  }

  private letGo(shard: OwnedShard): void {
    if (this.byId.get(shard.shardId) !== shard) return;
    this.byId.delete(shard.shardId);
    this.deps.metrics.count(ProcessCounter.LeasesGiven);
    this.lastLetGo.set(shard.shardId, ++this.letGoCount);
    this.lateOutcomes.expect(
      [...shard.inFlight.outstanding()].map((key) => messageIdOfKey(shard.shardId, key)),
      this.now,
    );
  }

  /** The lease is ours: read from the checkpoint (written first from the start position when there is none). */
  async start(session: Session, shardId: string): Promise<void> {
    const shard = new OwnedShard(shardId, this.now, {
      deaggregate: this.deps.config.deaggregate,
      hashRange: this.deps.hashRangeOf?.(shardId),
    });
    this.byId.set(shardId, shard);
    this.deps.metrics.leaseTaken(shardId);
    try {
      const checkpoint = await session.store.checkpointOrStart(shardId, session.startOf(shardId));
      if (this.byId.get(shardId) !== shard) return;
      shard.stored = checkpoint;
      const from = checkpoint.position;
      if (from.kind === 'SHARD_END') {
        await this.confirmShardEnd(session, shardId);
        if (this.byId.get(shardId) !== shard) return;
        this.retake.started(shardId);
        shard.phase = { kind: 'closing' };
        await this.giveBack(session, shard);
        return;
      }
      this.retake.started(shardId);
      this.log(LogLevel.Info, `lease on ${shardId} taken; reading ${describePosition(from)}`);
      if (from.kind === 'AFTER' && from.subSequence !== undefined)
        shard.resumeInside = { sequenceNumber: from.sequenceNumber, subSequence: from.subSequence };
      shard.phase = { kind: 'reading', reader: this.readerFor(shard, from) };
      shard.phase.reader.start();
    } catch (err) {
      const backoff = this.retake.startFailed(shardId);
      const message = `could not start ${shardId}: ${describeError(err)}; giving its lease back, trying again in ${Math.round(backoff / 1000)} s`;
      if (err instanceof SpoutError && err.code === ErrorCode.CorruptState)
        this.deps.reporter.problem(`corrupt:${shardId}`, message);
      else this.log(LogLevel.Warn, message);
      this.forget(shard);
      await session.store.releaseLease(shardId).catch(() => undefined);
    }
  }

  /**
   * A SHARD_END checkpoint whose finished marker is missing (hand-edited state, a partial restore, an interrupted
   * reset) is believed only when a fresh unfiltered listing shows the shard closed, or no more (expired): SHARD_END
   * is written only with every record acked, so the marker is made again and its children may be read. On a
   * shard the listing shows open it is corrupt state: its records would be lost.
   */
  private async confirmShardEnd(session: Session, shardId: string): Promise<void> {
    const { store } = session;
    if (await store.hasFinishedMarker(shardId)) return;
    this.deps.io.listShards += 1;
    const listed = (await listShards(this.deps.kinesis, this.deps.stream)).find((s) => s.shardId === shardId);
    if (listed && !listed.closed)
      throw new SpoutError(
        ErrorCode.CorruptState,
        `ZooKeeper node ${store.checkpointPath(shardId)} says SHARD_END, but ${shardId} is open in a fresh listing of ${this.deps.streamLabel} (believing it would lose its records): set it to the position read up to, or remove it to read the shard from its start position`,
      );
    const path = await store.restoreFinishedMarker(shardId);
    this.deps.reporter.problem(
      `finished:${shardId}`,
      `${shardId}: checkpoint ${store.checkpointPath(shardId)} is SHARD_END but its marker ${path} was missing (a hand edit, a partial restore or an interrupted reset?); the shard is ${listed ? 'closed' : 'no longer in the stream'}, so the marker was made again and its children may be read`,
    );
  }

  private readerFor(shard: OwnedShard, from: Exclude<Position, { kind: 'SHARD_END' }>): ShardReader {
    const { config, metrics } = this.deps;
    const current = () => this.byId.get(shard.shardId) === shard && shard.phase.kind === 'reading';
    const notices = this.aggregateNotices(shard.shardId);
    return new ShardReader({
      kinesis: this.deps.kinesis,
      scheduler: this.deps.scheduler,
      stream: this.deps.stream,
      shardId: shard.shardId,
      from,
      maxRecordsPerRequest: config.maxRecordsPerRequest,
      idlePollIntervalMs: config.idlePollIntervalMs,
      events: {
        records: (records: KinesisRecord[], millisBehindLatest) => {
          shard.reserved = 0;
          if (!current()) return;
          shard.push(records, notices);
          metrics.lag(shard.shardId, millisBehindLatest);
        },
        end: (children) => {
          if (!current()) return;
          metrics.count(ProcessCounter.ReshardEvents);
          this.log(
            LogLevel.Info,
            `reshard: ${shard.shardId} read to its end (${shard.fetched} record(s) fetched here)${children.length ? `; children ${children.join(', ')}` : ''}; finishing once its records are acked`,
          );
          this.drain(shard);
        },
        failed: (err, consecutive) => {
          shard.reserved = 0;
          if (isThrottling(err)) metrics.count(ProcessCounter.ThrottledCalls);
          if (!current()) return;
          const problem = kinesisProblem(err, this.deps.streamLabel);
          if (consecutive >= problem.reportAfter)
            this.deps.reporter.problem(
              `kinesis:${problem.name}`,
              `reading ${shard.shardId} failed ${consecutive} time(s) in a row: ${describeError(err)}; ${problem.fix}; still retrying`,
            );
          if (problem.name === 'ResourceNotFoundException') this.deps.notFound();
        },
        room: () => {
          // What a GetRecords may return is reserved until it answers, so readers together stay under the cap.
          shard.reserved = 0;
          const room =
            this.deps.isActive() && current()
              ? fetchRoom(heldIn(this.byId.values()), shard, this.byId.size, config)
              : 0;
          shard.reserved = Math.ceil(room * shard.userRecordsPerRecord);
          return room;
        },
        log: (level, message) => this.log(level, message),
        requested: () => {
          this.deps.io.getRecords += 1;
        },
        iteratorReset: () => metrics.count(ProcessCounter.IteratorResets),
      },
    });
  }

  /** KPL problems are told, rate-limited per shard; the records are delivered all the same. */
  private aggregateNotices(shardId: string): AggregateNotices {
    const { reporter } = this.deps;
    return {
      corrupt: (record, reason) =>
        reporter.warn(
          `kpl-corrupt:${shardId}`,
          `record ${messageId(shardId, record.sequenceNumber)} starts with the KPL magic but is no valid aggregate (${reason}); emitted as it is`,
        ),
      outsideRange: (records, range) =>
        reporter.warn(
          `kpl-range:${shardId}`,
          `${records.length} user record(s) of KPL aggregate ${messageId(shardId, records[0].sequenceNumber)} (first: ${messageId(shardId, records[0].sequenceNumber, records[0].subSequence)}, partition key ${JSON.stringify(records[0].partitionKey)}) hash outside ${shardId}'s range ${range.start}..${range.end} (the producer's shard map predates a reshard); delivered anyway`,
        ),
    };
  }

  /** Read to its end (or expired from the stream): emit the rest, then SHARD_END once every record is acked. */
  drain(shard: OwnedShard): void {
    if (shard.phase.kind === 'reading') void shard.phase.reader.stop();
    shard.phase = { kind: 'draining' };
    shard.endedAt = this.now;
    this.deps.relist();
  }

  /** Hand a shard over: stop reading, re-emit failed records until acked (bounded in time), checkpoint, release. */
  beginRelease(shard: OwnedShard, reason: string): void {
    if (shard.phase.kind === 'reading') void shard.phase.reader.stop();
    shard.dropBuffer();
    shard.phase = { kind: 'releasing', deadline: this.now + this.deps.config.handoffTimeoutMs, reason };
    this.log(
      LogLevel.Info,
      `handing ${shard.shardId} over (${reason}); waiting up to ${this.deps.config.handoffTimeoutMs} ms for ${shard.inFlight.size} in-flight record(s)`,
    );
  }

  /** Moves shards whose wait is over: drained ones to SHARD_END, released ones to their last checkpoint. */
  maintain(session: Session): void {
    const now = this.now;
    for (const shard of this.byId.values()) {
      const { phase } = shard;
      if (
        this.deps.config.ordering === 'parents-emitted' &&
        phase.kind === 'draining' &&
        shard.buffered === 0 &&
        !shard.endAnnounced
      ) {
        shard.endAnnounced = true;
        session.store.markEnded(shard.shardId).catch((err) => {
          shard.endAnnounced = false;
          this.log(LogLevel.Warn, `could not mark ${shard.shardId} as fully emitted: ${describeError(err)}`);
        });
      }
      if ((phase.kind === 'draining' || phase.kind === 'releasing') && (phase.retryAt ?? 0) > now) continue;
      if (shard.drained) {
        shard.phase = { kind: 'closing' };
        void this.finish(session, shard);
      } else if (phase.kind === 'releasing' && (shard.handedOver || now >= phase.deadline)) {
        shard.phase = { kind: 'closing' };
        void this.release(session, shard, phase.reason);
      } else if (phase.kind === 'givingBack' && now >= phase.retryAt) {
        shard.phase = { kind: 'closing' };
        void this.giveBack(session, shard);
      }
    }
  }

  private async finish(session: Session, shard: OwnedShard): Promise<void> {
    try {
      const done = await shard.writes.run(
        async () =>
          shard.stored !== undefined &&
          (await session.store.finishShard(shard.shardId, shard.stored.version, shard.lastSequenceNumber)),
      );
      this.deps.io.checkpointWrites += 1;
      if (this.byId.get(shard.shardId) !== shard) return;
      if (done) {
        this.letGo(shard);
        const waited =
          shard.endedAt === undefined ? '' : ` ${Math.round(this.now - shard.endedAt)} ms after its end was reached`;
        this.log(
          LogLevel.Info,
          `reshard: ${shard.shardId} finished: SHARD_END written${waited}, lease released; its children may be read`,
        );
        this.deps.changed();
      } else {
        // A lost reply may have applied it already; otherwise the checkpoint moved under us. Either way the next holder knows.
        this.log(
          LogLevel.Warn,
          `${shard.shardId}: SHARD_END not written (the checkpoint changed under us, or an earlier try got through); giving the lease back`,
        );
        await this.giveBack(session, shard);
      }
    } catch (err) {
      this.writeFailed(`finishing ${shard.shardId}`, shard, err);
      if (this.byId.get(shard.shardId) === shard)
        shard.phase = { kind: 'draining', retryAt: this.now + WRITE_RETRY_MS };
    }
  }

  /**
   * The last checkpoint, then the lease. A failed checkpoint leaves the shard releasing (the lease is still
   * ours: its failed records may still be re-emitted), retried; never dropped with its lease still held.
   */
  private async release(session: Session, shard: OwnedShard, reason: string): Promise<void> {
    try {
      await this.writeCheckpoint(session, shard);
    } catch (err) {
      this.writeFailed(`releasing ${shard.shardId}`, shard, err);
      if (this.byId.get(shard.shardId) === shard)
        shard.phase = { kind: 'releasing', deadline: this.now, reason, retryAt: this.now + WRITE_RETRY_MS };
      return;
    }
    await this.giveBack(session, shard);
  }

  /**
   * Deletes the lease (only while it is ours). Once the delete was sent it may have been applied, its reply
   * lost, and the shard taken by another task: from then on nothing is emitted here, and a failure is
   * retried until the lease is known to be gone or someone else's.
   */
  private async giveBack(session: Session, shard: OwnedShard): Promise<void> {
    try {
      await shard.writes.run(() => session.store.releaseLease(shard.shardId));
      const held = Math.round(this.now - shard.acquiredAt);
      this.log(
        LogLevel.Info,
        `${shard.shardId} released at ${shard.stored ? describePosition(shard.stored.position) : 'its start'} after holding it ${held} ms; ${shard.inFlight.size} record(s) left in flight`,
      );
      this.letGo(shard);
      this.noticeLoop(shard.shardId, held);
      this.deps.changed();
    } catch (err) {
      this.writeFailed(`giving the lease on ${shard.shardId} back`, shard, err);
      if (this.byId.get(shard.shardId) === shard)
        shard.phase = { kind: 'givingBack', retryAt: this.now + WRITE_RETRY_MS };
    }
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

  /** A failed write is retried; one that found a node nobody can read is also an operator's problem. */
  private writeFailed(what: string, shard: OwnedShard, err: unknown): void {
    const message = `${what} failed: ${describeError(err)}; retrying`;
    if (err instanceof SpoutError && err.code === ErrorCode.CorruptState)
      this.deps.reporter.problem(`corrupt:${shard.shardId}`, message);
    else this.log(LogLevel.Warn, message);
  }

  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  async flush(session: Session): Promise<void> {
    const open = [...this.byId.values()].filter(
      (shard) => shard.phase.kind !== 'closing' && shard.phase.kind !== 'givingBack',
    );
    await Promise.all(
      open.map((shard) =>
        this.writeCheckpoint(session, shard).catch((err) =>
          this.writeFailed(`writing the checkpoint of ${shard.shardId}`, shard, err),
        ),
      ),
    );
  }

  /** Queued behind the shard's other writes; asks while one waits are answered by it. */
  private writeCheckpoint(session: Session, shard: OwnedShard): Promise<void> {
    return shard.writes.coalesce(() => this.advanceCheckpoint(session, shard));
  }

  private async advanceCheckpoint(session: Session, shard: OwnedShard): Promise<void> {
    const next = shard.committable();
    const stored = shard.stored;
    if (!next || !stored || !isAhead(next, stored.position)) return;
    let result = await session.store.writeCheckpoint(shard.shardId, next, stored.version);
    if (result === 'conflict') {
      // After a lost connection the outcome of the last write is unknown: re-read, never move backwards.
      const current = await session.store.readCheckpoint(shard.shardId);
      if (!current) throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint node of ${shard.shardId} disappeared`);
      result = isNotBehind(current.position, next)
        ? current
        : await session.store.writeCheckpoint(shard.shardId, next, current.version);
      if (result === 'conflict')
        throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shard.shardId} keeps changing under us`, {
          retriable: true,
        });
    }
    shard.stored = result;
    this.deps.io.checkpointWrites += 1;
  }

  /** At exit: stop reading, write the last checkpoints, give the leases back. */
  async close(session: Session | undefined): Promise<void> {
    const held = [...this.byId.values()];
    await Promise.all(held.map((s) => (s.phase.kind === 'reading' ? s.phase.reader.stop() : undefined)));
    if (!session) return;
    await Promise.all(
      held.map(async (shard) => {
        await this.writeCheckpoint(session, shard).catch((err) =>
          this.writeFailed(`writing the checkpoint of ${shard.shardId}`, shard, err),
        );
        await shard.writes.run(() => session.store.releaseLease(shard.shardId)).catch(() => undefined);
      }),
    );
  }
}
