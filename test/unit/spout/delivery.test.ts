/** Delivery modes on one shard and in the spout's answers: when a record may be emitted, with which id, what a fail does. */
import { validateConfig } from '../../../src/config/config';
import { frozenScheduler } from '../fakes/frozenScheduler';
import type { KinesisRecord } from '../../../src/kinesis/records';
import { LateOutcomes } from '../../../src/held/lateOutcomes';
import { SpoutMetrics } from '../../../src/held/metrics';
import { OwnedShard } from '../../../src/held/ownedShard';
import { covers, deliveryOf } from '../../../src/held/delivery';
import { KinesisSpout } from '../../../src/spout/spout';

const scheduler = frozenScheduler;

const records = (...sequenceNumbers: string[]): KinesisRecord[] =>
  sequenceNumbers.map((sequenceNumber) => ({
    shardId: 's',
    sequenceNumber,
    partitionKey: 'k',
    data: new Uint8Array([120]),
    arrivalMs: 0,
  }));

function setUp(overrides: Record<string, unknown>) {
  const config = validateConfig({
    streamName: 's',
    applicationName: 'a',
    region: 'us-east-1',
    zookeeper: { connect: 'localhost:2181' },
    ...overrides,
  });
  const shard = new OwnedShard('s', 0, { delivery: deliveryOf(config) });
  shard.enter({ kind: 'reading', paused: false });
  shard.checkpointStored({ position: { kind: 'TRIM_HORIZON' }, version: 0 });
  const spout = new KinesisSpout(
    config,
    {
      isActive: true,
      shards: new Map([['s', shard]]),
      trustedUntil: () => Infinity,
      lateOutcomes: new LateOutcomes(100, 60_000),
      metrics: new SpoutMetrics(0),
    },
    { log: () => undefined, error: () => undefined },
    scheduler,
  );
  const ids: (string | undefined)[] = [];
  const next = () => {
    const before = ids.length;
    spout.next({ emit: (id) => ids.push(id) });
    return ids.slice(before);
  };
  return { shard, spout, next, ids };
}

const noDeadLetters = { emitUnanchored: () => undefined };

describe('at-most-once', () => {
  it('emits a fetched batch only once a checkpoint past all of it is stored, without ids', () => {
    const { shard, next } = setUp({ delivery: 'at-most-once' });
    shard.push(records('1', '2', '3'));
    expect(next()).toEqual([]);
    // One write covers the batch: past its last record.
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '3' });
    shard.checkpointStored({ position: { kind: 'AFTER', sequenceNumber: '3' }, version: 1 });
    expect(next()).toEqual([undefined, undefined, undefined]);
    expect(shard.inFlight.size).toBe(0);
    // The next batch waits for its own write.
    shard.push(records('4', '5'));
    expect(next()).toEqual([]);
    shard.checkpointStored({ position: { kind: 'AFTER', sequenceNumber: '4' }, version: 2 });
    expect(next()).toHaveLength(1);
  });

  it('handing over: keeps and emits what a write was asked to pass, drops the rest, claims nothing more', () => {
    const { shard, next } = setUp({ delivery: 'at-most-once' });
    shard.push(records('1', '2'));
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '2' });
    shard.push(records('3'));
    shard.enter({ kind: 'releasing', deadline: 10_000, reason: 'test' });
    shard.dropBuffer();
    expect(shard.buffered).toBe(2);
    expect(shard.committable()).toBeUndefined();
    // Its release waits for them...
    expect(shard.awaited).toBe(2);
    // ...and once the write in flight is stored, they are emitted (the next holder reads after 2).
    shard.checkpointStored({ position: { kind: 'AFTER', sequenceNumber: '2' }, version: 1 });
    expect(next()).toHaveLength(2);
    expect(shard.awaited).toBe(0);
  });

  it('with tuple tracking: ids kept, a fail releases the tuple and is never replayed', () => {
    const { shard, spout, next } = setUp({ delivery: 'at-most-once', tupleTracking: true });
    shard.push(records('1', '2'));
    shard.committable();
    shard.checkpointStored({ position: { kind: 'AFTER', sequenceNumber: '2' }, version: 1 });
    expect(next()).toEqual(['s:1', 's:2']);
    expect(shard.inFlight.size).toBe(2);
    spout.fail('s:1', noDeadLetters);
    spout.ack('s:2');
    expect(shard.inFlight.size).toBe(0);
    expect(shard.pendingRetries).toBe(0);
    expect(spout.counters).toMatchObject({ failed: 1, acked: 1, reemitted: 0 });
    expect(next()).toEqual([]);
  });

  it('a stored checkpoint covers a record at or below it, and a user record at or below its sub-sequence', () => {
    const after = (sequenceNumber: string, subSequence?: number) =>
      ({ kind: 'AFTER', sequenceNumber, subSequence }) as const;
    expect(covers(after('10'), { sequenceNumber: '10' })).toBe(true);
    expect(covers(after('10'), { sequenceNumber: '9' })).toBe(true);
    expect(covers(after('10'), { sequenceNumber: '11' })).toBe(false);
    expect(covers(after('10'), { sequenceNumber: '10', subSequence: 4 })).toBe(true);
    expect(covers(after('10', 2), { sequenceNumber: '10', subSequence: 3 })).toBe(false);
    expect(covers({ kind: 'TRIM_HORIZON' }, { sequenceNumber: '1' })).toBe(false);
    expect(covers(undefined, { sequenceNumber: '1' })).toBe(false);
  });
});

describe('none', () => {
  it('emits as read, without ids; the checkpoint follows the last record emitted', () => {
    const { shard, next } = setUp({ delivery: 'none' });
    shard.push(records('1', '2', '3'));
    expect(shard.committable()).toBeUndefined();
    expect(next()).toEqual([undefined, undefined, undefined]);
    expect(shard.inFlight.size).toBe(0);
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '3' });
  });

  it('inside a KPL aggregate the checkpoint stops at the last user record emitted', () => {
    const { shard, spout } = setUp({ delivery: 'none', maxEmitPerNext: 1 });
    shard.push([0, 1, 2].map((subSequence) => ({ ...records('7')[0], subSequence, lastSubSequence: 2 })));
    spout.next({ emit: () => undefined });
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '7', subSequence: 0 });
    spout.next({ emit: () => undefined });
    spout.next({ emit: () => undefined });
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '7' });
  });

  it('with tuple tracking: a fail only releases; a hand-over waits for nothing', () => {
    const { shard, spout, next } = setUp({ delivery: 'none', tupleTracking: true });
    shard.push(records('1', '2'));
    expect(next()).toEqual(['s:1', 's:2']);
    spout.fail('s:1', noDeadLetters);
    expect(shard.inFlight.size).toBe(1);
    shard.enter({ kind: 'releasing', deadline: 10_000, reason: 'test' });
    expect(shard.awaited).toBe(0);
    expect(next()).toEqual([]);
  });
});

describe('at-least-once (the default) is unchanged', () => {
  it('emits with ids at once; the checkpoint follows acks; a fail is replayed', () => {
    const { shard, spout, next } = setUp({});
    shard.push(records('1', '2'));
    expect(next()).toEqual(['s:1', 's:2']);
    expect(shard.committable()).toBeUndefined();
    spout.ack('s:1');
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '1' });
    spout.fail('s:2', noDeadLetters);
    expect(shard.pendingRetries).toBe(1);
    shard.enter({ kind: 'releasing', deadline: 10_000, reason: 'test' });
    expect(shard.awaited).toBe(1);
  });
});
