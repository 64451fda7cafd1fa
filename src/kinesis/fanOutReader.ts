/**
 * Reads one shard through enhanced fan-out: a SubscribeToShard subscription pushes its events over HTTP/2;
 * when it ends (its lifetime, 5 minutes on AWS) the next one starts after the last ContinuationSequenceNumber,
 * so nothing is skipped or read twice. The final event of a closed shard (non-empty ChildShards, with or
 * without a continuation) ends the shard. While the memory caps leave no room the event stream is not read
 * at all, so HTTP/2 flow control stops the server. No error ends a reader: each is retried with backoff from
 * the last event.
 */
import {
  SubscribeToShardCommand,
  type SubscribeToShardCommandOutput,
  type StartingPosition,
  type SubscribeToShardEvent,
} from '@aws-sdk/client-kinesis';
import { LogLevel } from '../core/log';
import { type Scheduler, untilAborted, within } from '../core/scheduler';
import { describeError } from '../errors';
import type { KinesisApi } from './client';
import { consumerFailure, fanOutError, type StreamConsumer } from './consumer';
import { isThrottling } from './errors';
import { iteratorRequest } from './iterators';
import {
  PauseGate,
  type ReadPosition,
  type ShardReaderEvents,
  type ShardReaderFactory,
  type ShardRecordReader,
} from './reader';
import { kinesisRecordOf } from './records';
import { backoffMs } from './shardReader';
import { childShardNodes, type StreamRef } from './shards';

/**
 * Kinesis allows one SubscribeToShard per second per shard and consumer, counted on the calls' arrival (and
 * a server may count refused calls too). A call's arrival lies between its sending and its answer, so the
 * next call goes out at least SUBSCRIBE_GAP_MS + up to SUBSCRIBE_JITTER_MS after the previous one was
 * *answered* (opened or refused): arrivals are then more than a second apart whatever the latency does, with
 * a margin for clocks, and readers of many shards do not fall into step.
 */
export const SUBSCRIBE_GAP_MS = 1_100;
export const SUBSCRIBE_JITTER_MS = 200;
/** Refusals for the call rate in a row before one is reported: the reader's own calls never draw one. */
const LIMIT_REPORT_AFTER = 5;
const ROOM_WAIT_MS = 50;
/**
 * Kinesis sends an event every few seconds even when the shard has nothing new (its continuation moves
 * on): a subscription silent this long is taken for a dead connection (half-open TCP, a blocked network,
 * where HTTP/2 itself would wait for ever) and renewed after its last event.
 */
export const SILENT_SUBSCRIPTION_MS = 30_000;

export interface FanOutReaderOptions {
  /** A client on HTTP/2 (fanOutClient.ts): SubscribeToShard only. */
  kinesis: KinesisApi;
  scheduler: Scheduler;
  stream: StreamRef;
  /** `state` tells a consumer not ACTIVE from another subscription; without it (a test's fake) refusals are taken for the latter. */
  consumer: Pick<StreamConsumer, 'arn' | 'forget'> & Partial<Pick<StreamConsumer, 'state'>>;
}

/** Fan-out readers for every shard of `options.stream`. */
export function fanOutReaders(options: FanOutReaderOptions): ShardReaderFactory {
  return (shardId, events) => new FanOutReader(options, shardId, events);
}

const nameOf = (err: unknown): string => (err as { name?: string } | undefined)?.name ?? '';

/** Where a subscription starts: the mapping GetShardIterator uses (iterators.ts), in SubscribeToShard's terms. */
export function startingPosition(stream: StreamRef, shardId: string, position: ReadPosition): StartingPosition {
  const request = iteratorRequest(stream, shardId, position);
  return {
    Type: request.ShardIteratorType,
    SequenceNumber: request.StartingSequenceNumber,
    Timestamp: request.Timestamp,
  };
}

export class FanOutReader implements ShardRecordReader {
  private readonly stopped = new AbortController();
  /** The open subscription's (or the pending subscribe's) cancel: pause and stop abort it. */
  private subscription: AbortController | undefined;
  private position: ReadPosition = { kind: 'TRIM_HORIZON' };
  private loop: Promise<void> | undefined;
  /** When the previous SubscribeToShard was answered (opened, refused, or given up), and the gap before the next. */
  private lastAnsweredAt = -Infinity;
  private nextGap = SUBSCRIBE_GAP_MS;
  private failures = 0;
  /** LimitExceeded refusals in a row: with the reader's own spacing only another caller can draw a run of them. */
  private limitedInARow = 0;
  /** ResourceInUse refusals in a row: only a run of these says another application shares the consumer. */
  private inUseInARow = 0;
  private readonly pauses = new PauseGate();

  constructor(
    private readonly options: FanOutReaderOptions,
    private readonly shardId: string,
    private readonly events: ShardReaderEvents,
  ) {}

  start(from: ReadPosition): void {
    if (this.loop) return;
    this.position = from;
    this.loop = this.run().catch((err) =>
      this.events.log(LogLevel.Error, `fan-out reader of ${this.shardId} stopped: ${describeError(err)}`),
    );
  }

  /** Cancels the subscription at once; the next one starts where this one's last event left off. */
  pause(): void {
    if (this.pauses.close()) this.subscription?.abort();
  }

  resume(): void {
    this.pauses.open();
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    this.subscription?.abort();
    this.resume();
    await this.loop;
  }

  private get done(): boolean {
    return this.stopped.signal.aborted;
  }

  private async run(): Promise<void> {
    while (!this.done) {
      if (this.pauses.closed) {
        await this.pauses.opened();
        continue;
      }
      const cancel = new AbortController();
      this.subscription = cancel;
      try {
        if (!(await this.roomOrCancel(cancel.signal))) continue;
        const ended = await this.subscribeOnce(cancel.signal);
        if (ended) return;
      } catch (err) {
        if (this.done || cancel.signal.aborted) continue;
        // Closed at once (a silent one is still open), not after the backoff.
        cancel.abort();
        await this.failed(err);
      } finally {
        cancel.abort();
      }
    }
  }

  /** Waits while the caps leave no room; false if cancelled meanwhile. */
  private async roomOrCancel(signal: AbortSignal): Promise<boolean> {
    while (!this.events.hasRoom()) {
      if (signal.aborted) return false;
      await this.options.scheduler.sleep(ROOM_WAIT_MS, signal);
    }
    return !signal.aborted;
  }

  /** One subscription, read to its end: true when the shard ended, false when it must be renewed. */
  private async subscribeOnce(signal: AbortSignal): Promise<boolean> {
    const { events, shardId } = this;
    const { kinesis, scheduler, stream, consumer } = this.options;
    const consumerArn = await consumer.arn(signal);
    const gap = this.lastAnsweredAt + this.nextGap - scheduler.now();
    if (gap > 0) await scheduler.sleep(gap, signal);
    if (signal.aborted) return false;
    const from = this.position;
    let response: SubscribeToShardCommandOutput;
    try {
      response = await kinesis.send(
        new SubscribeToShardCommand({
          ConsumerARN: consumerArn,
          ShardId: shardId,
          StartingPosition: startingPosition(stream, shardId, from),
        }),
        { abortSignal: signal },
      );
    } catch (err) {
      if (nameOf(err) === 'AccessDeniedException')
        throw consumerFailure(
          err,
          'SubscribeToShard',
          `shard ${shardId}`,
          stream.streamArn ?? `stream ${stream.streamName}`,
        );
      throw err;
    } finally {
      this.lastAnsweredAt = scheduler.now();
      this.nextGap = SUBSCRIBE_GAP_MS + Math.round(scheduler.random() * SUBSCRIBE_JITTER_MS);
    }
    if (!response.EventStream) throw new Error('SubscribeToShard answered without an event stream');
    events.subscription?.('opened');
    const iterator = response.EventStream[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await within(this.options.scheduler, SILENT_SUBSCRIPTION_MS, iterator.next(), () =>
          silentError(shardId),
        );
        if (signal.aborted) return false;
        if (next.done) {
          // The lifetime ended: the next subscription starts after the last continuation.
          events.subscription?.('ended');
          events.log(LogLevel.Debug, `subscription to ${shardId} ended; renewing ${this.describePosition()}`);
          return false;
        }
        const member = next.value;
        const event = member.SubscribeToShardEvent;
        if (!event) throw errorMember(member as unknown as Record<string, unknown>);
        this.failures = 0;
        this.inUseInARow = 0;
        this.limitedInARow = 0;
        if (this.deliver(event)) return true;
        // Not read further until there is room: what the server sends meanwhile waits in its flow-control window.
        if (!(await this.roomOrCancel(signal))) return false;
      }
    } finally {
      if (signal.aborted || this.done) void iterator.return?.().catch(() => undefined);
    }
  }

  /**
   * Hands one event's records on; true when it was the shard's last. The API reference gives
   * ContinuationSequenceNumber as required in every event and ChildShards only at the end of the shard, so a
   * non-empty ChildShards ends the shard whatever else the event carries (its records are the shard's last),
   * continuation or not. An event with neither (an emulator's end) ends it too: the children then come from
   * a listing.
   *
   * What the reference makes contradictory: a child that does not name this shard among its ParentShards
   * (the end of a shard announcing another shard's children). Reported, and the shard still ends (the event
   * says so), with its children left to a listing rather than taken from the event. Not contradictory: a
   * continuation beside the children (required), records beside them (the last ones), MillisBehindLatest
   * above 0 at the end (the children go on to the tip). Nothing after the end is read: the subscription is
   * closed at once, so events after an end cannot be seen, let alone delivered.
   */
  private deliver(event: SubscribeToShardEvent): boolean {
    const records = (event.Records ?? []).map((r) => kinesisRecordOf(this.shardId, r));
    const continuation = event.ContinuationSequenceNumber;
    if (continuation) this.position = { kind: 'AFTER', sequenceNumber: continuation };
    else if (records.length > 0)
      this.position = { kind: 'AFTER', sequenceNumber: records[records.length - 1].sequenceNumber };
    this.events.records(records, event.MillisBehindLatest);
    const children = childShardNodes(event.ChildShards);
    if (continuation && children.length === 0) return false;
    const strangers = children.filter((c) => !c.parents.includes(this.shardId));
    if (strangers.length > 0)
      this.events.error(
        fanOutError(
          'ContradictoryShardEnd',
          `the last event of ${this.shardId} names children that do not name it as a parent (${strangers.map((c) => `${c.shardId} of ${c.parents.join('+') || 'no parent'}`).join(', ')})`,
          'the shard is finished and its children are taken from ListShards instead; nothing to do unless this repeats (then report it to AWS support)',
        ),
        1,
      );
    this.events.end(strangers.length > 0 ? [] : children);
    return true;
  }

  private describePosition(): string {
    const p = this.position;
    return p.kind === 'AFTER' ? `after ${p.sequenceNumber}` : `from ${p.kind}`;
  }

  /**
   * After ResourceInUse refusals in a row: whether the consumer is not ACTIVE (SubscribeToShard's
   * ResourceInUseException also means that). Unknown (the describe failed) counts as ACTIVE: the refusals are
   * then taken for another subscription, as before.
   */
  private async consumerNotActive(): Promise<boolean> {
    const describe = this.options.consumer.state;
    if (!describe) return false;
    const state = await untilAbortedValue(describe.call(this.options.consumer), this.stopped.signal);
    if (state === undefined || state === 'ACTIVE') return false;
    this.events.log(
      LogLevel.Warn,
      `subscription to ${this.shardId} refused with ResourceInUse: the consumer is ${state === 'GONE' ? 'gone' : state}, not another subscription; asking for it again`,
    );
    return true;
  }

  private async failed(err: unknown): Promise<void> {
    const { events, shardId } = this;
    const { scheduler, consumer } = this.options;
    this.failures += 1;
    const name = nameOf(err);
    this.inUseInARow = name === 'ResourceInUseException' ? this.inUseInARow + 1 : 0;
    this.limitedInARow = name === 'LimitExceededException' ? this.limitedInARow + 1 : 0;
    // The previous owner's subscription is let go within seconds: wait at least that long, no report at first.
    // Whatever the backoff, the next call also waits the subscribe gap after this one's answer (subscribeOnce).
    const delay = Math.max(
      name === 'ResourceInUseException' ? 2_000 : 0,
      backoffMs(this.failures, () => scheduler.random()),
    );
    events.subscription?.('retried');
    events.log(
      isThrottling(err) || name === 'ResourceInUseException' ? LogLevel.Debug : LogLevel.Warn,
      `subscription to ${shardId} failed (${describeError(err)}); subscribing again ${this.describePosition()} in ${delay} ms`,
    );
    if (name === 'ResourceNotFoundException') {
      // The shard, the stream or the consumer: the listing decides about the first two; the ARN is asked again.
      consumer.forget();
      await untilAborted(events.notFound(err, this.failures), this.stopped.signal);
    } else if (name === 'ResourceInUseException' && this.inUseInARow >= 2 && (await this.consumerNotActive())) {
      // Not another subscription: the consumer is being deleted (or created, updated). Its ARN is asked for
      // again, which waits for it to be ACTIVE, registers it again once a deleted one is gone (spout-managed),
      // and reports a consumer being deregistered as that.
      this.inUseInARow = 0;
      consumer.forget();
    } else if (name === 'ResourceInUseException') {
      if (this.inUseInARow >= 5)
        events.error(
          fanOutError(
            'ResourceInUseException',
            `another subscription to ${shardId} through this consumer is still open`,
            'a previous owner of the shard should let it go within seconds; if this lasts, another application uses the same consumerName: give each application its own',
            err,
            true,
          ),
          this.inUseInARow,
        );
    } else if (name === 'LimitExceededException') {
      // SubscribeToShard's only rate limit is per consumer and shard, and the reader keeps its own calls
      // apart: a run of refusals is someone else's calls (never a network problem, as the generic report says).
      if (this.limitedInARow >= LIMIT_REPORT_AFTER)
        events.error(
          fanOutError(
            'LimitExceededException',
            `SubscribeToShard on ${shardId} was refused ${this.limitedInARow} times in a row for its rate (one call per second per consumer and shard), though this reader waits over ${SUBSCRIBE_GAP_MS / 1000} s between its calls`,
            'another reader subscribes to this shard through the same consumer: if another application uses the same consumerName, give each application its own; retrying',
            err,
            true,
          ),
          this.limitedInARow,
        );
    } else events.error(err, this.failures);
    await scheduler.sleep(delay, this.stopped.signal);
  }
}

function silentError(shardId: string): Error {
  return Object.assign(
    new Error(
      `no event from the subscription to ${shardId} in ${SILENT_SUBSCRIPTION_MS / 1000} s: taken for a dead connection`,
    ),
    { name: 'SilentSubscription' },
  );
}

/** `work`'s value; undefined if it fails or `signal` aborts first. */
function untilAbortedValue<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const aborted = () => resolve(undefined);
    signal.addEventListener('abort', aborted, { once: true });
    work
      .then(
        (value) => resolve(value),
        () => resolve(undefined),
      )
      .finally(() => signal.removeEventListener('abort', aborted));
  });
}

/** An error member of the event stream (the SDK usually throws these; some protocols hand them as events). */
function errorMember(member: Record<string, unknown>): Error {
  const [name, value] = Object.entries(member).find(([key]) => key !== '$unknown') ?? ['UnknownEvent', undefined];
  if (value instanceof Error) return value;
  return Object.assign(new Error(`${name}: ${describeError(value)}`), { name });
}
