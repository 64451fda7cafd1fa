/**
 * Planned hand-overs, timed from the giver's side: when one begins (the giver's `handing <shard> over` log),
 * whether Storm acked everything the giver had in flight before its deadline (`handoffTimeoutMs` later), and
 * which re-emits that excuses. The promise checked (README, deploy checklist): a planned hand-over re-emits
 * nothing when every record the giver emitted from the shard is acked, re-emits of failed ones included,
 * within `handoffTimeoutMs` of the hand-over's start. When one is not, the giver checkpoints before its
 * oldest unacked record and releases; the taker then re-emits from there up to the last record the giver
 * emitted, acked ones included, and only those.
 *
 * Also the deploy check (`start-handover`): tasks that start at once, as a deploy starts them, each take
 * their share of the declared tasks from the start, so no lease moves before the first reshard.
 */
import type { InvariantChecker } from './invariants';
import type { SpoutProcess } from './spoutProcess';
import type { NodeChange } from './zooKeeper/zkServer';

export interface HandOverStats {
  /** Hand-overs begun (a giver's `handing` log). */
  begun: number;
  /** Of those, the ones whose giver still had an unacked record at its deadline. */
  late: number;
  /** Re-emits of acked records that a late hand-over explains. */
  excused: number;
}

const HANDING = /^handing (\S+) over\b/;

export class HandOvers {
  readonly stats: HandOverStats = { begun: 0, late: 0, excused: 0 };
  /** Per shard, per giver: hand-overs begun and not yet given back (to tell a give-back announced from one not). */
  private readonly announced = new Map<string, number>();
  /** Per shard, the ranges of records a late hand-over lets the taker re-emit. */
  private readonly excusedRanges = new Map<string, { from: bigint; to: bigint }[]>();
  /** Until the first reshard of a deploy (tasks started at once): no hand-over is expected. */
  startWindowOpen = false;

  constructor(
    private readonly checker: InvariantChecker,
    private readonly handoffTimeoutMs: number,
    private readonly after: (ms: number, run: () => void) => void,
    private readonly trace: (what: string) => void,
    /** Hand-overs are timed only in planned runs (a crash or an expiry hands nothing over). */
    private readonly planned: boolean,
  ) {
    checker.isExcused = (shardId, rank) => this.isExcused(shardId, rank);
  }

  /** A log line of `giver`: the start of a hand-over is timed from it. */
  onLog(giver: SpoutProcess, message: string): void {
    const match = HANDING.exec(message);
    if (!match || !this.planned) return;
    const shardId = match[1];
    this.stats.begun += 1;
    const key = `${giver.name} ${shardId}`;
    this.announced.set(key, (this.announced.get(key) ?? 0) + 1);
    if (this.startWindowOpen)
      this.checker.fail(
        'start-handover',
        `${giver.name} hands ${shardId} over before any reshard, though every task started at once: a starting task takes its share of the declared tasks`,
      );
    this.after(this.handoffTimeoutMs, () => {
      const span = giver.held.unackedSpan(shardId);
      if (!span) return;
      this.stats.late += 1;
      this.trace(
        `hand-over of ${shardId} by ${giver.name} past its deadline (${this.handoffTimeoutMs} ms) with records unacked: the taker may re-emit from the oldest of them to the last one emitted`,
      );
      const ranges = this.excusedRanges.get(shardId) ?? [];
      ranges.push(span);
      this.excusedRanges.set(shardId, ranges);
    });
  }

  /**
   * A lease node deleted by its own session, the shard not finished: a give-back. In planned runs every one
   * must have been announced, or the hand-overs are not timed (this file reads the giver's log line).
   */
  onLeaseChange(change: NodeChange, shardId: string, finished: boolean, holderName: string | undefined): void {
    if (!this.planned || change.after || !change.before || finished) return;
    if (change.by === undefined || change.by !== change.before.ephemeralOwner) return;
    const key = `${holderName} ${shardId}`;
    const open = this.announced.get(key) ?? 0;
    if (open > 0) {
      this.announced.set(key, open - 1);
      return;
    }
    this.checker.fail(
      'harness',
      `${holderName ?? `session ${change.by}`} gave ${shardId} back without a "handing ${shardId} over" log line: the simulation times hand-overs from it (test/sim/handOvers.ts)`,
    );
  }

  private isExcused(shardId: string, rank: bigint): boolean {
    const excused = (this.excusedRanges.get(shardId) ?? []).some((r) => r.from <= rank && rank <= r.to);
    if (excused) this.stats.excused += 1;
    return excused;
  }
}
