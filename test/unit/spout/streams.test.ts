/** The spout over several streams: one shard id in two streams, ids that tell them apart, acks routed, trust per stream. */
import { streamConfigs, validateConfig } from '../../../src/config/config';
import { frozenScheduler } from '../fakes/frozenScheduler';
import type { KinesisRecord } from '../../../src/kinesis/records';
import { LateOutcomes } from '../../../src/held/lateOutcomes';
import { mergeReports, SpoutMetrics } from '../../../src/held/metrics';
import { OwnedShard } from '../../../src/held/ownedShard';
import { KinesisSpout, type ShardSource } from '../../../src/spout/spout';

const scheduler = frozenScheduler;

function source(sequenceNumbers: string[]): ShardSource & { trusted: number; shard: OwnedShard } {
  const shard = new OwnedShard('shardId-000000000000', 0);
  shard.enter({ kind: 'draining', endedAt: 0, announced: false });
  shard.push(
    sequenceNumbers.map(
      (sequenceNumber): KinesisRecord => ({
        shardId: shard.shardId,
        sequenceNumber,
        partitionKey: 'k',
        data: new Uint8Array([120]),
        arrivalMs: 0,
      }),
    ),
  );
  const s = {
    isActive: true,
    shards: new Map([[shard.shardId, shard]]),
    trusted: Infinity,
    trustedUntil: () => s.trusted,
    lateOutcomes: new LateOutcomes(100, 60_000),
    metrics: new SpoutMetrics(0),
    shard,
  };
  return s;
}

function setUp() {
  const config = validateConfig({
    region: 'us-east-1',
    applicationName: 'a',
    zookeeper: { connect: 'z:1' },
    outputFields: ['streamName', 'shardId', 'sequenceNumber'],
    streams: [{ streamName: 'orders' }, { streamName: 'clicks', outputStream: 'clicks' }, { streamName: 'views' }],
  });
  const sources = [source(['1', '2']), source(['1', '3']), source(['1'])];
  const spout = new KinesisSpout(
    config,
    streamConfigs(config).map((own, i) => ({ source: sources[i], config: own })),
    { log: () => undefined, error: () => undefined },
    scheduler,
  );
  const emits: { id: string; tuple: unknown[]; stream: string }[] = [];
  const next = () => spout.next({ emit: (id, tuple, stream) => emits.push({ id: id!, tuple, stream }) });
  return { spout, sources, emits, next };
}

describe('KinesisSpout over several streams', () => {
  it('emits every stream round robin, on its own output stream, with ids that never collide, and routes acks back', () => {
    const { spout, sources, emits, next } = setUp();
    next();
    expect(emits.map((e) => e.id).sort()).toEqual(
      [
        'shardId-000000000000:1',
        'shardId-000000000000:2',
        '1/shardId-000000000000:1',
        '1/shardId-000000000000:3',
        '2/shardId-000000000000:1',
      ].sort(),
    );
    // Round robin: one of each stream before a second of any.
    expect(emits.slice(0, 3).map((e) => e.tuple[0])).toEqual(['orders', 'clicks', 'views']);
    expect(emits.find((e) => e.id === '1/shardId-000000000000:3')).toMatchObject({
      stream: 'clicks',
      tuple: ['clicks', 'shardId-000000000000', '3'],
    });
    expect(emits.find((e) => e.id === '2/shardId-000000000000:1')?.stream).toBe('default');

    spout.ack('1/shardId-000000000000:1');
    expect(sources[1].shard.inFlight.size).toBe(1);
    expect(sources[0].shard.inFlight.size).toBe(2);
    expect(sources[2].shard.inFlight.size).toBe(1);
    spout.ack('shardId-000000000000:1');
    expect(sources[0].shard.inFlight.size).toBe(1);
    // No fourth stream: ignored, not misrouted.
    spout.ack('3/shardId-000000000000:1');
    expect(spout.counters).toMatchObject({ acked: 2, ignoredAcks: 1 });
  });

  it('a stream whose leases are not trusted is not emitted from; the others are', () => {
    const { sources, emits, next } = setUp();
    sources[0].trusted = -Infinity;
    next();
    expect(emits.map((e) => e.tuple[0]).sort()).toEqual(['clicks', 'clicks', 'views']);
  });

  it("a late outcome expected by one stream is that stream's only", () => {
    const { spout, sources, next } = setUp();
    next();
    // The stream keeps its expectations by the id within the stream (no index).
    sources[1].lateOutcomes.expect(['shardId-000000000000:1'], 1_000);
    spout.ack('shardId-000000000000:1');
    expect(sources[0].shard.inFlight.size).toBe(1);
    spout.ack('1/shardId-000000000000:1');
    expect(sources[1].shard.inFlight.size).toBe(2);
    expect(spout.counters).toMatchObject({ acked: 1, ignoredAcks: 1 });
  });

  it('shard metrics are keyed by stream, process figures summed', () => {
    const { spout, sources, next } = setUp();
    next();
    spout.ack('1/shardId-000000000000:1');
    const view = (s: ShardSource) => ({
      shards: [{ shardId: 'shardId-000000000000', inFlight: s.shards.get('shardId-000000000000')!.inFlight.size }],
      recordsInMemory: 1,
      bytesInMemory: 10,
      zookeeperConnected: s !== sources[2],
    });
    const report = mergeReports(
      ['orders', 'clicks', 'views'].map((stream, i) => ({
        stream,
        report: sources[i].metrics.take(view(sources[i]), 1_000),
      })),
    );
    expect(report.shards.counters).toMatchObject({
      'orders/shardId-000000000000.emitted': 2,
      'clicks/shardId-000000000000.emitted': 2,
      'clicks/shardId-000000000000.acked': 1,
      'orders/shardId-000000000000.acked': 0,
      'views/shardId-000000000000.emitted': 1,
    });
    expect(report.shards.gauges['clicks/shardId-000000000000.inFlight']).toBe(1);
    expect(report.process.counters).toMatchObject({ emitted: 5, acked: 1 });
    expect(report.process.gauges).toMatchObject({
      shardsHeld: 3,
      recordsInMemory: 3,
      bytesInMemory: 30,
      zookeeperConnected: 0,
    });
  });
});
