/**
 * A held shard's throughput: bytes/s and records/s of what its reader delivers, smoothed (an exponentially
 * weighted moving average over `TAU_MS`), and when it is worth publishing with the lease (config `balance:
 * "throughput"`): first once it has been measured for a while, then only when it changed materially and
 * at most every `PUBLISH_EVERY_MS`, so that ZooKeeper writes stay few with hundreds of shards.
 */
import { LOAD_STEP_BYTES_PER_SEC, PUBLISH_EVERY_MS, type ShardLoad } from '../core/load';
import type { KinesisRecord } from '../kinesis/records';
import { recordBytes } from './memory';

/** Smoothing time constant: a step in the rate is 63 % seen after it, 95 % after three times it. */
export const TAU_MS = 10_000;
/** Measured this long before the first publication. */
export const WARMUP_MS = 5_000;
/** A change is material past this fraction of the last published load, and past `LOAD_STEP_BYTES_PER_SEC` (idle shards' noise is not worth a write). */
export const MATERIAL_CHANGE = 0.2;

export class ThroughputMeter {
  private bytesRate = 0;
  private recordsRate = 0;
  /** What arrived up to this time (monotonic ms) has been counted. */
  private coveredTo: number;

  constructor(readonly startedAt: number) {
    this.coveredTo = startedAt;
  }

  /**
   * An answer at `now` (monotonic ms) with what arrived since the last one: `records` of them, `bytes` in
   * all (none: an answer with nothing). They are spread over the time between the two answers, so the
   * average follows the rate of arrivals, without the saw-tooth of counting each answer as a burst at the
   * moment it came: a shard read at one moment of its interval and a shard read at another are told alike.
   */
  record(records: number, bytes: number, now: number): void {
    // Answers in the same millisecond: as an impulse into the average (the limit of the spread as dt → 0).
    const dt = Math.max(1, now - this.coveredTo);
    const keep = Math.exp(-dt / TAU_MS);
    this.bytesRate = this.bytesRate * keep + ((bytes * 1000) / dt) * (1 - keep);
    this.recordsRate = this.recordsRate * keep + ((records * 1000) / dt) * (1 - keep);
    this.coveredTo = Math.max(now, this.coveredTo + 1);
  }

  /**
   * The smoothed rates as of the last answer (`now` only bounds it); early on, corrected for the average
   * having started at zero. Nothing answered yet: zero.
   */
  at(now: number): ShardLoad {
    const to = Math.min(now, this.coveredTo);
    const warm = 1 - Math.exp(-(to - this.startedAt) / TAU_MS);
    const scale = warm > 0 ? 1 / warm : 0;
    return { bytesPerSec: this.bytesRate * scale, recordsPerSec: this.recordsRate * scale };
  }
}

/** Whether to publish `current` now, given the last publication (if any) and since when the shard's load is measured. */
export function publishDue(
  last: Publication | undefined,
  current: ShardLoad,
  now: number,
  measuredSince: number,
): boolean {
  if (now - measuredSince < WARMUP_MS) return false;
  if (!last) return true;
  if (now - last.at < PUBLISH_EVERY_MS) return false;
  const change = Math.abs(current.bytesPerSec - last.load.bytesPerSec);
  return change > LOAD_STEP_BYTES_PER_SEC && change > MATERIAL_CHANGE * last.load.bytesPerSec;
}

/** Records that arrived in the stream this long before the first answer may still be coming (a reader catching up, or clocks that differ). */
export const ARRIVAL_SLACK_MS = 2_000;

/** A load published with the lease, and when (monotonic ms). */
export interface Publication {
  load: ShardLoad;
  at: number;
}

/** What a held shard keeps for balance: its meter, the last load published, and its lease node's version. */
export class ShardThroughput {
  /**
   * Made at the first answer, started where what it counts starts: started at the take
   * instead, what came before the first answer weighs on the first publications as if it had come after
   * it, by how much depending on when each shard's first answer came and what it held (a shard taken in a
   * hand-over starts after its last holder's checkpoint), so that shards at one rate were told apart.
   */
  private meter: ThroughputMeter | undefined;
  /**
   * Records that arrived at or before this time are backlog, not load: none when the first answer was at the
   * tip; else the newest arrival in it (Kinesis's clock) or, if later, `ARRIVAL_SLACK_MS` before it came
   * (this host's clock: a reader catching up).
   */
  private countAfter = Number.NEGATIVE_INFINITY;
  private lastPublished: Publication | undefined;
  private leaseNodeVersion = 0;

  /** The load last published with the lease, and when (marked as its write is queued, put back if it did not get in). */
  get published(): Publication | undefined {
    return this.lastPublished;
  }

  publication(published: Publication | undefined): void {
    this.lastPublished = published;
  }

  /** The lease node's version as this process last wrote it (0: as created). */
  get leaseVersion(): number {
    return this.leaseNodeVersion;
  }

  leaseWritten(version: number): void {
    this.leaseNodeVersion = version;
  }

  /** Since when the load is measured (monotonic ms): undefined before the first answer. */
  get measuredSince(): number | undefined {
    return this.meter?.startedAt;
  }

  /**
   * An answer at `now` (monotonic) and `wallNow`, with records or none, `millisBehindLatest` behind the tip
   * as Kinesis said (unknown: `undefined`). What counts is what arrived in the stream while the shard is held
   * here, not the backlog read after its take (the checkpoint's lag, or a whole retention period): that is
   * catching up, not the shard's load, and would make a task just handed a shard look hot.
   */
  deliver(
    records: readonly KinesisRecord[],
    millisBehindLatest: number | undefined,
    now: number,
    wallNow: number,
  ): void {
    if (this.meter === undefined) {
      if (millisBehindLatest === 0) {
        // At the tip: whatever comes next arrived after this answer.
        this.meter = new ThroughputMeter(now);
      } else {
        let newest = Number.NEGATIVE_INFINITY;
        for (const record of records) newest = Math.max(newest, record.arrivalMs);
        this.countAfter = Math.max(newest, wallNow - ARRIVAL_SLACK_MS);
        this.meter = new ThroughputMeter(now - Math.max(0, wallNow - this.countAfter));
      }
      return;
    }
    let counted = 0;
    let bytes = 0;
    for (const record of records) {
      if (record.arrivalMs <= this.countAfter) continue;
      counted += 1;
      bytes += recordBytes(record);
    }
    this.meter.record(counted, bytes, now);
  }

  /** The smoothed load at `now`: none before the first delivery. */
  load(now: number): ShardLoad {
    return this.meter?.at(now) ?? { bytesPerSec: 0, recordsPerSec: 0 };
  }
}

/** Rounds a load for storage: whole bytes/s, records/s to a hundredth. */
export function storedLoad(load: ShardLoad): ShardLoad {
  return { bytesPerSec: Math.round(load.bytesPerSec), recordsPerSec: Math.round(load.recordsPerSec * 100) / 100 };
}
