/** One shard this process holds a lease on: its lifecycle phase, prefetched records, in-flight records and retries. */
import { expandRecord, hasKplMagic, type HashRange } from '../kinesis/aggregation';
import type { KinesisRecord } from '../kinesis/records';
import type { ShardRecordReader } from '../kinesis/reader';
import { InFlight, type Emitted, type Mark } from './inFlight';
import { recordBytes, type Held } from './memory';
import type { Position } from '../core/position';
import { WriteQueue } from './writeQueue';
import { ShardThroughput } from './throughput';
import { mayEmit, type ShardPhase } from './lifecycle';
import { AT_LEAST_ONCE, covers, releaseWait, type ShardDelivery } from './delivery';
import { compareSequence } from '../core/position';

export type { ShardPhase };

/** What de-aggregating a fetched record found worth telling (the caller rate-limits it). */
export interface AggregateNotices {
  corrupt(record: KinesisRecord, reason: string): void;
  outsideRange(records: KinesisRecord[], range: HashRange): void;
}

/** A stored checkpoint and its node's version. */
export interface StoredCheckpoint {
  position: Position;
  version: number;
}

/**
 * Changed only through its own methods: its phase by the lifecycle's executor (`enter`), its reader by the
 * effect that starts one (`attachReader`), its stored checkpoint by the writes that store one
 * (`checkpointStored`), the room a request in flight holds by the reader's events (`reserve`).
 */
export class OwnedShard {
  private currentPhase: ShardPhase = { kind: 'starting' };
  private currentReader: ShardRecordReader | undefined;
  private storedCheckpoint: StoredCheckpoint | undefined;
  /** When (monotonic ms) this process last wrote its checkpoint; taking the lease counts as one. */
  private lastWrittenAt: number;
  /** Its ZooKeeper writes, one at a time. */
  readonly writes = new WriteQueue();
  readonly inFlight = new InFlight<KinesisRecord>(recordBytes);
  private buffer: (KinesisRecord | undefined)[] = [];
  private bufferHead = 0;
  private bufferedBytes = 0;
  private lastFetched: string | undefined;
  private reservedRecords = 0;
  readonly acquiredAt: number;
  /** Its smoothed throughput and what of it was published with the lease (balance "throughput"). */
  readonly throughput: ShardThroughput;
  /** Kinesis records fetched while this process held the shard, their bytes, and the records they held (user records of KPL aggregates). */
  private fetchedRecords = 0;
  private fetchedBytes = 0;
  private fetchedUserRecords = 0;
  /** Split KPL aggregates into their user records (config `deaggregate`). */
  readonly deaggregate: boolean;
  /** The shard's hash key range, when the listing gave it: user records outside it are delivered and reported. */
  readonly hashRange: HashRange | undefined;
  /**
   * The checkpoint stopped inside this aggregate (re-read AT its sequence number): its user records up to
   * `subSequence` are done and not emitted again. Cleared by the first record fetched.
   */
  private resumeInside: { sequenceNumber: string; subSequence: number } | undefined;
  /** Its delivery mode (config `delivery`, `tupleTracking`): see shard/delivery.ts. */
  readonly delivery: ShardDelivery;
  /** delivery none: the last record emitted (the checkpoint follows it). */
  private lastEmitted: Mark | undefined;
  /** delivery at-most-once: the last record a checkpoint write was asked to pass (kept at a hand-over). */
  private claimed: string | undefined;

  constructor(
    readonly shardId: string,
    now: number,
    options: { deaggregate?: boolean; hashRange?: HashRange; delivery?: ShardDelivery } = {},
  ) {
    this.acquiredAt = now;
    this.lastWrittenAt = now;
    this.throughput = new ShardThroughput();
    this.deaggregate = options.deaggregate ?? true;
    this.hashRange = options.hashRange;
    this.delivery = options.delivery ?? AT_LEAST_ONCE;
  }

  /** Its lifecycle phase (held/lifecycle.ts). */
  get phase(): ShardPhase {
    return this.currentPhase;
  }

  /** Held/executor.ts only, with the phase the lifecycle's transition gave. */
  enter(phase: ShardPhase): void {
    this.currentPhase = phase;
  }

  /** Its reader while it has one (started, paused and stopped by the lifecycle's effects). */
  get reader(): ShardRecordReader | undefined {
    return this.currentReader;
  }

  attachReader(reader: ShardRecordReader): void {
    this.currentReader = reader;
  }

  /** The last checkpoint known to be stored, and its node version. */
  get stored(): StoredCheckpoint | undefined {
    return this.storedCheckpoint;
  }

  checkpointStored(stored: StoredCheckpoint): void {
    this.storedCheckpoint = stored;
  }

  /** When this process last wrote its checkpoint (the lease's take, before any): the cap writes the oldest first. */
  get checkpointWrittenAt(): number {
    return this.lastWrittenAt;
  }

  checkpointWritten(at: number): void {
    this.lastWrittenAt = at;
  }

  /**
   * Reading starts at `from`: a checkpoint inside a KPL aggregate (after one of its user records) re-reads
   * the aggregate and skips the user records up to it.
   */
  startsAt(from: Position): void {
    this.resumeInside =
      from.kind === 'AFTER' && from.subSequence !== undefined
        ? { sequenceNumber: from.sequenceNumber, subSequence: from.subSequence }
        : undefined;
  }

  /** Records a GetRecords in flight may still bring (counted against the memory cap). */
  get reserved(): number {
    return this.reservedRecords;
  }

  /** A request goes out that may bring up to `records` (0: the one in flight answered or failed). */
  reserve(records: number): void {
    this.reservedRecords = records;
  }

  /** Kinesis records fetched while this process held the shard. */
  get fetched(): number {
    return this.fetchedRecords;
  }

  /** The sequence number of the last Kinesis record fetched. */
  get lastSequenceNumber(): string | undefined {
    return this.lastFetched;
  }

  get buffered(): number {
    return this.buffer.length - this.bufferHead;
  }

  /** Records held in memory (prefetched, in flight, acked behind an unacked one) or on their way. */
  get inMemory(): number {
    return this.buffered + this.inFlight.held + this.reservedRecords;
  }

  /** What counts against the memory caps (bytes of records on their way are not known yet). */
  get held(): Held {
    return { records: this.inMemory, bytes: this.bufferedBytes + this.inFlight.heldBytes };
  }

  /** Mean bytes of a fetched Kinesis record (a GetRecords limit counts those). */
  get averageRecordBytes(): number {
    return this.fetchedRecords === 0 ? 0 : this.fetchedBytes / this.fetchedRecords;
  }

  /** Records held per Kinesis record fetched (above 1 with KPL aggregates): turns a cap in records into a GetRecords limit. */
  get userRecordsPerRecord(): number {
    return this.fetchedRecords === 0 ? 1 : Math.max(1, this.fetchedUserRecords / this.fetchedRecords);
  }

  get pendingRetries(): number {
    return this.inFlight.pendingRetries;
  }

  /** True while records of this shard may be emitted (new ones while reading or draining, only retries while releasing). */
  get emitting(): boolean {
    return mayEmit(this.phase);
  }

  /** Fetched Kinesis records, in order; each KPL aggregate becomes its user records (memory is counted per user record). */
  push(records: KinesisRecord[], notices?: AggregateNotices): void {
    for (const record of records) {
      const bytes = recordBytes(record);
      this.fetchedBytes += bytes;
      const resume = this.resumeInside;
      this.resumeInside = undefined;
      const skipThrough = resume?.sequenceNumber === record.sequenceNumber ? resume.subSequence : undefined;
      // Most records are plain: no decoding, no allocation (the hot path).
      if (!this.deaggregate || !hasKplMagic(record.data)) {
        this.buffer.push(record);
        this.bufferedBytes += bytes;
        this.fetchedUserRecords += 1;
        continue;
      }
      const expanded = expandRecord(record, this.hashRange, skipThrough);
      if (expanded.corrupt !== undefined) notices?.corrupt(record, expanded.corrupt);
      if (expanded.outsideRange.length > 0 && this.hashRange)
        notices?.outsideRange(expanded.outsideRange, this.hashRange);
      for (const user of expanded.records) {
        this.buffer.push(user);
        this.bufferedBytes += recordBytes(user);
      }
      this.fetchedUserRecords +=
        expanded.records.length + (skipThrough !== undefined && expanded.corrupt === undefined ? skipThrough + 1 : 0);
    }
    this.fetchedRecords += records.length;
    this.lastFetched = records[records.length - 1]?.sequenceNumber ?? this.lastFetched;
  }

  /**
   * Drops what was prefetched but not emitted (the next holder re-reads it after the checkpoint). At most
   * once, what a checkpoint write was asked to pass stays, to be emitted: the next holder will not read it.
   */
  dropBuffer(): void {
    const claimed = this.claimed;
    if (this.delivery.mode === 'at-most-once' && claimed !== undefined) {
      let end = this.bufferHead;
      while (end < this.buffer.length && compareSequence(this.buffer[end]!.sequenceNumber, claimed) <= 0) end += 1;
      for (let i = end; i < this.buffer.length; i += 1) this.bufferedBytes -= recordBytes(this.buffer[i]!);
      this.buffer.length = end;
      return;
    }
    this.buffer = [];
    this.bufferHead = 0;
    this.bufferedBytes = 0;
  }

  /**
   * The next record to emit: a failed one whose backoff is over, else the next prefetched one. A shard
   * being handed over emits no new records, but keeps re-emitting its failed ones: the taker would re-read
   * every record after the oldest unacked one.
   */
  takeNext(now: number): { record: KinesisRecord; retry: Readonly<Emitted<KinesisRecord>> | undefined } | undefined {
    const retry = this.inFlight.takeDue(now);
    if (retry) return { record: retry.record, retry };
    if (this.bufferHead >= this.buffer.length) return undefined;
    const atMostOnce = this.delivery.mode === 'at-most-once';
    if (this.phase.kind === 'releasing' && !atMostOnce) return undefined;
    const record = this.buffer[this.bufferHead]!;
    // At most once: emitted only once the stored checkpoint passes it (a crash then loses it, never repeats it).
    if (atMostOnce && !covers(this.stored?.position, record)) return undefined;
    // Let go of the slot at once: what was emitted stays alive only while the in-flight records (which count it) keep it.
    this.buffer[this.bufferHead] = undefined;
    this.bufferHead += 1;
    this.bufferedBytes -= recordBytes(record);
    if (this.bufferHead > 4096 && this.bufferHead * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.bufferHead);
      this.bufferHead = 0;
    }
    const { sequenceNumber, subSequence } = record;
    const mark = {
      sequenceNumber,
      subSequence,
      closesRecord: subSequence === undefined || subSequence === record.lastSubSequence,
    };
    if (this.delivery.tracked) this.inFlight.add(mark, record);
    if (this.delivery.mode === 'none') this.lastEmitted = mark;
    return { record, retry: undefined };
  }

  /** `key`: the record's key in `inFlight` (`<sequenceNumber>[:<subSequence>]`), failed and not yet waiting. */
  scheduleRetry(key: string, dueAt: number): void {
    this.inFlight.retryAt(key, dueAt);
  }

  /** Handing over: every record emitted here is acked, so the taker re-emits nothing. */
  get handedOver(): boolean {
    return this.phase.kind === 'releasing' && this.awaited === 0;
  }

  /** What its lifecycle waits for before SHARD_END (in flight) or, handing it over, before its last checkpoint. */
  get awaited(): number {
    if (this.phase.kind !== 'releasing') return this.inFlight.size;
    return releaseWait(this.delivery.mode, this.inFlight.size, this.buffered);
  }

  /**
   * Where the checkpoint may move now. At least once: after the highest record (or user record) below which
   * everything is acked. At most once, while reading: past everything fetched (what is fetched is emitted
   * only once that is stored). None: after the last record emitted.
   */
  committable(): Position | undefined {
    switch (this.delivery.mode) {
      case 'at-least-once': {
        const checkpoint = this.inFlight.checkpoint;
        return checkpoint === undefined ? undefined : { kind: 'AFTER', ...checkpoint };
      }
      case 'at-most-once': {
        const last = this.lastSequenceNumber;
        if (last === undefined || (this.phase.kind !== 'reading' && this.phase.kind !== 'draining')) return undefined;
        this.claimed = last;
        return { kind: 'AFTER', sequenceNumber: last };
      }
      case 'none': {
        const mark = this.lastEmitted;
        if (!mark) return undefined;
        return mark.closesRecord || mark.subSequence === undefined
          ? { kind: 'AFTER', sequenceNumber: mark.sequenceNumber }
          : { kind: 'AFTER', sequenceNumber: mark.sequenceNumber, subSequence: mark.subSequence };
      }
    }
  }

  /** Read to the end and every record acked: SHARD_END may be written. */
  get drained(): boolean {
    return this.phase.kind === 'draining' && this.buffered === 0 && this.inFlight.size === 0;
  }
}
