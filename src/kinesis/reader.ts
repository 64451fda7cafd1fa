/**
 * What the shard lifecycle drives: a reader of one shard, started at a position, paused, resumed and
 * stopped; it tells records, the end of the shard with its children, a shard not found, and errors. The
 * GetRecords poller (shardReader.ts) is the first kind; a fan-out reader is another, behind the same port.
 */
import type { LogLevel } from '../core/log';
import type { ShardNode } from '../core/shard';
import type { StartPosition } from './iterators';
import type { KinesisRecord } from './records';

/** Where a reader starts (SHARD_END has nothing left to read). */
export type ReadPosition = StartPosition;

export interface ShardReaderEvents {
  /** Records read (possibly none), in order, and how far behind the stream's tip the reader is. */
  records(records: KinesisRecord[], millisBehindLatest: number | undefined): void;
  /** The shard is closed and read to its end; `children` as Kinesis named them (`ChildShards`; may be empty on emulators). */
  end(children: ShardNode[]): void;
  /**
   * Kinesis says the shard does not exist: transient, expired, or the stream deleted; only an unfiltered
   * listing can tell. The reader waits for the returned promise (the stream's identity confirmed, so that
   * it never reads a re-created stream as the old one) and keeps trying with backoff.
   */
  notFound(err: unknown, consecutive: number): Promise<void>;
  /** A request failed (the reader backs off and retries): `consecutive` failures in a row. */
  error(err: unknown, consecutive: number): void;
  /**
   * How many more records the next GetRecords may ask for, reserved for it until its answer (or failure)
   * comes; the reader waits while this is 0 (the memory caps).
   */
  room(): number;
  /**
   * Whether the caps leave room to read on, reserving nothing: a fan-out event brings what the server sends,
   * whatever was reserved, and a reservation held while the next event is awaited (seconds on an idle shard)
   * would keep shards taken after it from starting. The fan-out reader waits while this is false.
   */
  hasRoom(): boolean;
  /** A request was sent (for the counters). */
  requested(): void;
  /** The reader had to seek again (an expired iterator; for the metrics). */
  iteratorReset?(): void;
  /**
   * Fan-out: a subscription was opened, ended at its lifetime (and is renewed from where it stopped), or
   * failed and is retried (for the metrics).
   */
  subscription?(what: 'opened' | 'ended' | 'retried'): void;
  log(level: LogLevel, message: string): void;
}

export interface ShardRecordReader {
  /** Begins reading at `from`; once. */
  start(from: ReadPosition): void;
  /** No requests until `resume` (a deactivated topology). */
  pause(): void;
  resume(): void;
  /** Stops for good; resolves when no request is in flight. Nothing is told after it. */
  stop(): Promise<void>;
}

/** Makes the reader of one shard. */
export type ShardReaderFactory = (shardId: string, events: ShardReaderEvents) => ShardRecordReader;

/** A reader's pause, shared by both kinds: `close` pauses, `open` resumes (and stop opens it for good). */
export class PauseGate {
  private gate: { opened: Promise<void>; open: () => void } | undefined;

  get closed(): boolean {
    return this.gate !== undefined;
  }

  /** False when it was closed already. */
  close(): boolean {
    if (this.gate) return false;
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { opened, open };
    return true;
  }

  open(): void {
    const gate = this.gate;
    this.gate = undefined;
    gate?.open();
  }

  /** Resolves once it is open. */
  async opened(): Promise<void> {
    await this.gate?.opened;
  }
}
