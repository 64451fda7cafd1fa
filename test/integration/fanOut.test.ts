/**
 * `readMode: "fanOut"` end to end: the bundled spout against the fan-out front (test/helpers/fanOutServer.ts)
 * before kinesis-local, real ZooKeeper. It registers its consumer, reads every shard through subscriptions
 * whose lifetime is cut to seconds (so they are renewed mid-backlog), ends a split parent on its final
 * event's ChildShards and reads the children; nothing lost, nothing twice.
 */
import { listAllShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { idsOf, spoutSuite, uniqueName } from '../helpers/fixture';
import { startFanOutServer, type FanOutServer } from '../helpers/fanOutServer';
import { createStream } from '../helpers/kinesisAdmin';

const suite = spoutSuite();
let front: FanOutServer;

beforeAll(async () => {
  front = await startFanOutServer(suite.services.kinesis.endpoint, {
    lifetimeMs: 1_500,
    activationMs: 300,
    inUseWindowMs: 1_000,
    recordsPerCall: 50,
  });
});
afterAll(async () => {
  await front?.close();
});

function records(n: number, prefix: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 32}`, data: `${prefix} ${i}` }));
}
const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

test('reads every record once through renewed subscriptions, and a split parent to its end before its children', async () => {
  const { client } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const before = await putRecords(client, stream, records(400, 'before'));
  const app = uniqueName('app');
  const driver = await suite.spout(stream, app, { endpoint: front.endpoint, readMode: 'fanOut' });
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= before.length, { timeoutMs: 60_000 });

  const [parent] = (await listAllShards(client, stream)).map((s) => s.ShardId!);
  await splitShard(client, stream, parent);
  const after = await putRecords(client, stream, records(200, 'after'));
  const all = [...before, ...after];
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= all.length, { timeoutMs: 60_000 });
  // Whatever else could come out (a record read twice across a renewal) has time to.
  await driver.pump(() => false, { timeoutMs: 2_000 });

  const report = driver.logText();
  const emitted = idsOf(driver.emits);
  expect({ missing: all.map(idOf).filter((id) => !emitted.includes(id)), report }).toEqual({ missing: [], report });
  expect({ twice: emitted.length - new Set(emitted).size, report }).toEqual({ twice: 0, report });
  expect(emitted.sort()).toEqual(all.map(idOf).sort());
  expect(driver.errors).toEqual([]);

  const ok = front.subscribeCalls.filter((c) => c.outcome === 'ok');
  const shards = new Set(ok.map((c) => c.shardId));
  expect(shards.size).toBe(4);
  // More subscriptions than shards: lifetimes ended mid-read and were renewed.
  expect(ok.length).toBeGreaterThan(shards.size);
  expect(front.consumers().map((c) => c.name)).toContain(app);
  expect(front.requests.get('h1 GetRecords') ?? 0).toBe(0);
  // The children were subscribed only after the parent's last event.
  const parentEnded = front.subscriptions.find((s) => s.shardId === parent && s.ended === 'shardEnd');
  expect(parentEnded).toBeDefined();
});
