/**
 * The protocol at full speed: responders driven by the lean driver (bench/driver/) as ShellSpout drives a
 * spout (every ack a round trip waiting for its sync), alternating within each round, in two regimes:
 * CPUs idle, and both CPUs kept busy by `nice -n 19` busy loops (on this VM a wake-up is slow while CPUs
 * idle, as on a quiet host; a loaded worker host looks like the busy regime).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { build } from 'esbuild';
import { existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import type { DriverResult, DriverSpec } from './driver/spec';
import { benchConf, benchNodeOptions, summarize, type Summary } from './lib';
import { shellSpoutEnv } from '../test/helpers/spoutNode';

const BATCH = 100;
const STORM_VERSION = '2.8.1';
/** A synthetic shard returns this many records per call, more than Kinesis allows (see syntheticKinesis). */
const SYNTHETIC_RECORDS_PER_CALL = 20_000;

export const Regime = { Idle: 'idle', Busy: 'busy' } as const;
export type Regime = (typeof Regime)[keyof typeof Regime];

/**
 * `ceiling`: a process that only answers the protocol, through Node's event loop. `floor`: the same with
 * blocking pipe I/O and no event loop. `stormjs`: Storm's own library emitting the same tuples. `spout`,
 * `spout64`: the real spout on 1 and 64 synthetic shards; `spoutLoop`: 1 shard, `directStdio: false`.
 */
export const RESPONDERS = ['ceiling', 'floor', 'stormjs', 'spout', 'spout64', 'spoutLoop'] as const;
export type Responder = (typeof RESPONDERS)[number];

/** storm.js from Maven Central (org.apache.storm:multilang-javascript), unpacked under bench/.build. */
export function fetchStormJs(root: string): string | undefined {
  const dir = join(root, 'bench/.build');
  const stormJs = join(dir, 'resources/storm.js');
  if (existsSync(stormJs)) return stormJs;
  try {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'mvn',
      [
        '-q',
        'dependency:copy',
        `-Dartifact=org.apache.storm:multilang-javascript:${STORM_VERSION}`,
        `-DoutputDirectory=${dir}`,
      ],
      { stdio: 'ignore' },
    );
    execFileSync('jar', ['xf', `multilang-javascript-${STORM_VERSION}.jar`, 'resources/storm.js'], { cwd: dir });
    return stormJs;
  } catch {
    return undefined;
  }
}

export async function bundle(root: string, entry: string, out: string): Promise<string> {
  const outfile = join(root, 'bench/.build', out);
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node18',
    logLevel: 'warning',
  });
  return outfile;
}

/** Two busy loops at the lowest priority: they take only CPU time nothing else wants. */
export function startBusyLoops(): () => void {
  const loops: ChildProcess[] = Array.from({ length: cpus().length }, () =>
    spawn('nice', ['-n', '19', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }),
  );
  return () => {
    for (const loop of loops) loop.kill('SIGKILL');
  };
}

/** One driver run in its own process; killed with its responder if it overruns. */
export function drive(driver: string, spec: DriverSpec): Promise<DriverResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [driver, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    const limit = spec.startTimeoutMs + (spec.warmupSeconds + spec.seconds) * 1000 + 10_000;
    const timer = setTimeout(() => {
      const responder = /responder pid (\d+)/.exec(stderr)?.[1];
      if (responder) process.kill(Number(responder), 'SIGKILL');
      child.kill('SIGKILL');
    }, limit);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(stdout) as DriverResult);
      else reject(new Error(`lean driver on ${spec.script} failed (${code}): ${stderr.trim()}`));
    });
  });
}

export interface ResponderFigures {
  tuplesPerSecond: Summary;
  fastTuplesPerSecond: Summary;
  slowTuplesPerSecond: Summary;
  /** Share of the time in the slow phase. */
  slowShare: Summary;
  /** Throughput over the ceiling's in the same round. */
  toCeiling: Summary;
  cpuMicrosPerTuple: Summary;
  userCpuMicrosPerTuple: Summary;
  rssMiB: Summary;
  driverCpuMicrosPerTuple: Summary;
  /** `next`s answered with nothing, per second (the responder had no record ready: a source run dry). */
  emptyNextsPerSecond: Summary;
}

export interface ProtocolFigures {
  regime: Regime;
  payloadBytes: number;
  responders: Partial<Record<Responder, ResponderFigures>>;
  /** The spout (1 shard) against storm.js, round by round: throughput ratio and CPU-per-tuple ratio. */
  spoutToStormjs?: { throughput: Summary; cpuPerTuple: Summary };
  /**
   * The driver's own ceiling: 1e6 over its CPU time per tuple while driving the ceiling process, the most
   * it could drive; and that over the spout's throughput (it must be at least 2 for the figures to be the
   * responders', not the driver's).
   */
  driver: { capacityTuplesPerSecond: Summary; toSpout?: Summary };
}

export interface ProtocolOptions {
  rounds: number;
  seconds: number;
  /** Measured from this long after the first tuple. */
  warmupSeconds: number;
  payloads: number[];
  regimes: Regime[];
  responders: Responder[];
}

export async function protocolBench(
  root: string,
  zk: ZooKeeperServer,
  options: ProtocolOptions,
  log: (line: string) => void,
): Promise<ProtocolFigures[]> {
  const stormJs = options.responders.includes('stormjs') ? fetchStormJs(root) : undefined;
  if (options.responders.includes('stormjs') && !stormJs)
    log('storm.js could not be fetched from Maven Central: measuring without it');
  const driver = await bundle(root, 'bench/driver/leanDriver.ts', 'lean-driver.js');
  const spout = await bundle(root, 'bench/syntheticSpout.ts', 'synthetic-spout.js');
  const responders = options.responders.filter((r) => r !== 'stormjs' || stormJs);
  const scriptOf: Record<Responder, string> = {
    ceiling: join(root, 'bench/ceiling.mjs'),
    floor: join(root, 'bench/ceiling.mjs'),
    stormjs: join(root, 'bench/stormjsSpout.js'),
    spout,
    spout64: spout,
    spoutLoop: spout,
  };
  const figures: ProtocolFigures[] = [];
  for (const regime of options.regimes) {
    const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
    try {
      for (const payload of options.payloads) {
        const runs = new Map<Responder, DriverResult[]>(responders.map((r) => [r, []]));
        for (let round = 0; round < options.rounds; round += 1) {
          // A different order each round, so drift in the machine's load does not favour one responder.
          const order = responders.map((_, i) => responders[(i + round) % responders.length]);
          for (const responder of order) {
            const isSpout = responder.startsWith('spout');
            // One shard needs room for what it reads at this rate. 64 run on the defaults but for the memory
            // cap: 20,000 records leave each shard 312, which at this rate run dry between the 5 reads a
            // second a shard is allowed (`next` then emits nothing and Storm waits).
            const settings =
              responder === 'spout64'
                ? { maxEmitPerNext: BATCH, maxRecordsInMemory: 100_000 }
                : {
                    maxEmitPerNext: BATCH,
                    maxRecordsPerRequest: 10_000,
                    shardBufferSize: 20_000,
                    maxRecordsInMemory: 100_000,
                    directStdio: responder !== 'spoutLoop',
                  };
            const conf = isSpout
              ? benchConf(
                  zk,
                  undefined,
                  'synthetic',
                  `protocol-${process.pid}-${regime}-${payload}-${round}-${responder}`,
                  settings,
                )
              : {};
            const env: Record<string, string> = {
              PAYLOAD_BYTES: String(payload),
              CEILING_BATCH: String(BATCH),
              CEILING_IO: responder === 'floor' ? 'blocking' : 'events',
              STORM_JS: stormJs ?? '',
              SYNTHETIC_SHARDS: responder === 'spout64' ? '64' : '1',
              // Only one shard needs more than Kinesis's pacing allows; 64 read within it (and within the memory caps).
              SYNTHETIC_RECORDS_PER_CALL: responder === 'spout64' ? '0' : String(SYNTHETIC_RECORDS_PER_CALL),
            };
            const result = await drive(driver, {
              script: scriptOf[responder],
              ...(isSpout ? { nodeOptions: benchNodeOptions() } : {}),
              env: isSpout ? { ...env, ...shellSpoutEnv() } : env,
              conf,
              startTimeoutMs: 30_000,
              warmupSeconds: options.warmupSeconds,
              seconds: options.seconds,
              windowMs: 100,
            });
            runs.get(responder)!.push(result);
            log(
              `protocol ${regime} ${payload} B round ${round + 1} ${responder}: ${Math.round(result.tuplesPerSecond)} tuples/s ` +
                `(fast ${Math.round(result.fast.tuplesPerSecond)}, slow ${Math.round(result.slow.tuplesPerSecond)} for ${Math.round(result.slow.share * 100)} %), ` +
                `${result.responderCpuMicrosPerTuple.toFixed(1)} us CPU/tuple (user ${result.responderUserMicrosPerTuple.toFixed(1)}), ${result.rssMiB} MiB, ${result.emptyNexts} empty nexts; driver ${result.driverCpuMicrosPerTuple.toFixed(1)} us/tuple`,
            );
          }
        }
        figures.push(summarizeRuns(regime, payload, runs));
      }
    } finally {
      stopLoops();
    }
  }
  return figures;
}

function summarizeRuns(regime: Regime, payload: number, runs: Map<Responder, DriverResult[]>): ProtocolFigures {
  const ceiling = runs.get('ceiling');
  const of = (list: DriverResult[], f: (r: DriverResult) => number) => summarize(list.map(f));
  const responders: ProtocolFigures['responders'] = {};
  for (const [name, list] of runs) {
    responders[name] = {
      tuplesPerSecond: of(list, (r) => Math.round(r.tuplesPerSecond)),
      fastTuplesPerSecond: of(list, (r) => Math.round(r.fast.tuplesPerSecond)),
      slowTuplesPerSecond: of(list, (r) => Math.round(r.slow.tuplesPerSecond)),
      slowShare: of(list, (r) => r.slow.share),
      toCeiling: ceiling
        ? summarize(list.map((r, i) => r.tuplesPerSecond / ceiling[i].tuplesPerSecond))
        : summarize([]),
      cpuMicrosPerTuple: of(list, (r) => r.responderCpuMicrosPerTuple),
      userCpuMicrosPerTuple: of(list, (r) => r.responderUserMicrosPerTuple),
      rssMiB: of(list, (r) => r.rssMiB),
      driverCpuMicrosPerTuple: of(list, (r) => r.driverCpuMicrosPerTuple),
      emptyNextsPerSecond: of(list, (r) => r.emptyNexts / r.seconds),
    };
  }
  const spout = runs.get('spout');
  const stormjs = runs.get('stormjs');
  const capacity = ceiling?.map((r) => 1e6 / r.driverCpuMicrosPerTuple) ?? [];
  return {
    regime,
    payloadBytes: payload,
    responders,
    ...(spout && stormjs
      ? {
          spoutToStormjs: {
            throughput: summarize(spout.map((r, i) => r.tuplesPerSecond / stormjs[i].tuplesPerSecond)),
            cpuPerTuple: summarize(
              spout.map((r, i) => r.responderCpuMicrosPerTuple / stormjs[i].responderCpuMicrosPerTuple),
            ),
          },
        }
      : {}),
    driver: {
      capacityTuplesPerSecond: summarize(capacity.map(Math.round)),
      ...(spout && capacity.length ? { toSpout: summarize(spout.map((r, i) => capacity[i] / r.tuplesPerSecond)) } : {}),
    },
  };
}
