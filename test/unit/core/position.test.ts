import fc from 'fast-check';
import { isAhead, isNotBehind, isPosition, type Position } from '../../../src/core/position';

const sequence = fc.bigInt({ min: 0n, max: 2n ** 128n }).map((n) => n.toString());
const position: fc.Arbitrary<Position> = fc.oneof(
  fc.constant<Position>({ kind: 'TRIM_HORIZON' }),
  fc.constant<Position>({ kind: 'SHARD_END' }),
  fc.integer({ min: 0, max: 2 ** 45 }).map((timestampMs): Position => ({ kind: 'AT_TIMESTAMP', timestampMs })),
  sequence.map((sequenceNumber): Position => ({ kind: 'AFTER', sequenceNumber })),
);

describe('checkpoint order', () => {
  it('a checkpoint is written only when strictly ahead: never backwards, never the same again', () => {
    fc.assert(
      fc.property(position, position, (next, stored) => {
        if (isAhead(next, stored)) {
          expect(isNotBehind(next, stored)).toBe(true);
          expect(next).not.toEqual(stored);
        }
        if (next.kind === 'AFTER' && stored.kind === 'AFTER')
          expect(isAhead(next, stored)).toBe(BigInt(next.sequenceNumber) > BigInt(stored.sequenceNumber));
      }),
    );
  });

  it('after adopting a stored checkpoint past our watermark, the lower watermark is not written', () => {
    expect(isAhead({ kind: 'AFTER', sequenceNumber: '100' }, { kind: 'AFTER', sequenceNumber: '200' })).toBe(false);
    expect(isAhead({ kind: 'AFTER', sequenceNumber: '100' }, { kind: 'SHARD_END' })).toBe(false);
    expect(isAhead({ kind: 'AFTER', sequenceNumber: '1' }, { kind: 'TRIM_HORIZON' })).toBe(true);
  });
});

describe('isPosition', () => {
  it('accepts what the spout writes and nothing malformed', () => {
    fc.assert(fc.property(position, (p) => expect(isPosition(JSON.parse(JSON.stringify(p)))).toBe(true)));
    for (const bad of [
      null,
      'AFTER',
      {},
      { kind: 'AFTER' },
      { kind: 'AFTER', sequenceNumber: 12 },
      { kind: 'AFTER', sequenceNumber: '12a' },
      { kind: 'AT_TIMESTAMP' },
      { kind: 'LATEST' },
    ]) {
      expect(isPosition(bad)).toBe(false);
    }
  });
});
