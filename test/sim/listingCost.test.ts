/**
 * What a lease on a shard the listing does not show costs in ListShards calls, measured with 32 real
 * coordinators on the simulation's ZooKeeper and Kinesis (no faults). Such a lease is evidence that the
 * listing may be stale, and it is the first time; when a fresh listing does not explain it (a shard expired
 * past retention and still drained by its holder, a lease node left by hand) it must not cost a full listing per
 * task per assignment round.
 */
import { BASE } from './simConfig';
import { smallWorld } from './smallWorld';

const TASKS = 32;
const REBALANCE_MS = 2_000;
const SHARD_SYNC_MS = 30_000;

/** Full listings by all tasks: settling, 40 s after the lease appears, the next 60 s. */
async function measure(leaseOnUnlistedShard: boolean): Promise<{ settled: number; appeared: number; steady: number }> {
  const world = smallWorld({
    tasks: TASKS,
    shards: 4,
    config: { rebalanceIntervalMs: REBALANCE_MS, shardSyncIntervalMs: SHARD_SYNC_MS },
  });
  if (leaseOnUnlistedShard) {
    // A lease node on a shard the stream does not list, as an expired shard's drainer or an operator leaves it.
    world.loop.after(world.world, 20_000, () =>
      world.server.apply(world.operator, {
        op: 'create',
        path: `${BASE}/leases/shardId-000000000999`,
        data: Buffer.from('{"v":1,"owner":"task-gone"}'),
        ephemeral: false,
      }),
    );
  }
  const listedUntil = async (ms: number) => {
    await world.runUntil(ms);
    return world.takeFullListings();
  };
  const settled = await listedUntil(20_000);
  const appeared = await listedUntil(60_000);
  const steady = await listedUntil(120_000);
  world.stop();
  return { settled, appeared, steady };
}

test('a lease on an unlisted shard costs each task a full listing once per shard sync interval, not once per round', async () => {
  const quiet = await measure(false);
  const stale = await measure(true);
  // A minute, from 40 s after the lease appeared: each task runs about 30 assignment rounds. Without the cap
  // every one of them lists (about 30 × 32 = 960 full listings); with it, each task lists again for the same
  // evidence at most once per shardSyncIntervalMs, on top of what it lists anyway.
  const rounds = (60_000 / REBALANCE_MS) * TASKS;
  const allowed = quiet.steady + TASKS * Math.ceil(60_000 / SHARD_SYNC_MS);
  if (process.env.SIM_REPORT) console.log({ tasks: TASKS, rounds, quiet, stale });
  expect(stale.steady).toBeLessThanOrEqual(allowed);
  expect(stale.steady).toBeLessThan(rounds / 4);
  // The first time, the evidence is looked at promptly: every task lists when the lease appears.
  expect(stale.appeared).toBeGreaterThanOrEqual(quiet.appeared + TASKS);
}, 120_000);
