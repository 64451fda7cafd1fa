/**
 * Take/release loops on the assignment side, whatever their cause (a checkpoint that says the shard is done
 * while the assignment says read it, a start that fails at once, two tasks that disagree on shares): a shard
 * whose lease this process took and lost again LOOP_AFTER times in a row, each time before holding it for
 * `briefMs`, is not taken again for a while (doubling up to LOOP_BACKOFF_MS.max), and each time the loop is
 * reported (the reporter rate-limits). Holding the shard for `briefMs` ends the loop. Starts that failed
 * have their own back-off and report (HeldShards): their loop is theirs, not counted here.
 */

export const LOOP_AFTER = 3;
export const LOOP_BACKOFF_MS = { initial: 1_000, max: 30_000 };
/** A tenure shorter than this (and at least this) is brief, counting towards a loop. */
export const BRIEF_TENURE_MS = 5_000;

interface Tenure {
  takenAt: number;
  /** Brief tenures of this shard in a row, before the current one. */
  brief: number;
  /** The current tenure lasted `briefMs` (it is no loop). */
  steady: boolean;
  retryAt: number;
}

export interface LeaseChurnDeps {
  clock(): number;
  /** A loop found: the shard is left alone for `backoffMs`. */
  report(shardId: string, message: string): void;
  /** How long a tenure must last not to count as brief; at least BRIEF_TENURE_MS. */
  briefMs?: number;
}

export class LeaseChurn {
  private readonly tenures = new Map<string, Tenure>();
  private readonly briefMs: number;

  constructor(private readonly deps: LeaseChurnDeps) {
    this.briefMs = Math.max(BRIEF_TENURE_MS, deps.briefMs ?? 0);
  }

  /** False while the shard is left alone after a loop. */
  mayTake(shardId: string): boolean {
    return (this.tenures.get(shardId)?.retryAt ?? 0) <= this.deps.clock();
  }

  /**
   * What the round sees at its start: shards held here (a tenure that reached `briefMs` is steady), and
   * which shards sit in a start back-off (their loop is counted and reported by HeldShards).
   */
  observe(held: Iterable<string>, startBackingOff: (shardId: string) => boolean): void {
    const now = this.deps.clock();
    const holding = new Set(held);
    for (const [shardId, tenure] of this.tenures) {
      if (holding.has(shardId)) {
        if (now - tenure.takenAt >= this.briefMs) tenure.steady = true;
      } else if (startBackingOff(shardId)) {
        this.tenures.delete(shardId);
      } else if (tenure.steady || now - Math.max(tenure.takenAt, tenure.retryAt) >= 10 * this.briefMs) {
        // Let go after a steady tenure, or not taken again for long: no loop to remember.
        this.tenures.delete(shardId);
      }
    }
  }

  /** The lease on `shardId` was taken here (acquired, or found ours and read). */
  taken(shardId: string): void {
    const now = this.deps.clock();
    const before = this.tenures.get(shardId);
    const brief = before && !before.steady ? before.brief + 1 : 0;
    let retryAt = 0;
    if (brief >= LOOP_AFTER) {
      const backoffMs = Math.min(LOOP_BACKOFF_MS.max, LOOP_BACKOFF_MS.initial * 2 ** (brief - LOOP_AFTER));
      retryAt = now + backoffMs;
      this.deps.report(
        shardId,
        `the lease on ${shardId} was taken and lost again ${brief} times in a row, each time within ${Math.round(this.briefMs / 1000)} s (a take/release loop: the log lines on ${shardId} before this one say why); not taking it again for ${Math.round(backoffMs / 1000)} s, doubling up to ${Math.round(LOOP_BACKOFF_MS.max / 1000)} s while the loop lasts`,
      );
    }
    this.tenures.set(shardId, { takenAt: now, brief, steady: false, retryAt });
  }

  /** A new session: its leases are new, and so is their history. */
  clear(): void {
    this.tenures.clear();
  }
}
