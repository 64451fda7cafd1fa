/** What becomes of a failed record: re-emitted, or given up once over `retry.maxRetries` (skipped or dead-lettered). */
import type { OnExhausted } from '../config/schema';

export const FailureOutcome = { Retry: 'retry', Skip: 'skip', DeadLetter: 'deadLetter' } as const;
export type FailureOutcome = (typeof FailureOutcome)[keyof typeof FailureOutcome];

export interface ExhaustionPolicy {
  /** `-1`: unlimited. */
  maxRetries: number;
  onExhausted: OnExhausted;
}

/**
 * `attempts` counts the record's failures so far, this one included. A dead letter is an emit: while this
 * process may not emit from the shard (its lease not trusted, or the shard being handed over) the record
 * stays a retry, so it is dead-lettered by whoever reads it next, never by two readers, never lost.
 */
export function afterFailure(attempts: number, policy: ExhaustionPolicy, mayEmit: boolean): FailureOutcome {
  if (policy.maxRetries < 0 || attempts <= policy.maxRetries) return FailureOutcome.Retry;
  if (policy.onExhausted === 'skip') return FailureOutcome.Skip;
  return mayEmit ? FailureOutcome.DeadLetter : FailureOutcome.Retry;
}

/** The dead letter: the record's tuple, then `attempts` and `lastFailureTime` (epoch ms), as DEAD_LETTER_FIELDS says. */
export function deadLetterTuple(tuple: unknown[], attempts: number, lastFailureTime: number): unknown[] {
  return [...tuple, attempts, lastFailureTime];
}
