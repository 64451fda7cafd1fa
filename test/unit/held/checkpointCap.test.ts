/** The cap on periodic checkpoint writes: the share, the allowance, and which changed checkpoints go first. */
import fc from 'fast-check';
import {
  allowanceCeiling,
  emptyAllowance,
  type PendingCheckpoint,
  pickCheckpoints,
  refill,
  spend,
  taskShare,
} from '../../../src/held/checkpointCap';

const shardId = (i: number) => `shardId-${String(i).padStart(12, '0')}`;

/** Distinct shards, each last written at some time. */
const pendingArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 5_000 }), { minLength: 0, maxLength: 60 })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((id) =>
        fc.integer({ min: 0, max: 100_000 }).map((writtenAt) => ({ shardId: shardId(id), writtenAt })),
      ),
    ),
  )
  .map((pending): PendingCheckpoint[] => pending);

describe('taskShare', () => {
  it('is the budget over the members, at least one write a second', () => {
    expect(taskShare(1_000, 8)).toBe(125);
    expect(taskShare(10, 40)).toBe(1);
    expect(taskShare(10, 0)).toBe(10);
  });
});

describe('pickCheckpoints', () => {
  it('never picks more than the allowance, nor a shard twice, nor one not pending', () => {
    fc.assert(
      fc.property(pendingArb, fc.double({ min: 0, max: 80, noNaN: true }), (pending, allowance) => {
        const picked = pickCheckpoints(pending, allowance);
        expect(picked.length).toBe(Math.min(pending.length, Math.floor(allowance)));
        expect(new Set(picked).size).toBe(picked.length);
        const ids = new Set(pending.map((p) => p.shardId));
        for (const id of picked) expect(ids.has(id)).toBe(true);
      }),
    );
  });

  it('picks those written longest ago: none left behind was written before one picked', () => {
    fc.assert(
      fc.property(pendingArb, fc.integer({ min: 0, max: 60 }), (pending, allowance) => {
        const picked = new Set(pickCheckpoints(pending, allowance));
        const newestPicked = Math.max(-1, ...pending.filter((p) => picked.has(p.shardId)).map((p) => p.writtenAt));
        for (const p of pending) if (!picked.has(p.shardId)) expect(p.writtenAt).toBeGreaterThanOrEqual(newestPicked);
      }),
    );
  });

  it('writes every one of shards that stay pending within ceil(pending / allowance) flushes', () => {
    fc.assert(
      fc.property(pendingArb, fc.integer({ min: 1, max: 20 }), (start, allowance) => {
        const writtenAt = new Map(start.map((p) => [p.shardId, p.writtenAt]));
        const flushes = Math.ceil(start.length / allowance);
        const written = new Set<string>();
        for (let flush = 0; flush < flushes; flush += 1) {
          // Busy shards: every one is still pending at every flush.
          const pending = [...writtenAt].map(([id, at]) => ({ shardId: id, writtenAt: at }));
          for (const id of pickCheckpoints(pending, allowance)) {
            writtenAt.set(id, 1_000_000 + flush);
            written.add(id);
          }
        }
        expect(written.size).toBe(start.length);
      }),
    );
  });
});

describe('the allowance', () => {
  it('refills at the share per second up to one interval of it (a second at least), at least one write', () => {
    expect(allowanceCeiling(125, 2_000)).toBe(250);
    expect(allowanceCeiling(1, 200)).toBe(1);
    // A short interval holds a second's worth: a late timer loses nothing.
    expect(allowanceCeiling(5, 100)).toBe(5);
    let a = emptyAllowance(0);
    expect(a.writes).toBe(0);
    a = refill(a, 1_000, 5, 2_000);
    expect(a.writes).toBeCloseTo(5);
    a = refill(a, 60_000, 5, 2_000);
    expect(a.writes).toBe(10);
  });

  it('in any window of flushes, writes never exceed the share times its length plus one ceiling', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 500, noNaN: true }),
        fc.integer({ min: 10, max: 5_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 3_000 })), {
          maxLength: 60,
        }),
        (share, intervalMs, steps) => {
          let now = 0;
          let allowance = emptyAllowance(now);
          // After each flush: when, and the writes so far.
          const marks: [number, number][] = [[0, 0]];
          let written = 0;
          for (const [elapsed, pending] of steps) {
            now += elapsed;
            allowance = refill(allowance, now, share, intervalMs);
            const n = pickCheckpoints(
              Array.from({ length: pending }, (_, i) => ({ shardId: shardId(i), writtenAt: 0 })),
              allowance.writes,
            ).length;
            allowance = spend(allowance, n);
            written += n;
            for (const [at, before] of marks)
              expect(written - before).toBeLessThanOrEqual(
                (share * (now - at)) / 1000 + allowanceCeiling(share, intervalMs) + 1e-6,
              );
            marks.push([now, written]);
          }
        },
      ),
    );
  });
});
