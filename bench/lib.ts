/** What the benchmark sections share: summaries, process CPU and memory readings, spout configuration. */
import { readFileSync } from 'node:fs';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { SHELL_SPOUT_LAUNCH } from '../test/helpers/spoutNode';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    median: round(sorted[Math.floor(sorted.length / 2)] ?? NaN),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
    n: sorted.length,
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const CLOCK_TICKS = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s

export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

/** Peak resident memory of a live process, in MiB. */
export function peakRssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Node options every spout process of a benchmark starts with: KinesisShellSpout's own (SHELL_SPOUT_LAUNCH),
 * unless BENCH_NODE_OPTIONS says otherwise (space-separated, "" for none).
 */
export function benchNodeOptions(): string[] {
  const options = process.env.BENCH_NODE_OPTIONS;
  return options === undefined ? [...SHELL_SPOUT_LAUNCH.nodeOptions] : options.split(' ').filter(Boolean);
}

/** The spout's `kinesis.spout` conf for a benchmark: defaults except what names the servers. */
export function benchConf(
  zk: Pick<ZooKeeperServer, 'connectString'>,
  kinesis: { endpoint: string; region: string } | undefined,
  streamName: string,
  applicationName: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    'kinesis.spout': {
      streamName,
      applicationName,
      region: kinesis?.region ?? 'us-east-1',
      ...(kinesis ? { endpoint: kinesis.endpoint } : {}),
      initialPosition: 'TRIM_HORIZON',
      zookeeper: { connect: zk.connectString, root: '/bench' },
      ...overrides,
    },
  };
}

/**
 * A bench file run on its own (`npx tsx bench/<file>.ts`): ZooKeeper and kinesis-local started for it,
 * `work` run on them, everything stopped after; a failure printed and the exit code 1.
 */
export function runStandalone(
  work: (
    zk: ZooKeeperServer,
    server: KinesisServer,
    client: KinesisClient,
    log: (line: string) => void,
  ) => Promise<void>,
): void {
  void (async () => {
    const { startZooKeeper } = await import('../test/helpers/zookeeperServer');
    const { startKinesisLocal } = await import('../test/helpers/kinesisServer');
    const { kinesisClient } = await import('../test/helpers/kinesisAdmin');
    process.env.AWS_ACCESS_KEY_ID ??= 'bench';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
    const zk = await startZooKeeper();
    const server = await startKinesisLocal();
    const client = kinesisClient(server);
    try {
      await work(zk, server, client, (line) => process.stdout.write(`${line}\n`));
    } finally {
      client.destroy();
      await server.stop();
      await zk.stop();
    }
  })().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
