/** The record-age decision and its once-a-minute summary per shard. */
import fc from 'fast-check';
import { isTooOld, recordAgeMs, TooOldLog } from '../../../src/held/recordAge';

const WALL = 1_765_000_000_000;

describe('isTooOld', () => {
  it('is true exactly when a limit is set and the age is over it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        fc.option(fc.integer({ min: 1_000, max: 365 * 86_400_000 }), { nil: undefined }),
        (ageMs, limit) => {
          expect(isTooOld(WALL - ageMs, WALL, limit)).toBe(limit !== undefined && ageMs > limit);
        },
      ),
    );
  });

  it('never for a record of unknown arrival (0) or arriving ahead of this clock', () => {
    expect(recordAgeMs(0, WALL)).toBeUndefined();
    expect(isTooOld(0, WALL, 1_000)).toBe(false);
    expect(recordAgeMs(WALL + 5_000, WALL)).toBe(0);
    expect(isTooOld(WALL + 5_000, WALL, 1_000)).toBe(false);
  });
});

describe('TooOldLog', () => {
  it("logs a shard's first record at once, then the others together once a minute: how many and the oldest", () => {
    const log = new TooOldLog(60_000);
    expect(log.add('s-1', 5_000, 0)).toEqual({ key: 's-1', count: 1, oldestMs: 5_000 });
    expect(log.add('s-1', 9_000, 1_000)).toBeUndefined();
    expect(log.add('s-1', 7_000, 2_000)).toBeUndefined();
    // Another shard has its own minute.
    expect(log.add('s-2', 3_000, 2_000)).toEqual({ key: 's-2', count: 1, oldestMs: 3_000 });
    expect(log.due(59_999)).toEqual([]);
    expect(log.due(60_000)).toEqual([{ key: 's-1', count: 2, oldestMs: 9_000 }]);
    expect(log.add('s-1', 1_500, 61_000)).toBeUndefined();
    expect(log.add('s-1', 1_200, 120_000)).toEqual({ key: 's-1', count: 2, oldestMs: 1_500 });
    // Quiet for a minute: forgotten, and the next one is logged at once again.
    log.due(200_000);
    expect(log.active).toBe(false);
    expect(log.add('s-1', 2_000, 200_500)).toEqual({ key: 's-1', count: 1, oldestMs: 2_000 });
  });

  it('reports every record set aside exactly once, and a shard at most once per interval', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.constantFrom('a', 'b', 'c'),
            ageMs: fc.integer({ min: 1, max: 1e6 }),
            step: fc.integer({ min: 0, max: 30_000 }),
            poll: fc.boolean(),
          }),
          { maxLength: 200 },
        ),
        (events) => {
          const log = new TooOldLog(60_000);
          let now = 0;
          const lines: { key: string; count: number; at: number }[] = [];
          const added = new Map<string, number>();
          for (const { key, ageMs, step, poll } of events) {
            now += step;
            added.set(key, (added.get(key) ?? 0) + 1);
            const line = log.add(key, ageMs, now);
            if (line) lines.push({ ...line, at: now });
            if (poll) for (const l of log.due(now)) lines.push({ ...l, at: now });
          }
          for (const l of log.due(now + 60_000)) lines.push({ ...l, at: now + 60_000 });
          for (const [key, count] of added)
            expect(lines.filter((l) => l.key === key).reduce((sum, l) => sum + l.count, 0)).toBe(count);
          for (const key of added.keys()) {
            const at = lines.filter((l) => l.key === key).map((l) => l.at);
            for (let i = 1; i < at.length; i += 1) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(60_000);
          }
        },
      ),
    );
  });
});
