/**
 * KPL-aggregated records (made by aws-kinesis-agg, AWS's own encoder) through the built spout, against real
 * ZooKeeper and kinesis-local: one tuple per user record across a split, and a checkpoint inside an
 * aggregate honoured after a kill.
 */
import { PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, splitShard } from '../helpers/kinesisAdmin';
import { idsOf, readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { kplAggregate } from '../helpers/kpl';
import type { Emit } from '../helpers/stormDriver';

const suite = spoutSuite();

interface Put {
  shardId: string;
  sequenceNumber: string;
  /** The user records inside (none: a plain record). */
  users: { partitionKey: string; data: string }[];
  /** Partition key and data of a plain (or corrupt) record. */
  partitionKey: string;
  data: Buffer;
}

/** Puts records one call each, so each gets its own sequence number in order. */
async function put(
  stream: string,
  records: { partitionKey: string; data: Buffer; explicitHashKey?: string; users: Put['users'] }[],
): Promise<Put[]> {
  const out: Put[] = [];
  for (const r of records) {
    const response = await suite.services.client.send(
      new PutRecordsCommand({
        StreamName: stream,
        Records: [{ PartitionKey: r.partitionKey, ExplicitHashKey: r.explicitHashKey, Data: r.data }],
      }),
    );
    const entry = response.Records?.[0];
    if (!entry?.SequenceNumber || !entry.ShardId) throw new Error(`put failed: ${JSON.stringify(entry)}`);
    out.push({
      shardId: entry.ShardId,
      sequenceNumber: entry.SequenceNumber,
      users: r.users,
      partitionKey: r.partitionKey,
      data: r.data,
    });
  }
  return out;
}

function aggregate(tag: string, count: number, keyOf: (i: number) => string = (i) => `${tag}-key-${i}`) {
  const users = Array.from({ length: count }, (_, i) => ({ partitionKey: keyOf(i), data: JSON.stringify({ tag, i }) }));
  const built = kplAggregate(users);
  return { partitionKey: built.partitionKey, explicitHashKey: built.explicitHashKey, data: built.data, users };
}

/** Every message id the spout must emit for these records, with the tuple each must carry. */
function expected(
  puts: Put[],
): Map<string, { partitionKey: string; data: string; shardId: string; sequenceNumber: string }> {
  const ids = new Map<string, { partitionKey: string; data: string; shardId: string; sequenceNumber: string }>();
  for (const p of puts) {
    const base = { shardId: p.shardId, sequenceNumber: p.sequenceNumber };
    if (p.users.length === 0)
      ids.set(`${p.shardId}:${p.sequenceNumber}`, {
        ...base,
        partitionKey: p.partitionKey,
        data: p.data.toString('utf8'),
      });
    else p.users.forEach((u, sub) => ids.set(`${p.shardId}:${p.sequenceNumber}:${sub}`, { ...base, ...u }));
  }
  return ids;
}

const tupleOf = (e: Emit) => {
  const [partitionKey, data, shardId, sequenceNumber] = e.tuple as string[];
  return { partitionKey, data, shardId, sequenceNumber };
};

test('aggregated records across a split: every user record is one tuple with its own key and id, once; out-of-range and corrupt ones delivered and told', async () => {
  const stream = uniqueName('kpl');
  await createStream(suite.services.client, stream, 1);
  const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  const before = await put(stream, [
    aggregate('a', 25),
    { partitionKey: 'plain', data: Buffer.from('plain text'), users: [] },
    aggregate('b', 40),
  ]);
  // A corrupt aggregate: the KPL magic, a wrong MD5. Emitted as it is.
  const bad = Buffer.from(aggregate('c', 3).data);
  bad[bad.length - 1] ^= 0xff;
  before.push(...(await put(stream, [{ partitionKey: 'corrupt', data: bad, users: [] }])));
  await splitShard(suite.services.client, stream, parent);
  // After the split, a producer with a stale shard map still packs keys of both children into one aggregate.
  const after = await put(stream, [aggregate('d', 30), aggregate('e', 30), aggregate('f', 30)]);
  const want = expected([...before, ...after]);

  const driver = await suite.spout(stream, uniqueName('app'));
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= want.size, { timeoutMs: 60_000 });
  // Let anything extra show up.
  await driver.pump(() => false, { timeoutMs: 1_000 });

  const ids = idsOf(driver.emits);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...want.keys()].filter((id) => !ids.includes(id))).toEqual([]);
  expect(ids.filter((id) => !want.has(id))).toEqual([]);
  for (const emit of driver.emits) expect(tupleOf(emit)).toEqual(want.get(emit.id));
  // Children are read after the parent, in the stream's order of each.
  expect(
    ids
      .slice(0, [...want.keys()].filter((id) => id.startsWith(`${parent}:`)).length)
      .every((id) => id.startsWith(`${parent}:`)),
  ).toBe(true);
  const logs = driver.logText();
  expect(logs).toMatch(/starts with the KPL magic but is no valid aggregate \(MD5/);
  expect(logs).toMatch(/user record\(s\) of KPL aggregate .* hash outside shardId-\d+'s range .*; delivered anyway/);
  expect(driver.errors).toEqual([]);
});

test('a checkpoint inside an aggregate survives a kill: acked user records are not emitted again, the others are', async () => {
  const stream = uniqueName('kpl');
  await createStream(suite.services.client, stream, 1);
  const app = uniqueName('app');
  const puts = await put(stream, [aggregate('x', 10), aggregate('y', 10), aggregate('z', 10)]);
  const [x, y, z] = puts;
  const id = (p: Put, sub: number) => `${p.shardId}:${p.sequenceNumber}:${sub}`;
  // Acked: all of x, y's first five, and y:7 past a gap. Everything else is emitted and left unacked.
  const acked = new Set([
    ...Array.from({ length: 10 }, (_, i) => id(x, i)),
    ...[0, 1, 2, 3, 4].map((i) => id(y, i)),
    id(y, 7),
  ]);

  const first = await suite.spout(stream, app);
  await first.pump(() => first.emits.length >= 30, { onEmit: (e) => (acked.has(e.id) ? first.ack(e.id) : undefined) });
  const checkpoint = `${stateBase(stream, app)}/checkpoints/${x.shardId}`;
  const stored = await waitFor('a checkpoint inside aggregate y', async () => {
    const value = await readJson(suite.services.inspector, checkpoint);
    return (value?.position as { subSequence?: number } | undefined)?.subSequence === 4 ? value : undefined;
  });
  expect(stored).toMatchObject({ v: 2, position: { kind: 'AFTER', sequenceNumber: y.sequenceNumber, subSequence: 4 } });
  first.signal('SIGKILL');
  await first.exited;

  // The killed process's lease lasts until its session expires; the new one then reads AT y and skips y:0..4.
  const second = await suite.spout(stream, app);
  const unacked = [
    ...Array.from({ length: 10 }, (_, i) => id(y, i)),
    ...Array.from({ length: 10 }, (_, i) => id(z, i)),
  ].filter((i) => !acked.has(i));
  await second.pump(() => unacked.every((u) => idsOf(second.emits).includes(u)), { timeoutMs: 40_000 });
  await second.pump(() => false, { timeoutMs: 1_000 });
  const again = idsOf(second.emits);
  expect(again.filter((i) => acked.has(i) && i !== id(y, 7))).toEqual([]);
  // y:7 was acked but lies past the gap at y:5: the checkpoint could not cover it, so it comes again (at-least-once).
  expect(again.sort()).toEqual([...unacked, id(y, 7)].sort());
  expect(second.logText()).toMatch(/reading after user record 4 of \d+/);
  await waitFor('the checkpoint after z', async () => {
    const value = await readJson(suite.services.inspector, checkpoint);
    return (
      value?.v === 1 &&
      (value.position as { sequenceNumber?: string }).sequenceNumber === z.sequenceNumber &&
      !('subSequence' in (value.position as object))
    );
  });
});
