/**
 * What a caught-up shard should do while records trickle in (docs/configuration.md, "Caught-up shards"): the
 * spout process, driven as Storm's ShellSpout drives it, holds S shards of the project's parallel emulator
 * (test/helpers/fastKinesis, its own process, 15 ms a call) while a producer puts about R records a second to
 * each shard at random times (R = 0, 1, 10), under four choices of the caught-up pause, side by side in one
 * run, the order rotating by round:
 * - `poll200`: every caught-up call 200 ms apart (the release before the idle interval: idle and trickle 200);
 * - `idle1000`: every caught-up call after the idle interval (main before the trickle interval: both 1,000);
 * - `adaptive`: after an answer at the tip with records, 200 ms; after an empty one, the idle interval;
 * - `adaptiveHold`: 200 ms until 1 s has passed since the last answer with records, then the idle interval.
 * Each window reports the put → emit latency (from before the PutRecords call to the emit frame on the pipe:
 * the put's own round trip, ~15 ms, included), median and p99, and the spout process's CPU (user + system) per
 * shard. CPUs idle, then both busy with two lowest-priority loops.
 *
 * Usage: tsx bench/trickle.ts [rounds=2] [shards=32] [seconds=10]; TRICKLE_REGIMES=idle,busy,
 * TRICKLE_QUICK=1 (one round of 1 s windows on 2 shards at 10 records/s: a smoke run, figures
 * meaningless); writes bench/results/trickle-<time>.json. `BENCH_SECTIONS=trickle npm run bench` runs it too.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream, kinesisClient, putRecords } from '../test/helpers/kinesisAdmin';
import { type KinesisServer, startFastKinesis } from '../test/helpers/kinesisServer';
import { StormDriver } from '../test/helpers/stormDriver';
import { startZooKeeper, type ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, cpuMicros, percentile, sleep, summarize } from './lib';
import { Regime, startBusyLoops } from './protocol';

export const CHOICES = {
  poll200: { idlePollIntervalMs: 200, tricklePollIntervalMs: 200, trickleHoldMs: 0 },
  idle1000: { idlePollIntervalMs: 1_000, tricklePollIntervalMs: 1_000, trickleHoldMs: 0 },
  adaptive: { idlePollIntervalMs: 1_000, tricklePollIntervalMs: 200, trickleHoldMs: 0 },
  adaptiveHold: { idlePollIntervalMs: 1_000, tricklePollIntervalMs: 200, trickleHoldMs: 1_000 },
} as const;
export type Choice = keyof typeof CHOICES;
const RATES = [0, 1, 10];
/** The producer's tick: each shard gets a record in a tick with probability rate × tick. */
const TICK_MS = 50;

export interface Window {
  regime: Regime;
  round: number;
  choice: Choice;
  recordsPerSecondPerShard: number;
  shards: number;
  records: number;
  medianMs: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  cpuPercent: number;
  cpuMsPerSecondPerShard: number;
  getRecordsPerSecondPerShard: number;
  load: number;
}

/** One spout process on a new stream of `shards`, records put at `rate` per shard for `seconds` after a warm-up. */
async function runWindow(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  run: { choice: Choice; rate: number; shards: number; seconds: number; warmupSeconds: number; label: string },
): Promise<Omit<Window, 'regime' | 'round' | 'load'>> {
  const stream = `trickle-${run.label}`;
  await createStream(client, stream, run.shards);
  const driver = await StormDriver.start({
    conf: benchConf(zk, server, stream, `trickle-${run.label}`, { ...CHOICES[run.choice], statsIntervalMs: 1_000 }),
    keepHistory: false,
  });
  const putAt = new Map<string, number>();
  const latencies: number[] = [];
  let measuring = false;
  let stopped = false;
  const pump = driver.pump(() => stopped, {
    timeoutMs: 600_000,
    onEmit: async (emit) => {
      const sent = putAt.get(emit.id);
      if (sent !== undefined && measuring) latencies.push(emit.receivedAt - sent);
      putAt.delete(emit.id);
      await driver.ack(emit.id);
    },
  });
  let producing = true;
  const produce = (async () => {
    for (let n = 0; producing; n += 1) {
      const tickAt = performance.now();
      const count = Array.from({ length: run.shards }, () => Math.random() < (run.rate * TICK_MS) / 1_000).filter(
        Boolean,
      ).length;
      if (count > 0) {
        const records = Array.from({ length: count }, (_, i) => ({
          partitionKey: `k${n}-${i}-${Math.random()}`,
          data: 'x',
        }));
        const sent = performance.now();
        for (const put of await putRecords(client, stream, records))
          putAt.set(`${put.shardId}:${put.sequenceNumber}`, sent);
      }
      await sleep(Math.max(0, TICK_MS - (performance.now() - tickAt)));
    }
  })();
  try {
    await sleep(run.warmupSeconds * 1_000);
    const statsBefore = driver.lastStats() ?? {};
    const cpuBefore = cpuMicros(driver.pid);
    const started = performance.now();
    measuring = true;
    await sleep(run.seconds * 1_000);
    measuring = false;
    const elapsed = (performance.now() - started) / 1_000;
    const cpu = (cpuMicros(driver.pid) - cpuBefore) / 1_000 / elapsed;
    const statsAfter = driver.lastStats() ?? {};
    const calls = (statsAfter.getRecords ?? 0) - (statsBefore.getRecords ?? 0);
    const ms = (p: number) => (latencies.length ? Math.round(percentile(latencies, p)) : null);
    return {
      choice: run.choice,
      recordsPerSecondPerShard: run.rate,
      shards: run.shards,
      records: latencies.length,
      medianMs: ms(50),
      p99Ms: ms(99),
      maxMs: latencies.length ? Math.round(Math.max(...latencies)) : null,
      cpuPercent: Math.round(cpu * 10) / 100,
      cpuMsPerSecondPerShard: Math.round((cpu / run.shards) * 1_000) / 1_000,
      getRecordsPerSecondPerShard: Math.round((calls / elapsed / run.shards) * 100) / 100,
    };
  } finally {
    producing = false;
    await produce;
    stopped = true;
    await pump;
    await driver.stop(3_000);
  }
}

export interface TrickleOptions {
  rounds: number;
  shards: number;
  seconds: number;
  warmupSeconds: number;
  rates: number[];
  regimes: Regime[];
}

export interface TrickleFigures {
  shards: number;
  seconds: number;
  rounds: number;
  windows: Window[];
  summary: SummaryRow[];
}

/** Every choice at every rate, side by side, in each regime: the windows and their summaries. */
export async function trickleBench(
  zk: ZooKeeperServer,
  options: TrickleOptions,
  log: (line: string) => void,
): Promise<TrickleFigures> {
  const { rounds, shards, seconds, warmupSeconds, rates, regimes } = options;
  const choices = Object.keys(CHOICES) as Choice[];
  const server = await startFastKinesis({ latencyMs: 15 });
  const client = kinesisClient(server);
  const windows: Window[] = [];
  try {
    for (const regime of regimes) {
      const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
      try {
        for (let round = 0; round < rounds; round += 1) {
          for (const rate of rates) {
            for (const choice of choices.map((_, i) => choices[(i + round) % choices.length])) {
              const label = `${regime}-${round}-${rate}-${choice}-${process.pid}`;
              const figures = await runWindow(zk, server, client, {
                choice,
                rate,
                shards,
                seconds,
                warmupSeconds,
                label,
              });
              const window: Window = { regime, round, ...figures, load: loadavg()[0] };
              windows.push(window);
              log(
                `trickle ${regime} round ${round + 1} ${rate}/s ${choice}: latency median ${window.medianMs} p99 ${window.p99Ms} ms over ${window.records}; CPU ${window.cpuPercent} % (${window.cpuMsPerSecondPerShard} ms/s per shard), ${window.getRecordsPerSecondPerShard} GetRecords/s per shard`,
              );
            }
          }
        }
      } finally {
        stopLoops();
      }
    }
  } finally {
    client.destroy();
    await server.stop();
  }
  const summary = regimes.flatMap((regime) =>
    rates.flatMap((rate) =>
      choices.map((choice) => {
        const of = windows.filter(
          (w) => w.regime === regime && w.recordsPerSecondPerShard === rate && w.choice === choice,
        );
        const values = (pick: (w: Window) => number | null) =>
          summarize(of.map(pick).filter((v): v is number => v !== null));
        return {
          regime,
          rate,
          choice,
          medianMs: values((w) => w.medianMs),
          p99Ms: values((w) => w.p99Ms),
          cpuMsPerSecondPerShard: values((w) => w.cpuMsPerSecondPerShard),
          getRecordsPerSecondPerShard: values((w) => w.getRecordsPerSecondPerShard),
        };
      }),
    ),
  );
  for (const line of trickleTable(summary)) log(line);
  return { shards, seconds, rounds, windows, summary };
}

/** `npm run bench`'s options: TRICKLE_QUICK or BENCH_QUICK, a smoke run of well under a minute. */
export function trickleOptions(quick: boolean, args: string[] = []): TrickleOptions {
  const regimes = (process.env.TRICKLE_REGIMES ?? (quick ? 'idle' : 'idle,busy')).split(',') as Regime[];
  const bad = regimes.find((r) => r !== Regime.Idle && r !== Regime.Busy);
  if (bad) throw new Error(`TRICKLE_REGIMES: unknown ${bad}; allowed: idle, busy`);
  return {
    rounds: quick ? 1 : Number(args[0] ?? 2),
    shards: quick ? 2 : Number(args[1] ?? 32),
    seconds: quick ? 1 : Number(args[2] ?? 10),
    warmupSeconds: quick ? 1.5 : 4,
    rates: quick ? [10] : RATES,
    regimes,
  };
}

async function main(): Promise<void> {
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const quick = process.env.TRICKLE_QUICK === '1';
  const zk = await startZooKeeper();
  let figures: TrickleFigures;
  try {
    figures = await trickleBench(zk, trickleOptions(quick, process.argv.slice(2)), (line) =>
      process.stdout.write(`${line}\n`),
    );
  } finally {
    await zk.stop();
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const file = join(__dirname, 'results', `trickle-${stamp}${quick ? '-quick' : ''}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, ...figures }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${file}\n`);
}

export interface SummaryRow {
  regime: string;
  rate: number;
  choice: Choice;
  medianMs: { median: number };
  p99Ms: { median: number };
  cpuMsPerSecondPerShard: { median: number; min: number; max: number };
  getRecordsPerSecondPerShard: { median: number };
}

/** The benchmarks page's table: per regime and rate, each choice's latency, CPU per shard and calls. */
export function trickleTable(summary: SummaryRow[]): string[] {
  const ms = (x: number) => (Number.isNaN(x) ? '—' : `${Math.round(x)}`);
  const lines = [
    '| CPUs | records/s per shard | choice | put → emit median / p99 | CPU per shard (process ÷ shards) | GetRecords/s per shard |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of summary)
    lines.push(
      `| ${row.regime} | ${row.rate} | ${row.choice} | ${row.rate === 0 ? '—' : `${ms(row.medianMs.median)} / ${ms(row.p99Ms.median)} ms`} | ${row.cpuMsPerSecondPerShard.median.toFixed(2)} ms/s (${row.cpuMsPerSecondPerShard.min.toFixed(2)}–${row.cpuMsPerSecondPerShard.max.toFixed(2)}) | ${row.getRecordsPerSecondPerShard.median} |`,
    );
  return lines;
}

if (require.main === module)
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
