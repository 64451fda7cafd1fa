/**
 * When this process may take a shard's lease again. A shard whose start failed (an unreadable or corrupt
 * checkpoint, errors) backs off at once; a shard taken and given back quickly, over and over (whatever the
 * cause: a checkpoint that sends it straight back, a hand-over undone at once), backs off from the third
 * short tenure in a row. Either way exponential and capped, so no lease is taken and given back in a loop.
 */
export const RETAKE_BACKOFF_MS = { initial: 1_000, max: 60_000 };
/** A tenure shorter than this (taken to given back) counts towards a loop. */
export const SHORT_TENURE_MS = 5_000;
/** Short tenures in a row from which the shard backs off. */
export const LOOP_AFTER = 3;

interface ShardBackoff {
  startFailures: number;
  shortTenures: number;
  retryAt: number;
}

export function backoffMs(failures: number): number {
  return Math.min(RETAKE_BACKOFF_MS.max, RETAKE_BACKOFF_MS.initial * 2 ** Math.max(0, failures - 1));
}

export class RetakeBackoff {
  private readonly byShard = new Map<string, ShardBackoff>();

  constructor(private readonly now: () => number) {}

  private entry(shardId: string): ShardBackoff {
    let entry = this.byShard.get(shardId);
    if (!entry) {
      entry = { startFailures: 0, shortTenures: 0, retryAt: -Infinity };
      this.byShard.set(shardId, entry);
    }
    return entry;
  }

  /** True while the shard is left alone here. */
  backingOff(shardId: string): boolean {
    return (this.byShard.get(shardId)?.retryAt ?? -Infinity) > this.now();
  }

  /** The shard's start failed: how long (ms) it is left alone. */
  startFailed(shardId: string): number {
    const entry = this.entry(shardId);
    entry.startFailures += 1;
    const wait = backoffMs(entry.startFailures);
    entry.retryAt = this.now() + wait;
    return wait;
  }

  /** The shard's checkpoint was read: earlier start failures are over. */
  started(shardId: string): void {
    const entry = this.byShard.get(shardId);
    if (entry) entry.startFailures = 0;
    this.prune(shardId);
  }

  /**
   * The lease was given back after being held `heldMs`. A long tenure ends a loop; a short one counts, and
   * from the LOOP_AFTER-th in a row the shard waits. Returns the short tenures in a row and the wait, or
   * undefined when this is no loop.
   */
  gaveBack(shardId: string, heldMs: number): { inARow: number; waitMs: number } | undefined {
    if (heldMs >= SHORT_TENURE_MS) {
      const entry = this.byShard.get(shardId);
      if (entry) entry.shortTenures = 0;
      this.prune(shardId);
      return undefined;
    }
    const entry = this.entry(shardId);
    entry.shortTenures += 1;
    if (entry.shortTenures < LOOP_AFTER) return undefined;
    const waitMs = backoffMs(entry.shortTenures - LOOP_AFTER + 1);
    entry.retryAt = Math.max(entry.retryAt, this.now() + waitMs);
    return { inARow: entry.shortTenures, waitMs };
  }

  private prune(shardId: string): void {
    const entry = this.byShard.get(shardId);
    if (entry && entry.startFailures === 0 && entry.shortTenures === 0 && entry.retryAt <= this.now())
      this.byShard.delete(shardId);
  }
}
