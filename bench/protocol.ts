/**
 * Protocol throughput and CPU per tuple: the spout (real process, real ZooKeeper, synthetic record source)
 * beside the ceiling (a process that only answers the protocol), on the same Storm-shaped driver (every
 * ack a round trip waiting for its sync), alternating in one run.
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, cpuMicros, peakRssMiB, summarize, type Summary } from './lib';

const BATCH = 100;
const STORM_VERSION = '2.8.1';

/** storm.js from Maven Central (org.apache.storm:multilang-javascript), unpacked under bench/.build. */
function fetchStormJs(root: string): string | undefined {
  const dir = join(root, 'bench/.build');
  const stormJs = join(dir, 'resources/storm.js');
  if (existsSync(stormJs)) return stormJs;
  try {
    mkdirSync(dir, { recursive: true });
    execFileSync('mvn', ['-q', 'dependency:copy', `-Dartifact=org.apache.storm:multilang-javascript:${STORM_VERSION}`, `-DoutputDirectory=${dir}`], { stdio: 'ignore' });
    execFileSync('jar', ['xf', `multilang-javascript-${STORM_VERSION}.jar`, 'resources/storm.js'], { cwd: dir });
    return stormJs;
  } catch {
    return undefined;
  }
}

export interface Run {
  tuplesPerSecond: number;
  cpuMicrosPerTuple: number;
  peakRssMiB: number;
}

export async function buildSyntheticSpout(root: string): Promise<string> {
  const outfile = join(root, 'bench/.build/synthetic-spout.js');
  await build({ entryPoints: [join(root, 'bench/syntheticSpout.ts')], outfile, bundle: true, platform: 'node', target: 'node18', logLevel: 'warning' });
  return outfile;
}

/** Pumps `script` for `seconds` after a warm-up, acking every tuple; throughput, CPU and memory of the process. */
export async function measureProcess(script: string, conf: Record<string, unknown>, env: Record<string, string>, seconds: number): Promise<Run> {
  const driver = await StormDriver.start({ script, conf, keepHistory: false, env });
  try {
    let acked = 0;
    const onEmit = async (emit: { id: string }) => {
      await driver.ack(emit.id);
      acked += 1;
    };
    if (!(await driver.pump(() => acked > 0, { timeoutMs: 30_000, onEmit }))) throw new Error(`no tuple from ${script}\n${driver.logText()}`);
    const warm = Date.now() + 1_000;
    await driver.pump(() => Date.now() > warm, { onEmit });
    const cpu0 = cpuMicros(driver.pid);
    const count0 = acked;
    const t0 = performance.now();
    const end = Date.now() + seconds * 1_000;
    await driver.pump(() => Date.now() > end, { timeoutMs: seconds * 1_000 + 5_000, onEmit });
    const elapsed = (performance.now() - t0) / 1_000;
    const tuples = acked - count0;
    return { tuplesPerSecond: Math.round(tuples / elapsed), cpuMicrosPerTuple: Math.round((cpuMicros(driver.pid) - cpu0) / tuples), peakRssMiB: peakRssMiB(driver.pid) };
  } finally {
    await driver.stop(3_000);
  }
}

/**
 * `floor` is the ceiling with blocking reads and writes and no event loop: the least CPU a round trip
 * costs on this machine. `spoutLoop` is the spout with `directStdio: false`.
 */
type Target = 'ceiling' | 'floor' | 'stormjs' | 'spout' | 'spoutLoop';

export interface TargetFigures {
  tuplesPerSecond: Summary;
  cpuMicrosPerTuple: Summary;
  /** Throughput as a share of the ceiling's, round by round. */
  toCeiling: Summary;
}

export interface ProtocolFigures {
  payloadBytes: number;
  ceiling: TargetFigures;
  floor: TargetFigures;
  stormjs?: TargetFigures;
  spout: TargetFigures;
  spoutLoop: TargetFigures;
  /** The spout's CPU per tuple over storm.js's, round by round (below 1: the spout is cheaper). */
  spoutCpuToStormjs?: Summary;
  /** The spout's CPU per tuple with direct stdio over without, round by round. */
  directCpuToLoop: Summary;
}

export async function protocolBench(root: string, zk: ZooKeeperServer, rounds: number, seconds: number, log: (line: string) => void): Promise<ProtocolFigures[]> {
  const stormJs = fetchStormJs(root);
  if (!stormJs) log('storm.js could not be fetched from Maven Central: measuring without it');
  const spout = await buildSyntheticSpout(root);
  const scripts: Partial<Record<Target, string>> = {
    ceiling: join(root, 'bench/ceiling.mjs'),
    floor: join(root, 'bench/ceiling.mjs'),
    spout,
    spoutLoop: spout,
    ...(stormJs ? { stormjs: join(root, 'bench/stormjsSpout.js') } : {}),
  };
  const targets = Object.keys(scripts) as Target[];
  const figures: ProtocolFigures[] = [];
  for (const payload of [100, 1024]) {
    const runs: Record<Target, Run[]> = { ceiling: [], floor: [], stormjs: [], spout: [], spoutLoop: [] };
    for (let round = 0; round < rounds; round += 1) {
      // A different order each round, so drift in the machine's load does not favour one target.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]);
      for (const target of order) {
        const conf = benchConf(zk, undefined, 'synthetic', `protocol-${process.pid}-${payload}-${round}-${target}`, {
          maxEmitPerNext: BATCH,
          maxRecordsPerRequest: 10_000,
          shardBufferSize: 20_000,
          maxRecordsInMemory: 100_000,
          directStdio: target !== 'spoutLoop',
        });
        const env = { PAYLOAD_BYTES: String(payload), CEILING_BATCH: String(BATCH), STORM_JS: stormJs ?? '', CEILING_IO: target === 'floor' ? 'blocking' : 'events' };
        const run = await measureProcess(scripts[target]!, conf, env, seconds);
        runs[target].push(run);
        log(`protocol ${payload} B round ${round + 1} ${target}: ${run.tuplesPerSecond} tuples/s, ${run.cpuMicrosPerTuple} us CPU/tuple`);
      }
    }
    // Ratios are taken within a round (the runs side by side), then summarized.
    const cpuRatio = (a: Run[], b: Run[]) => summarize(a.map((r, i) => r.cpuMicrosPerTuple / b[i].cpuMicrosPerTuple));
    const figuresOf = (list: Run[]): TargetFigures => ({
      tuplesPerSecond: summarize(list.map((r) => r.tuplesPerSecond)),
      cpuMicrosPerTuple: summarize(list.map((r) => r.cpuMicrosPerTuple)),
      toCeiling: summarize(list.map((r, i) => r.tuplesPerSecond / runs.ceiling[i].tuplesPerSecond)),
    });
    figures.push({
      payloadBytes: payload,
      ceiling: figuresOf(runs.ceiling),
      floor: figuresOf(runs.floor),
      spout: figuresOf(runs.spout),
      spoutLoop: figuresOf(runs.spoutLoop),
      directCpuToLoop: cpuRatio(runs.spout, runs.spoutLoop),
      ...(stormJs ? { stormjs: figuresOf(runs.stormjs), spoutCpuToStormjs: cpuRatio(runs.spout, runs.stormjs) } : {}),
    });
  }
  return figures;
}

export interface ScalingFigures {
  shards: number;
  tuplesPerSecond: number;
  peakRssMiB: number;
}

/** The spout alone, default settings, synthetic shards: how throughput and memory change with shards held. */
export async function scalingBench(root: string, zk: ZooKeeperServer, seconds: number, log: (line: string) => void): Promise<ScalingFigures[]> {
  const script = await buildSyntheticSpout(root);
  const figures: ScalingFigures[] = [];
  for (const shards of [1, 16, 64]) {
    const conf = benchConf(zk, undefined, 'synthetic', `scaling-${process.pid}-${shards}`);
    const run = await measureProcess(script, conf, { PAYLOAD_BYTES: '1024', SYNTHETIC_SHARDS: String(shards) }, seconds);
    figures.push({ shards, tuplesPerSecond: run.tuplesPerSecond, peakRssMiB: run.peakRssMiB });
    log(`scaling ${shards} shard(s): ${run.tuplesPerSecond} tuples/s, peak RSS ${run.peakRssMiB} MiB`);
  }
  return figures;
}
