/** The storm section's counts: the window's complete latency from the spouts' own timing, not Storm's gauge. */
import { COMPACT_SERIALIZER, completeLatencyMs, type Counts, spoutRunSpec } from '../../../bench/storm/runs';
import type { ZooKeeperServer } from '../../helpers/zookeeperServer';

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
