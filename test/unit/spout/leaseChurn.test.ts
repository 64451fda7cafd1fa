import { BRIEF_TENURE_MS, LOOP_AFTER, LOOP_BACKOFF_MS, LeaseChurn } from '../../../src/spout/leaseChurn';

/** A process that takes a shard's lease and loses it again at once, as often as it is let. */
function setup() {
  let now = 0;
  const reports: { shardId: string; message: string }[] = [];
  const churn = new LeaseChurn({ clock: () => now, report: (shardId, message) => reports.push({ shardId, message }) });
  const notBackingOff = () => false;
  /** One assignment round: what is held is observed, then the shard is taken if allowed, and lost again. */
  const roundTakingAndLosing = (shardId: string): boolean => {
    churn.observe([], notBackingOff);
    if (!churn.mayTake(shardId)) return false;
    churn.taken(shardId);
    return true;
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { churn, reports, roundTakingAndLosing, advance, notBackingOff };
}

describe('LeaseChurn', () => {
  it('lets a shard lost at once be taken LOOP_AFTER times, then backs off, doubling, and reports each back-off', () => {
    const { reports, roundTakingAndLosing, advance } = setup();
    const takes: number[] = [];
    for (let t = 0; t < 120_000; t += 100) {
      if (roundTakingAndLosing('s-1')) takes.push(t);
      advance(100);
    }
    // Rounds every 100 ms: without the back-off, 1,200 takes in two minutes.
    const gaps = takes.slice(1).map((t, i) => t - takes[i]);
    expect(gaps.slice(0, LOOP_AFTER)).toEqual(Array(LOOP_AFTER).fill(100));
    expect(gaps.slice(LOOP_AFTER, LOOP_AFTER + 6)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000]);
    expect(takes.length).toBeLessThan(15);
    expect(reports[0]).toEqual({ shardId: 's-1', message: expect.stringContaining('taken and lost again 3 times') });
    expect(reports.length).toBe(takes.length - LOOP_AFTER);
  });

  it('forgets the loop once the shard is held for the brief tenure', () => {
    const { churn, roundTakingAndLosing, advance, notBackingOff, reports } = setup();
    for (let i = 0; i <= LOOP_AFTER; i += 1) roundTakingAndLosing('s-1');
    expect(churn.mayTake('s-1')).toBe(false);
    advance(LOOP_BACKOFF_MS.initial);
    churn.taken('s-1');
    advance(BRIEF_TENURE_MS);
    churn.observe(['s-1'], notBackingOff);
    // Let go after a steady tenure, and taken again: not a loop.
    churn.observe([], notBackingOff);
    const before = reports.length;
    for (let i = 0; i < LOOP_AFTER; i += 1) expect(roundTakingAndLosing('s-1')).toBe(true);
    expect(reports.length).toBe(before);
  });

  it('leaves shards in a start back-off to that back-off, and a new session starts with no history', () => {
    const { churn, roundTakingAndLosing } = setup();
    for (let i = 0; i < LOOP_AFTER; i += 1) {
      churn.observe([], (id) => id === 's-1');
      churn.taken('s-1');
    }
    expect(churn.mayTake('s-1')).toBe(true);
    for (let i = 0; i <= LOOP_AFTER; i += 1) roundTakingAndLosing('s-2');
    expect(churn.mayTake('s-2')).toBe(false);
    churn.clear();
    expect(churn.mayTake('s-2')).toBe(true);
  });

  it('counts a tenure that lasted less than the brief time however it ended', () => {
    const { churn, advance, notBackingOff } = setup();
    for (let i = 0; i < LOOP_AFTER; i += 1) {
      churn.observe([], notBackingOff);
      churn.taken('s-1');
      advance(BRIEF_TENURE_MS / 2);
      churn.observe(['s-1'], notBackingOff);
    }
    churn.observe([], notBackingOff);
    churn.taken('s-1');
    expect(churn.mayTake('s-1')).toBe(false);
  });
});
