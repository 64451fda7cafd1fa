/**
 * The spout as Storm sees it: answers `next`, `ack`, `fail`, `activate` and `deactivate` at once, from
 * memory, never waiting on the network. Emits only from shards whose lease is still trusted. With several
 * streams (`streams`), one source per stream: each is trusted (or not) on its own, their shards are emitted
 * from round robin, and a message id names its stream, so its outcome goes back to that stream's shard.
 */
import { streamNameOf, type SpoutConfig } from '../config/config';
import type { Scheduler } from '../core/scheduler';
import {
  type DataDecodeFailure,
  messageId,
  messageIdOfKey,
  parseMessageId,
  recordKey,
  tupleOf,
  type KinesisRecord,
} from '../kinesis/records';
import type { LateOutcomes } from '../held/lateOutcomes';
import { LogLevel, Reporter, type Logger } from '../core/log';
import { afterFailure, DeadLetterReason, deadLetterTuple, FailureOutcome } from './exhausted';
import { retryDelayMs } from '../held/inFlight';
import { isTooOld, recordAgeMs, TooOldLog, type TooOldSummary } from '../held/recordAge';
import { recordBytes } from '../held/memory';
import { ShardCounter, type SpoutMetrics } from '../held/metrics';
import type { OwnedShard } from '../held/ownedShard';

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

/** One stream the spout emits from: the source of its shards, and its own configuration (streamConfigs). */
export interface SpoutStream {
  readonly source: ShardSource;
  readonly config: SpoutConfig;
}

export interface SpoutCounters {
  emitted: number;
  reemitted: number;
  acked: number;
  failed: number;
  skipped: number;
  /** Records emitted on the dead-letter stream: skipped ones, and too old ones. */
  deadLettered: number;
  ignoredAcks: number;
  /** Records not emitted for their age (`maxRecordAgeMs`), dead-lettered or skipped. */
  tooOld: number;
}

/** What the spout keeps of each stream, made once. */
interface StreamState {
  readonly index: number;
  readonly source: ShardSource;
  readonly name: string;
  readonly outputStream: string;
  readonly onBadJson: DataDecodeFailure;
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
    tooOld: 0,
  };
  private cursor = 0;
  private readonly reporter: Reporter;
  private readonly streams: readonly StreamState[];
  /** The shards emitted from in the current `next`, and the stream of each (reused: `next` is the hot path). */
  private readonly turn: OwnedShard[] = [];
  private readonly turnStreams: StreamState[] = [];
  /** What is logged of the records set aside for their age, per shard. */
  private readonly tooOldLog = new TooOldLog();

  /** `streams`: one source (a single-stream configuration), or each stream's source with its own configuration. */
  constructor(
    private readonly config: SpoutConfig,
    streams: ShardSource | readonly SpoutStream[],
    logger: Logger,
    private readonly scheduler: Scheduler,
    /** The wire carries bytes (the compact format): `base64` data is emitted as bytes (a Java byte[]). */
    private readonly rawBytes = false,
  ) {
    this.reporter = new Reporter(logger, scheduler);
    const list: readonly SpoutStream[] = Array.isArray(streams)
      ? streams
      : [{ source: streams as ShardSource, config }];
    this.streams = list.map(({ source, config: own }, index) => {
      const name = own.streamName !== undefined || own.streamArn !== undefined ? streamNameOf(own) : '';
      return {
        index,
        source,
        name,
        outputStream: own.outputStream,
        onBadJson: (bad: KinesisRecord, err: unknown) =>
          this.reporter.warn(
            `json:${index}/${bad.shardId}`,
            `record ${messageId(bad.shardId, bad.sequenceNumber, bad.subSequence, index)}${list.length > 1 ? ` of stream ${name}` : ''} is not JSON (${(err as Error).message}); emitted as text`,
          ),
      };
    });
  }

  next(out: Emitter): void {
    const now = this.scheduler.now();
    const maxAge = this.config.maxRecordAgeMs;
    const wallNow = maxAge === undefined ? 0 : this.scheduler.wallNow();
    if (this.tooOldLog.active) this.logTooOld(this.tooOldLog.due(now));
    const shards = this.turn;
    const of = this.turnStreams;
    shards.length = 0;
    of.length = 0;
    for (const stream of this.streams) {
      const source = stream.source;
      if (!source.isActive || source.shards.size === 0) continue;
      // Each stream's leases are trusted on its own: a stream whose session is in doubt does not stop the others.
      if (source.trustedUntil() <= now) {
        this.reporter.warn(
          `trust:${stream.index}`,
          `not emitting from ${source.shards.size} shard(s)${this.streams.length > 1 ? ` of stream ${stream.name}` : ''}: ZooKeeper has not confirmed this process's session recently enough to trust its leases`,
        );
        continue;
      }
      for (const shard of source.shards.values()) {
        if (!shard.emitting) continue;
        shards.push(shard);
        of.push(stream);
      }
    }
    let budget = this.config.maxEmitPerNext;
    // Round robin, one record per shard per turn, so one busy shard (or stream) cannot starve the others.
    for (let idle = 0; budget > 0 && idle < shards.length; ) {
      const at = this.cursor++ % shards.length;
      const shard = shards[at];
      const next = shard.takeNext(now);
      if (!next) {
        idle += 1;
        continue;
      }
      idle = 0;
      budget -= 1;
      // Checked as it is about to be emitted, first time or retry: as Lambda's limit, the age when processed.
      if (isTooOld(next.record.arrivalMs, wallNow, maxAge)) {
        this.setAside(out, of[at], shard, next.record, next.retry?.attempts ?? 0, wallNow, now);
        continue;
      }
      this.emit(out, of[at], shard, next.record, next.retry !== undefined);
    }
    shards.length = 0;
    of.length = 0;
  }

  private tupleOf(stream: StreamState, record: KinesisRecord): unknown[] {
    return tupleOf(
      record,
      this.config.outputFields,
      this.config.dataFormat,
      stream.onBadJson,
      this.rawBytes,
      stream.name,
    );
  }

  private emit(out: Emitter, stream: StreamState, shard: OwnedShard, record: KinesisRecord, retry: boolean): void {
    const tuple = this.tupleOf(stream, record);
    const id = shard.delivery.tracked
      ? messageId(shard.shardId, record.sequenceNumber, record.subSequence, stream.index)
      : undefined;
    out.emit(id, tuple, stream.outputStream);
    if (retry) this.counters.reemitted += 1;
    else this.counters.emitted += 1;
    stream.source.metrics.emitted(shard.shardId, recordBytes(record), retry);
  }

  /**
   * A record older than `maxRecordAgeMs`: dead-lettered if so configured (only at least once can be), else
   * skipped; counted, logged once a minute per shard, and acked at once, so its checkpoint advances as for an
   * acked record: never past an older unacked one, never held back by this one.
   */
  private setAside(
    out: Emitter,
    stream: StreamState,
    shard: OwnedShard,
    record: KinesisRecord,
    attempts: number,
    wallNow: number,
    now: number,
  ): void {
    const ageMs = recordAgeMs(record.arrivalMs, wallNow) ?? 0;
    const { retry } = this.config;
    if (retry.onExhausted === 'deadLetter') {
      const letter = this.deadLetter(stream, shard, record, attempts, null, DeadLetterReason.TooOld, wallNow);
      out.emit(undefined, letter, retry.deadLetterStream);
    }
    this.counters.tooOld += 1;
    stream.source.metrics.shard(shard.shardId, ShardCounter.TooOld);
    if (shard.delivery.tracked) shard.inFlight.ack(recordKey(record.sequenceNumber, record.subSequence));
    const line = this.tooOldLog.add(`${shard.shardId}${this.ofStream(stream)}`, ageMs, now);
    if (line) this.logTooOld([line]);
  }

  private logTooOld(lines: readonly TooOldSummary[]): void {
    const { retry, maxRecordAgeMs } = this.config;
    const what =
      retry.onExhausted === 'deadLetter' ? `emitted on stream "${retry.deadLetterStream}"` : 'skipped (not emitted)';
    for (const { key, count, oldestMs } of lines)
      this.reporter.log(
        LogLevel.Warn,
        `${count} record(s) of ${key} older than maxRecordAgeMs=${maxRecordAgeMs} when read (the oldest ${Math.round(oldestMs / 1000)} s): ${what}, and passed by the checkpoint`,
      );
  }

  ack(id: unknown): void {
    const owned = this.locate(id, 'ack');
    if (!owned) return;
    if (owned.shard.inFlight.ack(owned.key)) {
      this.counters.acked += 1;
      owned.stream.source.metrics.shard(owned.shard.shardId, ShardCounter.Acked);
    } else {
      this.counters.ignoredAcks += 1;
    }
  }

  fail(id: unknown, out: UnanchoredEmitter): void {
    const owned = this.locate(id, 'fail');
    if (!owned) return;
    const { shard, key, stream } = owned;
    const now = this.scheduler.now();
    const entry = shard.inFlight.failed(key, now);
    if (!entry) {
      this.counters.ignoredAcks += 1;
      return;
    }
    this.counters.failed += 1;
    stream.source.metrics.shard(shard.shardId, ShardCounter.Failed);
    // Only at least once is a failed tuple replayed; otherwise its fail only releases it (flow control).
    if (shard.delivery.mode !== 'at-least-once') {
      shard.inFlight.ack(key);
      return;
    }
    const { retry } = this.config;
    const outcome = afterFailure(entry.attempts, retry, shard.emitting && stream.source.trustedUntil() > now);
    if (outcome !== FailureOutcome.Retry) {
      this.giveUp(out, stream, shard, key, entry.record, entry.attempts, outcome === FailureOutcome.DeadLetter);
      return;
    }
    // A shard being handed over re-emits too, until its deadline: whatever is unacked then, the taker re-reads.
    if (shard.emitting)
      shard.scheduleRetry(key, now + retryDelayMs(entry.attempts, retry, () => this.scheduler.random()));
    const heldFor = now - (entry.firstFailedAt ?? now);
    if (heldFor >= retry.warnAfterMs) {
      this.reporter.warn(
        `retry:${stream.index}/${shard.shardId}`,
        `record ${messageIdOfKey(shard.shardId, key, stream.index)} has been failing for ${Math.round(heldFor / 1000)} s (${entry.attempts} attempts): it holds back the checkpoint of ${shard.shardId}${this.ofStream(stream)} and, parents first, its children`,
        retry.warnAfterMs,
      );
    }
  }

  /**
   * The dead letter of `record`, counted (the caller emits it: anchored to nothing either way). With
   * `maxRecordAgeMs` set, it also says why (`reason`) and the record's age.
   */
  private deadLetter(
    stream: StreamState,
    shard: OwnedShard,
    record: KinesisRecord,
    attempts: number,
    lastFailureTime: number | null,
    reason: DeadLetterReason,
    wallNow: number,
  ): unknown[] {
    const why =
      this.config.maxRecordAgeMs === undefined ? undefined : { reason, ageMs: recordAgeMs(record.arrivalMs, wallNow) };
    this.counters.deadLettered += 1;
    stream.source.metrics.shard(shard.shardId, ShardCounter.DeadLettered);
    return deadLetterTuple(this.tupleOf(stream, record), attempts, lastFailureTime, why);
  }

  /** ` of stream <name>` when there are several. */
  private ofStream(stream: StreamState): string {
    return this.streams.length > 1 ? ` of stream ${stream.name}` : '';
  }

  /** A record over retry.maxRetries: reported, dead-lettered if so configured, then passed by the checkpoint. */
  private giveUp(
    out: UnanchoredEmitter,
    stream: StreamState,
    shard: OwnedShard,
    key: string,
    record: KinesisRecord,
    attempts: number,
    deadLetter: boolean,
  ): void {
    const { retry } = this.config;
    const metrics = stream.source.metrics;
    const id = messageIdOfKey(shard.shardId, key, stream.index);
    if (deadLetter) {
      const wallNow = this.scheduler.wallNow();
      const letter = this.deadLetter(stream, shard, record, attempts, wallNow, DeadLetterReason.MaxRetries, wallNow);
      out.emitUnanchored(letter, retry.deadLetterStream);
    }
    const given = `record ${id}${this.ofStream(stream)} failed ${attempts} time(s), over retry.maxRetries=${retry.maxRetries}`;
    // A dead letter reaches the topology, which stores it: a log line. A skipped record is gone: an error, each time.
    if (deadLetter) this.reporter.log(LogLevel.Warn, `${given}: emitted on stream "${retry.deadLetterStream}"`);
    else this.reporter.error(`${given}: skipped (not re-emitted)`);
    this.counters.skipped += 1;
    metrics.shard(shard.shardId, ShardCounter.Skipped);
    shard.inFlight.ack(key);
  }

  /** The held shard an id belongs to; acks for shards held elsewhere now (or unknown ids) are ignored. */
  private locate(id: unknown, what: string): { stream: StreamState; shard: OwnedShard; key: string } | undefined {
    const parsed = parseMessageId(id);
    const stream = parsed && this.streams[parsed.streamIndex];
    if (!parsed || !stream) {
      this.reporter.warn('bad-id', `${what} for an id this spout never emits: ${JSON.stringify(id)}; ignored`);
      this.counters.ignoredAcks += 1;
      return undefined;
    }
    // An outcome of an emission made before the shard was let go (and maybe taken again since) is not this emission's.
    // Usually none are expected: skip hashing the id then (every ack comes through here). The stream's own
    // expectations are kept by id within the stream (without its index).
    const lateOutcomes = stream.source.lateOutcomes;
    const late =
      lateOutcomes.size > 0 &&
      lateOutcomes.consume(
        parsed.streamIndex === 0 ? (id as string) : messageIdOfKey(parsed.shardId, parsed.key),
        this.scheduler.now(),
      );
    const shard = stream.source.shards.get(parsed.shardId);
    if (!shard || late) {
      this.counters.ignoredAcks += 1;
      return undefined;
    }
    return { stream, shard, key: parsed.key };
  }
}
