import type { LogLevel } from '../../../src/core/log';
import type { ConsumerState } from '../../../src/kinesis/consumer';
import { kinesisProblem, type KinesisProblem } from '../../../src/kinesis/errors';
import {
  FanOutReader,
  SILENT_SUBSCRIPTION_MS,
  SUBSCRIBE_GAP_MS,
  SUBSCRIBE_JITTER_MS,
  startingPosition,
} from '../../../src/kinesis/fanOutReader';
import type { ReadPosition, ShardReaderEvents } from '../../../src/kinesis/reader';
import { ManualClock, settle } from '../fakes/manualClock';
import { event, FakeSubscriptions, kinesisError } from './fakeSubscriptions';

const STREAM = { streamName: 's', streamArn: 'arn:aws:kinesis:us-east-1:123456789012:stream/s' };
const CONSUMER_ARN = `${STREAM.streamArn}/consumer/app:1`;

interface Told {
  records: string[][];
  ends: string[][];
  notFound: number[];
  errors: { name: string; consecutive: number }[];
  subscriptions: string[];
  logs: [LogLevel, string][];
  problems: KinesisProblem[];
}

function setUp(from: ReadPosition = { kind: 'TRIM_HORIZON' }, room = 100) {
  const clock = new ManualClock();
  const fake = new FakeSubscriptions();
  const told: Told = { records: [], ends: [], notFound: [], errors: [], subscriptions: [], logs: [], problems: [] };
  const state = { room, forgotten: 0, consumer: 'ACTIVE' as ConsumerState, described: 0 };
  const events: ShardReaderEvents = {
    records: (records) => told.records.push(records.map((r) => r.sequenceNumber)),
    end: (children) => told.ends.push(children.map((c) => c.shardId)),
    notFound: async (_err, consecutive) => void told.notFound.push(consecutive),
    error: (err, consecutive) => {
      told.errors.push({ name: (err as Error).name, consecutive });
      told.problems.push(kinesisProblem(err, 'stream s'));
    },
    room: () => {
      throw new Error('a fan-out reader reserves nothing: it asks hasRoom()');
    },
    hasRoom: () => state.room > 0,
    requested: () => undefined,
    subscription: (what) => told.subscriptions.push(what),
    log: (level, message) => told.logs.push([level, message]),
  };
  const consumer = {
    arn: () => Promise.resolve(CONSUMER_ARN),
    forget: () => {
      state.forgotten += 1;
    },
    state: () => {
      state.described += 1;
      return Promise.resolve(state.consumer);
    },
  };
  const reader = new FanOutReader({ kinesis: fake.client, scheduler: clock, stream: STREAM, consumer }, 's-0', events);
  reader.start(from);
  return { clock, fake, told, state, reader };
}

/** Moves the clock past the 1-per-second subscribe gap, so that the reader's next subscribe goes out. */
async function nextSubscribe(clock: ManualClock, fake: FakeSubscriptions, count: number) {
  for (let i = 0; i < 100 && fake.subscribes.length < count; i += 1) await clock.advance(SUBSCRIBE_GAP_MS / 4);
  expect(fake.subscribes).toHaveLength(count);
  return fake.last;
}

describe('the fan-out reader', () => {
  it.each<[ReadPosition, object]>([
    [{ kind: 'TRIM_HORIZON' }, { Type: 'TRIM_HORIZON' }],
    [
      { kind: 'AFTER', sequenceNumber: '17' },
      { Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '17' },
    ],
    // Stopped inside a KPL aggregate: read it again (the owner skips the user records already done).
    [
      { kind: 'AFTER', sequenceNumber: '17', subSequence: 2 },
      { Type: 'AT_SEQUENCE_NUMBER', SequenceNumber: '17' },
    ],
    [
      { kind: 'AT_TIMESTAMP', timestampMs: 5_000 },
      { Type: 'AT_TIMESTAMP', Timestamp: new Date(5_000) },
    ],
  ])('starts a subscription at %j as GetShardIterator would', async (from, expected) => {
    const { fake } = setUp(from);
    await settle();
    expect(fake.last.input).toEqual({
      ConsumerARN: CONSUMER_ARN,
      ShardId: 's-0',
      StartingPosition: { SequenceNumber: undefined, Timestamp: undefined, ...expected },
    });
    expect(startingPosition(STREAM, 's-0', from)).toEqual(fake.last.input.StartingPosition);
  });

  it('delivers events in order and renews an ended subscription after its last continuation, no gap, no overlap', async () => {
    const { clock, fake, told, reader } = setUp();
    await settle();
    const first = fake.last.open();
    first.push(event(['1', '2'], '2'), event([], '2'), event(['3'], '3'));
    first.end();
    const second = await nextSubscribe(clock, fake, 2);
    expect(second.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '3' });
    second.open().push(event(['4'], '4'));
    await settle();
    expect(told.records).toEqual([['1', '2'], [], ['3'], ['4']]);
    expect(told.subscriptions).toEqual(['opened', 'ended', 'opened']);
    expect(told.errors).toEqual([]);
    await reader.stop();
  });

  it('renews from the continuation even when the last event had no records (the tip moved on)', async () => {
    const { clock, fake } = setUp({ kind: 'AFTER', sequenceNumber: '5' });
    await settle();
    const first = fake.last.open();
    first.push(event([], '9'));
    first.end();
    const second = await nextSubscribe(clock, fake, 2);
    expect(second.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '9' });
  });

  it.each([
    ['with the continuation the reference requires', '2'],
    ['with no continuation', undefined],
  ])(
    'ends the shard on an event with ChildShards %s, after its records, and subscribes no more',
    async (_, continuation) => {
      const { clock, fake, told } = setUp();
      await settle();
      fake.last.open().push(
        event(['1'], '1'),
        event(['2'], continuation, { ChildShards: [{ ShardId: 's-1' }, { ShardId: 's-2' }], MillisBehindLatest: 300 }),
        // Never read: the subscription is closed at the end.
        event(['3'], '3'),
      );
      await clock.advance(10 * SUBSCRIBE_GAP_MS);
      expect(told.records).toEqual([['1'], ['2']]);
      expect(told.ends).toEqual([['s-1', 's-2']]);
      expect(told.errors).toEqual([]);
      expect(fake.subscribes).toHaveLength(1);
      expect(fake.last.signal?.aborted).toBe(true);
    },
  );

  it('reports an end whose children do not name the shard as a parent, and ends it with the children left to a listing', async () => {
    const { clock, fake, told } = setUp();
    await settle();
    fake.last.open().push(event(['1'], '1', { ChildShards: [{ ShardId: 's-7', ParentShards: ['s-5', 's-6'] }] }));
    await clock.advance(10 * SUBSCRIBE_GAP_MS);
    expect(told.records).toEqual([['1']]);
    expect(told.ends).toEqual([[]]);
    expect(told.errors).toEqual([{ name: 'ContradictoryShardEnd', consecutive: 1 }]);
    expect(told.problems[0]?.fix).toContain('ListShards');
    expect(fake.subscribes).toHaveLength(1);
  });

  it('retries ResourceInUse (the previous owner still subscribed) with backoff, unreported until it lasts', async () => {
    const { clock, fake, told } = setUp({ kind: 'AFTER', sequenceNumber: '5' });
    await settle();
    fake.last.refuse(kinesisError('ResourceInUseException'));
    await clock.advance(1_999);
    expect(fake.subscribes).toHaveLength(1);
    const again = await nextSubscribe(clock, fake, 2);
    expect(again.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '5' });
    for (let n = 3; n <= 6; n += 1) {
      fake.last.refuse(kinesisError('ResourceInUseException'));
      await nextSubscribe(clock, fake, n);
    }
    expect(told.errors).toEqual([{ name: 'ResourceInUseException', consecutive: 5 }]);
    expect(told.subscriptions).toEqual(['retried', 'retried', 'retried', 'retried', 'retried']);
  });

  it.each<ConsumerState>(['DELETING', 'CREATING', 'GONE'])(
    'takes ResourceInUse refusals from a consumer %s for that (asks for the consumer again), never for another application',
    async (status) => {
      const { clock, fake, told, state } = setUp({ kind: 'AFTER', sequenceNumber: '5' });
      state.consumer = status;
      await settle();
      for (let n = 2; n <= 8; n += 1) {
        fake.last.refuse(kinesisError('ResourceInUseException', 'Consumer is not ACTIVE'));
        await nextSubscribe(clock, fake, n);
      }
      expect(told.problems.filter((p) => p.fix.includes('consumerName'))).toEqual([]);
      expect(told.errors).toEqual([]);
      // From the second refusal in a row on: the consumer described, its ARN asked for again.
      expect(state.described).toBeGreaterThanOrEqual(1);
      expect(state.forgotten).toBeGreaterThanOrEqual(3);
      expect(told.logs.some(([, m]) => m.includes(`the consumer is ${status === 'GONE' ? 'gone' : status}`))).toBe(
        true,
      );
      // Once ACTIVE again, the subscription opens and reads on from where it was.
      state.consumer = 'ACTIVE';
      fake.last.open().push(event(['6'], '6'));
      await settle();
      expect(fake.last.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '5' });
      expect(told.records).toEqual([['6']]);
    },
  );

  it('describes the consumer only from the second ResourceInUse in a row: the first is the previous owner', async () => {
    const { clock, fake, state } = setUp({ kind: 'AFTER', sequenceNumber: '5' });
    await settle();
    fake.last.refuse(kinesisError('ResourceInUseException'));
    await nextSubscribe(clock, fake, 2);
    expect(state.described).toBe(0);
    fake.last.refuse(kinesisError('ResourceInUseException'));
    await nextSubscribe(clock, fake, 3);
    expect(state.described).toBe(1);
    expect(state.forgotten).toBe(0);
  });

  it('does not take other failures before ResourceInUse for a consumer shared with another application', async () => {
    const { clock, fake, told } = setUp({ kind: 'AFTER', sequenceNumber: '5' });
    await settle();
    for (let n = 2; n <= 5; n += 1) {
      fake.last.refuse(kinesisError('InternalFailureException'));
      await nextSubscribe(clock, fake, n);
    }
    fake.last.refuse(kinesisError('ResourceInUseException'));
    await nextSubscribe(clock, fake, 6);
    expect(told.errors.map((e) => e.name)).toEqual(Array(4).fill('InternalFailureException'));
    for (let n = 7; n <= 10; n += 1) {
      fake.last.refuse(kinesisError('ResourceInUseException'));
      await nextSubscribe(clock, fake, n);
    }
    expect(told.errors.slice(4)).toEqual([{ name: 'ResourceInUseException', consecutive: 5 }]);
  });

  it.each([
    ['LimitExceededException', 'refused'],
    ['InternalFailureException', 'mid-stream'],
    ['KMSThrottlingException', 'mid-stream'],
    ['ECONNRESET', 'mid-stream'],
  ])('resumes after %s (%s) from the last delivered event', async (name, when) => {
    const { clock, fake, told } = setUp();
    await settle();
    const first = fake.last.open();
    first.push(event(['1', '2'], '2'));
    await settle();
    if (when === 'mid-stream') first.fail(kinesisError(name));
    else {
      first.end();
      const renewal = await nextSubscribe(clock, fake, 2);
      renewal.refuse(kinesisError(name));
    }
    const again = await nextSubscribe(clock, fake, when === 'mid-stream' ? 2 : 3);
    expect(again.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '2' });
    again.open().push(event(['3'], '3'));
    await settle();
    expect(told.records).toEqual([['1', '2'], ['3']]);
    // One refusal for the call rate is no news (a run of them is: see below).
    expect(told.errors).toEqual(name === 'LimitExceededException' ? [] : [{ name, consecutive: 1 }]);
    expect(told.subscriptions).toContain('retried');
  });

  it('names the missing kinesis:SubscribeToShard permission', async () => {
    const { clock, fake, told } = setUp();
    await settle();
    fake.last.refuse(kinesisError('AccessDeniedException', 'not authorized to perform kinesis:SubscribeToShard'));
    await nextSubscribe(clock, fake, 2);
    expect(told.errors).toEqual([{ name: 'AccessDeniedException', consecutive: 1 }]);
    expect(told.problems[0]?.fix).toContain("grant the worker's role kinesis:SubscribeToShard");
  });

  it('tells a missing shard (or consumer) as notFound and asks for the consumer again', async () => {
    const { clock, fake, told, state } = setUp();
    await settle();
    fake.last.refuse(kinesisError('ResourceNotFoundException'));
    await nextSubscribe(clock, fake, 2);
    expect(told.notFound).toEqual([1]);
    expect(state.forgotten).toBe(1);
  });

  it('stops reading the event stream while there is no room, and reads on when room returns', async () => {
    const { clock, fake, told, state } = setUp();
    await settle();
    const stream = fake.last.open();
    stream.push(event(['1'], '1'));
    await settle();
    expect(stream.pulls).toBe(2);
    state.room = 0;
    stream.push(event(['2'], '2'));
    await settle();
    // The reader took event 2 (it was already asked for) and now asks for nothing: the server's pushes wait.
    stream.push(event(['3'], '3'), event(['4'], '4'));
    await clock.advance(60_000);
    expect(told.records).toEqual([['1'], ['2']]);
    const pullsWhileFull = stream.pulls;
    await clock.advance(60_000);
    expect(stream.pulls).toBe(pullsWhileFull);
    state.room = 100;
    await clock.advance(100);
    expect(told.records).toEqual([['1'], ['2'], ['3'], ['4']]);
    expect(fake.subscribes).toHaveLength(1);
  });

  it('does not subscribe while there is no room', async () => {
    const { clock, fake, state } = setUp({ kind: 'TRIM_HORIZON' }, 0);
    await clock.advance(10_000);
    expect(fake.subscribes).toHaveLength(0);
    state.room = 1;
    await clock.advance(100);
    expect(fake.subscribes).toHaveLength(1);
  });

  it('takes a subscription silent for SILENT_SUBSCRIPTION_MS for a dead connection: cancelled, renewed after its last event', async () => {
    const { clock, fake, told, reader } = setUp();
    await settle();
    const first = fake.last;
    const stream = first.open();
    stream.push(event(['1'], '1'));
    await settle();
    // Events every few seconds (empty ones at the tip) keep it open.
    for (let i = 0; i < 3; i += 1) {
      await clock.advance(SILENT_SUBSCRIPTION_MS / 2);
      stream.push(event([], '1'));
      await settle();
    }
    expect(fake.subscribes).toHaveLength(1);
    expect(first.signal?.aborted).toBe(false);
    // Then nothing for SILENT_SUBSCRIPTION_MS: the connection is given up and a new subscription starts.
    await clock.advance(SILENT_SUBSCRIPTION_MS);
    expect(first.signal?.aborted).toBe(true);
    const second = await nextSubscribe(clock, fake, 2);
    expect(second.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '1' });
    expect(told.errors.map((e) => e.name)).toEqual(['SilentSubscription']);
    expect(told.records).toEqual([['1'], [], [], []]);
    await reader.stop();
  });

  it('cancels the subscription at once when stopped, and tells nothing after', async () => {
    const { fake, told, reader } = setUp();
    await settle();
    const stream = fake.last.open();
    stream.push(event(['1'], '1'));
    await settle();
    await reader.stop();
    expect(fake.last.signal?.aborted).toBe(true);
    stream.push(event(['2'], '2'));
    await settle();
    expect(told.records).toEqual([['1']]);
    expect(told.errors).toEqual([]);
  });

  it('cancels the subscription on pause and subscribes again after the last event on resume', async () => {
    const { clock, fake, told, reader } = setUp();
    await settle();
    fake.last.open().push(event(['1'], '1'));
    await settle();
    reader.pause();
    await settle();
    expect(fake.last.signal?.aborted).toBe(true);
    await clock.advance(30_000);
    expect(fake.subscribes).toHaveLength(1);
    reader.resume();
    const again = await nextSubscribe(clock, fake, 2);
    expect(again.input.StartingPosition).toEqual({ Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '1' });
    expect(told.errors).toEqual([]);
  });

  it('subscribes again only SUBSCRIBE_GAP_MS plus jitter after the previous call was answered, not sent', async () => {
    const { clock, fake } = setUp();
    await settle();
    // Answered 400 ms after it was sent.
    await clock.advance(400);
    fake.last.open().end();
    // ManualClock.random() is 0.5: half the jitter.
    const gap = SUBSCRIBE_GAP_MS + SUBSCRIBE_JITTER_MS / 2;
    expect(gap).toBeGreaterThanOrEqual(1_100);
    await clock.advance(gap - 1);
    expect(fake.subscribes).toHaveLength(1);
    await clock.advance(1);
    expect(fake.subscribes).toHaveLength(2);
  });

  it('retries a refused call no sooner than the gap after the refusal, though the first backoffs are shorter', async () => {
    const { clock, fake } = setUp();
    await settle();
    for (let n = 2; n <= 4; n += 1) {
      // Refused 300 ms after it was sent.
      await clock.advance(300);
      const refusedAt = clock.now();
      fake.last.refuse(kinesisError('InternalFailureException'));
      for (let i = 0; i < 1_000 && fake.subscribes.length < n; i += 1) await clock.advance(5);
      expect(fake.subscribes).toHaveLength(n);
      // The one-per-second rule, and a margin.
      expect(clock.now() - refusedAt).toBeGreaterThanOrEqual(1_100);
    }
  });

  it("keeps its calls' arrivals over a second apart whatever the latency: a server counting arrivals, refused ones too, refuses none", async () => {
    const { clock, fake, told, reader } = setUp();
    // Each call's trip to the server and back takes 10..300 ms, differently from call to call (seeded).
    let seed = 17;
    const latency = () => 10 + ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % 290);
    const sentAt: number[] = [];
    const send = fake.client.send.bind(fake.client) as (...args: unknown[]) => unknown;
    Object.assign(fake.client, {
      send: (...args: unknown[]) => {
        sentAt.push(clock.now());
        return send(...args);
      },
    });
    let lastArrival = -Infinity;
    let refused = 0;
    for (let n = 1; n <= 40; n += 1) {
      for (let i = 0; i < 1_000 && fake.subscribes.length < n; i += 1) await clock.advance(10);
      expect(fake.subscribes).toHaveLength(n);
      const [up, down] = [latency(), latency()];
      const arrival = sentAt[n - 1] + up;
      await clock.advance(Math.max(0, arrival + down - clock.now()));
      // AWS's rule, on arrival times; this server counts a refused call as a call.
      const tooSoon = arrival - lastArrival < 1_000;
      lastArrival = arrival;
      if (tooSoon) {
        refused += 1;
        fake.last.refuse(kinesisError('LimitExceededException', 'Rate exceeded for consumer and shard'));
      } else fake.last.open().end();
    }
    expect(refused).toBe(0);
    expect(told.errors).toEqual([]);
    await reader.stop();
  });

  it('reports a run of LimitExceeded refusals (another caller on the same consumer and shard) as that, never as a network problem', async () => {
    const { clock, fake, told } = setUp();
    await settle();
    for (let n = 2; n <= 5; n += 1) {
      fake.last.refuse(kinesisError('LimitExceededException'));
      await nextSubscribe(clock, fake, n);
    }
    expect(told.errors).toEqual([]);
    fake.last.refuse(kinesisError('LimitExceededException'));
    await nextSubscribe(clock, fake, 6);
    expect(told.errors).toEqual([{ name: 'LimitExceededException', consecutive: 5 }]);
    const problem = told.problems[0];
    expect(problem.fix).toContain('same consumerName');
    expect(problem.fix).not.toContain('network');
    expect(told.logs.filter(([, m]) => m.includes('network'))).toEqual([]);
    // A subscription that opens ends the run.
    fake.last.open().push(event(['1'], '1'));
    await settle();
    expect(told.records).toEqual([['1']]);
  });
});
