/**
 * The record-age limit (`maxRecordAgeMs`, as Lambda's `MaximumRecordAgeInSeconds`): which records are too
 * old to emit, and what is logged of those set aside, once a minute per shard at most. No clock inside.
 */

/** How often a shard's records set aside for their age are logged at most. */
export const TOO_OLD_LOG_INTERVAL_MS = 60_000;

/**
 * The record's age at `wallNow` (epoch ms) by its arrival time (a KPL user record has its aggregate's);
 * undefined when Kinesis gave none (0). An arrival ahead of this host's clock is of age 0.
 */
export function recordAgeMs(arrivalMs: number, wallNow: number): number | undefined {
  return arrivalMs > 0 ? Math.max(0, wallNow - arrivalMs) : undefined;
}

/** Older than the limit (when one is set); a record of unknown age is never too old. */
export function isTooOld(arrivalMs: number, wallNow: number, maxAgeMs: number | undefined): boolean {
  if (maxAgeMs === undefined) return false;
  const age = recordAgeMs(arrivalMs, wallNow);
  return age !== undefined && age > maxAgeMs;
}

/** What one log line says of a shard: the records set aside since its previous line, and the oldest age. */
export interface TooOldSummary {
  key: string;
  count: number;
  oldestMs: number;
}

interface Pending {
  count: number;
  oldestMs: number;
  loggedAt: number | undefined;
}

/**
 * Counts the records set aside per shard (`key`) between log lines: a shard's first one is logged at once,
 * the next ones together once its interval has passed, so that a burst is one line a minute and its tail is
 * not lost (`due`, asked on every `next`).
 */
export class TooOldLog {
  private readonly shards = new Map<string, Pending>();

  constructor(private readonly intervalMs = TOO_OLD_LOG_INTERVAL_MS) {}

  /** True while some shard has records set aside or a line within its interval (then `due` has work). */
  get active(): boolean {
    return this.shards.size > 0;
  }

  /** A record of `ageMs` set aside at `now` (monotonic ms): the line to log now, if one is due. */
  add(key: string, ageMs: number, now: number): TooOldSummary | undefined {
    let pending = this.shards.get(key);
    if (!pending) {
      pending = { count: 0, oldestMs: 0, loggedAt: undefined };
      this.shards.set(key, pending);
    }
    pending.count += 1;
    pending.oldestMs = Math.max(pending.oldestMs, ageMs);
    return this.quiet(pending, now) ? undefined : this.take(key, pending, now);
  }

  /** The lines due at `now`: shards with records set aside since their last line, an interval or more ago. */
  due(now: number): TooOldSummary[] {
    const lines: TooOldSummary[] = [];
    for (const [key, pending] of this.shards) {
      if (this.quiet(pending, now)) continue;
      if (pending.count > 0) lines.push(this.take(key, pending, now));
      else this.shards.delete(key);
    }
    return lines;
  }

  private quiet(pending: Pending, now: number): boolean {
    return pending.loggedAt !== undefined && now - pending.loggedAt < this.intervalMs;
  }

  private take(key: string, pending: Pending, now: number): TooOldSummary {
    const line = { key, count: pending.count, oldestMs: pending.oldestMs };
    pending.count = 0;
    pending.oldestMs = 0;
    pending.loggedAt = now;
    return line;
  }
}
