/**
 * Skewed load on real servers, for balance by throughput (test/integration/balance.test.ts, bench/balance.ts):
 * a stream whose first shard is put to at `HOT_RATE` times each other's rate, and who holds what, read from
 * the emits of a Flow.
 */
import { createHash } from 'node:crypto';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import type { Flow } from './flow';
import { listAllShards, putRecords } from './kinesisAdmin';

export const HOT_RATE = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A partition key that Kinesis routes to each shard (the MD5 of the key, in the shard's hash range). */
export async function keysByShard(client: KinesisClient, stream: string): Promise<Map<string, string>> {
  const shards = await listAllShards(client, stream);
  const keys = new Map<string, string>();
  for (let i = 0; keys.size < shards.length && i < 100_000; i += 1) {
    const key = `k${i}`;
    const hash = BigInt(`0x${createHash('md5').update(key).digest('hex')}`);
    const shard = shards.find(
      (s) => BigInt(s.HashKeyRange!.StartingHashKey!) <= hash && hash <= BigInt(s.HashKeyRange!.EndingHashKey!),
    );
    if (shard && !keys.has(shard.ShardId!)) keys.set(shard.ShardId!, key);
  }
  return keys;
}

/**
 * Puts, every 0.5 s until the returned function is called, `HOT_RATE` records to `hot` and one to each other
 * shard of `keys` (200-byte payloads), recorded in `flow.put`.
 */
export function skewedProducer(
  client: KinesisClient,
  flow: Flow,
  keys: Map<string, string>,
  hot: string,
): () => Promise<void> {
  let stop = false;
  let n = 0;
  const payload = 'x'.repeat(200);
  const done = (async () => {
    while (!stop) {
      const records = [...keys].flatMap(([shardId, key]) =>
        Array.from({ length: shardId === hot ? HOT_RATE : 1 }, () => ({
          partitionKey: key,
          data: JSON.stringify({ i: n++, payload }),
        })),
      );
      const results = await putRecords(client, flow.stream, records);
      const at = performance.now();
      results.forEach((r, j) =>
        flow.put.push({ id: `${r.shardId}:${r.sequenceNumber}`, key: records[j].partitionKey, at }),
      );
      await sleep(500);
    }
  })();
  return async () => {
    stop = true;
    await done;
  };
}

/** Who holds each shard now: the process that emitted from it last. */
export function holders(flow: Flow): Map<string, number> {
  const result = new Map<string, number>();
  for (const [shard, spans] of flow.emitSpans) {
    const last = [...spans].reduce((a, b) => (b[1][1] > a[1][1] ? b : a));
    result.set(shard, Number(last[0].split('#')[0]));
  }
  return result;
}

/** Each task's share of the put rate (records of one size, so bytes/s alike): the hot shard `HOT_RATE`, others 1. */
export function taskLoads(flow: Flow, hot: string): number[] {
  const byPid = new Map<number, number>(flow.spouts.map((s) => [s.pid, 0]));
  for (const [shard, pid] of holders(flow)) byPid.set(pid, (byPid.get(pid) ?? 0) + (shard === hot ? HOT_RATE : 1));
  return [...byPid.values()];
}

/** Every value within ±10 % of their mean. */
export function withinBand(values: number[]): boolean {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.every((v) => Math.abs(v - mean) <= 0.1 * mean);
}

/** The planned hand-overs the processes logged. */
export const handOvers = (flow: Flow) => flow.spouts.flatMap((s) => s.logs.filter((l) => l.msg.startsWith('handing ')));
