/**
 * This task's part of the throughput plan (src/assignment/byThroughput.ts): it gives a lease away by load only
 * once the plans have wanted it to give in every round for GIVE_AFTER_MS, to a task below the count floor at
 * once; one at a time.
 */
import { GIVE_AFTER_MS, throughputLeasePlan } from '../../../src/assignment/byThroughput';

const shards = ['s0', 's1', 's2', 's3'];
const loads = new Map(shards.map((id) => [id, { bytesPerSec: 1_000, recordsPerSec: 10 }]));
/** Who holds s0..s3. */
const held = (...owners: string[]) => new Map(shards.map((id, i) => [id, owners[i]!]));
/** Task a 3 shards, b 1, all alike: a is 50 % over the mean, so the plan moves one by load. */
const overLoaded = held('a', 'a', 'a', 'b');

function round(now: number, givingSince: number | undefined, leases = overLoaded, releasing = false) {
  return throughputLeasePlan({
    readable: shards,
    leases,
    members: ['a', 'b'],
    me: 'a',
    loads,
    releasing,
    now,
    givingSince,
  });
}

describe('throughputLeasePlan', () => {
  it('gives a lease away by load only once the plans wanted it for GIVE_AFTER_MS, round after round', () => {
    const first = round(1_000, undefined);
    expect(first.release).toEqual([]);
    expect(first.givingSince).toBe(1_000);
    const early = round(1_000 + GIVE_AFTER_MS - 1, first.givingSince);
    expect(early.release).toEqual([]);
    expect(early.givingSince).toBe(1_000);
    const due = round(1_000 + GIVE_AFTER_MS, early.givingSince);
    expect(due.release).toHaveLength(1);
    expect(due.reasons.get(due.release[0]!)).toMatch(/balance by throughput/);
  });

  it('starts again after a round that wanted nothing of this task', () => {
    const first = round(0, undefined);
    const balanced = round(5_000, first.givingSince, held('a', 'b', 'a', 'b'));
    expect(balanced.release).toEqual([]);
    expect(balanced.givingSince).toBeUndefined();
    const again = round(GIVE_AFTER_MS, balanced.givingSince);
    expect(again.release).toEqual([]);
    expect(again.givingSince).toBe(GIVE_AFTER_MS);
  });

  it('gives at once to a task that holds no shard (the count floor)', () => {
    const plan = round(0, undefined, held('a', 'a', 'a', 'a'));
    expect(plan.release).toHaveLength(1);
  });

  it('gives one at a time: none while one is being handed over, the streak kept', () => {
    const handing = round(2 * GIVE_AFTER_MS, 0, overLoaded, true);
    expect(handing.release).toEqual([]);
    expect(handing.givingSince).toBe(0);
    expect(round(2 * GIVE_AFTER_MS + 100, handing.givingSince).release).toHaveLength(1);
    expect(round(0, undefined, held('a', 'a', 'a', 'a'), true).release).toEqual([]);
  });
});
