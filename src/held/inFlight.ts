/**
 * Per-shard record of emitted records not yet covered by the checkpoint, and the committable checkpoint:
 * the highest record (user record, inside a KPL aggregate) below which (and at which) every emitted one is acked.
 */
import { compareAfter } from '../core/position';
import { recordKey } from '../kinesis/records';

/** Where an emitted record sits in its shard. */
export interface Mark {
  sequenceNumber: string;
  /** A user record of a KPL aggregate: its index there. */
  subSequence?: number;
  /** The last (or only) record emitted for its Kinesis record: once it is covered, so is the whole Kinesis record. */
  closesRecord: boolean;
}

export interface Emitted<R> {
  /** `<sequenceNumber>` or `<sequenceNumber>:<subSequence>`: the message id without the shard. */
  key: string;
  mark: Mark;
  record: R;
  attempts: number;
  firstFailedAt?: number;
  /** Emitted and neither acked nor failed yet: Storm still owes an outcome for it. */
  outstanding: boolean;
  /** Failed and waiting to be emitted again at this time. */
  retryDueAt?: number;
}

export class InFlight<R> {
  /**
   * Records emitted from the oldest unacked one on, in stream order, by key and mark. An acked one stays here
   * (it cannot be checkpointed while an older one is unacked) but drops its record: only its mark is kept.
   */
  private queue: { key: string; mark: Mark }[] = [];
  private head = 0;
  /** The unacked records, with their data (a failed one is emitted again from here). */
  private readonly unacked = new Map<string, Emitted<R>>();
  private committable: { key: string; mark: Mark } | undefined;
  private last: Mark | undefined;
  private unackedBytes = 0;
  /** Failed records waiting for their retry: a binary min-heap on dueAt. */
  private retries: { dueAt: number; key: string }[] = [];

  /** `weigh` tells the bytes a record holds (its data), for the memory cap. */
  constructor(private readonly weigh: (record: R) => number) {}

  /**
   * Records must be emitted in stream order (the order the shard returned them; user records of an aggregate
   * by sub-sequence). A sequence number alone is a whole Kinesis record.
   */
  add(at: string | Mark, record: R): void {
    const mark: Mark = typeof at === 'string' ? { sequenceNumber: at, closesRecord: true } : at;
    if (
      this.last !== undefined &&
      compareAfter(
        { sequenceNumber: mark.sequenceNumber, subSequence: mark.subSequence ?? -1 },
        { sequenceNumber: this.last.sequenceNumber, subSequence: this.last.subSequence ?? -1 },
      ) <= 0
    ) {
      throw new Error(
        `records must be emitted in order: ${recordKey(mark.sequenceNumber, mark.subSequence)} after ${recordKey(this.last.sequenceNumber, this.last.subSequence)}`,
      );
    }
    this.last = mark;
    const key = recordKey(mark.sequenceNumber, mark.subSequence);
    this.queue.push({ key, mark });
    this.unacked.set(key, { key, mark, record, attempts: 0, outstanding: true });
    this.unackedBytes += this.weigh(record);
  }

  /** The unacked record with this key (`<sequenceNumber>[:<subSequence>]`). */
  get(key: string): Readonly<Emitted<R>> | undefined {
    return this.unacked.get(key);
  }

  /**
   * Storm failed an emission of this record: it is no longer outstanding and one more attempt is counted.
   * Undefined when no emission of it is outstanding (unknown, acked, or failed already and waiting for its
   * retry): a second fail, such as a late one of an earlier emission, must not schedule it twice.
   */
  failed(key: string, now: number): Readonly<Emitted<R>> | undefined {
    const entry = this.unacked.get(key);
    if (!entry?.outstanding) return undefined;
    entry.outstanding = false;
    entry.attempts += 1;
    entry.firstFailedAt ??= now;
    return entry;
  }

  /** A failed record is emitted again; undefined (nothing to emit) when it was acked or is outstanding already. */
  reemit(key: string): Readonly<Emitted<R>> | undefined {
    const entry = this.unacked.get(key);
    if (!entry || entry.outstanding) return undefined;
    entry.outstanding = true;
    entry.retryDueAt = undefined;
    return entry;
  }

  /** A failed record is to be emitted again from `dueAt`; false (nothing scheduled) unless it failed and is not waiting yet. */
  retryAt(key: string, dueAt: number): boolean {
    const entry = this.unacked.get(key);
    if (!entry || entry.outstanding || entry.retryDueAt !== undefined) return false;
    entry.retryDueAt = dueAt;
    const heap = this.retries;
    heap.push({ dueAt, key });
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (heap[parent].dueAt <= heap[i].dueAt) break;
      [heap[parent], heap[i]] = [heap[i], heap[parent]];
      i = parent;
    }
    return true;
  }

  /** The failed record whose retry is due first, if one is due by `now`, emitted again (outstanding once more). */
  takeDue(now: number): Readonly<Emitted<R>> | undefined {
    while (this.retries.length > 0 && this.retries[0].dueAt <= now) {
      const entry = this.reemit(this.popRetry().key);
      if (entry) return entry;
    }
    return undefined;
  }

  /** Failed records waiting for their retry (acked ones drop out when their turn comes). */
  get pendingRetries(): number {
    return this.retries.length;
  }

  private popRetry(): { dueAt: number; key: string } {
    const heap = this.retries;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l].dueAt < heap[m].dueAt) m = l;
        if (r < heap.length && heap[r].dueAt < heap[m].dueAt) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i], heap[m]];
        i = m;
      }
    }
    return top;
  }

  /** Marks a record acked; false when it is not in flight here (unknown, or acked already). */
  ack(key: string): boolean {
    const entry = this.unacked.get(key);
    if (!entry) return false;
    this.unacked.delete(key);
    this.unackedBytes -= this.weigh(entry.record);
    while (this.head < this.queue.length && !this.unacked.has(this.queue[this.head].key)) {
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

  /** Key of the highest record below which every emitted one is acked; undefined before the first. */
  get watermark(): string | undefined {
    return this.committable?.key;
  }

  /**
   * Where the checkpoint may move: after a whole Kinesis record, or, when the watermark stops inside an
   * aggregate, after its user record (the sub-sequence says how far).
   */
  get checkpoint(): { sequenceNumber: string; subSequence?: number } | undefined {
    const mark = this.committable?.mark;
    if (!mark) return undefined;
    return mark.closesRecord || mark.subSequence === undefined
      ? { sequenceNumber: mark.sequenceNumber }
      : { sequenceNumber: mark.sequenceNumber, subSequence: mark.subSequence };
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

  /** Keys of the records Storm still owes an outcome for (emitted, neither acked nor failed since). */
  *outstanding(): IterableIterator<string> {
    for (const entry of this.unacked.values()) if (entry.outstanding) yield entry.key;
  }

  /** The oldest unacked record (it holds the checkpoint back). */
  oldest(): Readonly<Emitted<R>> | undefined {
    return this.head < this.queue.length ? this.unacked.get(this.queue[this.head].key) : undefined;
  }
}

/** Delay before re-emitting a failed record: exponential from `initialMs`, capped, with jitter in [50%, 100%]. */
export function retryDelayMs(
  attempt: number,
  policy: { initialBackoffMs: number; maxBackoffMs: number },
  random: () => number,
): number {
  const exponential = policy.initialBackoffMs * 2 ** Math.min(30, Math.max(0, attempt - 1));
  const capped = Math.min(policy.maxBackoffMs, exponential);
  return Math.round(capped * (0.5 + random() / 2));
}
