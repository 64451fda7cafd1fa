/**
 * What enhanced fan-out costs the spout's process against polling, on the same records: the CPU the
 * reader (the SDK's event-stream parser over HTTP/2 against its JSON GetRecords over HTTP/1.1, both
 * through the spout's own readers) spends per record, for 1 and 64 shards read at once. The server runs in
 * its own process (bench/fanOutServe.mjs) and serves every shard's records as fast as the reader takes them.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { realScheduler } from '../src/core/scheduler';
import { createKinesisClient } from '../src/kinesis/client';
import { createFanOutClient } from '../src/kinesis/fanOutClient';
import { fanOutReaders } from '../src/kinesis/fanOutReader';
import type { ShardReaderEvents, ShardReaderFactory } from '../src/kinesis/reader';
import { pollingReaders } from '../src/kinesis/shardReader';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { startFanOutServer } from '../test/helpers/fanOutServer';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { summarize, type Summary } from './lib';
import { latencyBench, type LatencyFigures } from './stream';

export interface DecodeFigures {
  shards: number;
  recordsPerShard: number;
  recordsPerBatch: number;
  payloadBytes: number;
  /** Reader CPU (user + system) per record, µs. */
  fanOutMicrosPerRecord: Summary;
  pollingMicrosPerRecord: Summary;
}

export interface FanOutFigures {
  decode: DecodeFigures[];
  /** Put-to-emit at idle through the fan-out front (its own poll of kinesis-local every 50 ms bounds fan-out here). */
  latency?: { polling: LatencyFigures; fanOut: LatencyFigures; frontPollMs: number };
}

/** Put-to-emit at idle in both read modes, through one fan-out front before `kinesis`. */
export async function fanOutLatencyBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  samples: number,
  log: (line: string) => void,
): Promise<NonNullable<FanOutFigures['latency']>> {
  const front = await startFanOutServer(kinesis.endpoint);
  try {
    const via = { ...kinesis, endpoint: front.endpoint };
    const polling = await latencyBench(zk, via, client, samples, log, { label: 'polling', overrides: {} });
    const fanOut = await latencyBench(zk, via, client, samples, log, {
      label: 'fanOut',
      overrides: { readMode: 'fanOut' },
    });
    return { polling, fanOut, frontPollMs: front.settings.pollIntervalMs };
  } finally {
    await front.close();
  }
}

const STREAM = { streamName: 'bench', streamArn: 'arn:aws:kinesis:us-east-1:123456789012:stream/bench' };

/** Reads `shards` shards to their end with `readers`; the process's CPU µs per record. */
async function readAll(readers: ShardReaderFactory, shards: number, expected: number): Promise<number> {
  let records = 0;
  let ended = 0;
  let done: () => void = () => undefined;
  let failed: (err: unknown) => void = () => undefined;
  // Whatever a reader reports fails the run: thrown inside the reader's own flow, it would stop it silently.
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  const started = process.cpuUsage();
  const running = Array.from({ length: shards }, (_, i) => {
    const events: ShardReaderEvents = {
      records: (batch) => {
        records += batch.length;
      },
      end: () => {
        ended += 1;
        if (ended === shards) done();
      },
      notFound: async (err) => failed(err),
      error: (err) => failed(err),
      room: () => 10_000,
      hasRoom: () => true,
      requested: () => undefined,
      log: () => undefined,
    };
    const reader = readers(`shardId-${String(i).padStart(12, '0')}`, events);
    reader.start({ kind: 'TRIM_HORIZON' });
    return reader;
  });
  await finished;
  const used = process.cpuUsage(started);
  await Promise.all(running.map((r) => r.stop()));
  if (records !== expected) throw new Error(`read ${records} records, expected ${expected}`);
  return (used.user + used.system) / records;
}

/** Starts the server for `batches` batches per shard; its ports, and how to stop it. */
async function serve(batches: number, recordsPerBatch: number, payloadBytes: number) {
  const server = spawn(
    process.execPath,
    [join(__dirname, 'fanOutServe.mjs'), String(batches), String(recordsPerBatch), String(payloadBytes)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`bench server exited (${code})`)));
  });
  const [h2Port, httpPort] = line.trim().split(' ').map(Number);
  return { h2Port, httpPort, stop: () => server.kill() };
}

/**
 * `rounds` measured rounds (after one not counted: connections, JIT) per shard count, each reading
 * `totalRecords` records (at least 2 batches per shard) both ways.
 */
export async function decodeBench(
  rounds: number,
  shardCounts: number[],
  totalRecords: number,
  log: (line: string) => void,
): Promise<DecodeFigures[]> {
  const recordsPerBatch = 500;
  const payloadBytes = 1_024;
  const figures: DecodeFigures[] = [];
  for (const shards of shardCounts) {
    const batches = Math.max(2, Math.round(totalRecords / shards / recordsPerBatch));
    const server = await serve(batches, recordsPerBatch, payloadBytes);
    try {
      const fanOut: number[] = [];
      const polling: number[] = [];
      const expected = shards * batches * recordsPerBatch;
      for (let round = 0; round <= rounds; round += 1) {
        const h2 = createFanOutClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${server.h2Port}` });
        const consumer = { arn: async () => `${STREAM.streamArn}/consumer/bench:1`, forget: () => undefined };
        const viaFanOut = await readAll(
          fanOutReaders({ kinesis: h2, scheduler: realScheduler, stream: STREAM, consumer }),
          shards,
          expected,
        );
        h2.destroy();
        const http = createKinesisClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${server.httpPort}` });
        const viaPolling = await readAll(
          pollingReaders({
            kinesis: http,
            scheduler: realScheduler,
            stream: STREAM,
            maxRecordsPerRequest: recordsPerBatch,
            idlePollIntervalMs: 1_000,
            tricklePollIntervalMs: 200,
            trickleHoldMs: 0,
            maxGetRecordsPerSecond: 5,
          }),
          shards,
          expected,
        );
        http.destroy();
        log(
          `decode ${shards} shard(s), ${expected} records, ${round === 0 ? 'warm-up' : `round ${round}`}: fan-out ${viaFanOut.toFixed(1)} µs/record, polling ${viaPolling.toFixed(1)} µs/record`,
        );
        if (round === 0) continue;
        fanOut.push(viaFanOut);
        polling.push(viaPolling);
      }
      figures.push({
        shards,
        recordsPerShard: batches * recordsPerBatch,
        recordsPerBatch,
        payloadBytes,
        fanOutMicrosPerRecord: summarize(fanOut),
        pollingMicrosPerRecord: summarize(polling),
      });
    } finally {
      server.stop();
    }
  }
  return figures;
}
