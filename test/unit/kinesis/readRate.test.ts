/**
 * The GetRecords budget and the back-off after a throttle (src/kinesis/readRate.ts), in pure time: the
 * rate never goes over the budget nor under the floor, a throttle halves it for the hold and it climbs back
 * after; and N readers of one shard at 5/N each, starting at any moments, never empty Kinesis's bucket.
 */
import fc from 'fast-check';
import { CLIMB_MS, FLOOR_PER_SECOND, HOLD_MS, ReadRate } from '../../../src/kinesis/readRate';
import { TokenBucket } from '../../helpers/httpFaultProxy';

/** Times of calls made as soon as the rate allows, from `start` until `until`. */
function callsAsAllowed(rate: ReadRate, start: number, until: number): number[] {
  const calls: number[] = [];
  for (let now = start; now < until; ) {
    const at = Math.max(now, rate.nextCallAt(now));
    if (at >= until) break;
    rate.called(at);
    calls.push(at);
    now = at;
  }
  return calls;
}

describe('ReadRate', () => {
  it('without throttles, calls are exactly one budget gap apart', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.1, max: 5, noNaN: true }), (budget) => {
        const calls = callsAsAllowed(new ReadRate({ budgetPerSecond: budget }), 0, 60_000);
        for (let i = 1; i < calls.length; i += 1) expect(calls[i] - calls[i - 1]).toBeCloseTo(1000 / budget, 6);
      }),
      { numRuns: 40 },
    );
  });

  it('whatever the throttles, the rate stays between the floor and the budget and no gap is shorter than the budget allows', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 5, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 30 }),
        (budget, throttleTimes) => {
          const rate = new ReadRate({ budgetPerSecond: budget });
          const throttles = [...throttleTimes].sort((a, b) => a - b);
          let last = -Infinity;
          for (let now = 0; now < 150_000; ) {
            const at = Math.max(now, rate.nextCallAt(now));
            rate.called(at);
            expect(at - last).toBeGreaterThanOrEqual(1000 / budget - 1e-6);
            last = at;
            while (throttles.length > 0 && throttles[0] <= at) {
              throttles.shift();
              rate.throttled(at);
            }
            const r = rate.rateAt(at);
            expect(r).toBeLessThanOrEqual(budget);
            expect(r).toBeGreaterThanOrEqual(Math.min(budget, FLOOR_PER_SECOND) - 1e-9);
            now = at;
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a throttle halves the rate, which holds, climbs back without a jump down, and reaches the budget', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.5, max: 5, noNaN: true }), fc.integer({ min: 1, max: 4 }), (budget, times) => {
        const rate = new ReadRate({ budgetPerSecond: budget });
        let expected = budget;
        for (let i = 0; i < times; i += 1) {
          rate.throttled(1_000);
          expected = Math.max(FLOOR_PER_SECOND, expected / 2);
        }
        expect(rate.rateAt(1_000)).toBeCloseTo(expected, 9);
        expect(rate.rateAt(1_000 + HOLD_MS)).toBeCloseTo(expected, 9);
        let previous = expected;
        for (let t = 1_000 + HOLD_MS; t <= 1_000 + HOLD_MS + CLIMB_MS; t += 1_000) {
          const r = rate.rateAt(t);
          expect(r).toBeGreaterThanOrEqual(previous - 1e-9);
          expect(r).toBeLessThan(budget + 1e-9);
          previous = r;
        }
        expect(rate.rateAt(1_000 + HOLD_MS + CLIMB_MS)).toBe(budget);
      }),
      { numRuns: 40 },
    );
  });

  it('N readers of one shard at 5/N calls/s each never find Kinesis out of calls, whenever each one started', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 5 })
          .chain((n) =>
            fc.tuple(fc.constant(n), fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: n, maxLength: n })),
          ),
        ([n, starts]) => {
          const calls = starts
            .flatMap((start) => callsAsAllowed(new ReadRate({ budgetPerSecond: 5 / n }), start, 60_000))
            .sort((a, b) => a - b);
          const bucket = new TokenBucket(5, 5, 0);
          for (const at of calls) {
            // A whisker of slack: float sums of 1000/(5/n) gaps.
            expect(bucket.level(at)).toBeGreaterThanOrEqual(1 - 1e-6);
            bucket.take(at);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('at 5 calls/s each, two readers would find it out of calls (the budget is what keeps them apart)', () => {
    const calls = [0, 100].flatMap((start) => callsAsAllowed(new ReadRate({ budgetPerSecond: 5 }), start, 10_000));
    const bucket = new TokenBucket(5, 5, 0);
    let refused = 0;
    for (const at of calls.sort((a, b) => a - b)) {
      if (bucket.level(at) < 1) refused += 1;
      else bucket.take(at);
    }
    expect(refused).toBeGreaterThan(0);
  });
});
