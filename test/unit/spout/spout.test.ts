/** The spout's answers to acks: late outcomes of an earlier emission are not this emission's. */
import { validateConfig } from '../../../src/config/config';
import type { Scheduler } from '../../../src/core/scheduler';
import type { KinesisRecord } from '../../../src/kinesis/records';
import { LateOutcomes } from '../../../src/held/lateOutcomes';
import { SpoutMetrics } from '../../../src/held/metrics';
import { OwnedShard } from '../../../src/held/ownedShard';
import { KinesisSpout, type ShardSource } from '../../../src/spout/spout';

let clock = 1_000;
const scheduler: Scheduler = {
  now: () => clock,
  wallNow: () => 1_000,
  after: () => () => undefined,
  every: () => () => undefined,
  sleep: () => Promise.resolve(),
  random: () => 0.5,
};

function setUp() {
  clock = 1_000;
  const shard = new OwnedShard('shardId-000000000001', 0);
  shard.enter({ kind: 'draining', endedAt: 0, announced: false });
  const records: KinesisRecord[] = ['1', '2'].map((sequenceNumber) => ({
    shardId: shard.shardId,
    sequenceNumber,
    partitionKey: 'k',
    data: new Uint8Array([120]),
    arrivalMs: 0,
  }));
  shard.push(records);
  const lateOutcomes = new LateOutcomes(100, 60_000);
  const coordinator: ShardSource = {
    isActive: true,
    shards: new Map([[shard.shardId, shard]]),
    trustedUntil: () => Infinity,
    lateOutcomes,
    metrics: new SpoutMetrics(scheduler.now()),
  };
  const config = validateConfig({
    streamName: 's',
    applicationName: 'a',
    region: 'us-east-1',
    zookeeper: { connect: 'localhost:2181' },
  });
  const spout = new KinesisSpout(config, coordinator, { log: () => undefined, error: () => undefined }, scheduler);
  const emitted: string[] = [];
  spout.next({ emit: (id) => emitted.push(id!) });
  return { spout, shard, lateOutcomes, emitted };
}

describe('KinesisSpout acks', () => {
  it('acks what it emitted, and with no late outcome expected, every ack counts', () => {
    const { spout, shard, emitted } = setUp();
    expect(emitted).toEqual(['shardId-000000000001:1', 'shardId-000000000001:2']);
    for (const id of emitted) spout.ack(id);
    expect(spout.counters.acked).toBe(2);
    expect(shard.inFlight.size).toBe(0);
  });

  it('an ack expected as a late outcome of an earlier emission is used up and does not ack this one', () => {
    const { spout, shard, lateOutcomes, emitted } = setUp();
    lateOutcomes.expect([emitted[0]], scheduler.now());
    spout.ack(emitted[0]);
    expect(spout.counters).toMatchObject({ acked: 0, ignoredAcks: 1 });
    expect(shard.inFlight.size).toBe(2);
    // The next ack with that id is this emission's.
    spout.ack(emitted[0]);
    spout.ack(emitted[1]);
    expect(spout.counters).toMatchObject({ acked: 2, ignoredAcks: 1 });
    expect(shard.inFlight.size).toBe(0);
  });
});

describe('KinesisSpout fails', () => {
  const noDeadLetters = { emitUnanchored: () => undefined };

  it('re-emits a failed record once after its backoff', () => {
    const { spout, emitted } = setUp();
    spout.fail(emitted[0], noDeadLetters);
    clock += 60_000;
    const again: string[] = [];
    for (let i = 0; i < 3; i += 1) spout.next({ emit: (id) => again.push(id!) });
    expect(again).toEqual([emitted[0]]);
  });

  it('a second fail for a record already waiting for its retry (a late one whose expectation was forgotten) is ignored: one re-emission', () => {
    const { spout, shard, emitted } = setUp();
    spout.fail(emitted[0], noDeadLetters);
    spout.fail(emitted[0], noDeadLetters);
    expect(spout.counters).toMatchObject({ failed: 1, ignoredAcks: 1 });
    expect(shard.pendingRetries).toBe(1);
    clock += 60_000;
    const again: string[] = [];
    for (let i = 0; i < 3; i += 1) spout.next({ emit: (id) => again.push(id!) });
    expect(again).toEqual([emitted[0]]);
    // Its re-emission's own outcome still counts.
    spout.fail(emitted[0], noDeadLetters);
    expect(spout.counters.failed).toBe(2);
  });
});
