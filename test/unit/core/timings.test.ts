import {
  FULL_LISTING_EVERY,
  joinTimeoutMs,
  sessionTimings,
  shardSyncEveryMs,
  startGraceMs,
} from '../../../src/core/timings';

describe('timings derived from the settings (the figures the manual quotes)', () => {
  it('of a session, at the default session timeout of 10 s', () => {
    expect(sessionTimings(10_000)).toEqual({
      requestTimeoutMs: 10_000,
      connectTimeoutMs: 10_000,
      heartbeatEveryMs: 1_428,
      watchdogEveryMs: 1_000,
      stalledAfterMs: 20_000 / 3,
      closeGraceMs: 1_000,
      leaderPingGapMs: 2_500,
      trustMarginMs: 1_000,
      giveUpAfterMs: 10_000,
    });
  });

  it('keep their floors and caps at short and long session timeouts', () => {
    expect(sessionTimings(500)).toMatchObject({ heartbeatEveryMs: 100, watchdogEveryMs: 50, closeGraceMs: 250 });
    expect(sessionTimings(60_000)).toMatchObject({
      heartbeatEveryMs: 8_571,
      watchdogEveryMs: 6_000,
      closeGraceMs: 1_000,
    });
  });

  it('trust ends before the leader may expire the session, and the heartbeat keeps it a third of the timeout ahead', () => {
    for (const timeout of [1_000, 4_000, 10_000, 30_000, 120_000]) {
      const t = sessionTimings(timeout);
      expect(t.trustMarginMs).toBeGreaterThan(0);
      expect(t.trustMarginMs).toBeLessThan(t.giveUpAfterMs);
      // A confirmation credits a request answered about three heartbeats earlier.
      expect(timeout - t.trustMarginMs - 3 * t.heartbeatEveryMs).toBeGreaterThanOrEqual(timeout / 3);
      expect(t.stalledAfterMs).toBeLessThan(t.giveUpAfterMs);
    }
  });

  it('of a join: a minute at least, three session timeouts beyond 20 s', () => {
    expect(joinTimeoutMs(10_000)).toBe(60_000);
    expect(joinTimeoutMs(30_000)).toBe(90_000);
  });

  it('of the start grace and the look for new shards (jittered by 20% either way, a full listing every 5th)', () => {
    expect(startGraceMs(10_000)).toBe(10_000);
    expect(shardSyncEveryMs(30_000, 0)).toBe(24_000);
    expect(shardSyncEveryMs(30_000, 0.5)).toBe(30_000);
    expect(shardSyncEveryMs(30_000, 0.999_999)).toBeCloseTo(36_000, 0);
    expect(FULL_LISTING_EVERY).toBe(5);
  });
});
