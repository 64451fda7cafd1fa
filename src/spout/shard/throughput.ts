/**
 * A held shard's throughput: bytes/s and records/s of what its reader delivers, smoothed (an exponentially
 * weighted moving average over `TAU_MS`), and when it is worth publishing with the lease (config `balance:
 * "throughput"`): first once it has been measured for a while, then only when it changed materially and
 * at most every `PUBLISH_EVERY_MS`, so that ZooKeeper writes stay few with hundreds of shards.
 */
import type { ShardLoad } from '../../coordination/balance';

/** Smoothing time constant: a step in the rate is 63 % seen after it, 95 % after three times it. */
export const TAU_MS = 10_000;
/** Measured this long before the first publication. */
export const WARMUP_MS = 5_000;
/** Between two publications of one shard, at least this long. */
export const PUBLISH_EVERY_MS = 10_000;
/** A change is material past this fraction of the last published load ... */
export const MATERIAL_CHANGE = 0.2;
/** ... and past this many bytes/s (idle shards' noise is not worth a write). */
export const MATERIAL_BYTES_PER_SEC = 8;

export class ThroughputMeter {
  private bytesRate = 0;
  private recordsRate = 0;
  private lastAt: number;

  constructor(private readonly startedAt: number) {
    this.lastAt = startedAt;
  }

  /** Records delivered at `now` (monotonic ms): `bytes` of them in all. */
  record(records: number, bytes: number, now: number): void {
    this.decayTo(now);
    // Each delivery is an impulse into the average: its weight is 1/TAU per millisecond.
    this.bytesRate += (bytes * 1000) / TAU_MS;
    this.recordsRate += (records * 1000) / TAU_MS;
  }

  /** The smoothed rates at `now`; early on, corrected for the average having started at zero. */
  at(now: number): ShardLoad {
    this.decayTo(now);
    const warm = 1 - Math.exp(-(now - this.startedAt) / TAU_MS);
    const scale = warm > 0.05 ? 1 / warm : 0;
    return { bytesPerSec: this.bytesRate * scale, recordsPerSec: this.recordsRate * scale };
  }

  private decayTo(now: number): void {
    if (now <= this.lastAt) return;
    const keep = Math.exp(-(now - this.lastAt) / TAU_MS);
    this.bytesRate *= keep;
    this.recordsRate *= keep;
    this.lastAt = now;
  }
}

/** Whether to publish `current` now, given the last publication (if any) and when the shard was taken. */
export function publishDue(
  last: { load: ShardLoad; at: number } | undefined,
  current: ShardLoad,
  now: number,
  heldSince: number,
): boolean {
  if (now - heldSince < WARMUP_MS) return false;
  if (!last) return true;
  if (now - last.at < PUBLISH_EVERY_MS) return false;
  const change = Math.abs(current.bytesPerSec - last.load.bytesPerSec);
  return change > MATERIAL_BYTES_PER_SEC && change > MATERIAL_CHANGE * last.load.bytesPerSec;
}

/** Records that arrived in the stream this long before the first delivery still count (clocks differ). */
export const ARRIVAL_SLACK_MS = 2_000;

/** What a held shard keeps for balance: its meter, the last load published, and its lease node's version. */
export class ShardThroughput {
  readonly meter: ThroughputMeter;
  /** Records that arrived before this wall-clock time are backlog, not load (set at the first delivery). */
  countFromWall: number | undefined;
  published: { load: ShardLoad; at: number } | undefined;
  /** The lease node's version as this process last wrote it (0: as created). */
  leaseVersion = 0;

  constructor(readonly heldSince: number) {
    this.meter = new ThroughputMeter(heldSince);
  }
}

/** Rounds a load for storage: whole bytes/s, records/s to a hundredth. */
export function storedLoad(load: ShardLoad): ShardLoad {
  return { bytesPerSec: Math.round(load.bytesPerSec), recordsPerSec: Math.round(load.recordsPerSec * 100) / 100 };
}
