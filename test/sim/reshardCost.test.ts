/**
 * What a reshard costs the ensemble in reads, with 16 real coordinators on the simulation's ZooKeeper and
 * Kinesis (no faults): every open shard split at once, ZooKeeper reads (getData, getChildren) from the split
 * until every child is read. With every task reading every new lease node, a doubling of 64 shards cost 2,219
 * reads (2,002 of them lease nodes: 16 per child); the first member now reads the lease nodes and publishes the
 * counts, the others read names and one node: 306 (122).
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

test('a doubling costs ZooKeeper reads in proportion to the shards, not to shards x tasks', async () => {
  const shards = 64;
  const world = smallWorld({
    tasks: TASKS,
    shards,
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
  const total = Object.values(byKind).reduce((a, b) => a + b, 0);
  if (process.env.SIM_REPORT) console.log(JSON.stringify({ took, total, byKind }));
  expect(took).toBeLessThan(120_000);
  // Every child's lease node read by one member, not by all 16: 64 x 16 = 1,024 of them were before.
  expect(byKind['getData leases'] ?? 0).toBeLessThanOrEqual(3 * children.length);
  expect(total).toBeLessThanOrEqual(6 * shards);
}, 300_000);
