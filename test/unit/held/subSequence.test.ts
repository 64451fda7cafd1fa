/**
 * KPL user records through a shard's in-flight records: message ids, the checkpoint inside an aggregate
 * (against any ack order), resuming inside an aggregate, memory per user record, and the stored checkpoint.
 */
import fc from 'fast-check';
import { compareAfter, isAhead, isPosition, type Position } from '../../../src/core/position';
import { CoordinationStore } from '../../../src/coordination/store';
import type { NodeData, ZooKeeper } from '../../../src/coordination/zooKeeper';
import { hashKeyOf } from '../../../src/kinesis/aggregation';
import { messageId, messageIdOfKey, parseMessageId, type KinesisRecord } from '../../../src/kinesis/records';
import { fetchRoom } from '../../../src/held/memory';
import { OwnedShard } from '../../../src/held/ownedShard';
import { kplAggregate } from '../../helpers/kpl';

/** A Kinesis record: plain, or a KPL aggregate of `users` user records. */
function kinesisRecord(sequenceNumber: string, users: number): KinesisRecord {
  const data =
    users === 0
      ? Buffer.from(`plain ${sequenceNumber}`)
      : kplAggregate(
          Array.from({ length: users }, (_, i) => ({
            partitionKey: `pk-${sequenceNumber}-${i}`,
            data: `${sequenceNumber}/${i}`,
          })),
        ).data;
  return { shardId: 's', sequenceNumber, partitionKey: 'outer', data, arrivalMs: 0 };
}

const key = (r: KinesisRecord) =>
  r.subSequence === undefined ? r.sequenceNumber : `${r.sequenceNumber}:${r.subSequence}`;

function emitAll(shard: OwnedShard): KinesisRecord[] {
  const out: KinesisRecord[] = [];
  for (let next = shard.takeNext(0); next; next = shard.takeNext(0)) out.push(next.record);
  return out;
}

describe('message ids', () => {
  it('carry the sub-sequence of a user record, and parse back to the key the shard tracks it by', () => {
    expect(messageId('shardId-000000000001', '4962', 7)).toBe('shardId-000000000001:4962:7');
    expect(messageId('shardId-000000000001', '4962')).toBe('shardId-000000000001:4962');
    expect(parseMessageId('shardId-000000000001:4962:7')).toEqual({
      streamIndex: 0,
      shardId: 'shardId-000000000001',
      sequenceNumber: '4962',
      subSequence: 7,
      key: '4962:7',
    });
    expect(parseMessageId('shardId-000000000001:4962')).toEqual({
      streamIndex: 0,
      shardId: 'shardId-000000000001',
      sequenceNumber: '4962',
      key: '4962',
    });
    // A record's key in its shard's in-flight records gives its message id back (what late outcomes are expected by).
    expect(messageIdOfKey('shardId-000000000001', parseMessageId('shardId-000000000001:4962:7')!.key)).toBe(
      'shardId-000000000001:4962:7',
    );
    for (const bad of ['s:1:07', 's:1:-1', 's:1:', 's:x', 's:1:2:3', 's:1:1e3', 's:1:12345678901', 42, null])
      expect(parseMessageId(bad)).toBeUndefined();
  });

  it('property: every id round-trips', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z0-9_-]{1,30}$/),
        fc.bigInt({ min: 0n, max: 10n ** 56n }),
        fc.option(fc.nat(999_999_999), { nil: undefined }),
        (shardId, seq, sub) => {
          const parsed = parseMessageId(messageId(shardId, seq.toString(), sub));
          expect(parsed).toMatchObject({ shardId, sequenceNumber: seq.toString() });
          expect(parsed?.subSequence).toBe(sub);
        },
      ),
    );
  });
});

describe('checkpoint with sub-sequences', () => {
  // Kinesis records, each plain (0) or an aggregate of 1..5 user records.
  const layout = fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 12 });

  it('property: in any ack order, the checkpoint is the acked prefix, inside an aggregate when it stops there; resuming from it re-emits every unacked user record and no record of the prefix', () => {
    fc.assert(
      fc.property(
        layout.chain((users) => {
          const total = users.reduce((n, u) => n + Math.max(1, u), 0);
          return fc.tuple(fc.constant(users), fc.shuffledSubarray([...Array(total).keys()]));
        }),
        ([users, acks]) => {
          const records = users.map((u, i) => kinesisRecord(String(10n ** 30n + BigInt(i) * 3n), u));
          const shard = new OwnedShard('s', 0);
          shard.push(records);
          const emitted = emitAll(shard);
          expect(emitted).toHaveLength(users.reduce((n, u) => n + Math.max(1, u), 0));
          expect(new Set(emitted.map(key)).size).toBe(emitted.length);
          const acked = new Set<number>();
          let previous: Position | undefined;
          for (const i of acks) {
            expect(shard.inFlight.ack(key(emitted[i]))).toBe(true);
            acked.add(i);
            let prefix = -1;
            while (acked.has(prefix + 1)) prefix += 1;
            const at = emitted[prefix];
            const expected: Position | undefined =
              at === undefined
                ? undefined
                : at.subSequence === undefined || at.subSequence === at.lastSubSequence
                  ? { kind: 'AFTER', sequenceNumber: at.sequenceNumber }
                  : { kind: 'AFTER', sequenceNumber: at.sequenceNumber, subSequence: at.subSequence };
            const checkpoint = shard.committable();
            expect(checkpoint).toEqual(expected);
            if (previous && checkpoint)
              expect(isAhead(checkpoint, previous) || JSON.stringify(checkpoint) === JSON.stringify(previous)).toBe(
                true,
              );
            previous = checkpoint;
          }
          // A new holder resumes from that checkpoint: re-reads AT the record when inside an aggregate, AFTER it otherwise.
          const resumed = new OwnedShard('s', 0);
          let fromIndex = 0;
          if (previous?.kind === 'AFTER') {
            const c = previous;
            fromIndex =
              records.findIndex((r) => r.sequenceNumber === c.sequenceNumber) + (c.subSequence === undefined ? 1 : 0);
            resumed.startsAt(c);
          }
          resumed.push(records.slice(fromIndex));
          const again = new Set(emitAll(resumed).map(key));
          emitted.forEach((r, i) => {
            const covered =
              previous?.kind === 'AFTER' &&
              compareAfter({ sequenceNumber: r.sequenceNumber, subSequence: r.subSequence ?? -1 }, previous) <= 0;
            expect(again.has(key(r))).toBe(!covered);
            if (!acked.has(i)) expect(again.has(key(r))).toBe(true);
          });
        },
      ),
    );
  });

  it('a user record failed and re-emitted keeps its id and holds the checkpoint inside its aggregate', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([kinesisRecord('100', 3), kinesisRecord('200', 0)]);
    const emitted = emitAll(shard);
    expect(emitted.map(key)).toEqual(['100:0', '100:1', '100:2', '200']);
    shard.inFlight.ack('100:0');
    shard.inFlight.failed('100:1', 0);
    shard.scheduleRetry('100:1', 5);
    shard.inFlight.ack('100:2');
    shard.inFlight.ack('200');
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '100', subSequence: 0 });
    const retried = shard.takeNext(10);
    expect(retried?.retry).toBeDefined();
    expect(key(retried!.record)).toBe('100:1');
    expect(retried!.record.partitionKey).toBe('pk-100-1');
    shard.inFlight.ack('100:1');
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '200' });
  });

  it('with deaggregate off, an aggregate is one record, emitted as its raw bytes', () => {
    const shard = new OwnedShard('s', 0, { deaggregate: false });
    const aggregate = kinesisRecord('100', 3);
    shard.push([aggregate]);
    expect(emitAll(shard)).toEqual([aggregate]);
  });

  it('a corrupt aggregate is emitted as it is and told; a user record outside the shard range is delivered and told', () => {
    // The hash range holds nothing: every user record is outside it.
    const shard = new OwnedShard('s', 0, { hashRange: { start: 0n, end: 0n } });
    const good = kinesisRecord('100', 2);
    const bad = { ...kinesisRecord('200', 2), data: Buffer.from(kinesisRecord('200', 2).data) };
    bad.data[bad.data.length - 1] ^= 1;
    const corrupt: string[] = [];
    const outside: string[] = [];
    shard.push([good, bad], {
      corrupt: (r, reason) => corrupt.push(`${r.sequenceNumber}: ${reason}`),
      outsideRange: (rs) => outside.push(...rs.map(key)),
    });
    expect(emitAll(shard).map(key)).toEqual(['100:0', '100:1', '200']);
    expect(corrupt).toEqual([expect.stringMatching(/^200: MD5/)]);
    expect(outside).toEqual(['100:0', '100:1']);
  });

  it('a user record inside the shard range is not told about', () => {
    const shard = new OwnedShard('s', 0, { hashRange: { start: 0n, end: 2n ** 128n - 1n } });
    const outside: KinesisRecord[] = [];
    shard.push([kinesisRecord('100', 3)], { corrupt: () => undefined, outsideRange: (rs) => outside.push(...rs) });
    expect(emitAll(shard)).toHaveLength(3);
    expect(outside).toEqual([]);
    // The lower half of the key space: exactly the user records whose key hashes into the upper half are told.
    const half = new OwnedShard('s', 0, { hashRange: { start: 0n, end: 2n ** 127n - 1n } });
    const told: string[] = [];
    half.push([kinesisRecord('200', 40)], {
      corrupt: () => undefined,
      outsideRange: (rs) => told.push(...rs.map((r) => r.partitionKey)),
    });
    const keys = emitAll(half).map((r) => r.partitionKey);
    const upper = keys.filter((k) => hashKeyOf(k)! >= 2n ** 127n);
    expect(upper.length).toBeGreaterThan(0);
    expect(upper.length).toBeLessThan(40);
    expect(told).toEqual(upper);
  });
});

describe('memory per user record', () => {
  it('counts each user record, and asks GetRecords for fewer Kinesis records when they are aggregates', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([kinesisRecord('1', 10), kinesisRecord('2', 10)]);
    expect(shard.held.records).toBe(20);
    expect(shard.userRecordsPerRecord).toBe(10);
    const limits = {
      maxRecordsInMemory: 1_000,
      maxBytesInMemory: 1 << 30,
      shardBufferSize: 120,
      maxRecordsPerRequest: 1_000,
    };
    // 100 user records of room in the buffer: 10 aggregates of 10.
    expect(fetchRoom(shard.held, shard, 1, limits)).toBe(10);
  });
});

describe('stored checkpoint', () => {
  /** Just enough of a ZooKeeper for the checkpoint node. */
  function memoryZk(): ZooKeeper & { nodes: Map<string, NodeData> } {
    const nodes = new Map<string, NodeData>();
    return {
      nodes,
      sessionId: '1',
      connectionState: 'connected',
      sessionTimeoutMs: 10_000,
      trustedUntil: () => Infinity,
      create: async (path, data) => {
        if (nodes.has(path)) return 'exists';
        nodes.set(path, { data, version: 0, ephemeralOwner: '0' });
        return 'created';
      },
      mkdirp: async () => undefined,
      getData: async (path) => nodes.get(path),
      getACL: async () => undefined,
      setData: async (path, data, version) => {
        const node = nodes.get(path);
        if (!node || node.version !== version) return 'conflict';
        nodes.set(path, { ...node, data, version: version + 1 });
        return version + 1;
      },
      getChildren: async () => [],
      remove: async () => false,
      transaction: async () => false,
      close: () => undefined,
    };
  }
  const path = '/base/checkpoints/s';
  const storedAt = (zk: { nodes: Map<string, NodeData> }) =>
    JSON.parse(zk.nodes.get(path)!.data.toString()) as { v: number; position: Position };

  it('is version 1 (what older spouts read) unless it stops inside an aggregate, then version 2; both read back', async () => {
    const zk = memoryZk();
    const store = new CoordinationStore(zk, '/base', 'me');
    await store.checkpointOrStart('s', { kind: 'TRIM_HORIZON' });
    const inside = await store.writeCheckpoint('s', { kind: 'AFTER', sequenceNumber: '5', subSequence: 3 }, 0);
    expect(storedAt(zk)).toMatchObject({ v: 2, position: { kind: 'AFTER', sequenceNumber: '5', subSequence: 3 } });
    expect((await store.readCheckpoint('s'))?.position).toEqual({ kind: 'AFTER', sequenceNumber: '5', subSequence: 3 });
    await store.writeCheckpoint(
      's',
      { kind: 'AFTER', sequenceNumber: '5' },
      inside === 'conflict' ? -1 : inside.version,
    );
    expect(storedAt(zk)).toMatchObject({ v: 1, position: { kind: 'AFTER', sequenceNumber: '5' } });
    expect((await store.readCheckpoint('s'))?.position).toEqual({ kind: 'AFTER', sequenceNumber: '5' });
  });

  it('reads what older spouts wrote, and refuses a sub-sequence under version 1 or an unknown version, naming the node', async () => {
    const zk = memoryZk();
    const store = new CoordinationStore(zk, '/base', 'me');
    const put = (value: object) =>
      zk.nodes.set(path, { data: Buffer.from(JSON.stringify(value)), version: 0, ephemeralOwner: '0' });
    put({ v: 1, position: { kind: 'AFTER', sequenceNumber: '42' }, owner: 'old', updatedAt: '2025-01-01T00:00:00Z' });
    expect((await store.readCheckpoint('s'))?.position).toEqual({ kind: 'AFTER', sequenceNumber: '42' });
    put({ v: 1, position: { kind: 'AFTER', sequenceNumber: '42', subSequence: 1 } });
    await expect(store.readCheckpoint('s')).rejects.toThrow(/checkpoints\/s holds no valid position/);
    put({ v: 3, position: { kind: 'AFTER', sequenceNumber: '42' } });
    await expect(store.readCheckpoint('s')).rejects.toThrow(
      /unsupported version 3 \(expected \{"v":1,...\} or \{"v":2,...\}\)/,
    );
    expect(isPosition({ kind: 'AFTER', sequenceNumber: '1', subSequence: -1 })).toBe(false);
    expect(isPosition({ kind: 'AFTER', sequenceNumber: '1', subSequence: 1.5 })).toBe(false);
  });

  it('orders positions inside an aggregate before the whole record, after the previous record', () => {
    const after = (sequenceNumber: string, subSequence?: number): Position => ({
      kind: 'AFTER',
      sequenceNumber,
      subSequence,
    });
    expect(isAhead(after('5', 1), after('5', 0))).toBe(true);
    expect(isAhead(after('5'), after('5', 7))).toBe(true);
    expect(isAhead(after('5', 7), after('5'))).toBe(false);
    expect(isAhead(after('5', 0), after('4'))).toBe(true);
    expect(isAhead(after('5', 2), after('5', 2))).toBe(false);
  });
});
