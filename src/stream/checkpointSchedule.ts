/**
 * When held shards move on and checkpoints are written: every MAINTENANCE_MS the shards whose wait is over
 * move (drained to SHARD_END, handed over, given back), every `checkpointIntervalMs` the changed
 * checkpoints are written within this task's share of `maxCheckpointWritesPerSecond` (held/checkpointCap.ts),
 * and at once, every one, on demand (deactivate, exit). What is written is HeldShards' part.
 */
import type { Scheduler } from '../core/scheduler';
import { emptyAllowance, refill, spend, type WriteAllowance } from '../held/checkpointCap';
import type { CappedFlush } from '../held/heldShards';

export const MAINTENANCE_MS = 100;

export interface CheckpointWork<Sess> {
  /** Moves shards whose wait is over. */
  maintain(session: Sess): void;
  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  flush(session: Sess): Promise<void>;
  /** Writes at most `allowance` changed checkpoints (the rest wait); says what it did. */
  flushCapped(session: Sess, allowance: number): CappedFlush;
}

export interface CheckpointCap {
  /** This task's share of the application's budget now, in writes per second. */
  share(): number;
  /** A periodic flush left changed checkpoints for later. */
  deferred(flush: CappedFlush, share: number): void;
}

export class CheckpointSchedule<Sess> {
  private readonly timers: (() => void)[] = [];
  /** The periodic writes this task may still make (refilled at its share per second). */
  private allowance: WriteAllowance | undefined;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly checkpointIntervalMs: number,
    private readonly work: CheckpointWork<Sess>,
    /** The session to write under, if any. */
    private readonly session: () => Sess | undefined,
    private readonly cap: CheckpointCap,
  ) {}

  start(): void {
    this.allowance = emptyAllowance(this.scheduler.now());
    this.timers.push(
      this.scheduler.every(MAINTENANCE_MS, () => {
        const session = this.session();
        if (session) this.work.maintain(session);
      }),
      this.scheduler.every(this.checkpointIntervalMs, () => void this.periodic()),
    );
  }

  /** The periodic flush: as many changed checkpoints as the allowance holds, those stored longest ago first. */
  private periodic(): Promise<void> {
    const session = this.session();
    if (!session) return Promise.resolve();
    const now = this.scheduler.now();
    const share = this.cap.share();
    const interval = this.checkpointIntervalMs;
    const allowance = refill(this.allowance ?? emptyAllowance(now), now, share, interval);
    const flush = this.work.flushCapped(session, allowance.writes);
    this.allowance = spend(allowance, flush.written);
    if (flush.deferred > 0) this.cap.deferred(flush, share);
    return flush.done;
  }

  /** Writes every changed checkpoint now, uncapped (nothing without a session). */
  async flush(): Promise<void> {
    const session = this.session();
    if (session) await this.work.flush(session);
  }

  stop(): void {
    for (const cancel of this.timers.splice(0)) cancel();
  }
}
