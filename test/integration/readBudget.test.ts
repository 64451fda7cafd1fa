/**
 * Several applications polling one stream (issue 16, item 3). kinesis-local does not enforce Kinesis's read
 * limit (checked first), so the HTTP fault proxy does: 5 GetRecords and 2 MB per second per shard for every
 * caller together, answered as Kinesis answers. Two applications read a backlog through it: with budgets
 * 2 + 2 nothing is throttled; without budgets (5 + 5) calls are throttled and counted in the metrics; in
 * both nothing is lost.
 */
import { GetRecordsCommand, GetShardIteratorCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import { kinesisClient, listAllShards } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { flowSuite } from '../helpers/flowSuite';
import type { Flow } from '../helpers/flow';
import { KINESIS_READ_LIMITS, startHttpFaultProxy } from '../helpers/httpFaultProxy';
import type { StormDriver } from '../helpers/stormDriver';

const suite = flowSuite();
const METRICS = { version: 1, process: 'kinesis-spout', shards: 'kinesis-spout-shards', intervalSecs: 1 };

async function iteratorOf(client: KinesisClient, stream: string): Promise<string> {
  const [shard] = await listAllShards(suite.services.client, stream);
  const answer = await client.send(
    new GetShardIteratorCommand({ StreamName: stream, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }),
  );
  return answer.ShardIterator!;
}

/** GetRecords on one shard, all at once: how many were refused, and one refusal. */
async function burst(client: KinesisClient, iterator: string, calls: number) {
  const answers = await Promise.allSettled(
    Array.from({ length: calls }, () => client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1 }))),
  );
  const refusals = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
  return { refusals: refusals.length, refused: refusals[0]?.reason as unknown };
}

/** Throttled calls every process of `flow` reported in its metrics, summed over every frame. */
function throttledCalls(flow: Flow): number {
  return flow.spouts
    .flatMap((d: StormDriver) => d.metrics.filter((m) => m.name === METRICS.process))
    .reduce((sum, m) => sum + ((m.params as { counters: Record<string, number> }).counters.throttledCalls ?? 0), 0);
}

test('kinesis-local does not throttle; the proxy does, as Kinesis: 400, AWS JSON error, request id', async () => {
  const stream = await suite.newStream(1);
  const direct = kinesisClient(suite.services.kinesis);
  const proxy = suite.closeAfter(
    await startHttpFaultProxy(suite.services.kinesis.endpoint, { readLimits: KINESIS_READ_LIMITS }),
  );
  const through = kinesisClient({ endpoint: proxy.endpoint, region: suite.services.kinesis.region });
  try {
    // 20 calls at once on one shard: Kinesis would refuse 15 of them; kinesis-local answers them all.
    expect((await burst(direct, await iteratorOf(direct, stream), 20)).refusals).toBe(0);
    const { refusals, refused } = await burst(through, await iteratorOf(through, stream), 20);
    expect(refusals).toBeGreaterThan(0);
    expect(refused).toMatchObject({
      name: 'ProvisionedThroughputExceededException',
      message: expect.stringMatching(new RegExp(`^Rate exceeded for shard shardId-000000000000 in stream ${stream}`)),
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    expect(proxy.throttled.get(`${stream}/shardId-000000000000`)).toBeGreaterThan(0);
  } finally {
    direct.destroy();
    through.destroy();
  }
});

const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function twoApplications(budget: Record<string, unknown>) {
  const stream = await suite.newStream(2);
  const proxy = suite.closeAfter(
    await startHttpFaultProxy(suite.services.kinesis.endpoint, { readLimits: KINESIS_READ_LIMITS }),
  );
  // A backlog read 20 records a call: each application reads back to back for a while.
  const overrides = { endpoint: proxy.endpoint, maxRecordsPerRequest: 20, ...budget };
  const first = suite.flow(stream, overrides, uniqueName('app'));
  const second = new (first.constructor as new (...args: unknown[]) => Flow)(
    suite.services,
    stream,
    uniqueName('app'),
    overrides,
  );
  suite.closeAfter({ close: () => second.stop() });
  await first.putBatch(1_500);
  for (const flow of [first, second]) {
    flow.topologyConf = { 'kinesis.spout.metrics': METRICS };
    // The second application sees the records the first put: both read the whole stream.
    flow.put.splice(0, flow.put.length, ...first.put);
  }
  const startedAt = performance.now();
  await Promise.all([first.addSpout(), second.addSpout()]);
  await Promise.all([first.waitAllDelivered(120_000), second.waitAllDelivered(120_000)]);
  const readFor = (performance.now() - startedAt) / 1000;
  // The readers go on polling at the tip: what was refused until now must be in a metrics frame (1 s
  // interval) that comes within the next 2.5 s; what is refused meanwhile may or may not be yet.
  const refusedByNow = sum(proxy.throttled);
  await new Promise((r) => setTimeout(r, 2_500));
  process.stdout.write(
    `two applications ${JSON.stringify(budget)}: ${sum(proxy.reads)} GetRecords passed, ${sum(proxy.throttled)} throttled, both read the ${first.put.length} records in ${readFor.toFixed(1)} s\n`,
  );
  return { first, second, proxy, stream, refusedByNow };
}

test('two applications with budgets 2 + 2 read a backlog through Kinesis limits: no call throttled, nothing lost', async () => {
  const { first, second, proxy } = await twoApplications({ maxGetRecordsPerSecond: 2 });
  expect([...proxy.throttled.values()].reduce((a, b) => a + b, 0)).toBe(0);
  expect(throttledCalls(first) + throttledCalls(second)).toBe(0);
  for (const flow of [first, second]) {
    expect(flow.missing()).toEqual([]);
    expect(flow.spouts[0].metrics.some((m) => m.name === METRICS.process)).toBe(true);
  }
});

test('two applications without budgets are throttled, count it in their metrics, and lose nothing', async () => {
  const { first, second, proxy, refusedByNow } = await twoApplications({});
  const refused = sum(proxy.throttled);
  expect(refusedByNow).toBeGreaterThan(0);
  // Every refusal reached a reader (the SDK does not retry a throttled GetRecords) and was counted: all
  // those before the last frames, perhaps not yet one refused in the last second.
  const counted = throttledCalls(first) + throttledCalls(second);
  expect(counted).toBeGreaterThanOrEqual(refusedByNow);
  expect(counted).toBeLessThanOrEqual(refused);
  for (const flow of [first, second]) expect(flow.missing()).toEqual([]);
});
