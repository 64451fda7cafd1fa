import {
  DeregisterStreamConsumerCommand,
  DescribeStreamConsumerCommand,
  DescribeStreamSummaryCommand,
  RegisterStreamConsumerCommand,
} from '@aws-sdk/client-kinesis';
import type { KinesisApi } from '../../../src/kinesis/client';
import {
  CONSUMER_ACTIVE_WAIT_MS,
  deregisterConsumer,
  StreamConsumer,
  type ConsumerRef,
} from '../../../src/kinesis/consumer';
import { kinesisProblem } from '../../../src/kinesis/errors';
import { ManualClock, settle } from '../fakes/manualClock';
import { kinesisError } from './fakeSubscriptions';

const STREAM_ARN = 'arn:aws:kinesis:us-east-1:123456789012:stream/s';
const ARN = `${STREAM_ARN}/consumer/app:1`;

/** A Kinesis that knows at most one consumer, and answers what the test says it should. */
function fakeKinesis(script: { register?: () => unknown; statuses?: string[]; describe?: () => unknown }) {
  const calls: string[] = [];
  const statuses = [...(script.statuses ?? ['ACTIVE'])];
  const send = async (command: unknown) => {
    calls.push((command as object).constructor.name.replace(/Command$/, ''));
    if (command instanceof DescribeStreamSummaryCommand) return { StreamDescriptionSummary: { StreamARN: STREAM_ARN } };
    if (command instanceof RegisterStreamConsumerCommand) {
      if (script.register) return script.register();
      return { Consumer: { ConsumerARN: ARN, ConsumerStatus: 'CREATING' } };
    }
    if (command instanceof DescribeStreamConsumerCommand) {
      if (script.describe) return script.describe();
      const status = statuses.length > 1 ? statuses.shift() : statuses[0];
      return { ConsumerDescription: { ConsumerARN: ARN, ConsumerStatus: status } };
    }
    if (command instanceof DeregisterStreamConsumerCommand) return {};
    throw new Error('unexpected');
  };
  return { kinesis: { send } as unknown as KinesisApi, calls };
}

function consumerOf(kinesis: KinesisApi, ref: ConsumerRef, clock = new ManualClock()) {
  const logs: string[] = [];
  const consumer = new StreamConsumer(
    { kinesis, scheduler: clock, stream: { streamName: 's' }, streamLabel: 'stream s', log: (_l, m) => logs.push(m) },
    ref,
  );
  return { consumer, clock, logs };
}

/** Waits for `promise` on the manual clock; what it rejected with, or its value. */
async function outcome<T>(clock: ManualClock, promise: Promise<T>): Promise<{ value?: T; error?: Error }> {
  let result: { value?: T; error?: Error } | undefined;
  promise.then(
    (value) => (result = { value }),
    (error: Error) => (result = { error }),
  );
  for (let i = 0; i < 400 && !result; i += 1) await clock.advance(1_000);
  await settle();
  return result!;
}

describe('the stream consumer', () => {
  it('registers the named consumer and waits until it is ACTIVE', async () => {
    const { kinesis, calls } = fakeKinesis({ statuses: ['CREATING', 'CREATING', 'ACTIVE'] });
    const { consumer, clock, logs } = consumerOf(kinesis, { consumerName: 'app' });
    expect(await outcome(clock, consumer.arn())).toEqual({ value: ARN });
    expect(calls).toEqual([
      'DescribeStreamSummary',
      'RegisterStreamConsumer',
      'DescribeStreamConsumer',
      'DescribeStreamConsumer',
      'DescribeStreamConsumer',
    ]);
    expect(logs.join('\n')).toContain('never deregisters');
    // Asked again: the ARN is known, no more calls.
    expect(await outcome(clock, consumer.arn())).toEqual({ value: ARN });
    expect(calls).toHaveLength(5);
  });

  it('describes a consumer another task registered first (ResourceInUse)', async () => {
    const { kinesis, calls } = fakeKinesis({
      register: () => {
        throw kinesisError('ResourceInUseException');
      },
    });
    const { consumer, clock } = consumerOf(kinesis, { consumerName: 'app' });
    expect(await outcome(clock, consumer.arn())).toEqual({ value: ARN });
    expect(calls).toEqual(['DescribeStreamSummary', 'RegisterStreamConsumer', 'DescribeStreamConsumer']);
  });

  it('only describes a consumer given by ARN, and names what to do when it is missing', async () => {
    const { kinesis, calls } = fakeKinesis({
      describe: () => {
        throw kinesisError('ResourceNotFoundException');
      },
    });
    const { consumer, clock } = consumerOf(kinesis, { consumerArn: ARN });
    const { error } = await outcome(clock, consumer.arn());
    expect(calls).toEqual(['DescribeStreamConsumer']);
    expect(kinesisProblem(error, 'stream s')).toMatchObject({ name: 'ConsumerNotFound', reportAfter: 1 });
    expect(kinesisProblem(error, 'stream s').fix).toContain('register-stream-consumer');
    // A failure is not kept: the next ask tries again.
    await outcome(clock, consumer.arn());
    expect(calls).toEqual(['DescribeStreamConsumer', 'DescribeStreamConsumer']);
  });

  it('names the 20-consumer limit', async () => {
    const { kinesis } = fakeKinesis({
      register: () => {
        throw kinesisError('LimitExceededException');
      },
    });
    const { consumer, clock } = consumerOf(kinesis, { consumerName: 'app' });
    const { error } = await outcome(clock, consumer.arn());
    const problem = kinesisProblem(error, 'stream s');
    expect(problem.name).toBe('ConsumerLimitExceeded');
    expect(problem.fix).toContain('at most 20 consumers');
    expect(problem.fix).toContain('deregister');
  });

  it.each([
    ['RegisterStreamConsumer', { register: () => Promise.reject(kinesisError('AccessDeniedException')) }],
    ['DescribeStreamConsumer', { describe: () => Promise.reject(kinesisError('AccessDeniedException')) }],
  ])('names the missing permission kinesis:%s', async (action, script) => {
    const { kinesis } = fakeKinesis(script);
    const { consumer, clock } = consumerOf(kinesis, { consumerName: 'app' });
    const { error } = await outcome(clock, consumer.arn());
    expect(kinesisProblem(error, 'stream s').fix).toContain(`grant the worker's role kinesis:${action}`);
  });

  it('gives up waiting for ACTIVE after a bound, saying so (the next ask waits again)', async () => {
    const { kinesis } = fakeKinesis({ statuses: ['CREATING'] });
    const { consumer, clock } = consumerOf(kinesis, { consumerName: 'app' });
    const started = clock.now();
    const { error } = await outcome(clock, consumer.arn());
    expect(clock.now() - started).toBeGreaterThanOrEqual(CONSUMER_ACTIVE_WAIT_MS);
    expect(kinesisProblem(error, 'stream s')).toMatchObject({ name: 'ConsumerNotActive', transient: true });
  });

  it('deregisters only when told, and says whether it was there', async () => {
    const { kinesis, calls } = fakeKinesis({});
    expect(await deregisterConsumer(kinesis, STREAM_ARN, { consumerName: 'app' })).toBe(true);
    expect(calls).toEqual(['DeregisterStreamConsumer']);
  });
});

describe("the consumer's state (what a ResourceInUse refusal of SubscribeToShard may mean)", () => {
  it('is described once for every reader asking within a moment, and again later', async () => {
    const { kinesis, calls } = fakeKinesis({ statuses: ['DELETING', 'ACTIVE'] });
    const { consumer, clock } = consumerOf(kinesis, { consumerName: 'app' });
    const states = await Promise.all([consumer.state(), consumer.state(), consumer.state()]);
    expect(states).toEqual(['DELETING', 'DELETING', 'DELETING']);
    expect(calls.filter((c) => c === 'DescribeStreamConsumer')).toHaveLength(1);
    await clock.advance(2_000);
    expect(await consumer.state()).toBe('ACTIVE');
    expect(calls.filter((c) => c === 'DescribeStreamConsumer')).toHaveLength(2);
  });

  it('is GONE when Kinesis does not know it; a failed describe is not kept', async () => {
    let answer: () => unknown = () => {
      throw kinesisError('ResourceNotFoundException');
    };
    const { kinesis } = fakeKinesis({ describe: () => answer() });
    const { consumer } = consumerOf(kinesis, { consumerArn: ARN });
    expect(await consumer.state()).toBe('GONE');
    const { consumer: other } = consumerOf(kinesis, { consumerArn: ARN });
    answer = () => {
      throw kinesisError('InternalFailureException');
    };
    await expect(other.state()).rejects.toMatchObject({ name: 'InternalFailureException' });
    answer = () => ({ ConsumerDescription: { ConsumerARN: ARN, ConsumerStatus: 'ACTIVE' } });
    expect(await other.state()).toBe('ACTIVE');
  });
});
