import fc from 'fast-check';
import { fetchRoom, heldIn, shardShare, type MemoryLimits } from '../../../src/held/memory';

const limits: MemoryLimits = {
  maxRecordsInMemory: 2_000,
  maxBytesInMemory: 1_000_000,
  shardBufferSize: 500,
  maxRecordsPerRequest: 300,
};
const empty = { buffered: 0, held: { records: 0, bytes: 0 }, averageRecordBytes: 0 };

describe('fetchRoom', () => {
  it('is 0 at or over either cap of the process', () => {
    expect(fetchRoom({ records: 2_000, bytes: 0 }, empty, 4, limits)).toBe(0);
    expect(fetchRoom({ records: 2_500, bytes: 0 }, empty, 4, limits)).toBe(0);
    expect(fetchRoom({ records: 0, bytes: 1_000_000 }, empty, 4, limits)).toBe(0);
    expect(fetchRoom({ records: 1_999, bytes: 999_999 }, empty, 4, limits)).toBe(1);
  });

  it('is 0 once the shard holds its share, in records or in bytes', () => {
    const atRecords = { buffered: 0, held: { records: 500, bytes: 10 }, averageRecordBytes: 1 };
    expect(fetchRoom(atRecords.held, atRecords, 4, limits)).toBe(0);
    const atBytes = { buffered: 0, held: { records: 10, bytes: 250_000 }, averageRecordBytes: 1 };
    expect(fetchRoom(atBytes.held, atBytes, 4, limits)).toBe(0);
  });

  it('asks for what fits in the buffer, the caps, the share and one request', () => {
    const known = { ...empty, averageRecordBytes: 1 };
    expect(fetchRoom({ records: 0, bytes: 0 }, known, 1, limits)).toBe(300);
    expect(
      fetchRoom({ records: 0, bytes: 0 }, { ...known, buffered: 250, held: { records: 450, bytes: 0 } }, 1, limits),
    ).toBe(250);
    expect(fetchRoom({ records: 1_900, bytes: 0 }, known, 2, limits)).toBe(100);
    expect(fetchRoom({ records: 0, bytes: 0 }, { ...known, held: { records: 900, bytes: 0 } }, 2, limits)).toBe(100);
    // Before the shard read any record its size is unknown (up to 1 MiB): one record.
    expect(fetchRoom({ records: 0, bytes: 0 }, empty, 1, limits)).toBe(1);
    // Bytes of room become records at the shard's mean record size.
    const holding = (bytes: number) => ({ buffered: 0, held: { records: 10, bytes }, averageRecordBytes: 1_000 });
    expect(fetchRoom(holding(490_000).held, holding(490_000), 1, limits)).toBe(10);
    expect(fetchRoom({ records: 10, bytes: 990_000 }, holding(0), 4, limits)).toBe(10);
    // At least one record while there is room at all.
    expect(fetchRoom(holding(499_999).held, holding(499_999), 1, limits)).toBe(1);
  });

  it('waits while the buffer holds more than leaves room for a whole request (or half the buffer)', () => {
    const known = { ...empty, averageRecordBytes: 1 };
    const buffered = (n: number) => ({ ...known, buffered: n, held: { records: n, bytes: 0 } });
    // A buffer of 500, requests of 300: refilled once it holds 250 or less, not with the last few drained.
    expect(fetchRoom({ records: 451, bytes: 0 }, buffered(451), 1, limits)).toBe(0);
    expect(fetchRoom({ records: 251, bytes: 0 }, buffered(251), 1, limits)).toBe(0);
    expect(fetchRoom({ records: 250, bytes: 0 }, buffered(250), 1, limits)).toBe(250);
    // Requests smaller than half the buffer: refilled once a whole one fits.
    const small = { ...limits, maxRecordsPerRequest: 100 };
    expect(fetchRoom({ records: 401, bytes: 0 }, buffered(401), 1, small)).toBe(0);
    expect(fetchRoom({ records: 400, bytes: 0 }, buffered(400), 1, small)).toBe(100);
    // Records in flight do not count: only what is buffered for Storm to take.
    expect(
      fetchRoom({ records: 450, bytes: 0 }, { ...known, buffered: 0, held: { records: 450, bytes: 0 } }, 1, limits),
    ).toBe(300);
  });

  it('never goes over a limit', () => {
    const held = fc.record({ records: fc.nat(3_000), bytes: fc.nat(1_500_000) });
    fc.assert(
      fc.property(
        held,
        held,
        fc.nat(600),
        fc.integer({ min: 1, max: 50 }),
        fc.nat(20_000),
        (process, own, buffered, shards, mean) => {
          const shard = { buffered: Math.min(buffered, own.records), held: own, averageRecordBytes: mean };
          const room = fetchRoom(process, shard, shards, limits);
          const share = shardShare(limits, shards);
          expect(room).toBeGreaterThanOrEqual(0);
          if (room === 0) return;
          expect(room).toBeLessThanOrEqual(limits.maxRecordsPerRequest);
          expect(shard.buffered + room).toBeLessThanOrEqual(limits.shardBufferSize);
          expect(process.records + room).toBeLessThanOrEqual(limits.maxRecordsInMemory);
          expect(own.records + room).toBeLessThanOrEqual(share.records);
          expect(process.bytes).toBeLessThan(limits.maxBytesInMemory);
          expect(own.bytes).toBeLessThan(share.bytes);
          if (room > 1) expect(own.bytes + room * mean).toBeLessThanOrEqual(share.bytes);
        },
      ),
    );
  });
});

describe('a process reading by fetchRoom', () => {
  type Step = { kind: 'fetch' | 'emit' | 'ack' | 'release'; shard: number } | { kind: 'take' };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({
      kind: fc.constantFrom('fetch' as const, 'emit' as const, 'ack' as const, 'release' as const),
      shard: fc.nat(15),
    }),
    fc.record({ kind: fc.constant('take' as const) }),
  );

  it('stays under both caps, and one shard stuck behind a failing record never stops the others, as shards come and go', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), fc.integer({ min: 1, max: 5_000 }), (steps, size) => {
        // Shard 0 is stuck: nothing it read is ever acked. Every record is `size` bytes.
        const newShard = () => ({ buffered: 0, held: { records: 0, bytes: 0 }, averageRecordBytes: 0 });
        const shards = [newShard()];
        const room = (i: number) => fetchRoom(heldIn(shards), shards[i], shards.length, limits);
        for (const s of steps) {
          const i = s.kind === 'take' ? 0 : s.shard % shards.length;
          const shard = shards[i];
          if (s.kind === 'take') {
            shards.push(newShard());
          } else if (s.kind === 'fetch') {
            const n = room(i);
            shard.buffered += n;
            shard.held = { records: shard.held.records + n, bytes: shard.held.bytes + n * size };
            if (n > 0) shard.averageRecordBytes = size;
          } else if (s.kind === 'emit') {
            shard.buffered = 0;
          } else if (s.kind === 'ack' && i !== 0) {
            // Every emitted record acked: what is left is the buffer.
            shard.held = { records: shard.buffered, bytes: shard.buffered * size };
          } else if (s.kind === 'release' && i !== 0) {
            shards.splice(i, 1);
          }
          const total = heldIn(shards);
          expect(total.records).toBeLessThanOrEqual(limits.maxRecordsInMemory);
          expect(total.bytes).toBeLessThan(limits.maxBytesInMemory + size);
          // Whatever the stuck shard holds, another shard may read when the others hold nothing.
          if (shards.length > 1 && shards.slice(1).every((o) => o.held.records === 0))
            expect(room(1)).toBeGreaterThan(0);
        }
      }),
    );
  });
});
