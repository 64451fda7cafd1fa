/**
 * Registered stream consumers, kept by the front (kinesis-local's own consumers are not used): the four
 * control-plane operations of enhanced fan-out, with AWS's states, ARNs, limits and errors.
 *
 * - RegisterStreamConsumer: CREATING, then ACTIVE after `activationMs`; the ARN is
 *   `<streamArn>/consumer/<name>:<creation epoch seconds>`; a name already registered on the stream (in any
 *   state) is ResourceInUseException; more than `maxConsumersPerStream` (20) is LimitExceededException.
 * - DescribeStreamConsumer / DeregisterStreamConsumer: by ConsumerARN, or by StreamARN and ConsumerName.
 *   Deregistering makes it DELETING, and gone after `deletionMs`.
 * - ListStreamConsumers: paged with MaxResults and NextToken.
 */
import { KinesisError, type Upstream } from './upstream';

export type ConsumerStatus = 'CREATING' | 'ACTIVE' | 'DELETING';

export interface Consumer {
  name: string;
  arn: string;
  streamArn: string;
  streamName: string;
  status: ConsumerStatus;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface ConsumerTimings {
  activationMs: number;
  deletionMs: number;
  maxConsumersPerStream: number;
}

const invalid = (message: string) => new KinesisError(400, 'InvalidArgumentException', message);
const notFound = (message: string) => new KinesisError(400, 'ResourceNotFoundException', message);

export function streamNameOfArn(arn: string): string | undefined {
  return /^arn:aws[\w-]*:kinesis:[^:]*:\d*:stream\/([^/]+)$/.exec(arn)?.[1];
}

export class ConsumerRegistry {
  private readonly consumers = new Map<string, Consumer>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Told when a consumer is deregistered, so its subscriptions end. */
  onDeregister: (consumer: Consumer) => void = () => {};

  constructor(
    private readonly kinesis: Upstream,
    private readonly timings: () => ConsumerTimings,
  ) {}

  byArn(arn: string): Consumer | undefined {
    return this.consumers.get(arn);
  }

  all(): Consumer[] {
    return [...this.consumers.values()];
  }

  async register(body: Record<string, unknown>): Promise<unknown> {
    const streamArn = requireString(body, 'StreamARN');
    const name = requireString(body, 'ConsumerName');
    if (!/^[a-zA-Z0-9_.-]{1,128}$/.test(name))
      throw invalid(`ConsumerName ${name} must be 1 to 128 of a-z, A-Z, 0-9, _ . -`);
    const streamName = await this.streamOf(streamArn);
    const onStream = this.all().filter((c) => c.streamArn === streamArn);
    if (onStream.some((c) => c.name === name))
      throw new KinesisError(400, 'ResourceInUseException', `Consumer ${name} already exists on stream ${streamArn}`);
    const { activationMs, maxConsumersPerStream } = this.timings();
    if (onStream.length >= maxConsumersPerStream)
      throw new KinesisError(
        400,
        'LimitExceededException',
        `Stream ${streamArn} already has ${onStream.length} consumers, the limit is ${maxConsumersPerStream}`,
      );
    const createdAt = Date.now();
    const consumer: Consumer = {
      name,
      arn: `${streamArn}/consumer/${name}:${Math.floor(createdAt / 1000)}`,
      streamArn,
      streamName,
      status: 'CREATING',
      createdAt,
    };
    this.consumers.set(consumer.arn, consumer);
    this.later(activationMs, () => {
      if (consumer.status === 'CREATING') consumer.status = 'ACTIVE';
    });
    return { Consumer: summary(consumer) };
  }

  describe(body: Record<string, unknown>): unknown {
    const consumer = this.find(body);
    return { ConsumerDescription: { ...summary(consumer), StreamARN: consumer.streamArn } };
  }

  async list(body: Record<string, unknown>): Promise<unknown> {
    const streamArn = requireString(body, 'StreamARN');
    await this.streamOf(streamArn);
    const max = typeof body.MaxResults === 'number' ? body.MaxResults : 100;
    if (!Number.isInteger(max) || max < 1 || max > 10_000) throw invalid(`MaxResults ${max} must be 1 to 10000`);
    const start = typeof body.NextToken === 'string' ? Number(Buffer.from(body.NextToken, 'base64').toString()) : 0;
    if (!Number.isInteger(start) || start < 0) throw invalid('NextToken is not one this server gave');
    const onStream = this.all()
      .filter((c) => c.streamArn === streamArn)
      .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    const page = onStream.slice(start, start + max);
    const next = start + max < onStream.length ? Buffer.from(String(start + max)).toString('base64') : undefined;
    return { Consumers: page.map(summary), ...(next ? { NextToken: next } : {}) };
  }

  deregister(body: Record<string, unknown>): unknown {
    const consumer = this.find(body);
    if (consumer.status !== 'DELETING') {
      consumer.status = 'DELETING';
      this.onDeregister(consumer);
      this.later(this.timings().deletionMs, () => this.consumers.delete(consumer.arn));
    }
    return {};
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private find(body: Record<string, unknown>): Consumer {
    if (typeof body.ConsumerARN === 'string') {
      const consumer = this.consumers.get(body.ConsumerARN);
      if (!consumer) throw notFound(`Consumer ${body.ConsumerARN} not found`);
      return consumer;
    }
    if (typeof body.StreamARN === 'string' && typeof body.ConsumerName === 'string') {
      const consumer = this.all().find((c) => c.streamArn === body.StreamARN && c.name === body.ConsumerName);
      if (!consumer) throw notFound(`Consumer ${body.ConsumerName} not found on stream ${body.StreamARN}`);
      return consumer;
    }
    throw invalid('Either ConsumerARN or both StreamARN and ConsumerName must be given');
  }

  /** The stream's name, once kinesis-local confirms an ARN names one of its streams. */
  private async streamOf(streamArn: string): Promise<string> {
    const name = streamNameOfArn(streamArn);
    if (!name) throw invalid(`StreamARN ${streamArn} is not a Kinesis stream ARN`);
    const answer = await this.kinesis.call<{ StreamDescriptionSummary?: { StreamARN?: string } }>(
      'DescribeStreamSummary',
      { StreamName: name },
    );
    if (answer.StreamDescriptionSummary?.StreamARN !== streamArn) throw notFound(`Stream ${streamArn} not found`);
    return name;
  }

  private later(ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      then();
    }, ms);
    this.timers.add(timer);
  }
}

function summary(consumer: Consumer) {
  return {
    ConsumerName: consumer.name,
    ConsumerARN: consumer.arn,
    ConsumerStatus: consumer.status,
    ConsumerCreationTimestamp: consumer.createdAt / 1000,
  };
}

function requireString(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '') throw invalid(`${key} is required`);
  return value;
}
