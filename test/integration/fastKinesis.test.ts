/**
 * The benchmarks' own Kinesis emulator (test/helpers/fastKinesis/) against the AWS SDK v3 client as the spout
 * builds it: each operation's shape, paging, iterators, a split parent's end, UpdateShardCount both ways, the
 * errors the spout tells apart, the quotas; then a spout flow on it (a split while records flow).
 */
import { createHash } from 'node:crypto';
import {
  CreateStreamCommand,
  DescribeStreamCommand,
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type GetShardIteratorCommandInput,
  type KinesisClient,
  ListShardsCommand,
  MergeShardsCommand,
  PutRecordCommand,
  PutRecordsCommand,
  type Shard,
  UpdateShardCountCommand,
} from '@aws-sdk/client-kinesis';
import {
  FAST_KINESIS_DEFAULTS,
  markUnmetered,
  type RunningFastKinesis,
  startFastKinesisServer,
} from '../helpers/fastKinesis/server';
import { waitFor } from '../helpers/fixture';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { flowSuite } from '../helpers/flowSuite';
import {
  createStream,
  kinesisClient,
  listAllShards,
  openShards,
  putRecords,
  splitShard,
  updateShardCount,
} from '../helpers/kinesisAdmin';
import { startFastKinesis } from '../helpers/kinesisServer';
import { createKinesisClient } from '../../src/kinesis/client';
import { MAX_HASH } from '../sim/kinesis/simStream';

describe('fast emulator against the SDK client', () => {
  let server: RunningFastKinesis;
  let client: KinesisClient;
  /** The emulator's clock: real time plus what a test skipped. */
  let skipped = 0;
  const clock = () => Date.now() + skipped;
  let streams = 0;
  const newStream = async (shards: number) => {
    const name = `fast-${++streams}`;
    await createStream(client, name, shards);
    return name;
  };

  beforeAll(async () => {
    // Quotas off here (the shapes are what is tested, with calls made back to back): see the quotas test.
    server = await startFastKinesisServer(
      0,
      { ...FAST_KINESIS_DEFAULTS, latencyMs: 5, transitionMs: 50, limits: false },
      clock,
    );
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    // The spout's own client: its HTTP/1.1 handler and its fast GetRecords reading.
    client = createKinesisClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${server.port}` });
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
  });

  const iterator = async (input: Omit<GetShardIteratorCommandInput, 'ShardIteratorType'> & { type: string }) =>
    (
      await client.send(
        new GetShardIteratorCommand({
          ...input,
          ShardIteratorType: input.type as GetShardIteratorCommandInput['ShardIteratorType'],
        }),
      )
    ).ShardIterator!;
  const read = (shardIterator: string, limit?: number): Promise<GetRecordsCommandOutput> =>
    client.send(new GetRecordsCommand({ ShardIterator: shardIterator, Limit: limit }));
  const errorOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: Error & { $metadata?: { httpStatusCode?: number } }) => ({
        name: err.name,
        status: err.$metadata?.httpStatusCode,
      }),
    );

  test('a new stream: CREATING, then ACTIVE with its shards covering the hash range in order', async () => {
    const name = `fast-${++streams}`;
    await client.send(new CreateStreamCommand({ StreamName: name, ShardCount: 3 }));
    const first = await client.send(new DescribeStreamSummaryCommand({ StreamName: name }));
    expect(first.StreamDescriptionSummary?.StreamStatus).toBe('CREATING');
    await waitFor('ACTIVE', async () => {
      const s = await client.send(new DescribeStreamSummaryCommand({ StreamName: name }));
      return s.StreamDescriptionSummary?.StreamStatus === 'ACTIVE';
    });
    const summary = (await client.send(new DescribeStreamSummaryCommand({ StreamName: name })))
      .StreamDescriptionSummary!;
    expect(summary).toMatchObject({
      StreamName: name,
      StreamARN: `arn:aws:kinesis:us-east-1:000000000000:stream/${name}`,
      OpenShardCount: 3,
      RetentionPeriodHours: 24,
    });
    expect(summary.StreamCreationTimestamp).toBeInstanceOf(Date);
    expect(Math.abs(summary.StreamCreationTimestamp!.getTime() - clock())).toBeLessThan(5_000);
    const shards = await listAllShards(client, name);
    expect(shards.map((s) => s.ShardId)).toEqual([
      'shardId-000000000000',
      'shardId-000000000001',
      'shardId-000000000002',
    ]);
    expect(BigInt(shards[0].HashKeyRange!.StartingHashKey!)).toBe(0n);
    expect(BigInt(shards[2].HashKeyRange!.EndingHashKey!)).toBe(MAX_HASH);
    for (let i = 1; i < 3; i += 1)
      expect(BigInt(shards[i].HashKeyRange!.StartingHashKey!)).toBe(
        BigInt(shards[i - 1].HashKeyRange!.EndingHashKey!) + 1n,
      );
    expect(
      shards.every((s) => s.SequenceNumberRange?.StartingSequenceNumber && !s.SequenceNumberRange.EndingSequenceNumber),
    ).toBe(true);
    // By ARN too; DescribeStream pages with HasMoreShards.
    const byArn = await client.send(new DescribeStreamCommand({ StreamARN: summary.StreamARN, Limit: 2 }));
    expect(byArn.StreamDescription?.Shards?.map((s) => s.ShardId)).toEqual([
      'shardId-000000000000',
      'shardId-000000000001',
    ]);
    expect(byArn.StreamDescription?.HasMoreShards).toBe(true);
  });

  test('ListShards: pages carry NextToken alone; ExclusiveStartShardId and AFTER_SHARD_ID list what follows', async () => {
    const name = await newStream(7);
    const pages: Shard[][] = [];
    let page = await client.send(new ListShardsCommand({ StreamName: name, MaxResults: 3 }));
    pages.push(page.Shards!);
    while (page.NextToken) {
      page = await client.send(new ListShardsCommand({ NextToken: page.NextToken, MaxResults: 3 }));
      pages.push(page.Shards!);
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((s) => s.ShardId)).toEqual((await listAllShards(client, name)).map((s) => s.ShardId));
    const token = (await client.send(new ListShardsCommand({ StreamName: name, MaxResults: 3 }))).NextToken;
    expect(await errorOf(client.send(new ListShardsCommand({ StreamName: name, NextToken: token })))).toEqual({
      name: 'InvalidArgumentException',
      status: 400,
    });
    const after = await client.send(
      new ListShardsCommand({ StreamName: name, ExclusiveStartShardId: 'shardId-000000000004' }),
    );
    expect(after.Shards?.map((s) => s.ShardId)).toEqual(['shardId-000000000005', 'shardId-000000000006']);
    expect(after.NextToken).toBeUndefined();
    const filtered = await client.send(
      new ListShardsCommand({
        StreamName: name,
        ShardFilter: { Type: 'AFTER_SHARD_ID', ShardId: 'shardId-000000000005' },
      }),
    );
    expect(filtered.Shards?.map((s) => s.ShardId)).toEqual(['shardId-000000000006']);
  });

  test('puts: partition keys by MD5, ExplicitHashKey as given, PutRecords answers in input order', async () => {
    const name = await newStream(4);
    const shards = await listAllShards(client, name);
    const holder = (hash: bigint) =>
      shards.find(
        (s) => BigInt(s.HashKeyRange!.StartingHashKey!) <= hash && hash <= BigInt(s.HashKeyRange!.EndingHashKey!),
      )!.ShardId;
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const md5 = (key: string) => BigInt(`0x${createHash('md5').update(key).digest('hex')}`);
    const put = await client.send(
      new PutRecordsCommand({
        StreamName: name,
        Records: keys.map((key) => ({ PartitionKey: key, Data: Buffer.from(key) })),
      }),
    );
    expect(put.FailedRecordCount).toBe(0);
    expect(put.Records?.map((r) => r.ShardId)).toEqual(keys.map((key) => holder(md5(key))));
    const sequences = put.Records!.map((r) => BigInt(r.SequenceNumber!));
    expect(sequences.every((s, i) => i === 0 || s > sequences[i - 1])).toBe(true);
    const explicit = await client.send(
      new PutRecordCommand({
        StreamName: name,
        PartitionKey: 'any',
        ExplicitHashKey: shards[3].HashKeyRange!.StartingHashKey,
        Data: Buffer.from('x'),
      }),
    );
    expect(explicit.ShardId).toBe(shards[3].ShardId);
    expect(
      await errorOf(
        client.send(
          new PutRecordCommand({
            StreamName: name,
            PartitionKey: 'k',
            ExplicitHashKey: (MAX_HASH + 1n).toString(),
            Data: Buffer.from('x'),
          }),
        ),
      ),
    ).toEqual({ name: 'InvalidArgumentException', status: 400 });
  });

  test('iterators: TRIM_HORIZON, LATEST, AT/AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP; MillisBehindLatest; data and times as put', async () => {
    const name = await newStream(1);
    const ShardId = 'shardId-000000000000';
    const early = await putRecords(client, name, [
      { partitionKey: 'a', data: 'one' },
      { partitionKey: 'b', data: 'two' },
    ]);
    const latest = await iterator({ StreamName: name, ShardId, type: 'LATEST' });
    await sleep(30);
    const between = clock();
    await sleep(30);
    const late = await putRecords(client, name, [
      { partitionKey: 'c', data: 'three' },
      { partitionKey: 'd', data: 'four' },
    ]);
    const seqs = [...early, ...late].map((r) => r.sequenceNumber);
    const seqsFrom = async (it: string) => (await read(it)).Records!.map((r) => r.SequenceNumber);

    expect(await seqsFrom(await iterator({ StreamName: name, ShardId, type: 'TRIM_HORIZON' }))).toEqual(seqs);
    expect(await seqsFrom(latest)).toEqual(seqs.slice(2));
    expect(
      await seqsFrom(
        await iterator({ StreamName: name, ShardId, type: 'AT_SEQUENCE_NUMBER', StartingSequenceNumber: seqs[1] }),
      ),
    ).toEqual(seqs.slice(1));
    expect(
      await seqsFrom(
        await iterator({ StreamName: name, ShardId, type: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: seqs[1] }),
      ),
    ).toEqual(seqs.slice(2));
    expect(
      await seqsFrom(await iterator({ StreamName: name, ShardId, type: 'AT_TIMESTAMP', Timestamp: new Date(between) })),
    ).toEqual(seqs.slice(2));

    const first = await read(await iterator({ StreamName: name, ShardId, type: 'TRIM_HORIZON' }), 1);
    expect(first.Records).toHaveLength(1);
    expect(Buffer.from(first.Records![0].Data!).toString()).toBe('one');
    expect(first.Records![0].PartitionKey).toBe('a');
    expect(Math.abs(first.Records![0].ApproximateArrivalTimestamp!.getTime() - between)).toBeLessThan(5_000);
    expect(first.MillisBehindLatest).toBeGreaterThan(0);
    const rest = await read(first.NextShardIterator!);
    expect(rest.Records!.map((r) => r.SequenceNumber)).toEqual(seqs.slice(1));
    expect(rest.MillisBehindLatest).toBe(0);
    // An open shard read to its end: nothing more, and a next iterator to poll with.
    const empty = await read(rest.NextShardIterator!);
    expect(empty.Records).toEqual([]);
    expect(empty.NextShardIterator).toBeDefined();
    expect(empty.ChildShards).toBeUndefined();
  });

  test('a split parent read to its end: its last records, then no next iterator and both children named', async () => {
    const name = await newStream(1);
    const [parent] = (await listAllShards(client, name)).map((s) => s.ShardId!);
    const before = await putRecords(
      client,
      name,
      Array.from({ length: 5 }, (_, i) => ({ partitionKey: `k${i}`, data: `${i}` })),
    );
    const reading = await iterator({ StreamName: name, ShardId: parent, type: 'TRIM_HORIZON' });
    const children = await splitShard(client, name, parent);
    expect(children).toEqual(['shardId-000000000001', 'shardId-000000000002']);
    const after = await putRecords(client, name, [{ partitionKey: 'later', data: 'x' }]);
    expect(children).toContain(after[0].shardId);

    const end = await read(reading);
    expect(end.Records!.map((r) => r.SequenceNumber)).toEqual(before.map((r) => r.sequenceNumber));
    expect(end.NextShardIterator).toBeUndefined();
    expect(end.ChildShards?.map((c) => ({ id: c.ShardId, parents: c.ParentShards }))).toEqual(
      children.map((id) => ({ id, parents: [parent] })),
    );
    const listed = await listAllShards(client, name);
    const closed = listed.find((s) => s.ShardId === parent)!;
    expect(closed.SequenceNumberRange?.EndingSequenceNumber).toBeDefined();
    expect(end.ChildShards!.map((c) => c.HashKeyRange)).toEqual(
      children.map((id) => listed.find((s) => s.ShardId === id)!.HashKeyRange),
    );
    // Read again from its last record: nothing, and the end again.
    const again = await read(
      await iterator({
        StreamName: name,
        ShardId: parent,
        type: 'AFTER_SEQUENCE_NUMBER',
        StartingSequenceNumber: before[4].sequenceNumber,
      }),
    );
    expect(again.Records).toEqual([]);
    expect(again.NextShardIterator).toBeUndefined();
    expect(again.ChildShards).toHaveLength(2);
  });

  test('ListShards filters after a split: AT_LATEST the open shards, AT_TRIM_HORIZON the first ones, FROM_TRIM_HORIZON all', async () => {
    const name = await newStream(2);
    const children = await splitShard(client, name, 'shardId-000000000000');
    const listed = async (Type: 'AT_LATEST' | 'AT_TRIM_HORIZON' | 'FROM_TRIM_HORIZON') => {
      const ids: string[] = [];
      let page = await client.send(new ListShardsCommand({ StreamName: name, ShardFilter: { Type }, MaxResults: 1 }));
      ids.push(...page.Shards!.map((s) => s.ShardId!));
      while (page.NextToken) {
        page = await client.send(new ListShardsCommand({ NextToken: page.NextToken, MaxResults: 1 }));
        ids.push(...page.Shards!.map((s) => s.ShardId!));
      }
      return ids;
    };
    expect(await listed('AT_LATEST')).toEqual(['shardId-000000000001', ...children]);
    expect(await listed('AT_TRIM_HORIZON')).toEqual(['shardId-000000000000', 'shardId-000000000001']);
    expect(await listed('FROM_TRIM_HORIZON')).toEqual(['shardId-000000000000', 'shardId-000000000001', ...children]);
  });

  test('UpdateShardCount: UPDATING, then ACTIVE with every shard split (doubling) or pairs merged (halving)', async () => {
    const name = await newStream(4);
    const scale = (target: number) =>
      client.send(
        new UpdateShardCountCommand({ StreamName: name, TargetShardCount: target, ScalingType: 'UNIFORM_SCALING' }),
      );
    const summary = async () =>
      (await client.send(new DescribeStreamSummaryCommand({ StreamName: name }))).StreamDescriptionSummary!;
    expect(await scale(8)).toMatchObject({ CurrentShardCount: 4, TargetShardCount: 8, StreamName: name });
    expect((await summary()).StreamStatus).toBe('UPDATING');
    expect(await errorOf(scale(4))).toEqual({ name: 'ResourceInUseException', status: 400 });
    await waitFor('ACTIVE', async () => (await summary()).StreamStatus === 'ACTIVE');
    expect((await summary()).OpenShardCount).toBe(8);
    const all = await listAllShards(client, name);
    const doubled = openShards(all);
    const width = (s: Shard) => BigInt(s.HashKeyRange!.EndingHashKey!) - BigInt(s.HashKeyRange!.StartingHashKey!);
    // Uniform: the widths differ by at most one hash key.
    expect(new Set(doubled.map((s) => width(s) / 2n)).size).toBe(1);
    expect(doubled.map((s) => s.ParentShardId)).toEqual([0, 0, 1, 1, 2, 2, 3, 3].map((i) => `shardId-00000000000${i}`));
    expect(all.slice(0, 4).every((s) => s.SequenceNumberRange?.EndingSequenceNumber !== undefined)).toBe(true);

    const halved = await updateShardCount(client, name, 4);
    expect(halved.map((s) => [s.ParentShardId, s.AdjacentParentShardId])).toEqual(
      [0, 2, 4, 6].map((i) => [doubled[i].ShardId, doubled[i + 1].ShardId]),
    );
    expect(halved.map((s) => s.HashKeyRange)).toEqual(all.slice(0, 4).map((s) => s.HashKeyRange));
    expect(await errorOf(scale(9))).toEqual({ name: 'InvalidArgumentException', status: 400 });
  });

  test('MergeShards: adjacent shards only; the child holds both ranges and names both parents', async () => {
    const name = await newStream(3);
    const [a, b, c] = await listAllShards(client, name);
    expect(
      await errorOf(
        client.send(
          new MergeShardsCommand({ StreamName: name, ShardToMerge: a.ShardId, AdjacentShardToMerge: c.ShardId }),
        ),
      ),
    ).toEqual({ name: 'InvalidArgumentException', status: 400 });
    await client.send(
      new MergeShardsCommand({ StreamName: name, ShardToMerge: c.ShardId, AdjacentShardToMerge: b.ShardId }),
    );
    await waitFor('merged', async () => openShards(await listAllShards(client, name)).length === 2);
    const child = (await listAllShards(client, name)).find((s) => s.ParentShardId === c.ShardId)!;
    expect(child.AdjacentParentShardId).toBe(b.ShardId);
    expect(child.HashKeyRange).toEqual({
      StartingHashKey: b.HashKeyRange!.StartingHashKey,
      EndingHashKey: c.HashKeyRange!.EndingHashKey,
    });
  });

  test('errors the spout tells apart: ResourceNotFound, InvalidArgument, ExpiredIterator', async () => {
    const name = await newStream(1);
    const ShardId = 'shardId-000000000000';
    expect(await errorOf(client.send(new DescribeStreamSummaryCommand({ StreamName: 'no-such-stream' })))).toEqual({
      name: 'ResourceNotFoundException',
      status: 400,
    });
    expect(await errorOf(iterator({ StreamName: name, ShardId: 'shardId-000000000009', type: 'LATEST' }))).toEqual({
      name: 'ResourceNotFoundException',
      status: 400,
    });
    const [put] = await putRecords(client, name, [{ partitionKey: 'k', data: 'x' }]);
    // A sequence number this shard never gave out.
    const foreign = (BigInt(put.sequenceNumber) + 1n).toString();
    expect(
      await errorOf(
        iterator({ StreamName: name, ShardId, type: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: foreign }),
      ),
    ).toEqual({
      name: 'InvalidArgumentException',
      status: 400,
    });
    expect(await errorOf(read('not-an-iterator'))).toEqual({ name: 'InvalidArgumentException', status: 400 });

    const old = await iterator({ StreamName: name, ShardId, type: 'TRIM_HORIZON' });
    skipped += 301_000;
    expect(await errorOf(read(old))).toEqual({ name: 'ExpiredIteratorException', status: 400 });
  });

  test("quotas: a shard's sixth GetRecords in a second is throttled; a benchmark's own calls are not held to them", async () => {
    const at = clock();
    const limited = await startFastKinesisServer(
      0,
      { ...FAST_KINESIS_DEFAULTS, latencyMs: 1, transitionMs: 10 },
      () => at,
    );
    const endpoint = { endpoint: `http://127.0.0.1:${limited.port}`, region: 'us-east-1' };
    const spoutClient = createKinesisClient(endpoint);
    const harness = markUnmetered(kinesisClient(endpoint));
    try {
      await createStream(harness, 'limited', 1);
      await putRecords(harness, 'limited', [{ partitionKey: 'k', data: 'x' }]);
      const { ShardIterator } = await spoutClient.send(
        new GetShardIteratorCommand({
          StreamName: 'limited',
          ShardId: 'shardId-000000000000',
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      const read = () => spoutClient.send(new GetRecordsCommand({ ShardIterator }));
      const answers = [];
      for (let i = 0; i < 6; i += 1) answers.push(await errorOf(read()));
      expect(answers.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
      expect(answers[5]).toEqual({ name: 'ProvisionedThroughputExceededException', status: 400 });
      expect((await harness.send(new GetRecordsCommand({ ShardIterator }))).Records).toHaveLength(1);
      expect(await errorOf(read())).toEqual({ name: 'ProvisionedThroughputExceededException', status: 400 });
    } finally {
      spoutClient.destroy();
      harness.destroy();
      await limited.close();
    }
  });

  test('calls are answered side by side, each after the fixed latency', async () => {
    const slow = await startFastKinesisServer(0, { ...FAST_KINESIS_DEFAULTS, latencyMs: 200 });
    const slowClient = kinesisClient({ endpoint: `http://127.0.0.1:${slow.port}`, region: 'us-east-1' });
    try {
      const one = performance.now();
      await errorOf(slowClient.send(new DescribeStreamSummaryCommand({ StreamName: 'none' })));
      expect(performance.now() - one).toBeGreaterThanOrEqual(195);
      const many = performance.now();
      await Promise.all(
        Array.from({ length: 20 }, () =>
          errorOf(slowClient.send(new DescribeStreamSummaryCommand({ StreamName: 'none' }))),
        ),
      );
      // One after another they would take 4 s.
      expect(performance.now() - many).toBeLessThan(1_500);
    } finally {
      slowClient.destroy();
      await slow.close();
    }
  });
});

describe('fast emulator as a process, under a spout', () => {
  const suite = flowSuite({ startKinesis: () => startFastKinesis({ transitionMs: 50 }) });

  test('the server is a process of its own', () => {
    expect(suite.services.kinesis.pid).toBeGreaterThan(0);
    expect(suite.services.kinesis.pid).not.toBe(process.pid);
  });

  test('split while records flow: nothing lost, parents before children, one reader', async () => {
    const stream = await suite.newStream(2);
    const f = suite.flow(stream);
    await f.addSpout();
    await f.addSpout();
    f.startProducer();
    await sleep(1_000);
    const [parent] = openShards(await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
    const children = await splitShard(suite.services.client, stream, parent);
    await sleep(1_500);
    await expectFlowInvariants(f, { withinMs: 30_000 });
    expect([...f.emitSpans.keys()]).toEqual(expect.arrayContaining(children));
    expect(f.put.some((p) => children.some((c) => p.id.startsWith(`${c}:`)))).toBe(true);
  });
});
