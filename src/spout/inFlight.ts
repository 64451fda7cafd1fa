/**
 * Per-shard record of emitted records not yet covered by the checkpoint, and the committable checkpoint:
 * the highest sequence number below which (and at which) every emitted record is acked.
 */
import { compareSequence } from '../core/position';

export interface Emitted<R> {
  sequenceNumber: string;
  record: R;
  attempts: number;
  firstFailedAt?: number;
  /** Emitted and neither acked nor failed yet: Storm still owes an outcome for it. */
  outstanding: boolean;
}

export class InFlight<R> {
  /**
   * Sequence numbers emitted from the oldest unacked record on, in stream order. An acked one stays here
   * (it cannot be checkpointed while an older one is unacked) but drops its record: only its number is kept.
   */
  private queue: string[] = [];
  private head = 0;
  /** The unacked records, with their data (a failed one is emitted again from here). */
  private readonly unacked = new Map<string, Emitted<R>>();
  private committable: string | undefined;
  private last: string | undefined;
  private unackedBytes = 0;

  /** `weigh` tells the bytes a record holds (its data), for the memory cap. */
  constructor(private readonly weigh: (record: R) => number) {}

  /** Records must be emitted in stream order (the order the shard returned them). */
  add(sequenceNumber: string, record: R): void {
    if (this.last !== undefined && compareSequence(sequenceNumber, this.last) <= 0) {
      throw new Error(`records must be emitted in order: ${sequenceNumber} after ${this.last}`);
    }
    this.last = sequenceNumber;
    this.queue.push(sequenceNumber);
    this.unacked.set(sequenceNumber, { sequenceNumber, record, attempts: 0, outstanding: true });
    this.unackedBytes += this.weigh(record);
  }

  /** The unacked record with this sequence number. */
  get(sequenceNumber: string): Emitted<R> | undefined {
    return this.unacked.get(sequenceNumber);
  }

  /** Marks a record acked; false when it is not in flight here (unknown, or acked already). */
  ack(sequenceNumber: string): boolean {
    const entry = this.unacked.get(sequenceNumber);
    if (!entry) return false;
    this.unacked.delete(sequenceNumber);
    this.unackedBytes -= this.weigh(entry.record);
    while (this.head < this.queue.length && !this.unacked.has(this.queue[this.head])) {
      this.committable = this.queue[this.head];
      this.head += 1;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return true;
  }

  /** Sequence number the checkpoint may move to, or undefined when nothing new is fully acked. */
  get watermark(): string | undefined {
    return this.committable;
  }

  /** Records emitted and not acked. */
  get size(): number {
    return this.unacked.size;
  }

  /** Records held: the unacked ones and the acked ones behind the oldest unacked one. */
  get held(): number {
    return this.queue.length - this.head;
  }

  /** Bytes held: those of the unacked records (an acked one keeps only its sequence number). */
  get heldBytes(): number {
    return this.unackedBytes;
  }

  /** Sequence numbers of the records Storm still owes an outcome for (emitted, neither acked nor failed since). */
  *outstanding(): IterableIterator<string> {
    for (const entry of this.unacked.values()) if (entry.outstanding) yield entry.sequenceNumber;
  }

  /** The oldest unacked record (it holds the checkpoint back). */
  oldest(): Emitted<R> | undefined {
    return this.head < this.queue.length ? this.unacked.get(this.queue[this.head]) : undefined;
  }
}

/** Delay before re-emitting a failed record: exponential from `initialMs`, capped, with jitter in [50%, 100%]. */
export function retryDelayMs(attempt: number, policy: { initialBackoffMs: number; maxBackoffMs: number }, random: () => number): number {
  const exponential = policy.initialBackoffMs * 2 ** Math.min(30, Math.max(0, attempt - 1));
  const capped = Math.min(policy.maxBackoffMs, exponential);
  return Math.round(capped * (0.5 + random() / 2));
}
