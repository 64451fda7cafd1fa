/**
 * Storm metrics (contract C2) from the built process, driven as ShellSpout drives it, against real ZooKeeper
 * and kinesis-local: `metrics` frames only with the Java side's registration and only to its names, and
 * counts that add up to what happened.
 */
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { idsOf, spoutSuite, uniqueName, waitFor } from '../helpers/fixture';
import { KinesisFault, startHttpFaultProxy } from '../helpers/httpFaultProxy';
import { startTcpProxy } from '../helpers/tcpProxy';
import type { StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();
const { spout } = suite;

const REGISTRATION = { version: 1, process: 'kinesis-spout', shards: 'kinesis-spout-shards', intervalSecs: 2 };
const withMetrics = { conf: { 'kinesis.spout.metrics': REGISTRATION } };

interface Params {
  counters: Record<string, number>;
  gauges: Record<string, number>;
}

function records(n: number, prefix = 'r'): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    partitionKey: `key-${i % 16}`,
    data: JSON.stringify({ n: i, prefix }),
  }));
}

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

function framesOf(driver: StormDriver, name: string): Params[] {
  return driver.metrics.filter((m) => m.name === name).map((m) => m.params as Params);
}

/** What a registered IShellMetric sums: every counter over every frame so far. */
function summed(driver: StormDriver, name: string): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { counters } of framesOf(driver, name))
    for (const [key, value] of Object.entries(counters)) sums[key] = (sums[key] ?? 0) + value;
  return sums;
}

/** The gauges a registered IShellMetric holds: those of the last frame. */
function lastGauges(driver: StormDriver, name: string): Record<string, number> {
  return framesOf(driver, name).at(-1)?.gauges ?? {};
}

/** Keeps Storm's commands coming (nothing left to emit) until `done`. */
async function pumpUntil(driver: StormDriver, what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  if (!(await driver.pump(done, { timeoutMs }))) throw new Error(`timed out waiting for ${what}\n${driver.logText()}`);
}

test('with the registration: frames to the registered names only, whose counters add up to the records put, acked, failed, retried and skipped', async () => {
  const stream = await newStream(2);
  const put = await putRecords(suite.services.client, stream, records(60));
  const poison = idOf(put[1]);
  const failOnce = new Set(put.filter((_, i) => i % 3 === 0).map(idOf));
  const driver = await spout(
    stream,
    uniqueName('app'),
    { retry: { maxRetries: 1, initialBackoffMs: 10, maxBackoffMs: 50 }, statsIntervalMs: 300 },
    withMetrics,
  );
  const failed = new Set<string>();
  const acked = new Set<string>();
  await driver.pump(() => acked.size === put.length - 1 && driver.errors.length === 1, {
    timeoutMs: 40_000,
    onEmit: async (emit) => {
      if (emit.id === poison || (failOnce.has(emit.id) && !failed.has(emit.id))) {
        failed.add(emit.id);
        await driver.fail(emit.id);
      } else {
        acked.add(emit.id);
        await driver.ack(emit.id);
      }
    },
  });
  expect(driver.errors[0]).toMatch(/over retry.maxRetries=1: skipped/);

  const expected = { emitted: 60, acked: 59, failed: failOnce.size + 2, retried: failOnce.size + 1, skipped: 1 };
  await pumpUntil(
    driver,
    'metrics frames with every count',
    () =>
      summed(driver, REGISTRATION.process).acked === expected.acked &&
      lastGauges(driver, REGISTRATION.process).shardsHeld === 2,
  );
  // One more send: counts already sent are not sent again.
  const sends = driver.metrics.length;
  await pumpUntil(driver, 'one more send', () => driver.metrics.length >= sends + 2);

  expect(new Set(driver.metrics.map((m) => m.name))).toEqual(new Set([REGISTRATION.process, REGISTRATION.shards]));
  const process = summed(driver, REGISTRATION.process);
  expect(process).toMatchObject(expected);
  expect(process.leasesTaken - process.leasesGiven).toBe(2);
  expect(process.reshardEvents).toBe(0);

  const shardIds = [...new Set(put.map((r) => r.shardId))];
  const perShard = summed(driver, REGISTRATION.shards);
  for (const shardId of shardIds) {
    const ofShard = put.map((r, i) => ({ r, i })).filter(({ r }) => r.shardId === shardId);
    const bytes = ofShard.reduce(
      (sum, { i }) => sum + Buffer.byteLength(records(60)[i].data) + records(60)[i].partitionKey.length,
      0,
    );
    expect({
      shardId,
      emitted: perShard[`${shardId}.emitted`],
      emittedBytes: perShard[`${shardId}.emittedBytes`],
    }).toEqual({ shardId, emitted: ofShard.length, emittedBytes: bytes });
  }
  for (const name of ['emitted', 'acked', 'failed', 'retried', 'skipped'] as const) {
    expect({ name, sum: shardIds.reduce((sum, id) => sum + perShard[`${id}.${name}`], 0) }).toEqual({
      name,
      sum: expected[name],
    });
  }

  const gauges = lastGauges(driver, REGISTRATION.process);
  // recordsInMemory also counts what a GetRecords in flight may bring: only the bytes are surely 0.
  expect(gauges).toMatchObject({ shardsHeld: 2, zookeeperConnected: 1, bytesInMemory: 0 });
  expect(gauges.maxMillisBehindLatest).toBeGreaterThanOrEqual(0);
  const shardGauges = lastGauges(driver, REGISTRATION.shards);
  for (const shardId of shardIds) {
    expect(shardGauges[`${shardId}.inFlight`]).toBe(0);
    expect(shardGauges[`${shardId}.millisBehindLatest`]).toBeGreaterThanOrEqual(0);
    expect(typeof shardGauges[`${shardId}.emittedRecordsPerSecond`]).toBe('number');
  }
  // The stats log line goes on, and agrees.
  await waitFor('a stats line with every ack', () => driver.lastStats()?.acked === expected.acked);
  expect(driver.lastStats()).toMatchObject({
    emitted: expected.emitted,
    reemitted: expected.retried,
    failed: expected.failed,
    skipped: expected.skipped,
  });
  // Frames go out with replies to Storm's commands, at the interval (2 s bucket: every second), not with each one.
  expect(driver.metrics.length).toBeLessThan(driver.commandCount / 4);
});

test('a split: the parent counts as a reshard event and a lease given, then disappears from the gauges', async () => {
  const stream = await newStream(1);
  const before = await putRecords(suite.services.client, stream, records(20, 'before'));
  const driver = await spout(stream, uniqueName('app'), {}, withMetrics);
  await driver.pump(() => driver.emits.length >= before.length);
  const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  const children = await splitShard(suite.services.client, stream, parent);
  const after = await putRecords(suite.services.client, stream, records(40, 'after'));
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= before.length + after.length, { timeoutMs: 40_000 });
  await pumpUntil(driver, 'the children alone in the gauges', () => {
    const held = lastGauges(driver, REGISTRATION.shards);
    return (
      children.every((c) => `${c}.inFlight` in held) &&
      !(`${parent}.inFlight` in held) &&
      summed(driver, REGISTRATION.process).acked === 60
    );
  });
  const process = summed(driver, REGISTRATION.process);
  expect(process).toMatchObject({ reshardEvents: 1, emitted: 60, acked: 60 });
  // Usually 3 taken and 1 given; a lease taken and given straight back (a listing read just before the
  // parent finished) counts in both.
  expect(process.leasesGiven).toBeGreaterThanOrEqual(1);
  expect(process.leasesTaken - process.leasesGiven).toBe(2);
  expect(lastGauges(driver, REGISTRATION.process).shardsHeld).toBe(2);
  const perShard = summed(driver, REGISTRATION.shards);
  expect(perShard[`${parent}.emitted`]).toBe(20);
  expect(children.reduce((sum, c) => sum + perShard[`${c}.emitted`], 0)).toBe(40);
});

test("throttling that outlasts the SDK's retries and expired iterators are counted, from real AWS-shaped answers", async () => {
  const stream = await newStream(1);
  const put = await putRecords(suite.services.client, stream, records(30));
  const proxy = await startHttpFaultProxy(suite.services.kinesis.endpoint, { seed: 3 });
  try {
    // The SDK does not retry a throttled GetRecords (the reader's budget does): 6 answers, 6 failed calls.
    const throttled = proxy.inject({ operations: ['GetRecords'], times: 6, ...KinesisFault.Throttled });
    const driver = await spout(stream, uniqueName('app'), { endpoint: proxy.endpoint }, withMetrics);
    await driver.pump(() => driver.emits.length >= 10);
    const expired = proxy.inject({ operations: ['GetRecords'], times: 2, ...KinesisFault.ExpiredIterator });
    await driver.pump(() => new Set(idsOf(driver.emits)).size >= put.length && expired.injected === 2, {
      timeoutMs: 40_000,
    });
    await pumpUntil(driver, 'the resets counted', () => summed(driver, REGISTRATION.process).iteratorResets === 2);
    expect(throttled.injected).toBe(6);
    expect(summed(driver, REGISTRATION.process)).toMatchObject({ throttledCalls: 6, iteratorResets: 2, emitted: 30 });
  } finally {
    await proxy.close();
  }
});

test('zookeeperConnected falls to 0 while ZooKeeper cannot be reached, and comes back', async () => {
  const stream = await newStream(1);
  const proxy = await startTcpProxy(suite.services.zk.port);
  try {
    // A session that outlives the outage: the gauge tells a lost connection, not only a lost session.
    const zookeeper = { connect: `127.0.0.1:${proxy.port}`, sessionTimeoutMs: 30_000, root: '/it' };
    const driver = await spout(stream, uniqueName('app'), { zookeeper }, withMetrics);
    const connected = () => lastGauges(driver, REGISTRATION.process).zookeeperConnected;
    await pumpUntil(
      driver,
      'connected',
      () => connected() === 1 && lastGauges(driver, REGISTRATION.process).shardsHeld === 1,
    );
    proxy.resetAll();
    proxy.blackhole();
    await pumpUntil(driver, 'disconnected', () => connected() === 0, 10_000);
    proxy.restore();
    await pumpUntil(
      driver,
      'connected again',
      () => connected() === 1 && lastGauges(driver, REGISTRATION.process).shardsHeld === 1,
    );
    expect(driver.logText()).not.toMatch(/expired/);
  } finally {
    await proxy.close();
  }
});

test('without the registration, no metrics frame at all (a plain ShellSpout registers nothing)', async () => {
  const stream = await newStream(1);
  const put = await putRecords(suite.services.client, stream, records(30));
  const driver = await spout(stream, uniqueName('app'));
  await driver.pump(() => driver.emits.length >= put.length);
  // Longer than the shortest send interval, with Storm's commands coming all along.
  const until = Date.now() + 3_000;
  await driver.pump(() => Date.now() > until, { timeoutMs: 10_000 });
  expect(driver.metrics).toEqual([]);
  expect(driver.frames.some((f) => f.command === 'metrics')).toBe(false);
  expect(driver.errors).toEqual([]);
});

test('a malformed registration is reported once, sends nothing, and the spout reads all the same', async () => {
  const stream = await newStream(1);
  const put = await putRecords(suite.services.client, stream, records(30));
  const driver = await spout(
    stream,
    uniqueName('app'),
    {},
    { conf: { 'kinesis.spout.metrics': { ...REGISTRATION, version: 2 } } },
  );
  await driver.pump(() => driver.emits.length >= put.length);
  const until = Date.now() + 3_000;
  await driver.pump(() => Date.now() > until, { timeoutMs: 10_000 });
  await waitFor('the error', () => driver.errors.length > 0);
  expect(driver.errors).toEqual([
    expect.stringMatching(/^kinesis\.spout\.metrics has version 2: .*no metrics are sent$/),
  ]);
  expect(driver.metrics).toEqual([]);
});
