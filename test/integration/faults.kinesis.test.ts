/**
 * Kinesis errors that the emulator never gives, injected by an HTTP proxy in front of it while records
 * flow: throttling, expired iterators, 500s, and a transient ResourceNotFoundException for a shard the
 * listing still shows. Nothing may be lost, and an open shard is never marked finished.
 */
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand } from '@aws-sdk/client-kinesis';
import { kinesisClient, listAllShards, openShards, splitShard } from '../helpers/kinesisAdmin';
import { stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { flowSuite } from '../helpers/flowSuite';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { KinesisFault, startHttpFaultProxy } from '../helpers/httpFaultProxy';

const suite = flowSuite();

const newStream = (shards: number) => suite.newStream(shards);

async function shardIds(stream: string): Promise<{ all: string[]; open: string[] }> {
  const shards = await listAllShards(suite.services.client, stream);
  return { all: shards.map((s) => s.ShardId!), open: openShards(shards).map((s) => s.ShardId!) };
}

test('the AWS SDK surfaces each injected error by its name and status; GetRecords is told apart by shard', async () => {
  const stream = await newStream(2);
  const proxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 7 }));
  const client = kinesisClient({ endpoint: proxy.endpoint, region: suite.services.kinesis.region });
  try {
    const [first, second] = (await shardIds(stream)).all;
    const iterator = async (shardId: string) =>
      (
        await client.send(
          new GetShardIteratorCommand({ StreamName: stream, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
        )
      ).ShardIterator!;
    const [a, b] = [await iterator(first), await iterator(second)];
    expect(proxy.shardOfIterator(b)).toBe(second);

    for (const fault of Object.values(KinesisFault)) {
      const rule = proxy.inject({ operations: ['GetRecords'], when: (r) => r.shardId === second, ...fault });
      await expect(client.send(new GetRecordsCommand({ ShardIterator: b }))).rejects.toMatchObject({
        name: fault.type,
        $metadata: { httpStatusCode: fault.status },
      });
      // The other shard's reads pass, and a read's next iterator is known to belong to its shard.
      const passed = await client.send(new GetRecordsCommand({ ShardIterator: a }));
      expect(proxy.shardOfIterator(passed.NextShardIterator!)).toBe(first);
      rule.remove();
    }
    const listing = proxy.inject({ operations: ['ListShards'], times: 1, ...KinesisFault.NotFound });
    await expect(client.send(new ListShardsCommand({ StreamName: stream }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    expect(listing.injected).toBe(1);
    await expect(client.send(new ListShardsCommand({ StreamName: stream }))).resolves.toMatchObject({
      Shards: expect.any(Array),
    });

    // The SDK retries a 500 itself (maxAttempts 2 here): one fault is absorbed, two are not.
    proxy.inject({ operations: ['GetShardIterator'], times: 1, ...KinesisFault.InternalFailure });
    await expect(iterator(first)).resolves.toEqual(expect.any(String));
    proxy.inject({ operations: ['GetShardIterator'], times: 2, ...KinesisFault.InternalFailure });
    await expect(iterator(first)).rejects.toMatchObject({
      name: 'InternalFailure',
      $metadata: { httpStatusCode: 500 },
    });
  } finally {
    client.destroy();
  }
});

test('throttling, expired iterators and 500s while records flow and a shard splits: nothing lost, nothing finished early', async () => {
  const stream = await newStream(3);
  const proxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 11 }));
  const app = uniqueName('app');
  const flow = suite.flow(stream, { endpoint: proxy.endpoint }, app);
  await flow.addSpout();
  await flow.addSpout();
  const { open } = await shardIds(stream);
  // Scattered faults the SDK mostly absorbs, and bursts longer than its three attempts on one shard.
  proxy.inject({ operations: ['GetRecords'], probability: 0.1, ...KinesisFault.Throttled });
  proxy.inject({ operations: ['GetRecords'], probability: 0.08, ...KinesisFault.ExpiredIterator });
  proxy.inject({
    operations: ['GetRecords', 'GetShardIterator', 'ListShards'],
    probability: 0.08,
    ...KinesisFault.InternalFailure,
  });
  const bursts = () => {
    proxy!.inject({
      operations: ['GetRecords'],
      when: (r) => r.shardId === open[0],
      times: 3,
      ...KinesisFault.Throttled,
    });
    proxy!.inject({
      operations: ['GetRecords', 'GetShardIterator'],
      when: (r) => r.shardId === open[1],
      times: 3,
      ...KinesisFault.InternalFailure,
    });
  };
  bursts();
  flow.startProducer(40, 100);
  await sleep(2_000);
  bursts();
  const children = await splitShard(suite.services.client, stream, open[2]);
  await sleep(2_000);
  bursts();
  await sleep(1_500);
  // A generous bound, not a timing: each refusal halves the reader's rate (readRate.ts), so the bursts and the
  // random 10 % keep the throttled shard near the floor (one call per 2 s) until they stop.
  await expectFlowInvariants(flow, { maxDuplicates: 200, withinMs: 90_000 });

  const types = new Set(proxy.injected.map((f) => f.type));
  expect([...types].sort()).toEqual([
    'ExpiredIteratorException',
    'InternalFailure',
    'ProvisionedThroughputExceededException',
  ]);
  expect(children.every((c) => flow!.emitSpans.has(c))).toBe(true);
  // The faults reached the spout itself, not only the SDK's own retries.
  const logs = flow.logs();
  expect(logs).toMatch(/iterator of \S+ expired/);
  expect(logs).toMatch(/GetRecords on \S+ failed \(.*InternalFailure/);
  // Only the split parent may be finished; every open shard is still being read.
  const finished = await suite.services.inspector.getChildren(`${stateBase(stream, app)}/finished`);
  expect(finished).toEqual([open[2]]);
});

test('a transient ResourceNotFoundException on a listed shard does not finish it: its records are all read', async () => {
  const stream = await newStream(2);
  const proxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 5 }));
  const app = uniqueName('app');
  const flow = suite.flow(stream, { endpoint: proxy.endpoint }, app);
  await flow.addSpout();
  const [victim] = (await shardIds(stream)).open;
  flow.startProducer(40, 100);
  await waitFor('records read from the shard', () => flow!.emitSpans.has(victim), 15_000);
  // The listing still shows the shard all along: only its reads say it is not there, for a moment.
  const reads = proxy.inject({
    operations: ['GetRecords'],
    when: (r) => r.shardId === victim,
    times: 2,
    ...KinesisFault.NotFound,
  });
  const seeks = proxy.inject({
    operations: ['GetShardIterator'],
    when: (r) => r.shardId === victim,
    times: 1,
    ...KinesisFault.NotFound,
  });
  // Today's reader gives the shard up at the first one; a reader that retries meets the rest.
  await waitFor('a not-found answer', () => reads.injected + seeks.injected >= 1, 10_000);
  await sleep(2_000);

  const base = stateBase(stream, app);
  expect((await suite.services.inspector.getData(`${base}/finished/${victim}`))?.data.toString('utf8')).toBeUndefined();
  await expectFlowInvariants(flow, { withinMs: 15_000 });
  expect(await suite.services.inspector.getChildren(`${base}/finished`)).toEqual([]);
  // The reader kept trying through every not-found answer.
  expect(reads.injected + seeks.injected).toBe(3);
});

test('access denied and KMS errors reach the Storm UI at once, naming the fix; reading resumes when they stop', async () => {
  const stream = await newStream(1);
  const proxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 6 }));
  const flow = suite.flow(stream, { endpoint: proxy.endpoint });
  const denied = proxy.inject({
    operations: ['GetRecords'],
    status: 400,
    type: 'AccessDeniedException',
    message: 'not authorized to perform kinesis:GetRecords',
  });
  const spout = await flow.addSpout();
  flow.startProducer(20, 100);
  await waitFor(
    'the IAM error in Storm',
    () => spout.errors.some((e) => e.includes('AccessDeniedException') && e.includes('kinesis:GetRecords')),
    10_000,
  );
  denied.remove();
  const kms = proxy.inject({
    operations: ['GetRecords'],
    times: 1,
    status: 400,
    type: 'KMSAccessDeniedException',
    message: 'no access to the key',
  });
  await waitFor('the KMS error in Storm', () => spout.errors.some((e) => e.includes('kms:Decrypt')), 15_000);
  expect(kms.injected).toBe(1);
  await expectFlowInvariants(flow, { withinMs: 30_000 });
  // Repeated now and then while it lasts, never flooded.
  expect(spout.errors.length).toBeLessThanOrEqual(4);
});

test('a listing that misses a shard another process reads does not forget its checkpoint; a shard nobody holds and no listing shows is forgotten', async () => {
  const stream = await newStream(2);
  const app = uniqueName('app');
  const base = stateBase(stream, app);
  const [hidden] = (await shardIds(stream)).open;
  // What a shard that expired long ago leaves behind: recorded, leased by nobody, listed nowhere.
  const expired = `${base}/checkpoints/shardId-000000000099`;
  await suite.services.inspector.mkdirp(`${base}/checkpoints`);
  await suite.services.inspector.create(
    expired,
    Buffer.from(
      JSON.stringify({ v: 1, position: { kind: 'SHARD_END' }, owner: 'gone', updatedAt: new Date().toISOString() }),
    ),
    'persistent',
  );
  const proxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 7 }));
  proxy.inject({
    operations: ['ListShards'],
    rewrite: (answer) => ({
      ...answer,
      Shards: ((answer.Shards ?? []) as { ShardId?: string }[]).filter((s) => s.ShardId !== hidden),
    }),
  });
  // The first member (it cleans up) lists through the proxy; the second sees the whole stream and reads the hidden shard.
  const flow = suite.flow(stream, { endpoint: proxy.endpoint }, app);
  const cleaner = await flow.addSpout(1, [1, 2]);
  flow.overrides.endpoint = suite.services.kinesis.endpoint;
  await flow.addSpout(2, [1, 2]);
  flow.startProducer(20, 100);
  await waitFor(
    'the expired shard forgotten',
    () => cleaner.logs.some((l) => l.msg.startsWith('forgot') && l.msg.includes('shardId-000000000099')),
    15_000,
  );
  await sleep(1_000);
  await expectFlowInvariants(flow, { withinMs: 20_000 });
  expect(flow.readersOf(hidden)).not.toContain(cleaner.pid);
  expect(await suite.services.inspector.getData(expired)).toBeUndefined();
  expect(await suite.services.inspector.getData(`${base}/checkpoints/${hidden}`)).toBeDefined();
  expect(cleaner.logs.filter((l) => l.msg.startsWith('forgot') && l.msg.includes(hidden))).toEqual([]);
});
