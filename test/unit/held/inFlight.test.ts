import fc from 'fast-check';
import { InFlight, retryDelayMs } from '../../../src/held/inFlight';
import { OwnedShard } from '../../../src/held/ownedShard';
import { compareSequence } from '../../../src/core/position';

describe('InFlight checkpoint rule', () => {
  it('the watermark is the highest emitted record below which every record is acked, in any ack order', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 60 })
          .chain((n) => fc.tuple(fc.constant(n), fc.shuffledSubarray([...Array(n).keys()]))),
        ([n, acks]) => {
          const tracker = new InFlight<null>(() => 0);
          // Sequence numbers beyond 2^53: compared as BigInt, never as numbers.
          const seq = (i: number) => (10n ** 30n + BigInt(i) * 7n).toString();
          for (let i = 0; i < n; i += 1) tracker.add(seq(i), null);
          const acked = new Set<number>();
          for (const i of acks) {
            expect(tracker.ack(seq(i))).toBe(true);
            acked.add(i);
            let prefix = -1;
            while (acked.has(prefix + 1)) prefix += 1;
            expect(tracker.watermark).toBe(prefix < 0 ? undefined : seq(prefix));
          }
          expect(tracker.size).toBe(n - acks.length);
        },
      ),
    );
  });

  it('after any adds, acks and fails: held counts match what is retained, the watermark only moves forward over acked records', () => {
    type Op = { kind: 'add'; gap: number; bytes: number } | { kind: 'ack' | 'fail'; pick: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), gap: fc.integer({ min: 1, max: 3 }), bytes: fc.nat(1_000) }),
      fc.record({ kind: fc.constantFrom('ack' as const, 'fail' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const tracker = new InFlight<{ bytes: number }>((r) => r.bytes);
        // The model: every emitted record in order, with its bytes and whether it is acked.
        const emitted: { seq: string; bytes: number; acked: boolean }[] = [];
        let next = 10n ** 25n;
        let previous: string | undefined;
        for (const o of ops) {
          if (o.kind === 'add') {
            next += BigInt(o.gap);
            tracker.add(next.toString(), { bytes: o.bytes });
            emitted.push({ seq: next.toString(), bytes: o.bytes, acked: false });
          } else if (emitted.length > 0) {
            const target = emitted[o.pick % emitted.length];
            if (o.kind === 'ack') {
              expect(tracker.ack(target.seq)).toBe(!target.acked);
              target.acked = true;
            } else {
              // A fail re-emits from what is kept: an unacked record still has its data.
              const entry = tracker.get(target.seq);
              expect(entry?.record.bytes).toBe(target.acked ? undefined : target.bytes);
              if (entry) {
                tracker.failed(target.seq, 0);
                tracker.reemit(target.seq);
              }
            }
          }
          const oldest = emitted.findIndex((e) => !e.acked);
          const unacked = emitted.filter((e) => !e.acked);
          expect(tracker.size).toBe(unacked.length);
          expect(tracker.held).toBe(oldest < 0 ? 0 : emitted.length - oldest);
          expect(tracker.heldBytes).toBe(unacked.reduce((sum, e) => sum + e.bytes, 0));
          expect(tracker.oldest()?.key).toBe(oldest < 0 ? undefined : emitted[oldest].seq);
          const covered = oldest < 0 ? emitted.length : oldest;
          expect(tracker.watermark).toBe(covered === 0 ? previous : emitted[covered - 1].seq);
          if (previous !== undefined) expect(compareSequence(tracker.watermark!, previous)).toBeGreaterThanOrEqual(0);
          previous = tracker.watermark;
        }
      }),
    );
  });

  it('behind a failing record, acked ones stay counted as held (the checkpoint cannot pass them) without their data', () => {
    const tracker = new InFlight<string>((r) => r.length);
    for (let i = 1; i <= 5_000; i += 1) tracker.add(String(i), 'x'.repeat(100));
    for (let i = 2; i <= 5_000; i += 1) tracker.ack(String(i));
    expect({
      size: tracker.size,
      held: tracker.held,
      heldBytes: tracker.heldBytes,
      watermark: tracker.watermark,
    }).toEqual({ size: 1, held: 5_000, heldBytes: 100, watermark: undefined });
    expect(tracker.get('2')).toBeUndefined();
    tracker.ack('1');
    expect({
      size: tracker.size,
      held: tracker.held,
      heldBytes: tracker.heldBytes,
      watermark: tracker.watermark,
    }).toEqual({ size: 0, held: 0, heldBytes: 0, watermark: '5000' });
  });

  it('ignores unknown and repeated acks', () => {
    const tracker = new InFlight<null>(() => 0);
    tracker.add('5', null);
    expect(tracker.ack('4')).toBe(false);
    expect(tracker.ack('5')).toBe(true);
    expect(tracker.ack('5')).toBe(false);
    expect(tracker.watermark).toBe('5');
  });

  it('refuses records out of stream order', () => {
    const tracker = new InFlight<null>(() => 0);
    tracker.add('20', null);
    expect(() => tracker.add('3', null)).toThrow(/in order/);
  });
});

describe('retry backoff', () => {
  it('grows exponentially, stays within [50%, 100%] of the capped value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, r) => {
        const policy = { initialBackoffMs: 100, maxBackoffMs: 30_000 };
        const capped = Math.min(30_000, 100 * 2 ** (attempt - 1));
        const delay = retryDelayMs(attempt, policy, () => r);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(capped / 2));
        expect(delay).toBeLessThanOrEqual(capped);
      }),
    );
  });
});

/** A plain record of shard `s` with sequence number `n`. */
const record = (n: number) => ({
  shardId: 's',
  sequenceNumber: String(n),
  partitionKey: 'k',
  data: new Uint8Array(),
  arrivalMs: 0,
});

describe('OwnedShard', () => {
  it('re-emits due retries first, earliest due first, then the buffer', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([record(1), record(2), record(3), record(4)]);
    for (let i = 0; i < 3; i += 1) shard.takeNext(0);
    shard.inFlight.failed('3', 0);
    shard.scheduleRetry('3', 50);
    shard.inFlight.failed('1', 0);
    shard.scheduleRetry('1', 30);
    shard.inFlight.failed('2', 0);
    shard.scheduleRetry('2', 500);
    expect(shard.takeNext(10)?.record.sequenceNumber).toBe('4');
    expect(shard.takeNext(100)?.record.sequenceNumber).toBe('1');
    expect(shard.takeNext(100)?.retry).toBeDefined();
    expect(shard.takeNext(100)).toBeUndefined();
    expect(shard.takeNext(600)?.record.sequenceNumber).toBe('2');
  });

  it('counts prefetched plus in-flight records against memory', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([record(1), record(2)]);
    shard.takeNext(0);
    expect(shard.inMemory).toBe(2);
    shard.inFlight.ack('1');
    expect(shard.inMemory).toBe(1);
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '1' });
  });

  it('holds, in records and bytes, what is prefetched, in flight, acked behind an unacked record, and reserved', () => {
    const sized = (n: number, bytes: number) => ({ ...record(n), partitionKey: 'key', data: new Uint8Array(bytes) });
    const shard = new OwnedShard('s', 0);
    shard.push([sized(1, 100), sized(2, 200), sized(3, 300), sized(4, 400)]);
    expect(shard.held).toEqual({ records: 4, bytes: 1_000 + 4 * 3 });
    expect(shard.averageRecordBytes).toBe(253);
    for (let i = 0; i < 3; i += 1) shard.takeNext(0);
    expect(shard.held).toEqual({ records: 4, bytes: 1_012 });
    // 2 and 3 acked behind 1: still held (the checkpoint cannot pass them), without their data.
    shard.inFlight.ack('2');
    shard.inFlight.ack('3');
    expect(shard.held).toEqual({ records: 4, bytes: 103 + 403 });
    shard.reserve(10);
    expect(shard.held.records).toBe(14);
    shard.reserve(0);
    shard.inFlight.ack('1');
    expect(shard.held).toEqual({ records: 1, bytes: 403 });
    shard.dropBuffer();
    expect(shard.held).toEqual({ records: 0, bytes: 0 });
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '3' });
  });
});

describe('compareSequence', () => {
  it('orders decimal sequence numbers as BigInt does', () => {
    const digits = fc.bigInt({ min: 0n, max: 2n ** 200n }).map((n) => n.toString());
    fc.assert(
      fc.property(digits, digits, (a, b) => {
        const expected = BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
        expect(compareSequence(a, b)).toBe(expected);
      }),
    );
  });
});

describe('OwnedShard hand-over', () => {
  it('re-emits its failed records, and nothing new, until every one is acked', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([record(1), record(2), record(3), record(4)]);
    for (let i = 0; i < 3; i += 1) shard.takeNext(0);
    shard.inFlight.failed('1', 0);
    shard.scheduleRetry('1', 10);
    shard.enter({ kind: 'releasing', deadline: 100, reason: 'test' });
    shard.dropBuffer();
    expect(shard.takeNext(5)).toBeUndefined();
    expect(shard.takeNext(10)?.record.sequenceNumber).toBe('1');
    shard.inFlight.ack('2');
    shard.inFlight.ack('3');
    expect(shard.handedOver).toBe(false);
    shard.inFlight.ack('1');
    expect(shard.handedOver).toBe(true);
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '3' });
  });
});

describe('InFlight fails', () => {
  it('counts a fail of an outstanding emission once; a second fail before the re-emission is no fail', () => {
    const inFlight = new InFlight<string>(() => 1);
    inFlight.add('1', 'a');
    expect(inFlight.failed('1', 5)).toMatchObject({ attempts: 1, firstFailedAt: 5, outstanding: false });
    expect(inFlight.failed('1', 6)).toBeUndefined();
    expect(inFlight.reemit('1')).toMatchObject({ outstanding: true });
    expect(inFlight.reemit('1')).toBeUndefined();
    expect(inFlight.failed('1', 7)).toMatchObject({ attempts: 2, firstFailedAt: 5 });
    inFlight.ack('1');
    expect(inFlight.failed('1', 8)).toBeUndefined();
    expect(inFlight.reemit('1')).toBeUndefined();
  });
});
