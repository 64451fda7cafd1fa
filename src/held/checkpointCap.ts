/**
 * The cap on periodic checkpoint writes (config `maxCheckpointWritesPerSecond`): the application's budget,
 * shared among the members reading the stream; how many writes this task may make now; which changed
 * checkpoints they go to. Pure: values in, values out. Only the periodic flush is capped: the writes a
 * guarantee waits on (the last checkpoint of a shard handed over, SHARD_END, deactivate and exit, every
 * write with `delivery: "at-most-once"`) are made at once (heldShards.ts). Deferring a write only leaves
 * the stored checkpoint older (more re-emitted after a crash), never skips a record.
 */

/** A held shard whose checkpoint moved since it was last stored, and when (monotonic ms) that was. */
export interface PendingCheckpoint {
  readonly shardId: string;
  readonly writtenAt: number;
}

/** This task's share of the application's budget, in writes per second: budget ÷ members, at least 1. */
export function taskShare(budgetPerSecond: number, members: number): number {
  return Math.max(1, budgetPerSecond / Math.max(1, members));
}

/** Writes this task may make now (fractions carry over), as of `at` (monotonic ms). */
export interface WriteAllowance {
  readonly writes: number;
  readonly at: number;
}

/**
 * The most an allowance holds: one flush interval's worth of the share, or one second's if the interval is
 * shorter (a timer that fires late loses nothing then), and at least one write.
 */
export function allowanceCeiling(sharePerSecond: number, intervalMs: number): number {
  return Math.max(1, (sharePerSecond * Math.max(intervalMs, 1_000)) / 1000);
}

/** No writes yet at `now` (a task's first flush has what its share gave since it started). */
export function emptyAllowance(now: number): WriteAllowance {
  return { writes: 0, at: now };
}

/** The allowance at `now`: refilled at the share per second since it was last looked at, up to its ceiling. */
export function refill(
  allowance: WriteAllowance,
  now: number,
  sharePerSecond: number,
  intervalMs: number,
): WriteAllowance {
  const elapsed = Math.max(0, now - allowance.at);
  const writes = Math.min(
    allowanceCeiling(sharePerSecond, intervalMs),
    allowance.writes + (sharePerSecond * elapsed) / 1000,
  );
  return { writes, at: Math.max(now, allowance.at) };
}

/** The allowance after `written` writes. */
export function spend(allowance: WriteAllowance, written: number): WriteAllowance {
  return { writes: Math.max(0, allowance.writes - written), at: allowance.at };
}

/**
 * Which pending checkpoints to write now: at most `allowance` whole writes, those stored longest ago first
 * (ties by shard id). A written checkpoint goes to the back, so while the same shards stay pending each is
 * written within ceil(pending ÷ allowance) flushes: none starves.
 */
export function pickCheckpoints(pending: readonly PendingCheckpoint[], allowance: number): string[] {
  const most = Math.max(0, Math.floor(allowance));
  if (most >= pending.length) return pending.map((p) => p.shardId);
  return [...pending]
    .sort((a, b) => a.writtenAt - b.writtenAt || (a.shardId < b.shardId ? -1 : a.shardId > b.shardId ? 1 : 0))
    .slice(0, most)
    .map((p) => p.shardId);
}
