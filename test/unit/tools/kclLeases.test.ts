import type { Position } from '../../../src/core/position';
import {
  kclCheckpoint,
  leaseItem,
  leasesOfStream,
  liveLeases,
  parseLease,
  parseLeaseKey,
  sameCheckpoint,
  spoutPosition,
} from '../../../src/tools/kclLeases';

const now = { timestampMs: undefined, nowMs: 1_000 };
const seq = '49590338271490256608559692538361571095921575989136588898';

describe('KCL lease items', () => {
  it('reads single-stream and multi-stream keys, sentinels, KPL sub-sequences, parents and owners', () => {
    expect(
      parseLease({
        leaseKey: { S: 'shardId-000000000002' },
        leaseOwner: { S: 'worker-1' },
        leaseCounter: { N: '17' },
        checkpoint: { S: seq },
        checkpointSubSequenceNumber: { N: '3' },
        parentShardId: { SS: ['shardId-000000000001', 'shardId-000000000000'] },
        throughputKBps: { N: '12.5' },
      }),
    ).toEqual({
      leaseKey: 'shardId-000000000002',
      shardId: 'shardId-000000000002',
      owner: 'worker-1',
      counter: '17',
      checkpoint: { kind: 'SEQUENCE', sequenceNumber: seq, subSequence: 3 },
      parents: ['shardId-000000000000', 'shardId-000000000001'],
    });
    const multi = parseLease({
      leaseKey: { S: '123456789012:orders:1700000000:shardId-000000000004' },
      checkpoint: { S: 'SHARD_END' },
    });
    expect(multi).toMatchObject({
      shardId: 'shardId-000000000004',
      streamIdentifier: { account: '123456789012', stream: 'orders', creationEpoch: 1700000000 },
      checkpoint: { kind: 'SHARD_END' },
    });
    expect(parseLeaseKey('shardId-000000000004')).toBeUndefined();
    expect(() => parseLease({ leaseKey: { S: 'x' }, checkpoint: { S: 'SOMEWHERE' } })).toThrow(
      'x: checkpoint "SOMEWHERE" is neither a sequence number nor one of',
    );
  });

  it('keeps the leases of this stream at its creation time, names the others', () => {
    const lease = (key: string) => parseLease({ leaseKey: { S: key }, checkpoint: { S: 'TRIM_HORIZON' } });
    const all = [lease('1:orders:100:s-0'), lease('1:orders:50:s-0'), lease('1:payments:100:s-0')];
    expect(leasesOfStream(all, 'orders', 100_000)).toEqual({ leases: [all[0]], others: ['orders:50', 'payments:100'] });
  });

  it('counts a lease live when its counter moved between the two reads, and only then', () => {
    const at = (counter: number, owner?: string) =>
      parseLease({
        leaseKey: { S: 's' },
        checkpoint: { S: 'LATEST' },
        leaseCounter: { N: String(counter) },
        ...(owner && { leaseOwner: { S: owner } }),
      });
    expect(liveLeases([at(4, 'w')], [at(5, 'w')]).map((l) => l.owner)).toEqual(['w']);
    expect(liveLeases([at(4, 'w')], [at(4, 'w')])).toEqual([]);
    // Released (no owner) between the reads: nobody reads it.
    expect(liveLeases([at(4, 'w')], [at(5)])).toEqual([]);
  });
});

describe('positions, both ways', () => {
  const sequence = (sub: number) => ({ kind: 'SEQUENCE' as const, sequenceNumber: seq, subSequence: sub });

  it('maps a KCL checkpoint to the same "done through" point in the spout', () => {
    // A plain record: done whole.
    expect(spoutPosition(sequence(0), { userRecords: 1 }, now)).toEqual({ kind: 'AFTER', sequenceNumber: seq });
    // Inside an aggregate of 4: user records 0..1 done, 2..3 not.
    expect(spoutPosition(sequence(1), { userRecords: 4 }, now)).toEqual({
      kind: 'AFTER',
      sequenceNumber: seq,
      subSequence: 1,
    });
    expect(spoutPosition(sequence(0), { userRecords: 4 }, now)).toEqual({
      kind: 'AFTER',
      sequenceNumber: seq,
      subSequence: 0,
    });
    // Its last user record: the aggregate is done, as the spout itself writes it.
    expect(spoutPosition(sequence(3), { userRecords: 4 }, now)).toEqual({ kind: 'AFTER', sequenceNumber: seq });
    expect(spoutPosition({ kind: 'SHARD_END' }, undefined, now)).toEqual({ kind: 'SHARD_END' });
    expect(spoutPosition({ kind: 'TRIM_HORIZON' }, undefined, now)).toEqual({ kind: 'TRIM_HORIZON' });
    expect(spoutPosition({ kind: 'LATEST' }, undefined, now)).toEqual({ kind: 'AT_TIMESTAMP', timestampMs: 1_000 });
    expect(spoutPosition({ kind: 'AT_TIMESTAMP' }, undefined, now)).toEqual({
      error: expect.stringContaining('--source-timestamp'),
    });
    expect(spoutPosition({ kind: 'AT_TIMESTAMP' }, undefined, { timestampMs: 5, nowMs: 1 })).toEqual({
      kind: 'AT_TIMESTAMP',
      timestampMs: 5,
    });
  });

  it('maps a spout position to a KCL checkpoint that KCL resumes at the same point', () => {
    const after: Position = { kind: 'AFTER', sequenceNumber: seq };
    expect(kclCheckpoint(after, { userRecords: 1 })).toEqual(sequence(0));
    // KCL re-reads the aggregate and drops what is at or below the checkpoint: its last user record.
    expect(kclCheckpoint(after, { userRecords: 5 })).toEqual(sequence(4));
    expect(kclCheckpoint({ ...after, subSequence: 2 }, { userRecords: 5 })).toEqual(sequence(2));
    for (const [position, shape] of [
      [after, { userRecords: 1 }],
      [after, { userRecords: 5 }],
      [{ ...after, subSequence: 2 }, { userRecords: 5 }],
    ] as const)
      expect(spoutPosition(kclCheckpoint(position, shape), shape, now)).toEqual(position);
  });

  it('writes lease items as KCL does: no empty sets, hash range, multi-stream columns; re-writing is a no-op', () => {
    const item = leaseItem('shardId-1', sequence(2), { parents: [], hashRange: { start: 0n, end: 10n } });
    expect(item).toEqual({
      leaseKey: { S: 'shardId-1' },
      leaseCounter: { N: '0' },
      ownerSwitchesSinceCheckpoint: { N: '0' },
      checkpoint: { S: seq },
      checkpointSubSequenceNumber: { N: '2' },
      startingHashKey: { S: '0' },
      endingHashKey: { S: '10' },
    });
    expect(leaseItem('1:orders:100:s-1', { kind: 'SHARD_END' }, { parents: ['s-0'], children: ['s-2'] })).toMatchObject(
      {
        parentShardId: { SS: ['s-0'] },
        childShardId: { SS: ['s-2'] },
        streamName: { S: '1:orders:100' },
        shardId: { S: 's-1' },
      },
    );
    expect(sameCheckpoint(item, sequence(2))).toBe(true);
    expect(sameCheckpoint(item, sequence(1))).toBe(false);
  });
});
