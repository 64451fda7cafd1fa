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

/** Why a dead letter was set aside (its `reason` field, with `maxRecordAgeMs`). */
export const DeadLetterReason = { MaxRetries: 'maxRetries', TooOld: 'tooOld' } as const;
export type DeadLetterReason = (typeof DeadLetterReason)[keyof typeof DeadLetterReason];

/**
 * The dead letter: the record's tuple, then `attempts` and `lastFailureTime` (epoch ms; null for a record that
 * never failed), as DEAD_LETTER_FIELDS says, then, when given (with `maxRecordAgeMs`), `reason` and `ageMs`
 * (null when Kinesis gave no arrival time), as DEAD_LETTER_REASON_FIELDS says.
 */
export function deadLetterTuple(
  tuple: unknown[],
  attempts: number,
  lastFailureTime: number | null,
  why?: { reason: DeadLetterReason; ageMs: number | undefined },
): unknown[] {
  return why === undefined
    ? [...tuple, attempts, lastFailureTime]
    : [...tuple, attempts, lastFailureTime, why.reason, why.ageMs ?? null];
}
