/** One storm-section run's topology description (BenchTopology's `submit` file), its counter and its latency. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalTopology } from '../../test/e2e/helpers/topology';
import type { ZooKeeperServer } from '../../test/helpers/zookeeperServer';
import { benchConf } from '../lib';
import type { StormSpout } from '../storm';

const BATCH = 100;
/** As the protocol section: one synthetic shard returns more per call than Kinesis allows (see syntheticKinesis). */
const SYNTHETIC_RECORDS_PER_CALL = 20_000;
/** One shard's room for what it reads at these rates (the protocol section's settings). */
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
}

export function spoutRunSpec(spout: StormSpout, c: RunContext) {
  const metricsFile = join(c.dir, `${c.name}.metrics.jsonl`);
  const storm: Record<string, unknown> = {
    'topology.max.spout.pending': c.pending,
    'topology.builtin.metrics.bucket.size.secs': 1,
    // Storm 2's built-in executor metrics are V2 metrics: sent to a metrics consumer only with this.
    'topology.enable.v2.metrics.tick': true,
    'topology.v2.metrics.tick.interval.seconds': 1,
    'topology.metrics.consumer.register': [
      { class: 'io.github.kinesisshellspout.example.MetricsRecorder', 'parallelism.hint': 1, argument: metricsFile },
    ],
    ...(c.serializer && spout !== 'native' ? { 'topology.multilang.serializer': c.serializer } : {}),
  };
  const env = { PAYLOAD_BYTES: String(c.payloadBytes), CEILING_BATCH: String(BATCH) };
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
      json = {
        spout: 'shell',
        command: ['node', c.synthetic],
        env: { ...env, SYNTHETIC_SHARDS: '1', SYNTHETIC_RECORDS_PER_CALL: String(SYNTHETIC_RECORDS_PER_CALL) },
        componentConf: benchConf(c.zk, undefined, 'synthetic', c.name, ONE_TASK_SETTINGS),
      };
      break;
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
    metricsFile,
    shell: spout !== 'native',
    /** What the run can read: the pre-filled stream's records (undefined: an endless source). */
    records: spout === 'spoutKinesis' ? c.kinesis?.records : undefined,
  };
}

/** The bolt's count of tuples acked, and the JVM's nanoTime when it was read. */
export async function countAcked(topology: LocalTopology): Promise<{ acked: number; nanos: bigint }> {
  await topology.control('count');
  const all = [...topology.log().matchAll(/^bench: count (\d+) (-?\d+)$/gm)];
  const last = all[all.length - 1];
  if (!last) throw new Error('no count line in the LocalCluster log');
  return { acked: Number(last[1]), nanos: BigInt(last[2]) };
}

interface DataPoint {
  component: string;
  timestamp: number;
  name: string;
  value: number;
}

/**
 * Storm's complete latency of the spout over the buckets ending within [from, to] (epoch ms): the V2 gauge
 * `__complete-latency-default` (a rolling average of the sampled tuple trees, `topology.stats.sample.rate`)
 * from the metrics consumer's file, one value a second, weighted by the tuples acked in that second (the
 * V2 counter `__ack-count-default` is cumulative).
 */
export function completeLatencyMs(file: string, from: number, to: number): number | undefined {
  if (!existsSync(file)) return undefined;
  const points = readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as DataPoint];
      } catch {
        return []; // a line being written
      }
    })
    .filter((p) => p.component === 'spout' && typeof p.value === 'number');
  const acked = points.filter((p) => p.name === '__ack-count-default').sort((a, b) => a.timestamp - b.timestamp);
  const ackedIn = new Map(acked.slice(1).map((p, i) => [p.timestamp, p.value - acked[i].value]));
  let weighted = 0;
  let weight = 0;
  for (const p of points) {
    if (p.name !== '__complete-latency-default' || p.timestamp * 1000 <= from + 1000 || p.timestamp * 1000 > to)
      continue;
    const n = ackedIn.get(p.timestamp) ?? 0;
    weighted += p.value * n;
    weight += n;
  }
  return weight > 0 ? weighted / weight : undefined;
}
