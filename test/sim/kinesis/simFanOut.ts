/**
 * Enhanced fan-out over a `SimStream`: stream consumers (RegisterStreamConsumer, CREATING for a while, then
 * ACTIVE; DescribeStreamConsumer) and SubscribeToShard, whose event stream pushes what the shard holds past
 * the subscription's position. Events are made only when the reader asks for the next one, so a reader that
 * stops reading stops the server, as HTTP/2 flow control does. A subscription ends after a seeded lifetime;
 * a shard's subscription through one consumer stays held until then, or a little after it was cancelled
 * (ResourceInUse for the next owner of a shard handed over, or of a killed process's); one subscribe per
 * second per shard and consumer (LimitExceeded); a closed shard's end is one event with ChildShards and no
 * continuation. The fault plan may refuse a subscribe, or break a stream (InternalFailure, KMS throttling,
 * a reset connection).
 */
import {
  InternalFailureException,
  KMSThrottlingException,
  LimitExceededException,
  ResourceInUseException,
  ResourceNotFoundException,
  type DescribeStreamConsumerCommandInput,
  type RegisterStreamConsumerCommandInput,
  type SubscribeToShardCommandInput,
} from '@aws-sdk/client-kinesis';
import type { KinesisFaults } from '../faults';
import type { Random } from '../random';
import type { Owner, SimLoop } from '../virtualTime';
import type { SimShard, SimStream } from './simStream';

const $metadata = { httpStatusCode: 400 };

interface SimConsumer {
  name: string;
  arn: string;
  activeAt: number;
}

const abortError = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });

/** The most Kinesis records one event carries here. */
export const MAX_EVENT_RECORDS = 40;

export class SimFanOut {
  private readonly consumers = new Map<string, SimConsumer>();
  /** Per consumer and shard: until when the last subscription holds it, and when it was opened. */
  private readonly held = new Map<string, { until: number; openedAt: number }>();
  subscriptions = 0;

  constructor(
    private readonly loop: SimLoop,
    private readonly stream: SimStream,
    private readonly faults: KinesisFaults,
    private readonly rng: Random,
    private readonly trace: (who: string, what: string) => void,
    /** Where a GetShardIterator of this type would start (the index of the first record it returns). */
    private readonly startIndex: (shard: SimShard, input: SubscribeToShardCommandInput['StartingPosition']) => number,
  ) {}

  register(input: RegisterStreamConsumerCommandInput): unknown {
    if (input.StreamARN !== this.stream.streamArn) throw notFound(`Stream ${input.StreamARN}`);
    const name = input.ConsumerName!;
    if (this.consumers.has(name)) throw new ResourceInUseException({ message: `Consumer ${name} exists`, $metadata });
    const consumer = {
      name,
      arn: `${this.stream.streamArn}/consumer/${name}:1`,
      activeAt: this.loop.now + this.rng.int(50, 1_500),
    };
    this.consumers.set(name, consumer);
    return { Consumer: { ConsumerName: name, ConsumerARN: consumer.arn, ConsumerStatus: 'CREATING' } };
  }

  describe(input: DescribeStreamConsumerCommandInput): unknown {
    const consumer = this.consumer(input.ConsumerARN, input.ConsumerName);
    const status = this.loop.now >= consumer.activeAt ? 'ACTIVE' : 'CREATING';
    return { ConsumerDescription: { ConsumerName: consumer.name, ConsumerARN: consumer.arn, ConsumerStatus: status } };
  }

  private consumer(arn: string | undefined, name: string | undefined): SimConsumer {
    const found = [...this.consumers.values()].find((c) => c.arn === arn || (arn === undefined && c.name === name));
    if (!found) throw notFound(`Consumer ${arn ?? name}`);
    return found;
  }

  subscribe(
    input: SubscribeToShardCommandInput,
    who: Owner,
    signal: AbortSignal | undefined,
    shard: SimShard,
  ): unknown {
    const consumer = this.consumer(input.ConsumerARN, undefined);
    if (this.loop.now < consumer.activeAt)
      throw new ResourceInUseException({ message: `Consumer ${consumer.name} is not ACTIVE`, $metadata });
    const key = `${consumer.arn} ${shard.shardId}`;
    const hold = this.held.get(key);
    if (hold && this.loop.now - hold.openedAt < 1_000)
      throw new LimitExceededException({ message: `one subscription per second to ${shard.shardId}`, $metadata });
    if (hold && this.loop.now < hold.until)
      throw new ResourceInUseException({ message: `another subscription to ${shard.shardId} is open`, $metadata });
    const lifetimeMs = this.rng.int(300, 6_000);
    const mine = { openedAt: this.loop.now, until: this.loop.now + lifetimeMs };
    this.held.set(key, mine);
    this.subscriptions += 1;
    const release = () => {
      if (this.held.get(key) === mine) mine.until = Math.min(mine.until, this.loop.now + this.rng.int(0, 1_500));
    };
    const events = new SimEventStream(this, who, signal, shard, this.startIndex(shard, input.StartingPosition), {
      endsAt: this.loop.now + lifetimeMs,
      release,
    });
    this.trace(who.name, `kinesis SubscribeToShard ${shard.shardId} from index ${events.index} for ${lifetimeMs} ms`);
    return { EventStream: events, $metadata: { httpStatusCode: 200 } };
  }

  /** The next event of a subscription, made when asked (or how it fails). */
  nextEvent(stream: SimEventStream): { event?: unknown; done?: true; error?: unknown } {
    const now = this.loop.now;
    if (now >= stream.endsAt) return { done: true };
    const fault = this.faults.kinesisRequest('SubscribeToShardEvent');
    if (fault === 'throttled')
      return { error: new KMSThrottlingException({ message: 'KMS rate exceeded', $metadata }) };
    if (fault === 'internal-failure')
      return {
        error: this.rng.chance(0.5)
          ? new InternalFailureException({ message: 'internal failure', $metadata: { httpStatusCode: 500 } })
          : Object.assign(new Error('read ECONNRESET'), { name: 'Error', code: 'ECONNRESET' }),
      };
    const { shard } = stream;
    const records = shard.records.slice(stream.index, stream.index + this.rng.int(1, MAX_EVENT_RECORDS));
    stream.index += records.length;
    const closed = shard.endingSequenceNumber !== undefined;
    const last = closed && stream.index >= shard.records.length;
    const caughtUp = stream.index >= shard.records.length;
    const continuation =
      stream.index > 0 ? shard.records[stream.index - 1].sequenceNumber : shard.startingSequenceNumber;
    return {
      event: {
        SubscribeToShardEvent: {
          Records: records.map((r) => ({
            SequenceNumber: r.sequenceNumber,
            PartitionKey: r.partitionKey,
            Data: r.data,
            ApproximateArrivalTimestamp: new Date(r.arrivalMs),
          })),
          ContinuationSequenceNumber: last ? undefined : continuation,
          MillisBehindLatest: caughtUp ? 0 : Math.max(1, this.stream.wallNow() - shard.records[stream.index].arrivalMs),
          ChildShards: last
            ? shard.children.map((id) => ({ ShardId: id, ParentShards: this.stream.shards.get(id)!.parents }))
            : undefined,
        },
      },
      ...(last ? { done: true as const } : {}),
    };
  }

  /** How long until the server pushes the next event. */
  pushDelay(): number {
    return this.rng.int(5, 300);
  }

  after(owner: Owner, ms: number, task: () => void): () => void {
    return this.loop.after(owner, ms, task);
  }
}

/** One subscription's events, one per `next()`, on the subscriber's timers (frozen while it is paused). */
export class SimEventStream {
  private finished = false;
  readonly endsAt: number;
  private readonly release: () => void;

  constructor(
    private readonly server: SimFanOut,
    private readonly owner: Owner,
    private readonly signal: AbortSignal | undefined,
    readonly shard: SimShard,
    public index: number,
    life: { endsAt: number; release: () => void },
  ) {
    this.endsAt = life.endsAt;
    this.release = life.release;
    // Cancelled before or after the reply: the server lets the subscription go.
    signal?.addEventListener('abort', () => this.end(), { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return {
      next: () =>
        new Promise((resolve, reject) => {
          if (this.finished) return resolve({ done: true, value: undefined });
          if (this.signal?.aborted) return this.fail(reject, abortError());
          const onAbort = () => {
            cancel();
            this.fail(reject, abortError());
          };
          const cancel = this.server.after(this.owner, this.server.pushDelay(), () => {
            this.signal?.removeEventListener('abort', onAbort);
            const next = this.server.nextEvent(this);
            if (next.error) return this.fail(reject, next.error);
            if (next.event) {
              if (next.done) this.end();
              return resolve({ done: false, value: next.event });
            }
            this.end();
            resolve({ done: true, value: undefined });
          });
          this.signal?.addEventListener('abort', onAbort, { once: true });
        }),
      return: async () => {
        this.end();
        return { done: true, value: undefined };
      },
    };
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
  }

  private fail(reject: (err: unknown) => void, err: unknown): void {
    this.end();
    reject(err);
  }
}

function notFound(what: string): ResourceNotFoundException {
  return new ResourceNotFoundException({ message: `${what} not found`, $metadata });
}
