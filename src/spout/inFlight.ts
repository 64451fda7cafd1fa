/**
 * Per-shard record of emitted, not yet acked records, and the committable checkpoint: the highest
 * sequence number below which (and at which) every emitted record is acked.
 */
import { compareSequence } from '../core/position';

export interface Emitted<R> {
  sequenceNumber: string;
  record: R;
  acked: boolean;
  attempts: number;
  firstFailedAt?: number;
}

export class InFlight<R> {
  private queue: Emitted<R>[] = [];
  private head = 0;
  private readonly bySequence = new Map<string, Emitted<R>>();
  private committable: string | undefined;

  /** Records must be emitted in stream order (the order the shard returned them). */
  add(sequenceNumber: string, record: R): void {
    const last = this.queue[this.queue.length - 1];
    if (last && compareSequence(sequenceNumber, last.sequenceNumber) <= 0) {
      throw new Error(`records must be emitted in order: ${sequenceNumber} after ${last.sequenceNumber}`);
    }
    const entry: Emitted<R> = { sequenceNumber, record, acked: false, attempts: 0 };
    this.queue.push(entry);
    this.bySequence.set(sequenceNumber, entry);
  }

  get(sequenceNumber: string): Emitted<R> | undefined {
    return this.bySequence.get(sequenceNumber);
  }

  /** Marks a record acked; false when it is not in flight here (unknown, or acked already). */
  ack(sequenceNumber: string): boolean {
    const entry = this.bySequence.get(sequenceNumber);
    if (!entry) return false;
    entry.acked = true;
    this.bySequence.delete(sequenceNumber);
    while (this.head < this.queue.length && this.queue[this.head].acked) {
      this.committable = this.queue[this.head].sequenceNumber;
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return true;
  }

  /** Sequence number the checkpoint may move to, or undefined when nothing new is fully acked. */
  get watermark(): string | undefined {
    return this.committable;
  }

  get size(): number {
    return this.bySequence.size;
  }

  /** Sequence numbers emitted and not acked yet. */
  unacked(): IterableIterator<string> {
    return this.bySequence.keys();
  }

  /** The oldest unacked record (it holds the checkpoint back). */
  oldest(): Emitted<R> | undefined {
    return this.head < this.queue.length ? this.queue[this.head] : undefined;
  }
}

/** Delay before re-emitting a failed record: exponential from `initialMs`, capped, with jitter in [50%, 100%]. */
export function retryDelayMs(attempt: number, policy: { initialBackoffMs: number; maxBackoffMs: number }, random: () => number = Math.random): number {
  const exponential = policy.initialBackoffMs * 2 ** Math.min(30, Math.max(0, attempt - 1));
  const capped = Math.min(policy.maxBackoffMs, exponential);
  return Math.round(capped * (0.5 + random() / 2));
}
