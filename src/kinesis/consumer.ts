/**
 * The stream consumer enhanced fan-out reads through. Spout-managed (a name): registered at the first start
 * by whichever task gets there first (the others find it registered), waited for until ACTIVE, never
 * deregistered by the spout. Operator-managed (an ARN): only described. Every failure names what to do.
 */
import {
  DeregisterStreamConsumerCommand,
  DescribeStreamConsumerCommand,
  DescribeStreamSummaryCommand,
  RegisterStreamConsumerCommand,
  type ConsumerDescription,
} from '@aws-sdk/client-kinesis';
import { LogLevel } from '../core/log';
import type { Scheduler } from '../core/scheduler';
import { describeError } from '../errors';
import type { KinesisApi } from './client';
import type { KinesisProblem } from './errors';
import type { StreamRef } from './shards';

/** Which consumer: one the spout registers by name, or one the operator manages, by ARN. */
export type ConsumerRef = { consumerName: string } | { consumerArn: string };

/** The consumer a configuration names: its consumerArn, else consumerName, else the application's name. */
export function consumerRefOf(config: {
  consumerArn?: string;
  consumerName?: string;
  applicationName: string;
}): ConsumerRef {
  return config.consumerArn !== undefined
    ? { consumerArn: config.consumerArn }
    : { consumerName: config.consumerName ?? config.applicationName };
}

/** The stream's ARN (a consumer belongs to it): given, or described. */
export async function streamArnOf(kinesis: KinesisApi, stream: StreamRef): Promise<string> {
  if (stream.streamArn) return stream.streamArn;
  const summary = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: stream.streamName }));
  return summary.StreamDescriptionSummary!.StreamARN!;
}

/** Registering takes Kinesis some seconds; past this the wait is reported, and goes on. */
export const CONSUMER_ACTIVE_WAIT_MS = 120_000;
const DESCRIBE_GAP_MIN_MS = 500;
const DESCRIBE_GAP_MAX_MS = 5_000;

const nameOf = (err: unknown): string => (err as { name?: string } | undefined)?.name ?? '';

/** An error that carries what the operator should do (kinesisProblem uses it). */
export class FanOutError extends Error {
  constructor(
    readonly problem: KinesisProblem,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = problem.name;
  }
}

export function fanOutError(
  name: string,
  message: string,
  fix: string,
  cause?: unknown,
  transient = false,
): FanOutError {
  return new FanOutError({ name, transient, reportAfter: 1, fix }, `${message}: ${fix}`, cause);
}

/** What a refused consumer call means: a missing permission, the 20-consumer limit, a missing consumer. */
export function consumerFailure(err: unknown, action: string, what: string, stream: string): unknown {
  const name = nameOf(err);
  if (name === 'AccessDeniedException')
    return fanOutError(
      'AccessDeniedException',
      `${action} on ${what} was refused (${describeError(err)})`,
      `grant the worker's role kinesis:${action} (fan-out needs kinesis:RegisterStreamConsumer, kinesis:DescribeStreamConsumer and kinesis:SubscribeToShard on ${stream} and its consumers), or set readMode "polling"`,
      err,
    );
  if (name === 'LimitExceededException' && action === 'RegisterStreamConsumer')
    return fanOutError(
      'ConsumerLimitExceeded',
      `Kinesis refused to register ${what} (${describeError(err)})`,
      `a stream has at most 20 consumers (aws kinesis list-stream-consumers shows them): deregister one no longer used (kinesis-spout-tool deregister-consumer, or aws kinesis deregister-stream-consumer), or set readMode "polling"; retrying (a burst of registrations also gets this)`,
      err,
      true,
    );
  return err;
}

export interface StreamConsumerDeps {
  kinesis: KinesisApi;
  scheduler: Scheduler;
  stream: StreamRef;
  /** How the stream is named in messages. */
  streamLabel: string;
  log(level: LogLevel, message: string): void;
}

/** What DescribeStreamConsumer says of the consumer now, or GONE when it does not exist. */
export type ConsumerState = ConsumerDescription['ConsumerStatus'] | 'GONE';

/** One DescribeStreamConsumer answers every reader asking within this long (the call allows 20 a second per stream). */
const STATUS_SHARED_MS = 2_000;

/** The consumer's ARN once it is ACTIVE, shared by every reader of the process; a failure is retried by the next ask. */
export class StreamConsumer {
  private ready: Promise<string> | undefined;
  private described: { at: number; state: Promise<ConsumerState> } | undefined;

  constructor(
    private readonly deps: StreamConsumerDeps,
    private readonly ref: ConsumerRef,
  ) {}

  /** The ARN of the ACTIVE consumer (registered first if the spout manages it and it is not there). */
  arn(signal?: AbortSignal): Promise<string> {
    this.ready ??= this.prepare().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    if (!signal) return this.ready;
    return new Promise((resolve, reject) => {
      const aborted = () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
      if (signal.aborted) return aborted();
      signal.addEventListener('abort', aborted, { once: true });
      this.ready!.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
    });
  }

  /** Forgets the ARN: a subscription was told the consumer does not exist (deregistered by someone). */
  forget(): void {
    this.ready = undefined;
  }

  /**
   * The consumer's status as Kinesis describes it now (one call shared by every reader asking within
   * STATUS_SHARED_MS). SubscribeToShard's ResourceInUseException means "the resource must be ACTIVE": another
   * subscription to the shard, or a consumer being created, updated or deleted; only this tells them apart.
   */
  state(): Promise<ConsumerState> {
    const { scheduler, kinesis } = this.deps;
    const now = scheduler.now();
    if (this.described && now - this.described.at < STATUS_SHARED_MS) return this.described.state;
    const input = 'consumerArn' in this.ref ? { ConsumerARN: this.ref.consumerArn } : undefined;
    const state = (async (): Promise<ConsumerState> => {
      try {
        const byName = input ?? {
          StreamARN: await streamArnOf(kinesis, this.deps.stream),
          ConsumerName: (this.ref as { consumerName: string }).consumerName,
        };
        const answer = await kinesis.send(new DescribeStreamConsumerCommand(byName));
        return answer.ConsumerDescription?.ConsumerStatus;
      } catch (err) {
        if (nameOf(err) === 'ResourceNotFoundException') return 'GONE';
        throw err;
      }
    })();
    this.described = { at: now, state };
    // A failed describe is not shared: the next asker tries again.
    state.catch(() => {
      if (this.described?.state === state) this.described = undefined;
    });
    return state;
  }

  private async prepare(): Promise<string> {
    if ('consumerArn' in this.ref) return this.waitActive({ ConsumerARN: this.ref.consumerArn }, this.ref.consumerArn);
    const streamArn = await streamArnOf(this.deps.kinesis, this.deps.stream);
    const name = this.ref.consumerName;
    const what = `consumer ${name} of ${streamArn}`;
    try {
      const registered = await this.deps.kinesis.send(
        new RegisterStreamConsumerCommand({ StreamARN: streamArn, ConsumerName: name }),
      );
      this.deps.log(LogLevel.Info, `registered ${what} for enhanced fan-out (the spout never deregisters it)`);
      const arn = registered.Consumer?.ConsumerARN;
      if (registered.Consumer?.ConsumerStatus === 'ACTIVE' && arn) return arn;
    } catch (err) {
      // Another task (or an earlier start) registered it: describe it.
      if (nameOf(err) !== 'ResourceInUseException')
        throw consumerFailure(err, 'RegisterStreamConsumer', what, this.deps.streamLabel);
    }
    return this.waitActive({ StreamARN: streamArn, ConsumerName: name }, what);
  }

  /** Describes the consumer until it is ACTIVE (bounded: past the wait it fails, and the next ask starts over). */
  private async waitActive(
    input: { ConsumerARN: string } | { StreamARN: string; ConsumerName: string },
    what: string,
  ): Promise<string> {
    const { kinesis, scheduler, streamLabel } = this.deps;
    const startedAt = scheduler.now();
    for (let gap = DESCRIBE_GAP_MIN_MS; ; gap = Math.min(DESCRIBE_GAP_MAX_MS, gap * 2)) {
      let consumer: ConsumerDescription | undefined;
      try {
        consumer = (await kinesis.send(new DescribeStreamConsumerCommand(input))).ConsumerDescription;
      } catch (err) {
        if (nameOf(err) === 'ResourceNotFoundException')
          throw fanOutError(
            'ConsumerNotFound',
            `${what} does not exist`,
            'consumerArn' in this.ref
              ? `register it (aws kinesis register-stream-consumer) or leave consumerArn out so that the spout registers consumerName`
              : 'it was deregistered while the spout started: it is registered again at the next try',
            err,
            !('consumerArn' in this.ref),
          );
        throw consumerFailure(err, 'DescribeStreamConsumer', what, streamLabel);
      }
      const status = consumer?.ConsumerStatus;
      if (status === 'ACTIVE' && consumer?.ConsumerARN) return consumer.ConsumerARN;
      if (status === 'DELETING')
        throw fanOutError(
          'ConsumerDeleting',
          `${what} is being deregistered`,
          'consumerArn' in this.ref
            ? 'register a new one and set its consumerArn'
            : 'it is registered again once it is gone',
          undefined,
          true,
        );
      const waited = scheduler.now() - startedAt;
      if (waited >= CONSUMER_ACTIVE_WAIT_MS)
        throw fanOutError(
          'ConsumerNotActive',
          `${what} is still ${status ?? 'not described'} after ${Math.round(waited / 1000)} s`,
          'Kinesis usually activates a consumer within seconds; check it with aws kinesis describe-stream-consumer; still waiting',
          undefined,
          true,
        );
      await scheduler.sleep(gap);
    }
  }
}

/** Deregisters a consumer (the tools, when the operator says so); true if it was there. */
export async function deregisterConsumer(kinesis: KinesisApi, streamArn: string, ref: ConsumerRef): Promise<boolean> {
  try {
    await kinesis.send(
      new DeregisterStreamConsumerCommand(
        'consumerArn' in ref
          ? { ConsumerARN: ref.consumerArn }
          : { StreamARN: streamArn, ConsumerName: ref.consumerName },
      ),
    );
    return true;
  } catch (err) {
    if (nameOf(err) === 'ResourceNotFoundException') return false;
    throw consumerFailure(err, 'DeregisterStreamConsumer', 'the consumer', streamArn);
  }
}
