/**
 * KCL side by side (issue 35, item 5; docs/benchmarks-thousands.md): the real KCL 2.7.0 (test/kcl's
 * KclBench: KCL's defaults but the endpoints, the lease table's name, polling, TRIM_HORIZON and metrics off,
 * a processor that only counts) with its lease table on dynalite, and one spout process driven as Storm's
 * ShellSpout drives it (test/helpers/stormDriver.ts) with real ZooKeeper, its defaults but the servers.
 * Each alone in its process with a stream of S shards of its own on the project's parallel emulator
 * (test/helpers/fastKinesis, 15 ms a call), reached through a proxy that counts the calls
 * (bench/scale/kinesisCounter.ts); one at a time, the order alternating by round, sizes in turn.
 * Each window: one record put to every shard before the process starts; pickup = start → every shard's
 * first record handled; then, every shard read, `settleSeconds` of rest and a `windowSeconds` window with
 * no records: the process's CPU (user + system from /proc/<pid>/stat, the JVM's whole process for KCL),
 * its GetRecords calls, its RSS at the end, and beside them the CPU of its store (dynalite or ZooKeeper),
 * of the emulator and of this process (the driver and the proxy) and the 1-minute load average.
 *
 * Failover (BENCH_KCL_MEASURE=failover; `cost,failover` for both, `cost` the default): two processes of
 * one consumer, one application (KCL: one lease table; the spout: one ZooKeeper application, tasks 1 and 2)
 * on a stream of S shards of their own, started together, each with its defaults (KCL's failoverTimeMillis
 * 10 s; the spout's 10 s ZooKeeper session: benchConf sets none). Once every shard's first record is handled:
 * `settleSeconds` of rest, then a record to every shard says who holds what (the process that hands it on;
 * again every 5 s until both hold shards, up to BENCH_KCL_FAILOVER_TIMEOUT_S; once they do, again after a
 * random 0-30 s, so that the kill falls at any phase of the consumers' timers). The one holding more is
 * SIGKILLed, a record is put to every shard at once, and for each shard it held: kill → the survivor's first
 * record of it handed on (KCL: a `batch` line of KclBench; the spout: an emit), and how many the survivor had
 * not read BENCH_KCL_FAILOVER_TIMEOUT_S (120) after the kill. Same sizes, rounds and regimes as the windows.
 *
 * BENCH_KCL_BASELINE=<commit> adds the spout built from that commit (test/helpers/previousRelease.ts) as a
 * third consumer, `baseline`, to measure a change side by side; BENCH_KCL_CONSUMERS picks (default `kcl,spout`,
 * with `baseline` when a baseline is named; `spout,baseline` leaves KCL out).
 *
 * Usage: tsx bench/kclSideBySide.ts; BENCH_KCL_MEASURE (cost), BENCH_KCL_SHARDS=64,256, BENCH_ROUNDS (3),
 * BENCH_REGIMES=idle,busy, BENCH_KCL_SETTLE_S (20), BENCH_KCL_WINDOW_S (30), BENCH_QUICK=1 (one round of 4 shards, 2 s windows: a
 * smoke run, figures meaningless). Writes bench/results/kclSideBySide-<time>.json. `BENCH_SECTIONS=kclSideBySide
 * npm run bench` runs it too.
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { DeleteStreamCommand, type KinesisClient, PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { type DynaliteServer, startDynalite } from '../test/helpers/dynaliteServer';
import { markUnmetered } from '../test/helpers/fastKinesis/server';
import { createStream, kinesisClient, listAllShards } from '../test/helpers/kinesisAdmin';
import { type KinesisServer, startFastKinesis } from '../test/helpers/kinesisServer';
import { buildKclRunner } from '../test/helpers/kclRunner';
import { buildRelease } from '../test/helpers/previousRelease';
import { StormDriver } from '../test/helpers/stormDriver';
import { startZooKeeper, type ZooKeeperServer } from '../test/helpers/zookeeperServer';
import {
  CONSUMERS,
  type Consumer,
  type FailoverReading,
  type FailoverRow,
  failoverRowsOf,
  failoverTable,
  marginalsOf,
  kclTable,
  type Marginal,
  type Row,
  rowsOf,
  type Window,
  windowOf,
} from './kclSideBySide/figures';
import { benchConf, cpuMicros, rssMiB, sleep, summarize } from './lib';
import { Regime, startBusyLoops } from './protocol';
import { startKinesisCounter } from './scale/kinesisCounter';

/** `cost`: one process's idle windows; `failover`: two processes, one killed. */
export const MEASURES = ['cost', 'failover'] as const;
export type Measure = (typeof MEASURES)[number];

export interface KclSideOptions {
  measures: Measure[];
  rounds: number;
  sizes: number[];
  regimes: Regime[];
  settleSeconds: number;
  windowSeconds: number;
  /** How long every shard's first record may take before the window is given up as failed. */
  pickupTimeoutSeconds: number;
  /** How long the survivor may take to read the killed process's shards (and, before, both to hold some). */
  failoverTimeoutSeconds: number;
  /** In round 0's order (the order turns by round). */
  consumers: Consumer[];
  /** The commit the `baseline` consumer is built from. */
  baselineCommit?: string;
}

export interface KclSideFigures {
  options: KclSideOptions;
  windows: Window[];
  rows: Row[];
  marginals: Marginal[];
  failovers: FailoverReading[];
  failoverRows: FailoverRow[];
}

/** A consumer process while it runs: when each shard's first record was handled (performance.now()). */
interface Running {
  pid: number;
  firsts: Map<string, number>;
  failed(): string | undefined;
  /** SIGKILL: gone without a word to its store, as a crashed process or host is. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

interface World {
  zk: ZooKeeperServer;
  kinesis: KinesisServer;
  admin: KinesisClient;
  dynalite: DynaliteServer;
  classpath: string;
  /** The baseline's bundled spout. */
  baselineScript?: string;
}

/** Called at every record batch (KCL) or tuple (the spout) a process hands on, with its shard. */
type OnHandled = (shard: string, at: number) => void;

function startKclBench(
  world: World,
  endpoint: string,
  stream: string,
  label: string,
  onHandled: OnHandled = () => undefined,
): Running {
  const args = ['-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-cp', world.classpath, 'kcl.KclBench'];
  args.push('--stream', stream, '--app', label, '--table', `leases-${label}`, '--kinesis', endpoint);
  args.push('--dynamodb', world.dynalite.endpoint, '--region', world.kinesis.region);
  const child: ChildProcess = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const firsts = new Map<string, number>();
  let stderr = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const at = performance.now();
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const [kind, shard] = line.split(' ');
      if (kind === 'first') firsts.set(shard, at);
      else if (kind === 'batch') onHandled(shard, at);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-5_000)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    pid: child.pid ?? 0,
    firsts,
    failed: () => (child.exitCode === null && child.signalCode === null ? undefined : `KCL exited:\n${stderr}`),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      await this.kill();
    },
  };
}

async function startSpout(
  world: World,
  endpoint: string,
  stream: string,
  label: string,
  script?: string,
  options: { taskId?: number; componentTasks?: number[]; onHandled?: OnHandled } = {},
): Promise<Running> {
  const kinesis = { endpoint, region: world.kinesis.region };
  const driver = await StormDriver.start({
    conf: benchConf(world.zk, kinesis, stream, label),
    keepHistory: false,
    script,
    taskId: options.taskId,
    componentTasks: options.componentTasks,
  });
  const firsts = new Map<string, number>();
  let stopped = false;
  let exited = driver.pid <= 0;
  void driver.exited.then(() => (exited = true));
  const pump = driver.pump(() => stopped, {
    timeoutMs: 3_600_000,
    onEmit: async (emit) => {
      const shard = String(emit.tuple[2]);
      if (!firsts.has(shard)) firsts.set(shard, emit.receivedAt);
      options.onHandled?.(shard, emit.receivedAt);
      await driver.ack(emit.id);
    },
  });
  return {
    pid: driver.pid,
    firsts,
    failed: () => (exited ? `the spout exited:\n${driver.logText()}` : undefined),
    async kill() {
      stopped = true;
      driver.signal('SIGKILL');
      await driver.exited;
      await pump;
    },
    async stop() {
      stopped = true;
      await pump;
      await driver.stop(3_000);
    },
  };
}

/** One record to every shard, by its starting hash key, through an unmetered client. */
async function putOnePerShard(admin: KinesisClient, stream: string): Promise<number> {
  const shards = await listAllShards(admin, stream);
  for (let i = 0; i < shards.length; i += 500) {
    const batch = shards.slice(i, i + 500);
    const put = await admin.send(
      new PutRecordsCommand({
        StreamName: stream,
        Records: batch.map((s) => ({
          PartitionKey: 'k',
          ExplicitHashKey: s.HashKeyRange!.StartingHashKey!,
          Data: Buffer.from('x'),
        })),
      }),
    );
    if (put.FailedRecordCount) throw new Error(`${put.FailedRecordCount} of the per-shard records were refused`);
  }
  return shards.length;
}

async function measure(
  world: World,
  run: { consumer: Consumer; shards: number; regime: Regime; round: number },
  options: KclSideOptions,
): Promise<Window> {
  const label = `side-${run.consumer}-${run.shards}-${run.regime}-${run.round}-${process.pid}`;
  await createStream(world.admin, label, run.shards);
  await putOnePerShard(world.admin, label);
  const counter = await startKinesisCounter(world.kinesis.endpoint);
  const started = performance.now();
  let running: Running | undefined;
  try {
    running =
      run.consumer === 'kcl'
        ? startKclBench(world, counter.endpoint, label, label)
        : await startSpout(
            world,
            counter.endpoint,
            label,
            label,
            run.consumer === 'baseline' ? world.baselineScript : undefined,
          );
    const deadline = started + options.pickupTimeoutSeconds * 1_000;
    while (running.firsts.size < run.shards) {
      const failed = running.failed();
      if (failed) throw new Error(`${label}: ${failed.slice(-3_000)}`);
      if (performance.now() > deadline)
        throw new Error(
          `${label}: ${running.firsts.size} of ${run.shards} shards read after ${options.pickupTimeoutSeconds} s`,
        );
      await sleep(20);
    }
    const pickupSeconds = (Math.max(...running.firsts.values()) - started) / 1_000;
    await sleep(options.settleSeconds * 1_000);
    const pids = { consumer: running.pid, store: run.consumer === 'kcl' ? world.dynalite.pid : world.zk.pid };
    const before = {
      at: performance.now(),
      cpu: cpuMicros(pids.consumer),
      store: cpuMicros(pids.store),
      emulator: cpuMicros(world.kinesis.pid),
      driver: process.cpuUsage(),
    };
    await sleep(options.windowSeconds * 1_000);
    const at = performance.now();
    const driver = process.cpuUsage(before.driver);
    return windowOf({
      regime: run.regime,
      round: run.round,
      consumer: run.consumer,
      shards: run.shards,
      pickupSeconds: Math.round(pickupSeconds * 1_000) / 1_000,
      seconds: (at - before.at) / 1_000,
      cpuMicros: cpuMicros(pids.consumer) - before.cpu,
      driverCpuMicros: driver.user + driver.system,
      storeCpuMicros: cpuMicros(pids.store) - before.store,
      emulatorCpuMicros: cpuMicros(world.kinesis.pid) - before.emulator,
      rssMiB: rssMiB(pids.consumer),
      calls: counter.counts(before.at, at),
      load: loadavg()[0],
    });
  } finally {
    await running?.stop();
    await counter.close();
    await world.admin.send(new DeleteStreamCommand({ StreamName: label })).catch(() => undefined);
  }
}

/**
 * Both holding shards, the failover waits a random time up to this before it tells who holds what and kills:
 * that moment follows a lease taken, so killing then would always fall at one phase of the consumer's timers
 * (KCL's lease taker runs every 20 s; a kill just after its run is its slowest failover).
 */
const KILL_DELAY_MAX_S = 30;

/** The shards' ids, in the stream's order. */
async function shardIds(admin: KinesisClient, stream: string): Promise<string[]> {
  return (await listAllShards(admin, stream)).map((s) => s.ShardId!);
}

/**
 * One failover (see the header): two processes of one application on a stream of its own, started together.
 * Once every shard has been read: `settleSeconds` of rest, then a record put to every shard tells who holds
 * what (each shard's holder is the process that hands its record on; again every 5 s until both hold shards,
 * and once more after a random delay, KILL_DELAY_MAX_S).
 * The one holding more (the first started on a tie) is SIGKILLed and a record put to every shard at once;
 * for each of its shards, the time from the kill until the survivor hands on a record of it.
 */
async function measureFailover(
  world: World,
  run: { consumer: Consumer; shards: number; regime: Regime; round: number },
  options: KclSideOptions,
  log: (line: string) => void,
): Promise<FailoverReading> {
  const label = `failover-${run.consumer}-${run.shards}-${run.regime}-${run.round}-${process.pid}`;
  await createStream(world.admin, label, run.shards);
  const shards = await shardIds(world.admin, label);
  await putOnePerShard(world.admin, label);
  // Per process, when it last handed a record of each shard on; after the kill, the survivor's first of each.
  const last = [new Map<string, number>(), new Map<string, number>()];
  let killedAt = Number.POSITIVE_INFINITY;
  let survivor = -1;
  const takenOver = new Map<string, number>();
  const onHandled = (i: number) => (shard: string, at: number) => {
    last[i].set(shard, at);
    if (i === survivor && at >= killedAt && !takenOver.has(shard)) takenOver.set(shard, at);
  };
  const started = performance.now();
  const processes: Running[] = [];
  const alive = () => {
    for (const [i, p] of processes.entries()) {
      const failed = i === 1 - survivor ? undefined : p.failed();
      if (failed) throw new Error(`${label}: process ${i}: ${failed.slice(-3_000)}`);
    }
  };
  try {
    for (const i of [0, 1])
      processes.push(
        run.consumer === 'kcl'
          ? startKclBench(world, world.kinesis.endpoint, label, label, onHandled(i))
          : await startSpout(
              world,
              world.kinesis.endpoint,
              label,
              label,
              run.consumer === 'baseline' ? world.baselineScript : undefined,
              { taskId: i + 1, componentTasks: [1, 2], onHandled: onHandled(i) },
            ),
      );
    const readAll = started + options.pickupTimeoutSeconds * 1_000;
    while (shards.some((shard) => !processes.some((p) => p.firsts.has(shard)))) {
      alive();
      if (performance.now() > readAll)
        throw new Error(`${label}: not every shard read after ${options.pickupTimeoutSeconds} s`);
      await sleep(50);
    }
    await sleep(options.settleSeconds * 1_000);
    const settled = performance.now() + options.failoverTimeoutSeconds * 1_000;
    let holders: number[] = [];
    let delaySeconds: number | undefined;
    for (;;) {
      const probe = performance.now();
      await putOnePerShard(world.admin, label);
      const since = (i: number, shard: string) => last[i].get(shard) ?? Number.NEGATIVE_INFINITY;
      while (shards.some((shard) => since(0, shard) < probe && since(1, shard) < probe)) {
        alive();
        if (performance.now() > probe + 60_000) throw new Error(`${label}: a probe record unread after 60 s`);
        await sleep(20);
      }
      // Read by both since the probe: the later reader holds it now (taken over in between).
      holders = shards.map((shard) => (since(1, shard) > since(0, shard) ? 1 : 0));
      if (holders.includes(0) && holders.includes(1)) {
        if (delaySeconds !== undefined) break;
        // Not at once: right after both hold shards is right after a lease was taken, one phase of the timers.
        delaySeconds = Math.round(Math.random() * KILL_DELAY_MAX_S * 1_000) / 1_000;
        await sleep(delaySeconds * 1_000);
        continue;
      }
      if (performance.now() > settled)
        throw new Error(
          `${label}: one process held every shard ${options.failoverTimeoutSeconds} s after all were read`,
        );
      await sleep(5_000);
    }
    const held = [0, 1].map((i) => holders.filter((h) => h === i).length);
    const victim = held[1] > held[0] ? 1 : 0;
    const theirs = shards.filter((_, at) => holders[at] === victim);
    const settleSeconds = (performance.now() - started) / 1_000;
    survivor = 1 - victim;
    killedAt = performance.now();
    await processes[victim].kill();
    await putOnePerShard(world.admin, label);
    const deadline = killedAt + options.failoverTimeoutSeconds * 1_000;
    while (theirs.some((shard) => !takenOver.has(shard)) && performance.now() < deadline) {
      alive();
      await sleep(20);
    }
    const seconds = theirs.flatMap((shard) => {
      const at = takenOver.get(shard);
      return at === undefined ? [] : [Math.round(at - killedAt) / 1_000];
    });
    const reading: FailoverReading = {
      regime: run.regime,
      round: run.round,
      consumer: run.consumer,
      shards: run.shards,
      settleSeconds: Math.round(settleSeconds * 1_000) / 1_000,
      delaySeconds: delaySeconds ?? 0,
      held: [held[victim], held[survivor]],
      seconds,
      unread: theirs.length - seconds.length,
      timeoutSeconds: options.failoverTimeoutSeconds,
      load: loadavg()[0],
    };
    const s = seconds.length ? summarize(seconds) : undefined;
    log(
      `kclSideBySide failover ${run.regime} round ${run.round + 1} ${run.shards} shards ${run.consumer}: held ${held[victim]} + ${held[survivor]} after ${reading.settleSeconds} s; kill → survivor reads: median ${s?.median ?? '—'} s, max ${s?.max ?? '—'} s, ${reading.unread} unread after ${options.failoverTimeoutSeconds} s; load ${reading.load.toFixed(2)}`,
    );
    return reading;
  } finally {
    for (const p of processes) await p.stop();
    await world.admin.send(new DeleteStreamCommand({ StreamName: label })).catch(() => undefined);
  }
}

export async function kclSideBySideBench(
  zk: ZooKeeperServer,
  options: KclSideOptions,
  log: (line: string) => void,
): Promise<KclSideFigures> {
  const classpath = options.consumers.includes('kcl') ? buildKclRunner() : '';
  const baseline = options.consumers.includes('baseline') ? buildRelease(options.baselineCommit) : undefined;
  const kinesis = await startFastKinesis({ latencyMs: 15 });
  const admin = markUnmetered(kinesisClient(kinesis));
  const dynalite = await startDynalite();
  const world: World = { zk, kinesis, admin, dynalite, classpath, baselineScript: baseline?.script };
  const windows: Window[] = [];
  const failovers: FailoverReading[] = [];
  try {
    for (const regime of options.regimes) {
      const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
      try {
        for (let round = 0; round < options.rounds; round += 1)
          for (const shards of options.sizes) {
            const order = round % 2 === 0 ? options.consumers : [...options.consumers].reverse();
            for (const consumer of order) {
              if (options.measures.includes('cost')) {
                const w = await measure(world, { consumer, shards, regime, round }, options);
                windows.push(w);
                log(
                  `kclSideBySide ${regime} round ${round + 1} ${shards} shards ${consumer}: pickup ${w.pickupSeconds} s; CPU ${w.cpuPercent} % (${w.cpuMsPerSecondPerShard} ms/s per shard), ${w.getRecordsPerSecond} GetRecords/s, ${w.cpuMicrosPerGetRecords.toFixed(0)} µs per call, RSS ${w.rssMiB} MiB; store ${w.storeCpuPercent} %, emulator ${w.emulatorCpuPercent} %, driver ${w.driverCpuPercent} %; load ${w.load.toFixed(2)}`,
                );
              }
              if (options.measures.includes('failover'))
                failovers.push(await measureFailover(world, { consumer, shards, regime, round }, options, log));
            }
          }
      } finally {
        stopLoops();
      }
    }
  } finally {
    admin.destroy();
    await dynalite.stop();
    await kinesis.stop();
    baseline?.remove();
  }
  const rows = rowsOf(windows);
  const marginals = marginalsOf(windows);
  const failoverRows = failoverRowsOf(failovers);
  if (windows.length) for (const line of kclTable(rows, marginals)) log(line);
  if (failovers.length) for (const line of failoverTable(failoverRows)) log(line);
  return { options, windows, rows, marginals, failovers, failoverRows };
}

function numbers(name: string, fallback: string): number[] {
  const values = (process.env[name] ?? fallback).split(',').filter(Boolean).map(Number);
  const bad = values.find((v) => !Number.isInteger(v) || v < 1);
  if (bad !== undefined || !values.length)
    throw new Error(`${name}: ${process.env[name]} is not a list of positive integers (e.g. ${fallback})`);
  return values;
}

/** `npm run bench`'s options from the environment; BENCH_QUICK a smoke run of one round on 4 shards. */
export function kclSideOptions(quick: boolean): KclSideOptions {
  const regimes = (process.env.BENCH_REGIMES ?? 'idle').split(',') as Regime[];
  const bad = regimes.find((r) => r !== Regime.Idle && r !== Regime.Busy);
  if (bad) throw new Error(`BENCH_REGIMES: unknown ${bad}; allowed: idle, busy`);
  const baselineCommit = process.env.BENCH_KCL_BASELINE || undefined;
  const consumers = (process.env.BENCH_KCL_CONSUMERS ?? (baselineCommit ? 'kcl,spout,baseline' : 'kcl,spout')).split(
    ',',
  ) as Consumer[];
  const unknown = consumers.find((c) => !CONSUMERS.includes(c));
  if (unknown || !consumers.length)
    throw new Error(`BENCH_KCL_CONSUMERS: unknown ${unknown}; allowed: ${CONSUMERS.join(', ')}`);
  const measures = (process.env.BENCH_KCL_MEASURE ?? 'cost').split(',') as Measure[];
  const unknownMeasure = measures.find((m) => !MEASURES.includes(m));
  if (unknownMeasure || !measures.length)
    throw new Error(`BENCH_KCL_MEASURE: unknown ${unknownMeasure}; allowed: ${MEASURES.join(', ')}`);
  if (consumers.includes('baseline') && !baselineCommit)
    throw new Error('BENCH_KCL_CONSUMERS names baseline: BENCH_KCL_BASELINE=<commit> says which build');
  return {
    measures,
    rounds: numbers('BENCH_ROUNDS', quick ? '1' : '3')[0],
    sizes: numbers('BENCH_KCL_SHARDS', quick ? '4' : '64,256'),
    regimes: quick ? [Regime.Idle] : regimes,
    settleSeconds: numbers('BENCH_KCL_SETTLE_S', quick ? '1' : '20')[0],
    windowSeconds: numbers('BENCH_KCL_WINDOW_S', quick ? '2' : '30')[0],
    pickupTimeoutSeconds: 180,
    failoverTimeoutSeconds: numbers('BENCH_KCL_FAILOVER_TIMEOUT_S', '120')[0],
    consumers,
    baselineCommit,
  };
}

async function main(): Promise<void> {
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const quick = process.env.BENCH_QUICK === '1';
  const zk = await startZooKeeper();
  let figures: KclSideFigures;
  try {
    figures = await kclSideBySideBench(zk, kclSideOptions(quick), (line) => process.stdout.write(`${line}\n`));
  } finally {
    await zk.stop();
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const file = join(__dirname, 'results', `kclSideBySide-${stamp}${quick ? '-quick' : ''}.json`);
  const commit = execSync('git rev-parse --short HEAD', { cwd: __dirname }).toString().trim();
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), machine, node: process.version, commit, ...figures }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${file}\n`);
}

if (require.main === module)
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
