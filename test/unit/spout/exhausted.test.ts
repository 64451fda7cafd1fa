import fc from 'fast-check';
import { afterFailure, deadLetterTuple, FailureOutcome } from '../../../src/spout/exhausted';

describe('a failed record, retried or given up', () => {
  it('is retried up to maxRetries failures, given up at the next one, and never given up when unlimited', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 50 }),
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom('skip' as const, 'deadLetter' as const),
        (maxRetries, attempts, onExhausted) => {
          const outcome = afterFailure(attempts, { maxRetries, onExhausted }, true);
          const over = maxRetries >= 0 && attempts > maxRetries;
          expect(outcome).toBe(over ? onExhausted : FailureOutcome.Retry);
        },
      ),
    );
  });

  it('is not dead-lettered while the process may not emit from its shard: it stays a retry (whoever reads it next gives it up)', () => {
    expect(afterFailure(5, { maxRetries: 2, onExhausted: 'deadLetter' }, false)).toBe(FailureOutcome.Retry);
    // Skipping emits nothing: it needs no trusted lease.
    expect(afterFailure(5, { maxRetries: 2, onExhausted: 'skip' }, false)).toBe(FailureOutcome.Skip);
  });

  it('carries the tuple, then attempts and last failure time', () => {
    expect(deadLetterTuple(['k', 'data'], 4, 1_700_000_000_000)).toEqual(['k', 'data', 4, 1_700_000_000_000]);
  });
});
