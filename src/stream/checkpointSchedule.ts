/**
 * When held shards move on and checkpoints are written: every MAINTENANCE_MS the shards whose wait is over
 * move (drained to SHARD_END, handed over, given back), every `checkpointIntervalMs` the changed
 * checkpoints are written, and at once on demand (deactivate, exit). What is written is HeldShards' part.
 */
import type { Scheduler } from '../core/scheduler';

export const MAINTENANCE_MS = 100;

export interface CheckpointWork<Sess> {
  /** Moves shards whose wait is over. */
  maintain(session: Sess): void;
  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  flush(session: Sess): Promise<void>;
}

export class CheckpointSchedule<Sess> {
  private readonly timers: (() => void)[] = [];

  constructor(
    private readonly scheduler: Scheduler,
    private readonly checkpointIntervalMs: number,
    private readonly work: CheckpointWork<Sess>,
    /** The session to write under, if any. */
    private readonly session: () => Sess | undefined,
  ) {}

  start(): void {
    this.timers.push(
      this.scheduler.every(MAINTENANCE_MS, () => {
        const session = this.session();
        if (session) this.work.maintain(session);
      }),
      this.scheduler.every(this.checkpointIntervalMs, () => void this.flush()),
    );
  }

  /** Writes every changed checkpoint now (nothing without a session). */
  async flush(): Promise<void> {
    const session = this.session();
    if (session) await this.work.flush(session);
  }

  stop(): void {
    for (const cancel of this.timers.splice(0)) cancel();
  }
}
