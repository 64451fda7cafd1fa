import fc from 'fast-check';
import { InFlight, retryDelayMs } from '../../../src/spout/inFlight';
import { OwnedShard } from '../../../src/spout/ownedShard';
import { compareSequence } from '../../../src/core/position';

describe('InFlight checkpoint rule', () => {
  it('the watermark is the highest emitted record below which every record is acked, in any ack order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }).chain((n) => fc.tuple(fc.constant(n), fc.shuffledSubarray([...Array(n).keys()]))),
        ([n, acks]) => {
          const tracker = new InFlight<null>();
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

  it('ignores unknown and repeated acks', () => {
    const tracker = new InFlight<null>();
    tracker.add('5', null);
    expect(tracker.ack('4')).toBe(false);
    expect(tracker.ack('5')).toBe(true);
    expect(tracker.ack('5')).toBe(false);
    expect(tracker.watermark).toBe('5');
  });

  it('refuses records out of stream order', () => {
    const tracker = new InFlight<null>();
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

describe('OwnedShard', () => {
  const record = (n: number) => ({ shardId: 's', sequenceNumber: String(n), partitionKey: 'k', data: new Uint8Array(), arrivalMs: 0 });

  it('re-emits due retries first, earliest due first, then the buffer', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([record(1), record(2), record(3), record(4)]);
    for (let i = 0; i < 3; i += 1) shard.takeNext(0);
    shard.scheduleRetry('3', 50);
    shard.scheduleRetry('1', 30);
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
  const record = (n: number) => ({ shardId: 's', sequenceNumber: String(n), partitionKey: 'k', data: new Uint8Array(), arrivalMs: 0 });

  it('re-emits its failed records, and nothing new, until every one is acked', () => {
    const shard = new OwnedShard('s', 0);
    shard.push([record(1), record(2), record(3), record(4)]);
    for (let i = 0; i < 3; i += 1) shard.takeNext(0);
    shard.scheduleRetry('1', 10);
    shard.phase = { kind: 'releasing', deadline: 100, reason: 'test' };
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
