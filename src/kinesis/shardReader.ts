/**
 * Prefetches one shard into its owner's buffer: back to back while the shard has a backlog (never more than
 * `maxGetRecordsPerSecond` calls, readRate.ts, which also slows down after a throttle), about once per idle
 * interval when caught up (an answer at the tip with less than was asked for, and none), sooner while records
 * trickle in (an answer at the tip with some); re-seeks after an expired
 * iterator, backs off on other errors, and reports the end of the shard (records of the last response still
 * delivered first). No error ends a reader: only the owner, after a listing, decides that a shard is gone.
 * Between requests a reader holds only its iterator.
 */
import { GetRecordsCommand } from '@aws-sdk/client-kinesis';
import { type Scheduler, untilAborted } from '../core/scheduler';
import { describeError } from '../errors';
import { isThrottling } from './errors';
import { LogLevel } from '../core/log';
import type { KinesisApi } from './client';
import { shardIteratorAt } from './iterators';
import { ReadRate } from './readRate';
import type { KinesisRecord } from './records';
import {
  PauseGate,
  type ReadPosition,
  type ShardReaderEvents,
  type ShardReaderFactory,
  type ShardRecordReader,
} from './reader';
import { childShardNodes, type StreamRef } from './shards';

const ROOM_WAIT_MS = 50;

export interface PollingReaderOptions {
  kinesis: KinesisApi;
  scheduler: Scheduler;
  stream: StreamRef;
  maxRecordsPerRequest: number;
  idlePollIntervalMs: number;
  /** The pause after an answer at the tip that brought records (a trickle): the next ones are likely near. */
  tricklePollIntervalMs: number;
  /** How long after an answer that brought records a caught-up shard keeps the trickle interval (0: until its next empty answer). */
  trickleHoldMs: number;
  /** The call budget per shard (Kinesis allows 5/s per shard for all applications together). */
  maxGetRecordsPerSecond: number;
}

/** GetRecords readers for every shard of `options.stream`, one `IdleReaders` between them. */
export function pollingReaders(options: PollingReaderOptions): ShardReaderFactory {
  const idle = new IdleReaders();
  return (shardId, events) => new PollingReader(options, shardId, events, idle);
}

/**
 * How finely caught-up readers' wake-ups are gathered: each idle wait ends at the next multiple of this on
 * the scheduler's clock, so the readers of a process due within one tick share one timer and call together
 * (their answers then come back together too). A wake-up costs more than the call's own work on an idle
 * machine; gathered, the process wakes about 1,000 / IDLE_TICK_MS times a second for its idle shards
 * instead of twice per call. The price: a caught-up shard is called up to this much later.
 */
export const IDLE_TICK_MS = 50;

/**
 * The caught-up readers of one stream, each waiting out its idle interval, their wake-ups gathered on ticks
 * (IDLE_TICK_MS). A caught-up reader learns that
 * its shard was closed only at its next call, and a reshard closes shards together (UpdateShardCount every
 * open one): the first reader of the stream to reach a shard's end wakes the others, which call at once
 * (within their call budget) instead of up to `idlePollIntervalMs` later, so that children are read sooner.
 */
export class IdleReaders {
  /** The readers due at each tick (its time on the scheduler's clock), one timer per tick. */
  private readonly ticks = new Map<number, Set<() => void>>();

  /**
   * Resolves at the first tick at least `ms` from now, when `stopped` aborts, or when `wakeAll` is called,
   * whichever comes first.
   */
  wait(scheduler: Scheduler, ms: number, stopped: AbortSignal): Promise<void> {
    if (stopped.aborted) return Promise.resolve();
    const tick = Math.ceil((scheduler.now() + ms) / IDLE_TICK_MS) * IDLE_TICK_MS;
    let due = this.ticks.get(tick);
    if (!due) {
      due = new Set();
      this.ticks.set(tick, due);
      scheduler.after(tick - scheduler.now(), () => this.ring(tick));
    }
    const readers = due;
    return new Promise((resolve) => {
      const wake = () => {
        readers.delete(wake);
        stopped.removeEventListener('abort', wake);
        resolve();
      };
      readers.add(wake);
      stopped.addEventListener('abort', wake, { once: true });
    });
  }

  wakeAll(): void {
    for (const readers of [...this.ticks.values()]) for (const wake of [...readers]) wake();
  }

  private ring(tick: number): void {
    const readers = this.ticks.get(tick);
    this.ticks.delete(tick);
    for (const wake of [...(readers ?? [])]) wake();
  }
}

function errorName(err: unknown): string {
  return (err as { name?: string })?.name ?? '';
}

export class PollingReader implements ShardRecordReader {
  private readonly abort = new AbortController();
  private position: ReadPosition = { kind: 'TRIM_HORIZON' };
  private loop: Promise<void> | undefined;
  private readonly rate: ReadRate;
  private failures = 0;
  private readonly pauses = new PauseGate();
  /** When an answer last brought records (scheduler time): within `trickleHoldMs` of it, a trickle. */
  private lastRecordsAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: PollingReaderOptions,
    private readonly shardId: string,
    private readonly events: ShardReaderEvents,
    private readonly idle = new IdleReaders(),
  ) {
    this.rate = new ReadRate({ budgetPerSecond: options.maxGetRecordsPerSecond });
  }

  start(from: ReadPosition): void {
    if (this.loop) return;
    this.position = from;
    this.loop = this.run().catch((err) =>
      this.events.log(LogLevel.Error, `reader of ${this.shardId} stopped: ${describeError(err)}`),
    );
  }

  pause(): void {
    this.pauses.close();
  }

  resume(): void {
    this.pauses.open();
  }

  /** Stops reading; resolves when no request is in flight any more. Records arriving later are dropped. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.resume();
    await this.loop;
  }

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** No timer for a wait of nothing (a call within its budget): one wake-up fewer per call. */
  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return this.options.scheduler.sleep(ms, this.signal);
  }

  private async run(): Promise<void> {
    const { events, shardId } = this;
    const { scheduler } = this.options;
    let iterator: string | undefined;
    /**
     * Set by an answer at the tip with less than was asked for, to the pause before the next call (the wait
     * comes after the answer is out of scope: it is not held while idle).
     */
    let caughtUp: number | undefined;
    while (!this.signal.aborted) {
      if (this.pauses.closed) {
        await this.pauses.opened();
        continue;
      }
      if (caughtUp !== undefined) {
        // ±20 %: readers taken in one round would otherwise poll in step, all at once, every interval
        // (as many sockets open at once as shards, and new ones each time past the pool's idle few).
        const interval = caughtUp * (0.8 + 0.4 * scheduler.random());
        caughtUp = undefined;
        await this.idle.wait(scheduler, interval, this.signal);
        continue;
      }
      try {
        iterator ??= await this.iteratorAt(this.position);
        await this.sleep(this.rate.nextCallAt(scheduler.now()) - scheduler.now());
        if (this.signal.aborted) return;
        // The room is reserved from now until the answer, so it is asked for only now: asked for before the
        // waits above, a caught-up reader held a whole request's worth of the process's caps through its idle
        // interval, and a few such readers left none to a shard just taken (its first read waited up to 1 s).
        const room = events.room();
        if (room <= 0) {
          await this.sleep(ROOM_WAIT_MS);
          continue;
        }
        this.rate.called(scheduler.now());
        events.requested();
        const limit = Math.min(this.options.maxRecordsPerRequest, room);
        const response = await this.options.kinesis.send(
          new GetRecordsCommand({
            ShardIterator: iterator,
            Limit: limit,
            StreamARN: this.options.stream.streamArn,
          }),
          { abortSignal: this.signal },
        );
        if (this.signal.aborted) return;
        this.failures = 0;
        const records = (response.Records ?? []).map(
          (r): KinesisRecord => ({
            shardId,
            sequenceNumber: r.SequenceNumber!,
            partitionKey: r.PartitionKey!,
            data: r.Data ?? new Uint8Array(),
            arrivalMs: r.ApproximateArrivalTimestamp?.getTime() ?? 0,
          }),
        );
        if (records.length > 0)
          this.position = { kind: 'AFTER', sequenceNumber: records[records.length - 1].sequenceNumber };
        events.records(records, response.MillisBehindLatest);
        if (!response.NextShardIterator) {
          this.idle.wakeAll();
          events.end(childShardNodes(response.ChildShards));
          return;
        }
        iterator = response.NextShardIterator;
        // At the tip with less than it asked for. A shard that brought nothing for longer than the hold is
        // idle: the next call after the idle interval (an idle shard costs one call per interval). One that
        // brought records within it has a trickle, whose next records are likely near: the next call soon.
        const answeredAt = scheduler.now();
        if (records.length > 0) this.lastRecordsAt = answeredAt;
        if ((response.MillisBehindLatest ?? 0) === 0 && records.length < limit)
          caughtUp =
            answeredAt - this.lastRecordsAt <= this.options.trickleHoldMs
              ? this.options.tricklePollIntervalMs
              : this.options.idlePollIntervalMs;
      } catch (err) {
        if (this.signal.aborted) return;
        const name = errorName(err);
        if (isThrottling(err)) {
          // The iterator is still good; the lowered rate (with jitter, so that readers part) is the wait.
          this.failures += 1;
          this.rate.throttled(scheduler.now());
          const rate = this.rate.rateAt(scheduler.now());
          events.log(
            LogLevel.Debug,
            `GetRecords on ${shardId} throttled (${describeError(err)}); reading at ${rate.toFixed(2)} calls/s for a while`,
          );
          events.error(err, this.failures);
          const now = scheduler.now();
          await this.sleep(this.rate.nextCallAt(now) - now + (scheduler.random() * 1000) / rate);
          continue;
        }
        if (name === 'ExpiredIteratorException') {
          events.log(
            LogLevel.Info,
            `iterator of ${shardId} expired; seeking again ${this.position.kind === 'AFTER' ? `after ${this.position.sequenceNumber}` : 'from the start position'}`,
          );
          events.iteratorReset?.();
        } else {
          this.failures += 1;
          const delay = backoffMs(this.failures, () => scheduler.random());
          events.log(LogLevel.Warn, `GetRecords on ${shardId} failed (${describeError(err)}); retrying in ${delay} ms`);
          if (name === 'ResourceNotFoundException')
            await untilAborted(events.notFound(err, this.failures), this.signal);
          else events.error(err, this.failures);
          await this.sleep(delay);
        }
        iterator = undefined;
      }
    }
  }

  private iteratorAt(position: ReadPosition): Promise<string> {
    const { kinesis, stream } = this.options;
    return shardIteratorAt(kinesis, stream, this.shardId, position, this.signal);
  }
}

/** Exponential from 200 ms to 10 s with full jitter: readers of many shards do not retry in step. */
export function backoffMs(failures: number, random: () => number): number {
  const cap = Math.min(10_000, 200 * 2 ** Math.min(10, failures - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
}
