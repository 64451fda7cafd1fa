/**
 * What a reshard costs the ensemble in reads, with 16 real coordinators on the simulation's ZooKeeper and
 * Kinesis (no faults): every open shard split at once, ZooKeeper reads (getData, getChildren) from the split
 * until every child is read. With every task reading every new lease node, a doubling of 64 shards cost 2,219
 * reads (2,002 of them lease nodes: 16 per child); the first member now reads the lease nodes and publishes the
 * counts, the others read names and one node: 321-441 reads over seeds 1-8 (about 125 lease nodes).
 */
import { smallWorld, type SmallWorld } from './smallWorld';

const TASKS = 16;

function reading(world: SmallWorld): Set<string> {
  const ids = new Set<string>();
  for (const p of world.processes)
    for (const [id, shard] of p.coordinator.shards) if (shard.phase.kind === 'reading') ids.add(id);
  return ids;
}

async function until(world: SmallWorld, done: () => boolean, limitMs: number): Promise<number> {
  const from = world.loop.now;
  while (!done() && world.loop.now - from < limitMs) await world.runUntil(world.loop.now + 50);
  return world.loop.now - from;
}

function reads(requests: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of requests) if (/^get(Data|Children) /.test(key)) out[key] = n;
  return out;
}

/** A doubling of 64 shards on 16 tasks after a settled start: the virtual time and the reads it took. */
async function doubling(
  seed: number,
): Promise<{ children: number; took: number; total: number; byKind: Record<string, number> }> {
  const shards = 64;
  const world = smallWorld({
    tasks: TASKS,
    shards,
    seed,
    listPage: 1_000,
    config: { zookeeper: { connect: 'sim:2181', sessionTimeoutMs: 6_000, root: '/kinesis-spout' } },
  });
  expect(await until(world, () => reading(world).size === shards, 120_000)).toBeLessThan(120_000);
  await world.runUntil(world.loop.now + 20_000);
  world.server.requests.clear();
  const children = world.stream.open().flatMap((s) => world.stream.split(s, 0).map((c) => c.shardId));
  const took = await until(world, () => children.every((id) => reading(world).has(id)), 120_000);
  const byKind = reads(world.server.requests);
  world.stop();
  return { children: children.length, took, total: Object.values(byKind).reduce((a, b) => a + b, 0), byKind };
}

test.each([1, 2, 3, 4])(
  'a doubling costs ZooKeeper reads in proportion to the shards, not to shards x tasks (seed %i)',
  async (seed) => {
    const { children, took, total, byKind } = await doubling(seed);
    if (process.env.SIM_REPORT) console.log(JSON.stringify({ seed, took, total, byKind }));
    expect(took).toBeLessThan(120_000);
    // Every child's lease node read by one member, not by all 16: 64 x 16 = 1,024 of them were before.
    expect(byKind['getData leases'] ?? 0).toBeLessThanOrEqual(3 * children);
    // Each task's own listings add 20-30 reads a reshard at this size: 321-441 over seeds 1-8 (2026-12-07).
    expect(total).toBeLessThanOrEqual(7 * 64);
  },
  300_000,
);
