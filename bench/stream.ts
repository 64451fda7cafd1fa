/**
 * Against the emulators, default settings: put-to-emit latency at idle, the cost of an idle and of a busy
 * shard (Kinesis calls and ZooKeeper writes per second), and end-to-end throughput from a pre-filled
 * stream against the emulator's own GetRecords rate.
 */
import { GetRecordsCommand, GetShardIteratorCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, putRecords } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, percentile, sleep, summarize, type Summary } from './lib';

export interface LatencyFigures {
  medianMs: number;
  p99Ms: number;
  samples: number;
}

export async function latencyBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  samples: number,
  log: (line: string) => void,
  /** Another configuration (`readMode`), named in the stream's name and the log line. */
  variant: { label: string; overrides: Record<string, unknown> } = { label: '', overrides: {} },
): Promise<LatencyFigures> {
  const stream = `bench-latency${variant.label ? `-${variant.label}` : ''}-${process.pid}`;
  await createStream(client, stream, 1);
  const driver = await StormDriver.start({
    conf: benchConf(zk, kinesis, stream, `latency${variant.label}`, variant.overrides),
  });
  const putAt = new Map<string, number>();
  const latencies: number[] = [];
  let stopped = false;
  const pump = driver.pump(() => stopped, {
    timeoutMs: 600_000,
    onEmit: async (emit) => {
      const sent = putAt.get(emit.id);
      if (sent !== undefined) latencies.push(emit.receivedAt - sent);
      await driver.ack(emit.id);
    },
  });
  try {
    await sleep(2_000);
    for (let i = 0; i < samples; i += 1) {
      const sent = performance.now();
      const [put] = await putRecords(client, stream, [{ partitionKey: 'k', data: String(i) }]);
      putAt.set(`${put.shardId}:${put.sequenceNumber}`, sent);
      await sleep(150 + Math.random() * 200);
    }
    const deadline = Date.now() + 10_000;
    while (latencies.length < samples && Date.now() < deadline) await sleep(50);
  } finally {
    stopped = true;
    await pump;
    await driver.stop(3_000);
  }
  const figures = {
    medianMs: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    samples: latencies.length,
  };
  log(
    `latency at idle${variant.label ? ` (${variant.label})` : ''}: median ${figures.medianMs} ms, p99 ${figures.p99Ms} ms over ${figures.samples} records`,
  );
  return figures;
}

export interface CostFigures {
  idleGetRecordsPerShardPerSecond: number;
  busyCheckpointWritesPerShardPerSecond: number;
  shards: number;
  seconds: number;
}

/** Counts from the spout's own `stats:` lines over a window, idle first, then with records flowing. */
export async function costBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  seconds: number,
  log: (line: string) => void,
): Promise<CostFigures> {
  const shards = 4;
  const stream = `bench-cost-${process.pid}`;
  await createStream(client, stream, shards);
  const driver = await StormDriver.start({ conf: benchConf(zk, kinesis, stream, 'cost', { statsIntervalMs: 500 }) });
  let stopped = false;
  const pump = driver.pump(() => stopped, { timeoutMs: 600_000 });
  const window = async (): Promise<Record<string, number>> => {
    await sleep(600);
    const before = driver.lastStats()!;
    await sleep(seconds * 1_000);
    const after = driver.lastStats()!;
    return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  };
  try {
    await sleep(3_000);
    const idle = await window();
    let producing = true;
    const produce = (async () => {
      for (let n = 0; producing; n += 1) {
        await putRecords(
          client,
          stream,
          Array.from({ length: 20 }, (_, i) => ({ partitionKey: `k${i}`, data: String(n) })),
        );
        await sleep(100);
      }
    })();
    const busy = await window();
    producing = false;
    await produce;
    const figures = {
      idleGetRecordsPerShardPerSecond: Math.round((idle.getRecords / shards / seconds) * 100) / 100,
      busyCheckpointWritesPerShardPerSecond: Math.round((busy.checkpointWrites / shards / seconds) * 100) / 100,
      shards,
      seconds,
    };
    log(
      `cost: idle ${figures.idleGetRecordsPerShardPerSecond} GetRecords/s per shard; busy ${figures.busyCheckpointWritesPerShardPerSecond} ZooKeeper checkpoint writes/s per shard`,
    );
    return figures;
  } finally {
    stopped = true;
    await pump;
    await driver.stop(3_000);
  }
}

export interface ThroughputFigures {
  emulator: string;
  records: number;
  rawRecordsPerSecond: Summary;
  spoutRecordsPerSecond: Summary;
  /** Spout over raw, each run against the raw read just before it. */
  ratio: Summary;
}

/** The emulator's own rate: every shard read from TRIM_HORIZON to the end, shards in parallel. */
async function rawReadRate(client: KinesisClient, stream: string, records: number): Promise<number> {
  const shards = (await listAllShards(client, stream)).map((s) => s.ShardId!);
  const began = performance.now();
  let read = 0;
  await Promise.all(
    shards.map(async (ShardId) => {
      let iterator = (
        await client.send(
          new GetShardIteratorCommand({ StreamName: stream, ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
        )
      ).ShardIterator;
      while (iterator) {
        const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1_000 }));
        read += page.Records?.length ?? 0;
        if ((page.Records?.length ?? 0) === 0) break;
        iterator = page.NextShardIterator;
      }
    }),
  );
  if (read < records) throw new Error(`raw read found ${read} of ${records} records`);
  return Math.round(read / ((performance.now() - began) / 1_000));
}

export async function throughputBench(
  emulator: string,
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  records: number,
  runs: number,
  log: (line: string) => void,
): Promise<ThroughputFigures> {
  const stream = `bench-throughput-${process.pid}`;
  await createStream(client, stream, 4);
  for (let i = 0; i < records; i += 500)
    await putRecords(
      client,
      stream,
      Array.from({ length: Math.min(500, records - i) }, (_, j) => ({
        partitionKey: `k${i + j}`,
        data: 'x'.repeat(100),
      })),
    );
  const raws: number[] = [];
  const rates: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    // The emulator's rate drifts from run to run: each spout run is compared with a raw read just before.
    raws.push(await rawReadRate(client, stream, records));
    const driver = await StormDriver.start({
      conf: benchConf(zk, kinesis, stream, `throughput-${emulator}-${run}`),
      keepHistory: false,
    });
    let acked = 0;
    let first = 0;
    await driver.pump(() => acked >= records, {
      timeoutMs: 300_000,
      onEmit: async (emit) => {
        first ||= emit.receivedAt;
        await driver.ack(emit.id);
        acked += 1;
      },
    });
    rates.push(Math.round(acked / ((performance.now() - first) / 1_000)));
    await driver.stop(3_000);
  }
  const ratio = summarize(rates.map((rate, i) => rate / raws[i]));
  log(
    `${emulator}: raw GetRecords ${raws.join(', ')} records/s; spout ${rates.join(', ')} records/s acked (median ${Math.round(ratio.median * 100)} %)`,
  );
  return { emulator, records, rawRecordsPerSecond: summarize(raws), spoutRecordsPerSecond: summarize(rates), ratio };
}
