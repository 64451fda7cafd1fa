/**
 * The checkpoint schedule on a manual clock: periodic flushes stay within the task's share of
 * `maxCheckpointWritesPerSecond`, every busy shard is still written, and an on-demand flush is not capped.
 */
import { type PendingCheckpoint, pickCheckpoints } from '../../../src/held/checkpointCap';
import type { CappedFlush } from '../../../src/held/heldShards';
import { CheckpointSchedule, type CheckpointWork } from '../../../src/stream/checkpointSchedule';
import { ManualClock } from '../fakes/manualClock';

/** Shards whose checkpoints change all the time: every one is pending at every flush. */
class BusyShards implements CheckpointWork<'session'> {
  readonly writtenAt = new Map<string, number>();
  /** Every write, with its time. */
  readonly writes: { shardId: string; at: number }[] = [];
  uncappedFlushes = 0;

  constructor(
    private readonly clock: ManualClock,
    shards: number,
  ) {
    for (let i = 0; i < shards; i += 1) this.writtenAt.set(`shard-${i}`, 0);
  }

  maintain(): void {}

  async flush(): Promise<void> {
    this.uncappedFlushes += 1;
    for (const shardId of this.writtenAt.keys()) this.write(shardId);
  }

  flushCapped(_: 'session', allowance: number): CappedFlush {
    const pending: PendingCheckpoint[] = [...this.writtenAt].map(([shardId, writtenAt]) => ({ shardId, writtenAt }));
    const picked = pickCheckpoints(pending, allowance);
    for (const shardId of picked) this.write(shardId);
    return {
      written: picked.length,
      deferred: pending.length - picked.length,
      oldestWrittenAt: Math.min(...pending.map((p) => p.writtenAt)),
      done: Promise.resolve(),
    };
  }

  private write(shardId: string): void {
    this.writtenAt.set(shardId, this.clock.now());
    this.writes.push({ shardId, at: this.clock.now() });
  }
}

function setUp(shards: number, intervalMs: number, share: () => number) {
  const clock = new ManualClock();
  const work = new BusyShards(clock, shards);
  const deferred: number[] = [];
  const schedule = new CheckpointSchedule(clock, intervalMs, work, () => 'session' as const, {
    share,
    deferred: (flush) => void deferred.push(flush.deferred),
  });
  schedule.start();
  return { clock, work, deferred, schedule };
}

describe('CheckpointSchedule', () => {
  it('keeps periodic writes within the share, and writes every busy shard in turn', async () => {
    // 40 busy shards, a flush every 200 ms: 200 writes a second uncapped; the share is 5.
    const { clock, work, deferred } = setUp(40, 200, () => 5);
    await clock.advance(20_000);
    const perSecond = [];
    for (let s = 0; s < 20; s += 1)
      perSecond.push(work.writes.filter((w) => w.at > s * 1_000 && w.at <= (s + 1) * 1_000).length);
    // At most the share each second, plus the one write a full allowance may hold.
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(6);
    expect(work.writes.length).toBeGreaterThanOrEqual(5 * 20 - 1);
    expect(work.writes.length).toBeLessThanOrEqual(5 * 20 + 1);
    // 40 shards at 5 a second: none goes more than about 8 s unwritten.
    for (const at of work.writtenAt.values()) expect(at).toBeGreaterThan(20_000 - 8_400);
    expect(deferred.length).toBe(100);
    expect(deferred.every((d) => d >= 39)).toBe(true);
  });

  it('writes as often as before when the share allows it', async () => {
    const { clock, work, deferred } = setUp(4, 500, () => 125);
    await clock.advance(10_000);
    expect(work.writes.length).toBe(4 * 20);
    expect(deferred).toEqual([]);
  });

  it('follows the share as it changes (members joining)', async () => {
    let share = 10;
    const { clock, work } = setUp(100, 100, () => share);
    await clock.advance(10_000);
    const before = work.writes.length;
    share = 2;
    await clock.advance(10_000);
    expect(before).toBeGreaterThanOrEqual(99);
    expect(before).toBeLessThanOrEqual(101);
    expect(work.writes.length - before).toBeGreaterThanOrEqual(19);
    expect(work.writes.length - before).toBeLessThanOrEqual(21);
  });

  it('an on-demand flush (deactivate, exit) writes every changed checkpoint at once', async () => {
    const { work, schedule } = setUp(1_000, 2_000, () => 1);
    await schedule.flush();
    expect(work.uncappedFlushes).toBe(1);
    expect(work.writes.length).toBe(1_000);
  });
});
