/**
 * End to end in Storm: Storm 2.8's LocalCluster in a forked JVM (the e2e harness's build and LocalTopology,
 * main BenchTopology in topology-examples/java), one topology per run of one spout task feeding one acking
 * bolt task in one worker, at several `topology.max.spout.pending`, for four spouts emitting the same
 * tuples: `native` (a Java spout: Storm's own limit), `stormjs` (storm.js in a ShellSpout), `spout` (this
 * spout's process with its synthetic source, 16 shards read as Kinesis allows: 800,000 records/s at most),
 * `spoutCompact` (the same with the compact serializer), `spoutCompactWide` (that on 64 shards: the same
 * rate says the source is not the limit), `spoutKinesis` (KinesisShellSpout against kinesis-local, a pre-filled stream), `spoutPaced`
 * (right after each spoutKinesis run: the synthetic source on as many shards, paced at the rate that run
 * reached, so the two differ only in reading Kinesis, not in the rate's fixed costs). Per run:
 * tuples acked by the bolt over the measured window, CPU of the JVM and of the Node process from /proc, the
 * mean complete latency of every tuple tree acked in the window, timed in the spout (emit to ack; Storm's
 * own gauge is the mean of its last three sampled trees, see bench/storm/runs.ts). Spouts alternate within
 * each round, rounds rotate the order; CPUs idle and both kept busy.
 * BENCH_STORM_SERIALIZER names a `topology.multilang.serializer` class for the shell spouts but `spoutCompact`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream, putRecords } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { mavenBuild } from '../test/e2e/helpers/maven';
import { groupMembers, LocalTopology, type ExampleConfig } from '../test/e2e/helpers/topology';
import { cpuMicros, sleep, summarize, type Summary } from './lib';
import { bundle, fetchStormJs, Regime, startBusyLoops } from './protocol';
import {
  completeLatencyMs,
  countAcked,
  SYNTHETIC_SHARDS,
  spoutRunSpec,
  syntheticCeiling,
  WIDE_SYNTHETIC_SHARDS,
} from './storm/runs';

export const STORM_SPOUTS = [
  'native',
  'stormjs',
  'spout',
  'spoutCompact',
  'spoutCompactWide',
  'spoutKinesis',
  'spoutPaced',
] as const;
export type StormSpout = (typeof STORM_SPOUTS)[number];

export interface StormOptions {
  rounds: number;
  warmupSeconds: number;
  seconds: number;
  pendings: number[];
  regimes: Regime[];
  spouts: StormSpout[];
  payloadBytes: number;
  /** `topology.multilang.serializer` for the shell spouts; Storm's JsonSerializer when absent. */
  serializer?: string;
  /** Records put in the kinesis-local stream before the runs (each run reads it from the start). */
  kinesisRecords: number;
  kinesisShards: number;
}

export interface StormRun {
  tuplesPerSecond: number;
  jvmCpuMicrosPerTuple: number;
  nodeCpuMicrosPerTuple?: number;
  completeLatencyMs?: number;
  tuples: number;
  seconds: number;
}

export interface StormSpoutFigures {
  tuplesPerSecond: Summary;
  jvmCpuMicrosPerTuple: Summary;
  nodeCpuMicrosPerTuple?: Summary;
  completeLatencyMs: Summary;
}

export interface StormFigures {
  regime: Regime;
  maxSpoutPending: number;
  spouts: Partial<Record<StormSpout, StormSpoutFigures>>;
  /** Each spoutKinesis run's CPU per tuple over that of the spoutPaced run right after it: what reading Kinesis costs. */
  kinesisOverPaced?: { nodeCpuPerTuple: Summary; jvmCpuPerTuple: Summary };
}

export interface StormSection {
  stormVersion: string;
  serializer: string;
  payloadBytes: number;
  kinesis: { shards: number; records: number };
  /** The synthetic source's shards and what they can hand out a second (absent before: 1 shard, 100,000/s). */
  synthetic?: { shards: number; wideShards: number; ceilingPerSecond: number; wideCeilingPerSecond: number };
  rounds: number;
  seconds: number;
  /** CPU of the LocalCluster JVM with no topology (nimbus, supervisor, its ZooKeeper), in % of one core. */
  jvmIdleCpuPercent: number;
  /**
   * How complete latency was taken: `spout`, timed in the spout task from emit to ack (every tuple tree);
   * absent in results from before that, whose figure was Storm's V2 gauge (the last three sampled trees).
   */
  latencyFrom?: 'spout';
  loadAverage: { before: number[]; after: number[] };
  figures: StormFigures[];
}

/** Fewer tuples in a run's window: the run is left out of the medians. */
const MIN_TUPLES = 100;
const JSON_SERIALIZER = 'org.apache.storm.multilang.JsonSerializer';
const MAIN = ['io.github.kinesisshellspout.example.bench.BenchTopology'];
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

export async function stormBench(
  root: string,
  zk: ZooKeeperServer,
  kinesis: { server: KinesisServer; client: KinesisClient } | undefined,
  options: StormOptions,
  log: (line: string) => void,
): Promise<StormSection> {
  const loadBefore = load();
  const build = await mavenBuild(join(root, 'topology-examples/java'), 'kinesis-topology-example-0.1.0.jar');
  const stormJs = options.spouts.includes('stormjs') ? fetchStormJs(root) : undefined;
  if (options.spouts.includes('stormjs') && !stormJs) log('storm: storm.js could not be fetched: measuring without it');
  const spouts = options.spouts.filter((s) => (s !== 'stormjs' || stormJs) && (s !== 'spoutKinesis' || kinesis));
  // Paced at a spoutKinesis run's rate, right after it: not a spout of the rotation.
  const paced = spouts.includes('spoutPaced') && spouts.includes('spoutKinesis');
  if (spouts.includes('spoutPaced') && !paced) log('storm: spoutPaced needs spoutKinesis: measuring without it');
  const rotated = spouts.filter((s) => s !== 'spoutPaced');
  const synthetic = await bundle(root, 'bench/syntheticSpout.ts', 'synthetic-spout.js');
  const stream = `bench-storm-${process.pid}`;
  if (kinesis && spouts.includes('spoutKinesis')) {
    await createStream(kinesis.client, stream, options.kinesisShards);
    const started = performance.now();
    const data = 'x'.repeat(options.payloadBytes);
    // Two PutRecords calls in flight: one at a time, kinesis-local on a loaded machine fills too slowly.
    const batches = Array.from({ length: Math.ceil(options.kinesisRecords / 500) }, (_, b) => b);
    const put = async () => {
      for (let b = batches.shift(); b !== undefined; b = batches.shift()) {
        const from = b * 500;
        const length = Math.min(500, options.kinesisRecords - from);
        await putRecords(
          kinesis.client,
          stream,
          Array.from({ length }, (_, j) => ({ partitionKey: `k${from + j}`, data })),
        );
      }
    };
    await Promise.all([put(), put()]);
    log(`storm: ${options.kinesisRecords} records put in ${Math.round(performance.now() - started)} ms`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-storm-'));
  const topology = new LocalTopology(build, MAIN, { topologyName: 'bench' } as ExampleConfig, dir);
  const runs = new Map<string, StormRun[]>();
  /** Per regime/pending: each spoutKinesis run with the spoutPaced run right after it. */
  const pairs = new Map<string, [StormRun, StormRun][]>();
  let jvmIdleCpuPercent = NaN;
  try {
    await topology.waitFor('LocalCluster started', () => topology.log().includes('control: started'), 180_000);
    const idleSeconds = options.seconds;
    const idle0 = cpuMicros(topology.pid);
    await sleep(idleSeconds * 1000);
    jvmIdleCpuPercent = Math.round(((cpuMicros(topology.pid) - idle0) / (idleSeconds * 1e6)) * 1000) / 10;
    log(`storm: LocalCluster JVM with no topology: ${jvmIdleCpuPercent} % of a core`);
    for (const regime of options.regimes) {
      const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
      try {
        for (const pending of options.pendings) {
          for (let round = 0; round < options.rounds; round += 1) {
            const order = rotated.flatMap((_, i) => {
              const spout = rotated[(i + round) % rotated.length];
              return spout === 'spoutKinesis' && paced ? [spout, 'spoutPaced' as const] : [spout];
            });
            let kinesisRun: StormRun | undefined;
            for (const spout of order) {
              const name = `bench-${spout}-${regime}-${pending}-${round}-${process.pid}`;
              if (spout === 'spoutPaced' && kinesisRun === undefined) {
                log(`storm: ${name} left out: its spoutKinesis run gave no rate`);
                continue;
              }
              const spec = spoutRunSpec(spout, {
                name,
                dir,
                pending,
                payloadBytes: options.payloadBytes,
                serializer: options.serializer,
                stormJs,
                synthetic,
                zk,
                kinesis: kinesis && { ...kinesis.server, stream, records: options.kinesisRecords },
                ...(kinesisRun === undefined
                  ? {}
                  : { paced: { shards: options.kinesisShards, recordsPerSecond: kinesisRun.tuplesPerSecond } }),
              });
              const run = await measure(topology, spec, options);
              const key = `${regime}/${pending}/${spout}`;
              // A pre-filled stream read during the warm-up leaves a window of nothing: not a figure.
              const counted = run.tuples >= MIN_TUPLES;
              if (counted) runs.set(key, [...(runs.get(key) ?? []), run]);
              else log(`storm: ${name} left out: ${run.tuples} tuples in its window (fewer than ${MIN_TUPLES})`);
              if (spout === 'spoutKinesis') kinesisRun = counted ? run : undefined;
              if (spout === 'spoutPaced' && counted && kinesisRun)
                pairs.set(`${regime}/${pending}`, [...(pairs.get(`${regime}/${pending}`) ?? []), [kinesisRun, run]]);
              log(
                `storm ${regime} pending ${pending} round ${round + 1} ${spout}: ${Math.round(run.tuplesPerSecond)} tuples/s, ` +
                  `JVM ${run.jvmCpuMicrosPerTuple.toFixed(1)} us/tuple, Node ${run.nodeCpuMicrosPerTuple?.toFixed(1) ?? '-'} us/tuple, ` +
                  `complete latency ${run.completeLatencyMs?.toFixed(1) ?? '-'} ms (load ${load()[0]})`,
              );
            }
          }
        }
      } finally {
        stopLoops();
      }
    }
  } finally {
    await topology.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const figures: StormFigures[] = [];
  for (const regime of options.regimes)
    for (const pending of options.pendings) {
      const entry: StormFigures = { regime, maxSpoutPending: pending, spouts: {} };
      for (const spout of spouts) {
        const list = runs.get(`${regime}/${pending}/${spout}`) ?? [];
        const node = list.flatMap((r) => (r.nodeCpuMicrosPerTuple === undefined ? [] : [r.nodeCpuMicrosPerTuple]));
        entry.spouts[spout] = {
          tuplesPerSecond: summarize(list.map((r) => Math.round(r.tuplesPerSecond))),
          jvmCpuMicrosPerTuple: summarize(list.map((r) => r.jvmCpuMicrosPerTuple)),
          ...(node.length ? { nodeCpuMicrosPerTuple: summarize(node) } : {}),
          completeLatencyMs: summarize(
            list.flatMap((r) => (r.completeLatencyMs === undefined ? [] : [r.completeLatencyMs])),
          ),
        };
      }
      const paired = pairs.get(`${regime}/${pending}`) ?? [];
      if (paired.length)
        entry.kinesisOverPaced = {
          nodeCpuPerTuple: summarize(
            paired.map(([k, p]) => (k.nodeCpuMicrosPerTuple ?? NaN) / (p.nodeCpuMicrosPerTuple ?? NaN)),
          ),
          jvmCpuPerTuple: summarize(paired.map(([k, p]) => k.jvmCpuMicrosPerTuple / p.jvmCpuMicrosPerTuple)),
        };
      figures.push(entry);
    }
  return {
    stormVersion: '2.8.3',
    serializer: options.serializer ?? JSON_SERIALIZER,
    payloadBytes: options.payloadBytes,
    kinesis: { shards: options.kinesisShards, records: options.kinesisRecords },
    synthetic: {
      shards: SYNTHETIC_SHARDS,
      wideShards: WIDE_SYNTHETIC_SHARDS,
      ceilingPerSecond: syntheticCeiling(SYNTHETIC_SHARDS),
      wideCeilingPerSecond: syntheticCeiling(WIDE_SYNTHETIC_SHARDS),
    },
    rounds: options.rounds,
    seconds: options.seconds,
    jvmIdleCpuPercent,
    latencyFrom: 'spout',
    loadAverage: { before: loadBefore, after: load() },
    figures,
  };
}

/** One topology: submitted, warmed up, measured, killed (and its Node process gone). */
async function measure(
  topology: LocalTopology,
  spec: ReturnType<typeof spoutRunSpec>,
  options: StormOptions,
): Promise<StormRun> {
  writeFileSync(spec.file, JSON.stringify(spec.json));
  const pidsBefore = topology.spoutPids().length;
  const start = await countAcked(topology);
  await topology.control(`submit ${spec.file}`);
  await topology.waitFor(
    `${spec.name}: tuples acked`,
    async () => (await countAcked(topology)).acked > start.acked + 100,
    120_000,
  );
  const nodePid = spec.shell ? topology.spoutPids()[pidsBefore] : undefined;
  if (spec.shell && nodePid === undefined) throw new Error(`${spec.name}: no ShellSpout process in the log`);
  /** `seconds` pass, or (a pre-filled stream) `fraction` of its records are acked since the start, whichever first. */
  const untilOrRead = async (seconds: number, fraction: number) => {
    const endAt = Date.now() + seconds * 1000;
    if (spec.records === undefined) return sleep(endAt - Date.now());
    const mark = start.acked + spec.records * fraction;
    while (Date.now() < endAt && (await countAcked(topology)).acked < mark) await sleep(300);
  };
  // From a pre-filled stream, the warm-up ends at a quarter of it read, if that comes first.
  await untilOrRead(options.warmupSeconds, 0.25);
  const node0 = nodePid === undefined ? 0 : cpuMicros(nodePid);
  const jvm0 = cpuMicros(topology.pid);
  const c0 = await countAcked(topology);
  // A pre-filled stream: the window ends before it is read to its end (then Storm would wait on an empty source).
  await untilOrRead(options.seconds, 0.9);
  const node1 = nodePid === undefined ? 0 : cpuMicros(nodePid);
  const jvm1 = cpuMicros(topology.pid);
  const c1 = await countAcked(topology);
  await topology.control(`kill ${spec.name}`);
  if (nodePid !== undefined)
    await topology.waitFor(
      `${spec.name}: its Node process gone`,
      () => !groupMembers(topology.pid).includes(nodePid),
      60_000,
    );
  await sleep(1_000);
  const tuples = c1.acked - c0.acked;
  const seconds = Number(c1.nanos - c0.nanos) / 1e9;
  return {
    tuples,
    seconds,
    tuplesPerSecond: tuples / seconds,
    jvmCpuMicrosPerTuple: (jvm1 - jvm0) / tuples,
    ...(nodePid === undefined ? {} : { nodeCpuMicrosPerTuple: (node1 - node0) / tuples }),
    ...optional('completeLatencyMs', completeLatencyMs(c0, c1)),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
