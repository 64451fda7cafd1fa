/**
 * SubscribeToShard calls: what AWS refuses before a stream opens, and the subscriptions open.
 *
 * Checked in this order, each an HTTP 400 with AWS's JSON error:
 * 1. the request's shape (InvalidArgumentException), an injected refusal;
 * 2. one call per `subscribeIntervalMs` (1 s) per consumer and shard, on the calls' arrival times (when the
 *    request's headers arrive): LimitExceededException. A refused call does not use the allowance up, unless
 *    `subscribeLimitCountsRefused`: then every call counts, and a client retrying too soon is refused again;
 * 3. the consumer exists (ResourceNotFoundException) and is ACTIVE (ResourceInUseException);
 * 4. a successful call for the same consumer and shard less than `inUseWindowMs` (5 s) ago:
 *    ResourceInUseException;
 * 5. the shard exists (ResourceNotFoundException) and the starting position resolves.
 * A call that passes takes the subscription over: one still open for the same consumer and shard gets a
 * ResourceInUseException event and ends, as AWS ends the previous connection.
 */
import type { ServerHttp2Stream } from 'node:http2';
import type { Consumer, ConsumerRegistry } from './consumers';
import type { FaultRules } from './faults';
import { checkStartingPosition, listShards, resolveStart } from './position';
import { type EndReason, Subscription, type SubscriptionSettings, type SubscriptionStats } from './subscription';
import { KinesisError, type Upstream } from './upstream';

export interface SubscribeLimits {
  subscribeIntervalMs: number;
  /** A call refused for the rate counts as a call too (the interval starts again at its arrival). */
  subscribeLimitCountsRefused: boolean;
  inUseWindowMs: number;
}

export interface SubscribeCall {
  consumerArn: string;
  shardId: string;
  /** `ok`, or the error type answered. */
  outcome: string;
  /** When it was answered, and when its headers arrived (performance.now()). */
  at: number;
  arrivedAt: number;
}

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

export class Subscriptions {
  readonly calls: SubscribeCall[] = [];
  readonly all: Subscription[] = [];
  private readonly open = new Map<string, Subscription>();
  private readonly admittedAt = new Map<string, number>();
  private readonly succeededAt = new Map<string, number>();

  constructor(
    private readonly kinesis: Upstream,
    private readonly registry: ConsumerRegistry,
    private readonly faults: FaultRules,
    private readonly settings: () => SubscriptionSettings & SubscribeLimits,
  ) {}

  /** Open subscriptions. */
  current(): SubscriptionStats[] {
    return [...this.open.values()];
  }

  /** Serves one SubscribeToShard: an event stream, or a thrown KinesisError for the caller to answer. */
  async subscribe(
    stream: ServerHttp2Stream,
    body: Record<string, unknown>,
    requestId: string,
    arrivedAt = performance.now(),
  ): Promise<void> {
    const consumerArn = typeof body.ConsumerARN === 'string' ? body.ConsumerARN : '';
    const shardId = typeof body.ShardId === 'string' ? body.ShardId : '';
    try {
      await this.start(stream, consumerArn, shardId, body, requestId, arrivedAt);
      this.calls.push({ consumerArn, shardId, outcome: 'ok', at: performance.now(), arrivedAt });
    } catch (err) {
      const outcome = err instanceof KinesisError ? err.type : 'InternalFailure';
      this.calls.push({ consumerArn, shardId, outcome, at: performance.now(), arrivedAt });
      throw err;
    }
  }

  /** Ends the open subscriptions that `which` accepts; how many. */
  end(which: (s: SubscriptionStats) => boolean, reason: EndReason, exceptionType?: string, message?: string): number {
    const ending = [...this.open.values()].filter(which);
    for (const s of ending) s.end(reason, exceptionType, message);
    return ending.length;
  }

  endConsumer(consumer: Consumer): void {
    this.end(
      (s) => s.consumerArn === consumer.arn,
      'deregistered',
      'ResourceNotFoundException',
      `Consumer ${consumer.arn} was deregistered`,
    );
  }

  private async start(
    stream: ServerHttp2Stream,
    consumerArn: string,
    shardId: string,
    body: Record<string, unknown>,
    requestId: string,
    arrivedAt: number,
  ): Promise<void> {
    if (!consumerArn) throw invalid('ConsumerARN is required');
    if (!shardId) throw invalid('ShardId is required');
    const position = checkStartingPosition(body.StartingPosition);
    const known = this.registry.byArn(consumerArn);
    const refusal = this.faults.fire(['refuse'], {
      shardId,
      consumerArn,
      consumerName: known?.name ?? '',
      recordsPushed: 0,
    });
    if (refusal?.rule.kind === 'refuse')
      throw new KinesisError(refusal.rule.status ?? 400, refusal.rule.type, refusal.rule.message ?? 'injected');

    const { subscribeIntervalMs, subscribeLimitCountsRefused, inUseWindowMs } = this.settings();
    const key = `${consumerArn} ${shardId}`;
    const now = arrivedAt;
    const admitted = this.admittedAt.get(key);
    const tooSoon = admitted !== undefined && now - admitted < subscribeIntervalMs;
    if (!tooSoon || subscribeLimitCountsRefused) this.admittedAt.set(key, now);
    if (tooSoon)
      throw new KinesisError(
        400,
        'LimitExceededException',
        `Rate exceeded for consumer ${consumerArn} and shard ${shardId}: one SubscribeToShard per ${subscribeIntervalMs} ms`,
      );
    if (!known) throw new KinesisError(400, 'ResourceNotFoundException', `Consumer ${consumerArn} not found`);
    if (known.status !== 'ACTIVE')
      throw new KinesisError(400, 'ResourceInUseException', `Consumer ${consumerArn} is ${known.status}, not ACTIVE`);
    const succeeded = this.succeededAt.get(key);
    if (succeeded !== undefined && now - succeeded < inUseWindowMs)
      throw new KinesisError(
        400,
        'ResourceInUseException',
        `Another active subscription exists for consumer ${consumerArn} and shard ${shardId}`,
      );
    const shard = (await listShards(this.kinesis, known.streamName)).find((s) => s.ShardId === shardId);
    if (!shard)
      throw new KinesisError(
        400,
        'ResourceNotFoundException',
        `Shard ${shardId} in stream ${known.streamName} does not exist`,
      );
    const start = await resolveStart(this.kinesis, known.streamName, shard, position);
    if (stream.destroyed || stream.closed) return;

    this.open
      .get(key)
      ?.end('takenOver', 'ResourceInUseException', `Subscription to ${shardId} taken over by a new call`);
    this.succeededAt.set(key, performance.now());
    stream.respond({ ':status': 200, 'content-type': EVENT_STREAM, 'x-amzn-requestid': requestId });
    const subscription = new Subscription(
      stream,
      known,
      shardId,
      start,
      this.kinesis,
      this.settings(),
      this.faults,
      (s) => {
        if (this.open.get(key) === s) this.open.delete(key);
      },
    );
    if (!subscription.ended) this.open.set(key, subscription);
    this.all.push(subscription);
  }
}

const invalid = (message: string) => new KinesisError(400, 'InvalidArgumentException', message);
