/** When a shard may be taken again: after a failed start, and after being taken and given back in a loop. */
import { LOOP_AFTER, RetakeBackoff, SHORT_TENURE_MS } from '../../../src/held/retakeBackoff';

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('RetakeBackoff', () => {
  it('backs a failed start off exponentially, capped, until a start succeeds', () => {
    const time = clock();
    const backoff = new RetakeBackoff(time.now);
    const waits = Array.from({ length: 9 }, () => backoff.startFailed('s'));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(backoff.backingOff('s')).toBe(true);
    time.advance(60_000);
    expect(backoff.backingOff('s')).toBe(false);
    backoff.started('s');
    expect(backoff.startFailed('s')).toBe(1_000);
  });

  it('lets a shard be given back quickly twice, and from the third short tenure in a row backs off', () => {
    const time = clock();
    const backoff = new RetakeBackoff(time.now);
    for (let i = 1; i < LOOP_AFTER; i += 1) {
      expect(backoff.gaveBack('s', 50)).toBeUndefined();
      expect(backoff.backingOff('s')).toBe(false);
    }
    expect(backoff.gaveBack('s', 50)).toEqual({ inARow: LOOP_AFTER, waitMs: 1_000 });
    expect(backoff.backingOff('s')).toBe(true);
    expect(backoff.backingOff('other')).toBe(false);
    time.advance(1_000);
    expect(backoff.gaveBack('s', 50)).toEqual({ inARow: LOOP_AFTER + 1, waitMs: 2_000 });
  });

  it('a long tenure ends the loop', () => {
    const backoff = new RetakeBackoff(clock().now);
    backoff.gaveBack('s', 50);
    backoff.gaveBack('s', 50);
    expect(backoff.gaveBack('s', SHORT_TENURE_MS)).toBeUndefined();
    expect(backoff.gaveBack('s', 50)).toBeUndefined();
    expect(backoff.gaveBack('s', 50)).toBeUndefined();
    expect(backoff.gaveBack('s', 50)).toEqual({ inARow: LOOP_AFTER, waitMs: 1_000 });
  });
});
