/**
 * The storm section's counts (the window's complete latency from the spouts' own timing, not Storm's gauge),
 * its run specs, and the paced synthetic source.
 */
import { GetRecordsCommand } from '@aws-sdk/client-kinesis';
import { syntheticKinesis } from '../../../bench/syntheticKinesis';
import {
  COMPACT_SERIALIZER,
  completeLatencyMs,
  type Counts,
  spoutRunSpec,
  syntheticCeiling,
} from '../../../bench/storm/runs';
import type { ZooKeeperServer } from '../../helpers/zookeeperServer';
import { shellSpoutEnv } from '../../helpers/spoutNode';

const counts = (trees: number, latencyMs: number): Counts => ({
  acked: trees,
  nanos: 0n,
  trees,
  latencyNanos: BigInt(Math.round(latencyMs * 1e6)),
});

test('complete latency: the mean of the trees acked between two counts, none when none were', () => {
  // 1,000 trees at 2 ms each before the window, then 3,000 at 5 ms each in it.
  const before = counts(1_000, 1_000 * 2);
  const after = counts(4_000, 1_000 * 2 + 3_000 * 5);
  expect(completeLatencyMs(before, after)).toBeCloseTo(5, 9);
  expect(completeLatencyMs(after, after)).toBeUndefined();
});

test('spoutCompact is this spout with the compact serializer; spout keeps the one asked for (JSON by default)', () => {
  const zk = { connectString: '127.0.0.1:1', port: 1 } as unknown as ZooKeeperServer;
  const context = { name: 'r', dir: '/tmp', pending: 5000, payloadBytes: 100, synthetic: 's.js', zk };
  const compact = spoutRunSpec('spoutCompact', context).json;
  const json = spoutRunSpec('spout', context).json;
  expect(compact.storm).toEqual({
    'topology.max.spout.pending': 5000,
    'topology.multilang.serializer': COMPACT_SERIALIZER,
  });
  expect(json.storm).toEqual({ 'topology.max.spout.pending': 5000 });
  expect({ ...compact, name: '', storm: {} }).toEqual({ ...json, name: '', storm: {} });
  expect(spoutRunSpec('native', { ...context, serializer: 'x.Y' }).json.storm).toEqual({
    'topology.max.spout.pending': 5000,
  });
});

test('spoutPaced: the synthetic source on the kinesis-local run’s shards, each at its share of that run’s rate', () => {
  const zk = { connectString: '127.0.0.1:1', port: 1 } as unknown as ZooKeeperServer;
  const context = { name: 'r', dir: '/tmp', pending: 100, payloadBytes: 100, synthetic: 's.js', zk };
  expect(() => spoutRunSpec('spoutPaced', context)).toThrow('spoutPaced needs the rate of a spoutKinesis run');
  const json = spoutRunSpec('spoutPaced', { ...context, paced: { shards: 4, recordsPerSecond: 4_000 } }).json;
  expect(json).toMatchObject({
    spout: 'shell',
    env: { SYNTHETIC_SHARDS: '4', SYNTHETIC_RECORDS_PER_SECOND: '1000' },
  });
});

test('the synthetic runs start node as KinesisShellSpout does (spoutKinesis is KinesisShellSpout): same options, same environment', () => {
  const zk = { connectString: '127.0.0.1:1', port: 1 } as unknown as ZooKeeperServer;
  const context = { name: 'r', dir: '/tmp', pending: 100, payloadBytes: 100, synthetic: 's.js', zk };
  const saved = { options: process.env.BENCH_NODE_OPTIONS, arenas: process.env.MALLOC_ARENA_MAX };
  delete process.env.BENCH_NODE_OPTIONS;
  delete process.env.MALLOC_ARENA_MAX;
  try {
    const paced = { shards: 4, recordsPerSecond: 4_000 };
    for (const spout of ['spout', 'spoutCompact', 'spoutPaced'] as const) {
      const json = spoutRunSpec(spout, { ...context, paced }).json as unknown as {
        command: string[];
        env: Record<string, string>;
      };
      expect(json.command).toEqual(['node', '--max-semi-space-size=2', '--single-threaded', 's.js']);
      expect(json.env.MALLOC_ARENA_MAX).toBe('2');
    }
  } finally {
    if (saved.options !== undefined) process.env.BENCH_NODE_OPTIONS = saved.options;
    if (saved.arenas !== undefined) process.env.MALLOC_ARENA_MAX = saved.arenas;
  }
});

test("KinesisShellSpout's environment is added unless the worker's environment has the variable (as its processEnv)", () => {
  expect(shellSpoutEnv({})).toEqual({ MALLOC_ARENA_MAX: '2' });
  expect(shellSpoutEnv({ MALLOC_ARENA_MAX: '4' })).toEqual({});
});

test('a paced synthetic shard returns what arrived at its rate, never more, and still says it is behind', async () => {
  // Before the client: its clock starts while it is made, and what arrives is bounded by the time since.
  const started = performance.now();
  const client = syntheticKinesis({ shards: 1, payloadBytes: 10, recordsPerSecond: 1_000 });
  const read = async (after: number) =>
    (await client.send(
      new GetRecordsCommand({ ShardIterator: `shardId-000000000000|${after}`, Limit: 10_000 }),
    )) as unknown as { Records: unknown[]; NextShardIterator: string; MillisBehindLatest: number };
  await new Promise((r) => setTimeout(r, 300));
  const first = await read(0);
  const elapsed = performance.now() - started;
  expect(first.Records.length).toBeGreaterThan(0);
  expect(first.Records.length).toBeLessThanOrEqual(Math.floor(elapsed));
  expect(first.MillisBehindLatest).toBeGreaterThan(0);
  // Read again at once from where it ended: only what arrived since, nothing from a second backlog.
  const again = await read(first.Records.length);
  expect(again.Records.length).toBeLessThanOrEqual(Math.ceil(performance.now() - started) - first.Records.length);
  // Unpaced, a call takes all it may.
  const unpaced = syntheticKinesis({ shards: 1, payloadBytes: 10 });
  const all = (await unpaced.send(
    new GetRecordsCommand({ ShardIterator: 'shardId-000000000000|0', Limit: 500 }),
  )) as unknown as { Records: unknown[] };
  expect(all.Records).toHaveLength(500);
});

test('the synthetic source is never the limit: 16 shards read as Kinesis allows (800,000 records/s), the wide run 64', async () => {
  const zk = { connectString: '127.0.0.1:1', port: 1 } as unknown as ZooKeeperServer;
  const context = { name: 'r', dir: '/tmp', pending: 1000, payloadBytes: 100, synthetic: 's.js', zk };
  const env = (spout: 'spout' | 'spoutCompact' | 'spoutCompactWide') =>
    (spoutRunSpec(spout, context).json as unknown as { env: Record<string, string> }).env;
  expect(env('spout').SYNTHETIC_SHARDS).toBe('16');
  expect(env('spoutCompact').SYNTHETIC_SHARDS).toBe('16');
  expect(env('spoutCompactWide').SYNTHETIC_SHARDS).toBe('64');
  // No answer larger than the call asked for: a reader's room is what it reserved (maxRecordsPerRequest at most).
  for (const spout of ['spout', 'spoutCompact', 'spoutCompactWide'] as const)
    expect(env(spout).SYNTHETIC_RECORDS_PER_CALL).toBeUndefined();
  expect(spoutRunSpec('spoutCompactWide', context).json.storm).toEqual({
    'topology.max.spout.pending': 1000,
    'topology.multilang.serializer': COMPACT_SERIALIZER,
  });
  expect(syntheticCeiling(16)).toBe(800_000);
  // What a shard hands a reader: the call's Limit, so 5 calls a second give 50,000 records.
  const source = syntheticKinesis({ shards: 16, payloadBytes: 10 });
  const answer = (await source.send(
    new GetRecordsCommand({ ShardIterator: 'shardId-000000000015|0', Limit: 10_000 }),
  )) as unknown as { Records: unknown[] };
  expect(answer.Records).toHaveLength(10_000);
});
