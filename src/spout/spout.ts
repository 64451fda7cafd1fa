/**
 * The spout as Storm sees it: answers `next`, `ack`, `fail`, `activate` and `deactivate` at once, from
 * memory, never waiting on the network. Emits only from shards whose lease is still trusted.
 */
import type { SpoutConfig } from '../config/config';
import type { Scheduler } from '../core/scheduler';
import { messageId, messageIdOfKey, parseMessageId, tupleOf, type KinesisRecord } from '../kinesis/records';
import type { LateOutcomes } from './lateOutcomes';
import { LogLevel, Reporter, type Logger } from '../core/log';
import { afterFailure, deadLetterTuple, FailureOutcome } from './exhausted';
import { retryDelayMs } from './inFlight';
import { recordBytes } from './memory';
import { ShardCounter, type SpoutMetrics } from './metrics';
import type { OwnedShard } from './ownedShard';

export interface Emitter {
  /** Without an id (delivery other than at-least-once, without tupleTracking), Storm tracks no outcome for it. */
  emit(id: string | undefined, tuple: unknown[], stream: string): void;
}

/** Where a record given up goes, in reply to the `fail` that gave it up. */
export interface UnanchoredEmitter {
  emitUnanchored(tuple: unknown[], stream: string): void;
}

/** What the spout asks of whoever holds the shards (the coordinator): it reads, and asks shards to act. */
export interface ShardSource {
  readonly isActive: boolean;
  readonly shards: ReadonlyMap<string, OwnedShard>;
  /** Until when (monotonic ms) leases may be trusted. */
  trustedUntil(): number;
  /** Outcomes Storm may still send for emissions of shards let go. */
  readonly lateOutcomes: LateOutcomes;
  readonly metrics: SpoutMetrics;
}

export interface SpoutCounters {
  emitted: number;
  reemitted: number;
  acked: number;
  failed: number;
  skipped: number;
  /** Of the records skipped, those emitted on the dead-letter stream. */
  deadLettered: number;
  ignoredAcks: number;
}

export class KinesisSpout {
  readonly counters: SpoutCounters = {
    emitted: 0,
    reemitted: 0,
    acked: 0,
    failed: 0,
    skipped: 0,
    deadLettered: 0,
    ignoredAcks: 0,
  };
  private cursor = 0;
  private readonly reporter: Reporter;
  private readonly metrics: SpoutMetrics;

  constructor(
    private readonly config: SpoutConfig,
    private readonly coordinator: ShardSource,
    logger: Logger,
    private readonly scheduler: Scheduler,
    /** The wire carries bytes (the compact format): `base64` data is emitted as bytes (a Java byte[]). */
    private readonly rawBytes = false,
  ) {
    this.reporter = new Reporter(logger, scheduler);
    this.metrics = coordinator.metrics;
  }

  next(out: Emitter): void {
    const coordinator = this.coordinator;
    if (!coordinator.isActive || coordinator.shards.size === 0) return;
    const now = this.scheduler.now();
    if (coordinator.trustedUntil() <= now) {
      this.reporter.warn(
        'trust',
        `not emitting from ${coordinator.shards.size} shard(s): ZooKeeper has not confirmed this process's session recently enough to trust its leases`,
      );
      return;
    }
    const shards = [...coordinator.shards.values()].filter((s) => s.emitting);
    let budget = this.config.maxEmitPerNext;
    // Round robin, one record per shard per turn, so one busy shard cannot starve the others.
    for (let idle = 0; budget > 0 && idle < shards.length; ) {
      const shard = shards[this.cursor++ % shards.length];
      const next = shard.takeNext(now);
      if (!next) {
        idle += 1;
        continue;
      }
      idle = 0;
      budget -= 1;
      this.emit(out, shard, next.record, next.retry !== undefined);
    }
  }

  /** Made once, not per tuple: `next` is the hot path. */
  private readonly onBadJson = (bad: KinesisRecord, err: unknown) =>
    this.reporter.warn(
      `json:${bad.shardId}`,
      `record ${messageId(bad.shardId, bad.sequenceNumber, bad.subSequence)} is not JSON (${(err as Error).message}); emitted as text`,
    );

  private emit(out: Emitter, shard: OwnedShard, record: KinesisRecord, retry: boolean): void {
    const tuple = tupleOf(record, this.config.outputFields, this.config.dataFormat, this.onBadJson, this.rawBytes);
    const id = shard.delivery.tracked ? messageId(shard.shardId, record.sequenceNumber, record.subSequence) : undefined;
    out.emit(id, tuple, this.config.outputStream);
    if (retry) this.counters.reemitted += 1;
    else this.counters.emitted += 1;
    this.metrics.emitted(shard.shardId, recordBytes(record), retry);
  }

  ack(id: unknown): void {
    const owned = this.locate(id, 'ack');
    if (!owned) return;
    if (owned.shard.inFlight.ack(owned.key)) {
      this.counters.acked += 1;
      this.metrics.shard(owned.shard.shardId, ShardCounter.Acked);
    } else {
      this.counters.ignoredAcks += 1;
    }
  }

  fail(id: unknown, out: UnanchoredEmitter): void {
    const owned = this.locate(id, 'fail');
    if (!owned) return;
    const { shard, key } = owned;
    const now = this.scheduler.now();
    const entry = shard.inFlight.failed(key, now);
    if (!entry) {
      this.counters.ignoredAcks += 1;
      return;
    }
    this.counters.failed += 1;
    this.metrics.shard(shard.shardId, ShardCounter.Failed);
    // Only at least once is a failed tuple replayed; otherwise its fail only releases it (flow control).
    if (shard.delivery.mode !== 'at-least-once') {
      shard.inFlight.ack(key);
      return;
    }
    const { retry } = this.config;
    const outcome = afterFailure(entry.attempts, retry, shard.emitting && this.coordinator.trustedUntil() > now);
    if (outcome !== FailureOutcome.Retry) {
      this.giveUp(out, shard, key, entry.record, entry.attempts, outcome === FailureOutcome.DeadLetter);
      return;
    }
    // A shard being handed over re-emits too, until its deadline: whatever is unacked then, the taker re-reads.
    if (shard.emitting)
      shard.scheduleRetry(key, now + retryDelayMs(entry.attempts, retry, () => this.scheduler.random()));
    const heldFor = now - (entry.firstFailedAt ?? now);
    if (heldFor >= retry.warnAfterMs) {
      this.reporter.warn(
        `retry:${shard.shardId}`,
        `record ${messageIdOfKey(shard.shardId, key)} has been failing for ${Math.round(heldFor / 1000)} s (${entry.attempts} attempts): it holds back the checkpoint of ${shard.shardId} and, parents first, its children`,
        retry.warnAfterMs,
      );
    }
  }

  /** A record over retry.maxRetries: reported, dead-lettered if so configured, then passed by the checkpoint. */
  private giveUp(
    out: UnanchoredEmitter,
    shard: OwnedShard,
    key: string,
    record: KinesisRecord,
    attempts: number,
    deadLetter: boolean,
  ): void {
    const { retry } = this.config;
    const id = messageIdOfKey(shard.shardId, key);
    if (deadLetter) {
      const tuple = tupleOf(record, this.config.outputFields, this.config.dataFormat, this.onBadJson, this.rawBytes);
      out.emitUnanchored(deadLetterTuple(tuple, attempts, this.scheduler.wallNow()), retry.deadLetterStream);
      this.counters.deadLettered += 1;
      this.metrics.shard(shard.shardId, ShardCounter.DeadLettered);
    }
    const given = `record ${id} failed ${attempts} time(s), over retry.maxRetries=${retry.maxRetries}`;
    // A dead letter reaches the topology, which stores it: a log line. A skipped record is gone: an error, each time.
    if (deadLetter) this.reporter.log(LogLevel.Warn, `${given}: emitted on stream "${retry.deadLetterStream}"`);
    else this.reporter.error(`${given}: skipped (not re-emitted)`);
    this.counters.skipped += 1;
    this.metrics.shard(shard.shardId, ShardCounter.Skipped);
    shard.inFlight.ack(key);
  }

  /** The held shard an id belongs to; acks for shards held elsewhere now (or unknown ids) are ignored. */
  private locate(id: unknown, what: string): { shard: OwnedShard; key: string } | undefined {
    const parsed = parseMessageId(id);
    if (!parsed) {
      this.reporter.warn('bad-id', `${what} for an id this spout never emits: ${JSON.stringify(id)}; ignored`);
      this.counters.ignoredAcks += 1;
      return undefined;
    }
    // An outcome of an emission made before the shard was let go (and maybe taken again since) is not this emission's.
    // Usually none are expected: skip hashing the id then (every ack comes through here).
    const lateOutcomes = this.coordinator.lateOutcomes;
    const late = lateOutcomes.size > 0 && lateOutcomes.consume(id as string, this.scheduler.now());
    const shard = this.coordinator.shards.get(parsed.shardId);
    if (!shard || late) {
      this.counters.ignoredAcks += 1;
      return undefined;
    }
    return { shard, key: parsed.key };
  }
}
