/**
 * How often one shard's reader may call GetRecords: a budget of calls per second (Kinesis allows 5 per shard,
 * shared by every application reading the stream), and an adaptive back-off below it. A throttle halves the
 * allowed rate, which then stays there for a while and climbs back to the budget slowly (additive increase,
 * multiplicative decrease), so readers of several applications settle below the shard's limit together
 * instead of retrying in step. Pure: the caller passes the time (monotonic ms).
 */

export interface ReadRateOptions {
  /** Calls per second when nothing was throttled (`maxGetRecordsPerSecond`). */
  budgetPerSecond: number;
  /** The rate never goes below this (a shard is still read, if slowly). */
  floorPerSecond?: number;
  /** After a throttle, the halved rate holds this long before it climbs. */
  holdMs?: number;
  /** Then it climbs back to the budget in this long (linearly). */
  climbMs?: number;
}

/** One call per 2 s at the lowest: a shard refused for a long while is still tried (and its reader seen alive). */
export const FLOOR_PER_SECOND = 0.5;
export const HOLD_MS = 2_000;
export const CLIMB_MS = 10_000;

export class ReadRate {
  readonly budget: number;
  private readonly floor: number;
  private readonly holdMs: number;
  private readonly climbMs: number;
  /** The rate right after the last throttle, and when it came; none yet: the budget holds. */
  private lowered: { rate: number; at: number } | undefined;
  private lastCallAt = -Infinity;

  constructor(options: ReadRateOptions) {
    this.budget = options.budgetPerSecond;
    this.floor = Math.min(this.budget, options.floorPerSecond ?? FLOOR_PER_SECOND);
    this.holdMs = options.holdMs ?? HOLD_MS;
    this.climbMs = options.climbMs ?? CLIMB_MS;
  }

  /** Calls per second allowed at `now`: the budget, or less for a while after a throttle. */
  rateAt(now: number): number {
    const lowered = this.lowered;
    if (!lowered) return this.budget;
    const climbed = (now - lowered.at - this.holdMs) / this.climbMs;
    if (climbed >= 1) {
      this.lowered = undefined;
      return this.budget;
    }
    return lowered.rate + (this.budget - lowered.rate) * Math.max(0, climbed);
  }

  /** The earliest time the next call may be sent: one gap of the allowed rate after the last one. */
  nextCallAt(now: number): number {
    return this.lastCallAt + 1000 / this.rateAt(now);
  }

  /** A call is sent at `now`. */
  called(now: number): void {
    this.lastCallAt = now;
  }

  /** The call sent last was refused for throughput: halve the rate the reader had. */
  throttled(now: number): void {
    this.lowered = { rate: Math.max(this.floor, this.rateAt(now) / 2), at: now };
  }
}
