/**
 * Bounded memory (invariant 7) against real servers: a record the topology fails forever holds back its
 * shard, not the process's memory. kinesalite, because kinesis-local takes minutes to hold 50,000 records.
 */
import { createHash } from 'node:crypto';
import { createStream, listAllShards, putRecords, type PutResult } from '../helpers/kinesisAdmin';
import { startKinesalite } from '../helpers/kinesisServer';
import { spoutSuite, uniqueName } from '../helpers/fixture';
import type { StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite(startKinesalite);

/** Data of each record: large enough that 50,000 of them held would show in the resident memory. */
const PAYLOAD = 'x'.repeat(2_048);

/** Partition keys whose MD5 hash (Kinesis's routing) falls in the range: their records go to that shard. */
function keysInRange(
  range: { StartingHashKey?: string; EndingHashKey?: string },
  count: number,
  prefix: string,
): string[] {
  const low = BigInt(range.StartingHashKey!);
  const high = BigInt(range.EndingHashKey!);
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i += 1) {
    const key = `${prefix}-${i}`;
    const hash = BigInt(`0x${createHash('md5').update(key).digest('hex')}`);
    if (hash >= low && hash <= high) keys.push(key);
  }
  return keys;
}

function recordsOn(keys: string[], n: number, tag: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: keys[i % keys.length], data: `${tag}-${i}-${PAYLOAD}` }));
}

/** Puts in parallel batches (the order of records on a shard does not matter here). */
async function putMany(
  stream: string,
  records: { partitionKey: string; data: string }[],
  lanes = 8,
): Promise<PutResult[]> {
  const size = Math.ceil(records.length / lanes);
  const parts = await Promise.all(
    Array.from({ length: lanes }, (_, i) =>
      putRecords(suite.services.client, stream, records.slice(i * size, (i + 1) * size)),
    ),
  );
  return parts.flat();
}

const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The counters of every `stats:` line, with its time since `since`. */
function statsLines(driver: StormDriver, since: number): Record<string, number>[] {
  return driver.logs
    .filter((l) => l.msg.startsWith('stats: '))
    .map((l) => ({
      at: l.at - since,
      ...Object.fromEntries(
        l.msg
          .slice(7)
          .split(' ')
          .map((kv) => kv.split('='))
          .map(([k, v]) => [k, Number(v)]),
      ),
    }));
}

/** Runs the checks; a failure also shows what the process said. */
function explained(report: () => string, checks: () => void): void {
  try {
    checks();
  } catch (err) {
    (err as Error).message += `\n${report()}`;
    throw err;
  }
}

async function twoShardStream(): Promise<{ stream: string; keys: string[][]; shardIds: string[] }> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 2);
  const shards = await listAllShards(suite.services.client, stream);
  return {
    stream,
    shardIds: shards.map((s) => s.ShardId!),
    keys: shards.map((s, i) => keysInRange(s.HashKeyRange!, 16, `k${i}`)),
  };
}

test('a record failed forever with 50,000 behind it: records held stay under the cap, resident memory flat, other shards flow', async () => {
  const CAP = 2_000;
  const RUN_MS = 25_000;
  const { client } = suite.services;
  const { stream, keys, shardIds } = await twoShardStream();
  const [poisoned] = shardIds;
  // The poison is the first record of its shard: every other record of that shard is behind it.
  const [poison] = await putRecords(client, stream, [{ partitionKey: keys[0][0], data: 'poison' }]);
  const behind = await putMany(stream, recordsOn(keys[0], 50_000, 'behind'));
  expect(new Set([poison, ...behind].map((r) => r.shardId))).toEqual(new Set([poisoned]));
  const early = await putRecords(client, stream, recordsOn(keys[1], 500, 'early'));

  const driver = await suite.spout(
    stream,
    uniqueName('app'),
    {
      maxRecordsInMemory: CAP,
      statsIntervalMs: 200,
      retry: { maxRetries: -1, initialBackoffMs: 20, maxBackoffMs: 200 },
    },
    // Started as KinesisShellSpout starts it (the driver's default: its NODE_OPTIONS and ENVIRONMENT).
    { keepHistory: false },
  );
  const started = Date.now();
  const readBehind = new Set<string>();
  const acked = new Set<string>();
  let poisonEmits = 0;
  // Records put on the other shard once the poisoned one is stuck: they must flow all the same.
  let late: PutResult[] | undefined;
  const putLate = new Promise<void>((done) => setTimeout(done, RUN_MS / 2)).then(async () => {
    late = await putRecords(client, stream, recordsOn(keys[1], 2_000, 'late'));
  });
  const lateAcked = () => late?.every((r) => acked.has(idOf(r))) === true;
  const pumped = await driver.pump(() => Date.now() - started > RUN_MS && lateAcked(), {
    timeoutMs: RUN_MS + 20_000,
    onEmit: (emit) => {
      if (emit.id === idOf(poison)) {
        poisonEmits += 1;
        return driver.fail(emit.id);
      }
      if (emit.id.startsWith(`${poisoned}:`)) readBehind.add(emit.id);
      acked.add(emit.id);
      return driver.ack(emit.id);
    },
  });
  await putLate;

  const stats = statsLines(driver, started);
  const rss = (from: number, to: number) => median(stats.filter((s) => s.at >= from && s.at < to).map((s) => s.rssMiB));
  const report = () =>
    `read behind the poison: ${readBehind.size}, poison emitted ${poisonEmits} times\n` +
    `${stats.map((s) => `${s.at} ms: inMemory=${s.inMemory} bytesInMemory=${s.bytesInMemory} rssMiB=${s.rssMiB}`).join('\n')}\n${driver.logText()}`;
  explained(report, () => {
    expect(pumped).toBe(true);
    // The poison was retried all along, and its shard read no further than the cap allows.
    expect(poisonEmits).toBeGreaterThan(10);
    expect(readBehind.size).toBeLessThanOrEqual(CAP);
    // The other shard kept flowing.
    expect(early.every((r) => acked.has(idOf(r)))).toBe(true);
    expect(lateAcked()).toBe(true);
    // The process's own count of what it holds never went over the cap.
    expect(stats.length).toBeGreaterThan(RUN_MS / 400);
    expect(Math.max(...stats.map((s) => s.inMemory))).toBeLessThanOrEqual(CAP);
    // Resident memory: the last seconds against the first ones once the cap is reached (holding the 50,000
    // records of 2 KiB took it up by more than 100 MiB). Before the cap, the first reads' response bodies
    // (up to 20 MiB of Buffers at once) raise the RSS for good: malloc keeps what they freed, and a window
    // from a fixed time after start caught that step or not depending on how fast the machine started the
    // process (the 28-30 MiB of growth seen, and the 60 MiB margin it once took). The 2,000 records put
    // half way make one more such step, native and kept (Node 24: 115 to 132 MiB, the heap 26-27 MiB
    // throughout, as bounded by --max-semi-space-size=2; a holding leak adds over 100).
    const capReached = stats.find((s) => s.inMemory >= CAP)?.at ?? 0;
    expect(rss(RUN_MS - 5_000, Infinity) - rss(capReached + 1_000, capReached + 6_000)).toBeLessThan(40);
  });
});

test('nothing acked: what is emitted stays within maxBytesInMemory', async () => {
  const CAP_BYTES = 2 ** 20;
  const { stream, keys } = await twoShardStream();
  const put = await putMany(stream, [...recordsOn(keys[0], 1_500, 'a'), ...recordsOn(keys[1], 1_500, 'b')]);
  const recordBytes = Buffer.byteLength(`a-0-${PAYLOAD}`) + keys[0][0].length;
  const driver = await suite.spout(stream, uniqueName('app'), { maxBytesInMemory: CAP_BYTES, statsIntervalMs: 200 });
  const settle = Date.now() + 5_000;
  await driver.pump(() => Date.now() > settle, { onEmit: () => undefined });
  const stats = statsLines(driver, 0);
  expect(stats.length).toBeGreaterThan(0);
  explained(
    () => `${driver.emits.length} emitted\n${driver.logText()}`,
    () => {
      // Records are asked for at the shard's mean size: about one record of slack in all.
      expect(driver.emits.length * recordBytes).toBeLessThanOrEqual(CAP_BYTES + 2 * recordBytes);
      expect(driver.emits.length * recordBytes).toBeGreaterThan(CAP_BYTES / 2);
      expect(Math.max(...stats.map((s) => s.bytesInMemory))).toBeLessThanOrEqual(CAP_BYTES + 2 * recordBytes);
    },
  );
  // Acks free room: everything arrives in the end.
  for (const emit of driver.emits) await driver.ack(emit.id);
  await driver.pump(() => new Set(driver.emits.map((e) => e.id)).size >= put.length, { timeoutMs: 30_000 });
  expect(new Set(driver.emits.map((e) => e.id))).toEqual(new Set(put.map(idOf)));
});
