/**
 * A take/release loop on the assignment side, whatever its cause, is slowed down: here a checkpoint says
 * SHARD_END while nothing else says the shard is done (no `finished/` marker; the shard is open), so each
 * start gives the lease back and each round takes it again. Measured with real coordinators on the
 * simulation's ZooKeeper and Kinesis: lease takes of that shard in 30 virtual seconds.
 */
import { BASE } from './simConfig';
import { smallWorld } from './smallWorld';

const SHARD = 'shardId-000000000000';

test('a shard whose lease is given back at once is not taken again in a tight loop', async () => {
  const world = smallWorld({ tasks: 2, shards: 2, config: { rebalanceIntervalMs: 2_000 } });
  const { server, operator } = world;
  for (const path of [BASE.split('/').slice(0, 2), BASE.split('/').slice(0, 3), BASE.split('/')].map((p) =>
    p.join('/'),
  ))
    server.apply(operator, { op: 'mkdirp', path });
  server.apply(operator, { op: 'mkdirp', path: `${BASE}/checkpoints` });
  const forged = { v: 1, position: { kind: 'SHARD_END' }, owner: 'by-hand', updatedAt: '2026-01-01T00:00:00Z' };
  server.apply(operator, {
    op: 'create',
    path: `${BASE}/checkpoints/${SHARD}`,
    data: Buffer.from(JSON.stringify(forged)),
    ephemeral: false,
  });
  let takes = 0;
  server.observers.push((change) => {
    if (change.path === `${BASE}/leases/${SHARD}` && !change.before && change.after) takes += 1;
  });
  await world.runUntil(30_000);
  world.stop();
  if (process.env.SIM_REPORT) console.log({ takes, errors: world.errors });
  // Before the back-off: hundreds of takes (678 when measured). With it: a few quick takes per task,
  // then 1, 2, 4, 8, 16 s apart.
  expect(takes).toBeLessThanOrEqual(2 * 10);
  expect(world.errors.some((message) => message.includes(SHARD))).toBe(true);
});
