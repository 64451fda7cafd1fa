/**
 * The fan-out front against the AWS SDK itself (KinesisClient over NodeHttp2Handler, SubscribeToShardCommand):
 * if the SDK decodes what the front sends, the event-stream framing is AWS's.
 */
import {
  DeregisterStreamConsumerCommand,
  DescribeStreamConsumerCommand,
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
  ListStreamConsumersCommand,
  PutRecordCommand,
  RegisterStreamConsumerCommand,
  SubscribeToShardCommand,
  type SubscribeToShardEvent,
} from '@aws-sdk/client-kinesis';
import {
  activeConsumer,
  dataOf,
  http2Client,
  readEvents,
  recordCount,
  streamArn,
  subscribe,
} from '../helpers/fanOut/client';
import { type FanOutServer, type FanOutSettings, startFanOutServer } from '../helpers/fanOutServer';
import { uniqueName, waitFor } from '../helpers/fixture';
import { createStream, kinesisClient, mergeShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { type KinesisServer, startKinesisLocal } from '../helpers/kinesisServer';

const SHARD0 = 'shardId-000000000000';
const SHARD1 = 'shardId-000000000001';
/** No call limits: for the tests that are not about them. */
const UNLIMITED: Partial<FanOutSettings> = { subscribeIntervalMs: 0, inUseWindowMs: 0, activationMs: 50 };

let kinesis: KinesisServer;
const opened: { front: FanOutServer; clients: KinesisClient[] }[] = [];

beforeAll(async () => {
  kinesis = await startKinesisLocal();
});
afterEach(async () => {
  for (const { front, clients } of opened.splice(0)) {
    for (const client of clients) client.destroy();
    await front.close();
  }
});
afterAll(async () => {
  await kinesis?.stop();
});

/** A front, an HTTP/2 SDK client and an HTTP/1.1 one, both through the front. */
async function setUp(settings: Partial<FanOutSettings> = UNLIMITED) {
  const front = await startFanOutServer(kinesis.endpoint, settings);
  const server = { endpoint: front.endpoint, region: kinesis.region };
  const h2 = http2Client(server);
  const h1 = kinesisClient(server);
  opened.push({ front, clients: [h2, h1] });
  return { front, h2, h1 };
}

/** A stream of `shards` shards and its ARN. */
async function stream(h1: KinesisClient, shards = 1): Promise<{ name: string; arn: string }> {
  const name = uniqueName('fan');
  await createStream(h1, name, shards);
  return { name, arn: await streamArn(h1, name) };
}

/** Records `prefix-0..n-1` put into shard 0 (hash key 0), in order; their sequence numbers. */
async function put(h1: KinesisClient, name: string, prefix: string, n: number): Promise<string[]> {
  const sequence: string[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await h1.send(
      new PutRecordCommand({
        StreamName: name,
        PartitionKey: 'k',
        ExplicitHashKey: '0',
        Data: Buffer.from(`${prefix}-${i}`),
      }),
    );
    sequence.push(answer.SequenceNumber!);
  }
  return sequence;
}

const names = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${prefix}-${from + i}`);

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('consumers', () => {
  it('registers CREATING then ACTIVE, describes by ARN and by name, lists, deregisters DELETING then gone', async () => {
    const { h2, front } = await setUp({ ...UNLIMITED, activationMs: 300, deletionMs: 300 });
    const s = await stream(h2);
    const registered = await h2.send(new RegisterStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: 'app-1' }));
    const consumer = registered.Consumer!;
    expect(consumer.ConsumerStatus).toBe('CREATING');
    const seconds = Math.floor(consumer.ConsumerCreationTimestamp!.getTime() / 1000);
    expect(consumer.ConsumerARN).toBe(`${s.arn}/consumer/app-1:${seconds}`);
    const early = await rejection(subscribe(h2, consumer.ConsumerARN!, SHARD0, { Type: 'TRIM_HORIZON' }));
    expect(early.name).toBe('ResourceInUseException');

    await waitFor('ACTIVE', async () => {
      const d = await h2.send(new DescribeStreamConsumerCommand({ ConsumerARN: consumer.ConsumerARN }));
      return d.ConsumerDescription!.ConsumerStatus === 'ACTIVE';
    });
    const byName = await h2.send(new DescribeStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: 'app-1' }));
    expect(byName.ConsumerDescription).toMatchObject({ ConsumerARN: consumer.ConsumerARN, StreamARN: s.arn });
    await h2.send(new RegisterStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: 'app-2' }));
    const first = await h2.send(new ListStreamConsumersCommand({ StreamARN: s.arn, MaxResults: 1 }));
    const second = await h2.send(new ListStreamConsumersCommand({ StreamARN: s.arn, NextToken: first.NextToken }));
    expect([...first.Consumers!, ...second.Consumers!].map((c) => c.ConsumerName)).toEqual(['app-1', 'app-2']);
    expect(second.NextToken).toBeUndefined();
    const summary = await h2.send(new DescribeStreamSummaryCommand({ StreamName: s.name }));
    expect(summary.StreamDescriptionSummary!.ConsumerCount).toBe(2);

    await h2.send(new DeregisterStreamConsumerCommand({ ConsumerARN: consumer.ConsumerARN }));
    const deleting = await h2.send(new DescribeStreamConsumerCommand({ ConsumerARN: consumer.ConsumerARN }));
    expect(deleting.ConsumerDescription!.ConsumerStatus).toBe('DELETING');
    await waitFor('gone', () => front.consumers().every((c) => c.name !== 'app-1'));
    const gone = await rejection(h2.send(new DescribeStreamConsumerCommand({ ConsumerARN: consumer.ConsumerARN })));
    expect(gone.name).toBe('ResourceNotFoundException');
  });

  it('refuses a name twice, a 21st consumer, an unknown stream, and a description without its keys', async () => {
    const { h2 } = await setUp();
    const s = await stream(h2);
    for (let i = 0; i < 20; i++)
      await h2.send(new RegisterStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: `c${i}` }));
    const twice = await rejection(h2.send(new RegisterStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: 'c3' })));
    expect(twice.name).toBe('ResourceInUseException');
    const limit = await rejection(
      h2.send(new RegisterStreamConsumerCommand({ StreamARN: s.arn, ConsumerName: 'c20' })),
    );
    expect(limit.name).toBe('LimitExceededException');
    const unknownStream = await rejection(
      h2.send(new RegisterStreamConsumerCommand({ StreamARN: `${s.arn}-none`, ConsumerName: 'x' })),
    );
    expect(unknownStream.name).toBe('ResourceNotFoundException');
    const unknown = await rejection(
      h2.send(new DescribeStreamConsumerCommand({ ConsumerARN: `${s.arn}/consumer/x:1` })),
    );
    expect(unknown.name).toBe('ResourceNotFoundException');
    const neither = await rejection(h2.send(new DescribeStreamConsumerCommand({ StreamARN: s.arn })));
    expect(neither.name).toBe('InvalidArgumentException');
  });

  it('ends the open subscriptions of a consumer deregistered with ResourceNotFoundException', async () => {
    const { h2 } = await setUp();
    const s = await stream(h2);
    const arn = await activeConsumer(h2, s.arn, 'leaving');
    const events = await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
    await h2.send(new DeregisterStreamConsumerCommand({ ConsumerARN: arn }));
    const read = await readEvents(events);
    expect(read.error?.name).toBe('ResourceNotFoundException');
  });
});

describe('starting positions', () => {
  it('TRIM_HORIZON, AT_ and AFTER_SEQUENCE_NUMBER, LATEST and AT_TIMESTAMP each start where AWS does', async () => {
    const { h1, h2 } = await setUp();
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'positions');
    const seq = await put(h1, s.name, 'old', 6);
    const readUntil = async (events: Awaited<ReturnType<typeof subscribe>>, n: number) =>
      dataOf((await readEvents(events, (e) => recordCount(e) >= n)).events);

    const trim = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    expect(await readUntil(trim, 6)).toEqual(names('old', 0, 6));
    const at = await subscribe(h2, arn, SHARD0, { Type: 'AT_SEQUENCE_NUMBER', SequenceNumber: seq[2] });
    expect(await readUntil(at, 4)).toEqual(names('old', 2, 6));
    const after = await subscribe(h2, arn, SHARD0, { Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: seq[2] });
    expect(await readUntil(after, 3)).toEqual(names('old', 3, 6));

    const latest = await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
    // Before any record, the continuation already says where LATEST was: after the last record.
    const empty = await readEvents(latest, (e) => e.length >= 1);
    expect(empty.events[0]).toMatchObject({ Records: [], ContinuationSequenceNumber: seq[5] });
    const stamp = new Date(Date.now() + 5);
    await new Promise((r) => setTimeout(r, 20));
    await put(h1, s.name, 'new', 3);
    expect(await readUntil(latest, 3)).toEqual(names('new', 0, 3));
    const byTime = await subscribe(h2, arn, SHARD0, { Type: 'AT_TIMESTAMP', Timestamp: stamp });
    const timed = await readEvents(byTime, (e) => recordCount(e) >= 3);
    expect(dataOf(timed.events)).toEqual(names('new', 0, 3));
  });

  it('answers a starting position without its sequence number, and an unknown shard, as AWS errors', async () => {
    const { h2 } = await setUp();
    const s = await stream(h2);
    const arn = await activeConsumer(h2, s.arn, 'bad');
    const missing = await rejection(subscribe(h2, arn, SHARD0, { Type: 'AT_SEQUENCE_NUMBER' }));
    expect(missing.name).toBe('InvalidArgumentException');
    const shard = await rejection(subscribe(h2, arn, 'shardId-000000000099', { Type: 'LATEST' }));
    expect(shard.name).toBe('ResourceNotFoundException');
    const consumer = await rejection(subscribe(h2, `${arn}x`, SHARD0, { Type: 'LATEST' }));
    expect(consumer.name).toBe('ResourceNotFoundException');
  });
});

describe('records and continuations', () => {
  it('renewed from each ContinuationSequenceNumber, subscriptions read every record once, in order', async () => {
    const { h1, h2, front } = await setUp();
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'renewing');
    const total = 120;
    const producing = (async () => {
      for (let batch = 0; batch < 12; batch++) {
        await putRecords(
          h1,
          s.name,
          names('r', batch * 10, batch * 10 + 10).map((data) => ({ partitionKey: 'k', data })),
        );
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    const got: string[] = [];
    let position: { Type: 'TRIM_HORIZON' } | { Type: 'AFTER_SEQUENCE_NUMBER'; SequenceNumber: string } = {
      Type: 'TRIM_HORIZON',
    };
    let renewals = 0;
    while (got.length < total) {
      const events = await subscribe(h2, arn, SHARD0, position);
      // Each subscription ends after a few events, wherever it is: as a lifetime would end it.
      const read = await readEvents(events, (e) => e.length >= 2);
      front.expire((sub) => sub.consumerArn === arn);
      const rest = await readEvents(events);
      expect(rest.ended).toBe(true);
      const all = [...read.events, ...rest.events];
      got.push(...dataOf(all));
      const last = all.at(-1);
      if (last?.ContinuationSequenceNumber)
        position = { Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: last.ContinuationSequenceNumber };
      renewals += 1;
    }
    await producing;
    expect(got).toEqual(names('r', 0, total));
    expect(renewals).toBeGreaterThan(1);
  });

  it('ends a subscription after its lifetime with no error, and continues from there', async () => {
    const { h1, h2, front } = await setUp({ ...UNLIMITED, lifetimeMs: 400 });
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'lifetime');
    await put(h1, s.name, 'a', 3);
    const events = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    const read = await readEvents(events);
    expect(read.ended).toBe(true);
    expect(read.error).toBeUndefined();
    expect(front.subscriptions[0].ended).toBe('lifetime');
    expect(dataOf(read.events)).toEqual(names('a', 0, 3));
    await put(h1, s.name, 'b', 2);
    // On a loaded machine a 400 ms lifetime can end before the emulator behind the server answers: renewed
    // from each last continuation, as a reader does, the records come once each, in order.
    let position = read.events.at(-1)!.ContinuationSequenceNumber!;
    const after: string[] = [];
    for (let renewals = 0; after.length < 2 && renewals < 20; renewals += 1) {
      const next = await subscribe(h2, arn, SHARD0, { Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: position });
      const got = await readEvents(next, (e) => recordCount(e) >= 2 - after.length);
      after.push(...dataOf(got.events));
      position = got.events.at(-1)?.ContinuationSequenceNumber ?? position;
    }
    expect(after).toEqual(names('b', 0, 2));
  });
});

/** Reads a subscription to its end; the last event must be the shard's end. */
async function toShardEnd(h2: KinesisClient, arn: string, shardId: string): Promise<SubscribeToShardEvent[]> {
  const read = await readEvents(await subscribe(h2, arn, shardId, { Type: 'TRIM_HORIZON' }));
  expect(read.error).toBeUndefined();
  expect(read.ended).toBe(true);
  return read.events;
}

describe('the end of a shard', () => {
  it('after a split: the records, then ChildShards with no continuation, then the stream ends', async () => {
    const { h1, h2 } = await setUp();
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'split');
    await put(h1, s.name, 'before', 5);
    const children = await splitShard(h1, s.name, SHARD0);
    const events = await toShardEnd(h2, arn, SHARD0);
    expect(dataOf(events)).toEqual(names('before', 0, 5));
    const last = events.at(-1)!;
    expect(last.ContinuationSequenceNumber).toBeUndefined();
    expect(last.Records).toEqual([]);
    expect(last.ChildShards!.map((c) => c.ShardId).sort()).toEqual([...children].sort());
    for (const child of last.ChildShards!) expect(child.ParentShards).toEqual([SHARD0]);
    expect(events.slice(0, -1).every((e) => e.ChildShards === undefined && e.ContinuationSequenceNumber)).toBe(true);
  });

  it("in the reference's form (shardEnd 'continuation'): the last event carries the continuation beside ChildShards", async () => {
    const { h1, h2 } = await setUp({ ...UNLIMITED, shardEnd: 'continuation' });
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'split');
    const sequence = await put(h1, s.name, 'before', 5);
    const children = await splitShard(h1, s.name, SHARD0);
    const events = await toShardEnd(h2, arn, SHARD0);
    expect(dataOf(events)).toEqual(names('before', 0, 5));
    const last = events.at(-1)!;
    expect(last.ContinuationSequenceNumber).toBe(sequence.at(-1));
    expect(last.ChildShards!.map((c) => c.ShardId).sort()).toEqual([...children].sort());
    expect(events.slice(0, -1).every((e) => e.ChildShards === undefined && e.ContinuationSequenceNumber)).toBe(true);
    // A closed shard with nothing read: the continuation is its ending sequence number.
    const other = await stream(h1, 2);
    const otherArn = await activeConsumer(h2, other.arn, 'merge');
    await mergeShards(h1, other.name, SHARD0, SHARD1);
    const empty = (await toShardEnd(h2, otherArn, SHARD1)).at(-1)!;
    expect(empty.Records).toEqual([]);
    expect(empty.ContinuationSequenceNumber).toMatch(/^\d+$/);
    expect(empty.ChildShards).toHaveLength(1);
  });

  it('after a merge: each parent ends with the merged child', async () => {
    const { h1, h2 } = await setUp();
    const s = await stream(h1, 2);
    const arn = await activeConsumer(h2, s.arn, 'merge');
    await put(h1, s.name, 'p', 2);
    const child = await mergeShards(h1, s.name, SHARD0, SHARD1);
    for (const parent of [SHARD0, SHARD1]) {
      const last = (await toShardEnd(h2, arn, parent)).at(-1)!;
      expect(last.ContinuationSequenceNumber).toBeUndefined();
      expect(last.ChildShards).toEqual([expect.objectContaining({ ShardId: child, ParentShards: [SHARD0, SHARD1] })]);
    }
    // LATEST on a closed shard: nothing to read, the end at once.
    const latest = await readEvents(await subscribe(h2, arn, SHARD0, { Type: 'LATEST' }));
    expect(latest.ended).toBe(true);
    expect(latest.events.at(-1)!.ChildShards).toHaveLength(1);
  });
});

describe('call limits', () => {
  it('one call per interval per consumer and shard: LimitExceededException, other shards and consumers free', async () => {
    const { h1, h2, front } = await setUp({ ...UNLIMITED, subscribeIntervalMs: 60_000 });
    const s = await stream(h1, 2);
    const [a, b] = [await activeConsumer(h2, s.arn, 'a'), await activeConsumer(h2, s.arn, 'b')];
    await subscribe(h2, a, SHARD0, { Type: 'LATEST' });
    const again = await rejection(subscribe(h2, a, SHARD0, { Type: 'LATEST' }));
    expect(again.name).toBe('LimitExceededException');
    await subscribe(h2, a, SHARD1, { Type: 'LATEST' });
    await subscribe(h2, b, SHARD0, { Type: 'LATEST' });
    expect(front.subscribeCalls.map((c) => c.outcome)).toEqual(['ok', 'LimitExceededException', 'ok', 'ok']);
  });

  it('the interval on arrival times; with subscribeLimitCountsRefused a refused call starts it again', async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (const counts of [false, true]) {
      const { h1, h2, front } = await setUp({
        ...UNLIMITED,
        subscribeIntervalMs: 2_000,
        subscribeLimitCountsRefused: counts,
      });
      const s = await stream(h1);
      const arn = await activeConsumer(h2, s.arn, 'rate');
      await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
      await sleep(1_000);
      expect((await rejection(subscribe(h2, arn, SHARD0, { Type: 'LATEST' }))).name).toBe('LimitExceededException');
      // 2.5 s after the first call, 1.5 s after the refused one.
      await sleep(1_500);
      const third = subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
      if (counts) expect((await rejection(third)).name).toBe('LimitExceededException');
      else await third;
      const calls = front.subscribeCalls;
      expect(calls.map((c) => c.outcome)).toEqual([
        'ok',
        'LimitExceededException',
        counts ? 'LimitExceededException' : 'ok',
      ]);
      expect(calls.every((c) => c.arrivedAt <= c.at)).toBe(true);
    }
  });

  it('a second subscription within the in-use window: ResourceInUseException; after it, a take-over', async () => {
    const { h1, h2, front } = await setUp({ ...UNLIMITED, subscribeIntervalMs: 50, inUseWindowMs: 60_000 });
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'owner');
    const first = await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
    await new Promise((r) => setTimeout(r, 100));
    const inUse = await rejection(subscribe(h2, arn, SHARD0, { Type: 'LATEST' }));
    expect(inUse.name).toBe('ResourceInUseException');

    front.settings.inUseWindowMs = 0;
    await new Promise((r) => setTimeout(r, 100));
    const second = await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
    // The previous connection fails with ResourceInUseException, as AWS ends it.
    const old = await readEvents(first);
    expect(old.error?.name).toBe('ResourceInUseException');
    expect(front.open()).toHaveLength(1);
    await put(h1, s.name, 'x', 1);
    expect(dataOf((await readEvents(second, (e) => recordCount(e) >= 1)).events)).toEqual(['x-0']);
  });
});

describe('GOAWAY', () => {
  it('a graceful GOAWAY lets the open subscription finish, and the client carries on on a new connection', async () => {
    const { h1, h2, front } = await setUp();
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'goaway');
    const events = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    expect(front.sessions()).toBeGreaterThanOrEqual(1);
    front.goAway();
    await put(h1, s.name, 'during', 3);
    // The subscription still delivers; ordinary HTTP/2 requests go to a new connection; then its lifetime ends.
    const during = await readEvents(events, (e) => recordCount(e) >= 3);
    await h2.send(new DescribeStreamConsumerCommand({ ConsumerARN: arn }));
    front.expire();
    const rest = await readEvents(events);
    expect(rest.error).toBeUndefined();
    expect(rest.ended).toBe(true);
    const read = { events: [...during.events, ...rest.events] };
    expect(dataOf(read.events)).toEqual(names('during', 0, 3));
    expect(front.subscriptions[0].ended).toBe('lifetime');
    const next = await subscribe(h2, arn, SHARD0, {
      Type: 'AFTER_SEQUENCE_NUMBER',
      SequenceNumber: read.events.at(-1)!.ContinuationSequenceNumber!,
    });
    await put(h1, s.name, 'after', 1);
    expect(dataOf((await readEvents(next, (e) => recordCount(e) >= 1)).events)).toEqual(['after-0']);
  });
});

describe('faults', () => {
  async function subscribed(settings: Partial<FanOutSettings> = UNLIMITED) {
    const set = await setUp(settings);
    const s = await stream(set.h1, 2);
    const arn = await activeConsumer(set.h2, s.arn, 'faulty');
    await put(set.h1, s.name, 'f', 4);
    return { ...set, s, arn };
  }

  it('resets the stream (RST_STREAM) or the connection mid-stream, after the records asked for', async () => {
    const { h2, front, arn } = await subscribed();
    front.inject({ kind: 'reset', shardId: SHARD0, afterRecords: 1, times: 1 });
    const reset = await readEvents(await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' }));
    expect(dataOf(reset.events)).toEqual(names('f', 0, 4));
    expect(reset.error).toBeDefined();
    front.inject({ kind: 'reset', how: 'destroySocket', times: 1 });
    const dropped = await readEvents(await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' }));
    expect(dropped.events).toEqual([]);
    // The connection's end, not an exception event the front sent instead.
    expect(dropped.error).toBeDefined();
    expect(dropped.error?.name).not.toMatch(/Exception$/);
    expect(front.injected.map((f) => f.detail)).toEqual(['rstStream', 'destroySocket']);
  });

  it.each(['InternalFailureException', 'KMSThrottlingException', 'KMSAccessDeniedException'])(
    'sends %s as an exception event the SDK throws',
    async (exceptionType) => {
      const { h2, front, arn } = await subscribed();
      front.inject({ kind: 'errorEvent', exceptionType, times: 1 });
      const read = await readEvents(await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' }));
      expect(read.error?.name).toBe(exceptionType);
      expect(read.events).toEqual([]);
    },
  );

  it('stalls one shard until the rule is removed, the other shard flowing', async () => {
    const { h1, h2, front, arn, s } = await subscribed();
    const stall = front.inject({ kind: 'stall', shardId: SHARD0, afterRecords: 4 });
    const stalled = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    const other = await subscribe(h2, arn, SHARD1, { Type: 'TRIM_HORIZON' });
    expect(dataOf((await readEvents(stalled, (e) => recordCount(e) >= 4)).events)).toEqual(names('f', 0, 4));
    await put(h1, s.name, 'g', 2);
    const top = '340282366920938463463374607431768211455';
    await h1.send(
      new PutRecordCommand({ StreamName: s.name, PartitionKey: 'z', ExplicitHashKey: top, Data: Buffer.from('other') }),
    );
    const [sub0] = front.open().filter((x) => x.shardId === SHARD0);
    const callsWhileStalled = sub0.getRecordsCalls;
    expect(dataOf((await readEvents(other, (e) => dataOf(e).includes('other'))).events)).toContain('other');
    expect(sub0.getRecordsCalls).toBe(callsWhileStalled);
    stall.remove();
    expect(dataOf((await readEvents(stalled, (e) => recordCount(e) >= 2)).events)).toEqual(names('g', 0, 2));
  });

  it('refuses SubscribeToShard (throttling) for the scoped shard only', async () => {
    const { h2, front, arn } = await subscribed();
    const rule = front.inject({ kind: 'refuse', type: 'LimitExceededException', shardId: SHARD0, times: 2 });
    expect((await rejection(subscribe(h2, arn, SHARD0, { Type: 'LATEST' }))).name).toBe('LimitExceededException');
    await subscribe(h2, arn, SHARD1, { Type: 'LATEST' });
    expect((await rejection(subscribe(h2, arn, SHARD0, { Type: 'LATEST' }))).name).toBe('LimitExceededException');
    await subscribe(h2, arn, SHARD0, { Type: 'LATEST' });
    expect(rule.injected).toBe(2);
  });

  it.each(['messageCrc', 'preludeCrc', 'header'] as const)('a spoilt %s is rejected by the SDK', async (part) => {
    const { h2, front, arn } = await subscribed();
    front.inject({ kind: 'corrupt', part, times: 1 });
    const read = await readEvents(await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' }));
    expect(read.events).toEqual([]);
    expect(read.error).toBeDefined();
  });
});

describe('back-pressure', () => {
  it('a client that stops reading stops the server reading kinesis-local; buffered bytes stay bounded', async () => {
    const recordsPerCall = 10;
    const { h1, h2, front } = await setUp({ ...UNLIMITED, recordsPerCall });
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'slow');
    const big = 'x'.repeat(8_000);
    const total = 100;
    await putRecords(
      h1,
      s.name,
      Array.from({ length: total }, (_, i) => ({ partitionKey: 'k', data: `${i} ${big}` })),
    );
    const events = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    const first = await readEvents(events, (e) => e.length >= 1);
    // Not reading any more: the HTTP/2 windows fill, the server waits for 'drain' and reads nothing meanwhile.
    const sub = front.open()[0];
    await waitFor(
      'the server to wait for drain or to push all',
      () => sub.waitingForDrain || sub.recordsPushed >= total,
    );
    const calls = sub.getRecordsCalls;
    await new Promise((r) => setTimeout(r, 500));
    expect(sub.waitingForDrain).toBe(true);
    expect(sub.getRecordsCalls).toBe(calls);
    expect(sub.recordsPushed).toBeLessThan(total);
    const oneEvent = recordsPerCall * (big.length * 1.4 + 200);
    expect(sub.maxBufferedBytes).toBeLessThan(2 * oneEvent);
    // Reading again, everything arrives, in order.
    const rest = await readEvents(events, (e) => recordCount(first.events) + recordCount(e) >= total);
    const order = dataOf([...first.events, ...rest.events]).map((d) => Number(d.split(' ')[0]));
    expect(order).toEqual(Array.from({ length: total }, (_, i) => i));
  });

  it('offers no more than maxBytesPerSecond (plus one second of burst)', async () => {
    const rate = 100_000;
    const { h1, h2, front } = await setUp({ ...UNLIMITED, maxBytesPerSecond: rate, recordsPerCall: 5 });
    const s = await stream(h1);
    const arn = await activeConsumer(h2, s.arn, 'capped');
    const big = 'y'.repeat(10_000);
    await putRecords(
      h1,
      s.name,
      Array.from({ length: 100 }, (_, i) => ({ partitionKey: 'k', data: `${i} ${big}` })),
    );
    const started = Date.now();
    const events = await subscribe(h2, arn, SHARD0, { Type: 'TRIM_HORIZON' });
    await readEvents(events, (e) => recordCount(e) >= 40);
    const elapsed = (Date.now() - started) / 1000;
    const event = 5 * (big.length * 1.4 + 200);
    expect(front.subscriptions[0].bytesPushed).toBeLessThanOrEqual(rate * (elapsed + 1) + event);
  });
});

describe('forwarding', () => {
  it('passes every other operation to kinesis-local, over HTTP/1.1 and HTTP/2, on the same port', async () => {
    const { h1, h2, front } = await setUp();
    const s = await stream(h1);
    const put1 = await h1.send(
      new PutRecordCommand({ StreamName: s.name, PartitionKey: 'k', Data: Buffer.from('one') }),
    );
    const put2 = await h2.send(
      new PutRecordCommand({ StreamName: s.name, PartitionKey: 'k', Data: Buffer.from('two') }),
    );
    const shards = await h2.send(new ListShardsCommand({ StreamName: s.name }));
    expect(shards.Shards!.map((x) => x.ShardId)).toEqual([SHARD0]);
    const iterator = await h1.send(
      new GetShardIteratorCommand({ StreamName: s.name, ShardId: SHARD0, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    const records = await h1.send(new GetRecordsCommand({ ShardIterator: iterator.ShardIterator }));
    expect(records.Records!.map((r) => r.SequenceNumber)).toEqual([put1.SequenceNumber, put2.SequenceNumber]);
    expect(front.requests.get('h1 GetRecords')).toBe(1);
    const overHttp1 = await rejection(
      h1.send(
        new SubscribeToShardCommand({
          ConsumerARN: `${s.arn}/consumer/x:1`,
          ShardId: SHARD0,
          StartingPosition: { Type: 'LATEST' },
        }),
      ),
    );
    expect(overHttp1.name).toBe('InvalidArgumentException');
    expect(front.requests.get('h2 PutRecord')).toBe(1);
  });
});
