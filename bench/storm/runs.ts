/** One storm-section run's topology description (BenchTopology's `submit` file), and its counters. */
import { join } from 'node:path';
import type { LocalTopology } from '../../test/e2e/helpers/topology';
import type { ZooKeeperServer } from '../../test/helpers/zookeeperServer';
import { benchConf, benchNodeOptions } from '../lib';
import { shellSpoutEnv } from '../../test/helpers/spoutNode';
import type { StormSpout } from '../storm';

const BATCH = 100;
/**
 * The synthetic source's shards: each read as Kinesis allows (5 calls a second, up to `maxRecordsPerRequest`,
 * 10,000, a call), so SYNTHETIC_SHARDS × 50,000 records/s is its ceiling: 800,000, above what any spout here
 * reaches (the native Java spout's 568–635k on a faster machine). One shard of 20,000 a call capped the runs
 * at 100,000 tuples/s, where the compact wire format sat. `spoutCompactWide` reads 4 times as many: the
 * same rate on both says the source is not the limit.
 */
export const SYNTHETIC_SHARDS = 16;
export const WIDE_SYNTHETIC_SHARDS = 64;
/** Records a synthetic run's source can hand out a second at most (its shards' read limit). */
export const syntheticCeiling = (shards: number) => shards * 5 * ONE_TASK_SETTINGS.maxRecordsPerRequest;
/** One task's room for what it reads at these rates (the protocol section's settings). */
/** The compact serializer of the Maven module (docs/design.md, "The compact wire format"). */
export const COMPACT_SERIALIZER = 'io.github.kinesisshellspout.CompactSerializer';
const ONE_TASK_SETTINGS = {
  maxEmitPerNext: BATCH,
  maxRecordsPerRequest: 10_000,
  shardBufferSize: 20_000,
  maxRecordsInMemory: 100_000,
};

export interface RunContext {
  name: string;
  dir: string;
  pending: number;
  payloadBytes: number;
  serializer?: string;
  stormJs?: string;
  synthetic: string;
  zk: ZooKeeperServer;
  kinesis?: { endpoint: string; region: string; stream: string; records: number };
  /** spoutPaced: the synthetic source on this many shards, read at this many records/s in all. */
  paced?: { shards: number; recordsPerSecond: number };
}

export function spoutRunSpec(spout: StormSpout, c: RunContext) {
  // The compact serializer set topology-wide: it is Storm's JSON serializer for any other multilang component.
  const compact = spout === 'spoutCompact' || spout === 'spoutCompactWide';
  const serializer = compact ? COMPACT_SERIALIZER : spout !== 'native' ? c.serializer : undefined;
  const storm: Record<string, unknown> = {
    'topology.max.spout.pending': c.pending,
    ...(serializer ? { 'topology.multilang.serializer': serializer } : {}),
  };
  const env = { PAYLOAD_BYTES: String(c.payloadBytes), CEILING_BATCH: String(BATCH) };
  // This spout's synthetic runs start node as KinesisShellSpout does (spoutKinesis is KinesisShellSpout itself).
  const spoutCommand = ['node', ...benchNodeOptions(), c.synthetic];
  const spoutEnv = { ...env, ...shellSpoutEnv() };
  let json: Record<string, unknown>;
  switch (spout) {
    case 'native':
      json = { spout: 'native', payloadBytes: c.payloadBytes };
      break;
    case 'stormjs':
      json = {
        spout: 'shell',
        command: ['node', join(__dirname, '../stormjsSpout.js')],
        env: { ...env, STORM_JS: c.stormJs },
      };
      break;
    case 'spout':
    case 'spoutCompact':
    case 'spoutCompactWide':
      json = {
        spout: 'shell',
        command: spoutCommand,
        env: {
          ...spoutEnv,
          SYNTHETIC_SHARDS: String(spout === 'spoutCompactWide' ? WIDE_SYNTHETIC_SHARDS : SYNTHETIC_SHARDS),
        },
        componentConf: benchConf(c.zk, undefined, 'synthetic', c.name, ONE_TASK_SETTINGS),
      };
      break;
    case 'spoutPaced': {
      if (!c.paced) throw new Error('spoutPaced needs the rate of a spoutKinesis run');
      json = {
        spout: 'shell',
        command: spoutCommand,
        env: {
          ...spoutEnv,
          SYNTHETIC_SHARDS: String(c.paced.shards),
          SYNTHETIC_RECORDS_PER_SECOND: String(c.paced.recordsPerSecond / c.paced.shards),
        },
        componentConf: benchConf(c.zk, undefined, 'synthetic', c.name, ONE_TASK_SETTINGS),
      };
      break;
    }
    case 'spoutKinesis': {
      if (!c.kinesis) throw new Error('spoutKinesis needs kinesis-local');
      const conf = benchConf(c.zk, c.kinesis, c.kinesis.stream, c.name, ONE_TASK_SETTINGS)['kinesis.spout'];
      json = { spout: 'kinesis', kinesis: conf };
      break;
    }
  }
  return {
    name: c.name,
    file: join(c.dir, `${c.name}.json`),
    json: { name: c.name, storm, ...json },
    shell: spout !== 'native',
    /** What the run can read: the pre-filled stream's records (undefined: an endless source). */
    records: spout === 'spoutKinesis' ? c.kinesis?.records : undefined,
  };
}

export interface Counts {
  /** Tuples acked by the bolt so far. */
  acked: number;
  /** The JVM's nanoTime when the counts were read. */
  nanos: bigint;
  /** Tuple trees the spouts timed from emit to their ack so far, and the sum of those complete latencies (ns). */
  trees: number;
  latencyNanos: bigint;
}

/** The LocalCluster's counts (BenchTopology's `count`): cumulative over every topology it ran. */
export async function countAcked(topology: LocalTopology): Promise<Counts> {
  await topology.control('count');
  const all = [...topology.log().matchAll(/^bench: count (\d+) (-?\d+) (\d+) (\d+)$/gm)];
  const last = all[all.length - 1];
  if (!last) throw new Error('no count line in the LocalCluster log');
  return { acked: Number(last[1]), nanos: BigInt(last[2]), trees: Number(last[3]), latencyNanos: BigInt(last[4]) };
}

/**
 * The mean complete latency (ms) of the tuple trees acked between two counts: every tree timed in the spout
 * (BenchTopology's CompleteLatency), from its emit to the spout's ack, as Storm defines it. Not Storm's
 * `__complete-latency` gauge: that is the mean of the last three sampled trees only, in whole ms.
 */
export function completeLatencyMs(from: Counts, to: Counts): number | undefined {
  const trees = to.trees - from.trees;
  return trees > 0 ? Number(to.latencyNanos - from.latencyNanos) / trees / 1e6 : undefined;
}
