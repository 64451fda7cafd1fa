/**
 * HeldShards as the lifecycle's world, over a real CoordinationStore on an in-memory ZooKeeper and a reader
 * that reads nothing: a SHARD_END at start, and a lease that goes round a take/release loop.
 */
import { validateConfig } from '../../../src/config/config';
import { CoordinationStore } from '../../../src/coordination/store';
import type { Position } from '../../../src/core/position';
import type { Scheduler } from '../../../src/core/scheduler';
import type { KinesisApi } from '../../../src/kinesis/client';
import type { ShardRecordReader } from '../../../src/kinesis/reader';
import { Reporter, type LogLevel } from '../../../src/core/log';
import { HeldShards } from '../../../src/held/heldShards';
import type { Session } from '../../../src/coordination/session';
import { SpoutMetrics } from '../../../src/held/metrics';
import { MemoryZooKeeper } from '../fakes/memoryZooKeeper';

const BASE = '/app/stream';
const SHARD = 'shardId-000000000007';

/** A reader that starts, and is told nothing by Kinesis. */
const quietReader: ShardRecordReader = {
  start: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
  stop: async () => undefined,
};

function setUp(overrides: Record<string, unknown> = {}) {
  let now = 0;
  const scheduler: Scheduler = {
    now: () => now,
    wallNow: () => now,
    after: () => () => undefined,
    every: () => () => undefined,
    sleep: () => Promise.resolve(),
    random: () => 0.5,
  };
  const zk = new MemoryZooKeeper();
  const store = new CoordinationStore(zk, BASE, 'me');
  const session: Session = {
    zk,
    store,
    bootstrap: {
      v: 1,
      firstStartMs: 0,
      initialPosition: 'TRIM_HORIZON',
      streamArn: 'arn',
      streamCreatedMs: 0,
      shardsAtStart: [],
      openAtStart: [],
    },
    startOf: (): Position => ({ kind: 'TRIM_HORIZON' }),
    joinedAt: 0,
  };
  const errors: string[] = [];
  const logs: string[] = [];
  const kinesis: KinesisApi = { send: () => Promise.reject(new Error('this test lists no shards')) };
  const held = new HeldShards({
    config: validateConfig({
      streamName: 'stream',
      region: 'us-east-1',
      applicationName: 'app',
      zookeeper: { connect: 'zk:2181' },
      ...overrides,
    }),
    kinesis,
    scheduler,
    reporter: new Reporter(
      { log: (_: LogLevel, m: string) => void logs.push(m), error: (m) => void errors.push(m) },
      scheduler,
    ),
    stream: { streamName: 'stream' },
    streamLabel: 'stream stream',
    io: { getRecords: 0, listShards: 0, checkpointWrites: 0, checkpointWritesDeferred: 0 },
    metrics: new SpoutMetrics(0),
    isActive: () => true,
    changed: () => undefined,
    childrenFound: () => undefined,
    notFound: async () => undefined,
    readers: () => quietReader,
  });
  const takeLease = async () => {
    await store.acquireLease(SHARD);
    await held.start(session, SHARD);
  };
  return { zk, store, held, session, errors, logs, takeLease, advance: (ms: number) => (now += ms) };
}

const SHARD_END = { v: 1, position: { kind: 'SHARD_END' }, owner: 'someone', updatedAt: '2026-12-01T00:00:00Z' };

describe('HeldShards', () => {
  it('a SHARD_END checkpoint with its finished marker: the lease is given straight back', async () => {
    const { zk, held, errors, takeLease } = setUp();
    zk.put(`${BASE}/checkpoints/${SHARD}`, SHARD_END);
    zk.put(`${BASE}/finished/${SHARD}`, { v: 1 });
    await takeLease();
    expect(held.byId.size).toBe(0);
    expect(zk.nodes.has(`${BASE}/leases/${SHARD}`)).toBe(false);
    expect(errors).toEqual([]);
  });

  it('a lease given back right after each take backs off from the third time in a row, and says so once per wait', async () => {
    const { zk, held, errors, takeLease, advance } = setUp();
    zk.put(`${BASE}/checkpoints/${SHARD}`, SHARD_END);
    zk.put(`${BASE}/finished/${SHARD}`, { v: 1 });
    for (let i = 0; i < 2; i += 1) {
      await takeLease();
      expect(held.backingOff(SHARD)).toBe(false);
    }
    await takeLease();
    expect(held.backingOff(SHARD)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`lease on ${SHARD} taken and given back 3 times in a row`);
    advance(1_000);
    expect(held.backingOff(SHARD)).toBe(false);
  });

  it('a shard read from its checkpoint and handed over after a long tenure is no loop', async () => {
    const { zk, held, session, errors, takeLease, advance } = setUp();
    zk.put(`${BASE}/checkpoints/${SHARD}`, { v: 1, position: { kind: 'TRIM_HORIZON' }, owner: 'x', updatedAt: '' });
    for (let i = 0; i < 4; i += 1) {
      await takeLease();
      const shard = held.byId.get(SHARD)!;
      expect(shard.phase).toEqual({ kind: 'reading', paused: false });
      advance(10_000);
      held.beginRelease(shard, 'test');
      await new Promise((resolve) => setImmediate(resolve));
      held.maintain(session);
      await shard.writes.idle();
      await new Promise((resolve) => setImmediate(resolve));
      expect(held.byId.has(SHARD)).toBe(false);
    }
    expect(held.backingOff(SHARD)).toBe(false);
    expect(errors).toEqual([]);
  });

  describe('the capped flush', () => {
    const SHARDS = ['shardId-000000000001', 'shardId-000000000002', 'shardId-000000000003', 'shardId-000000000004'];
    const record = (shardId: string, sequenceNumber: string) => ({
      shardId,
      sequenceNumber,
      partitionKey: 'k',
      data: new Uint8Array(1),
      arrivalMs: 0,
    });

    /** Holds the four shards, each with one more record emitted and acked (its checkpoint changed). */
    async function busyShards(overrides: Record<string, unknown> = {}) {
      const world = setUp(overrides);
      for (const id of SHARDS) {
        await world.store.acquireLease(id);
        await world.held.start(world.session, id);
      }
      let sequence = 100;
      const emitAndAck = () => {
        for (const id of SHARDS) {
          const shard = world.held.byId.get(id)!;
          sequence += 1;
          shard.push([record(id, String(sequence))]);
          const { record: taken } = shard.takeNext(0)!;
          shard.inFlight.ack(taken.sequenceNumber);
        }
      };
      const stored = async (id: string) => (await world.store.readCheckpoint(id))?.position;
      return { ...world, emitAndAck, stored };
    }

    it('writes at most the allowance, those written longest ago first, and the rest at the next flushes', async () => {
      const { held, session, advance, emitAndAck, stored } = await busyShards();
      emitAndAck();
      advance(1_000);
      const first = held.flushCapped(session, 2);
      await first.done;
      expect({ written: first.written, deferred: first.deferred, oldestWrittenAt: first.oldestWrittenAt }).toEqual({
        written: 2,
        deferred: 2,
        oldestWrittenAt: 0,
      });
      const kinds = await Promise.all(SHARDS.map(async (id) => (await stored(id))?.kind));
      expect(kinds).toEqual(['AFTER', 'AFTER', 'TRIM_HORIZON', 'TRIM_HORIZON']);
      // Still busy: the two left behind go first.
      emitAndAck();
      advance(1_000);
      const second = held.flushCapped(session, 2);
      await second.done;
      expect(second.oldestWrittenAt).toBe(0);
      expect((await stored(SHARDS[2]!))?.kind).toBe('AFTER');
      expect((await stored(SHARDS[3]!))?.kind).toBe('AFTER');
      // The first two changed again meanwhile: written at the next flush.
      const third = held.flushCapped(session, 4);
      await third.done;
      expect([third.written, third.deferred, third.oldestWrittenAt]).toEqual([2, 0, 1_000]);
      // Nothing changed since: nothing pending, nothing deferred.
      const idle = held.flushCapped(session, 0);
      expect([idle.written, idle.deferred]).toEqual([0, 0]);
      emitAndAck();
      const none = held.flushCapped(session, 0);
      await none.done;
      expect([none.written, none.deferred]).toEqual([0, 4]);
    });

    it('a shard handed over writes its last checkpoint at once, whatever the cap left behind', async () => {
      const { held, session, emitAndAck, stored } = await busyShards();
      emitAndAck();
      await held.flushCapped(session, 0).done;
      const shard = held.byId.get(SHARDS[0]!)!;
      const acked = shard.committable();
      held.beginRelease(shard, 'test');
      await new Promise((resolve) => setImmediate(resolve));
      held.maintain(session);
      await shard.writes.idle();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await stored(SHARDS[0]!)).toEqual(acked);
      expect(held.byId.has(SHARDS[0]!)).toBe(false);
    });

    it('at most once, every changed checkpoint is written: its emits wait for them', async () => {
      const { held, session, stored } = await busyShards({ delivery: 'at-most-once' });
      for (const id of SHARDS) held.byId.get(id)!.push([record(id, '500')]);
      const flush = held.flushCapped(session, 0);
      await flush.done;
      expect([flush.written, flush.deferred]).toEqual([0, 0]);
      for (const id of SHARDS) expect(await stored(id)).toEqual({ kind: 'AFTER', sequenceNumber: '500' });
    });
  });
});
