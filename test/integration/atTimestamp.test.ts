/**
 * `initialPosition: {"atTimestamp": ...}` end to end, against kinesis-local: records before and after the
 * timestamp on several shards, a shard closed before it (skipped; its children start at the timestamp)
 * and one closed after it (read from the timestamp to its end).
 */
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { idsOf, readJson, spoutSuite, stateBase, uniqueName } from '../helpers/fixture';

const suite = spoutSuite();
const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Clear of the emulator's arrival-time rounding and of the time a put takes. */
const GAP_MS = 1_200;

function records(n: number, prefix: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 32}`, data: `${prefix} ${i}` }));
}

test('only records at or after the timestamp are emitted, none lost, across shards closed before and after it', async () => {
  const { client, inspector } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const [closedBefore, closedAfter] = (await listAllShards(client, stream)).map((s) => s.ShardId!);
  const before = await putRecords(client, stream, records(60, 'before'));
  // Closed before the timestamp: nothing of it may be emitted, and its children start at the timestamp.
  const earlyChildren = await splitShard(client, stream, closedBefore);
  before.push(...(await putRecords(client, stream, records(60, 'before'))));

  await sleep(GAP_MS);
  const timestampMs = Date.now();
  await sleep(GAP_MS);

  const after = await putRecords(client, stream, records(60, 'after'));
  // Closed after the timestamp, before the first start: read from the timestamp to its end, then its children.
  const lateChildren = await splitShard(client, stream, closedAfter);
  after.push(...(await putRecords(client, stream, records(60, 'after'))));
  const shardsHit = new Set([...before, ...after].map((r) => r.shardId));
  expect(shardsHit).toEqual(new Set([closedBefore, closedAfter, ...earlyChildren, ...lateChildren]));
  expect(new Set(before.map((r) => r.shardId))).toEqual(new Set([closedBefore, closedAfter, ...earlyChildren]));

  const app = uniqueName('app');
  const driver = await suite.spout(stream, app, {
    initialPosition: { atTimestamp: new Date(timestampMs).toISOString() },
  });
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= after.length, { timeoutMs: 60_000 });
  // Written after the first start: read from the children's start.
  const late = await putRecords(client, stream, records(40, 'late'));
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= after.length + late.length, { timeoutMs: 60_000 });
  // Whatever else might come out (a record before the timestamp read late) has time to.
  await driver.pump(() => false, { timeoutMs: 2_000 });

  const emitted = idsOf(driver.emits);
  const expected = [...after, ...late].map(idOf);
  const report = `emitted ${emitted.length}, expected ${expected.length}\n${driver.logText()}`;
  const beforeIds = new Set(before.map(idOf));
  expect({ report, early: emitted.filter((id) => beforeIds.has(id)) }).toEqual({ report, early: [] });
  expect({ report, missing: expected.filter((id) => !emitted.includes(id)) }).toEqual({ report, missing: [] });
  expect(emitted.sort()).toEqual(expected.sort());
  for (const emit of driver.emits) expect(emit.tuple[4]).toBeGreaterThanOrEqual(timestampMs - 1_000);
  expect(driver.errors).toEqual([]);

  // The shard closed before the timestamp was finished without an emit; its checkpoint says so.
  const checkpoint = await readJson(inspector, `${stateBase(stream, app)}/checkpoints/${closedBefore}`);
  expect(checkpoint?.position).toEqual({ kind: 'SHARD_END' });
});
