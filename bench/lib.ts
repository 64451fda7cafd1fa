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
  return statCpuMicros(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * A /proc/<pid>/stat line's CPU time, user + system of every thread the process has had, in µs. The
 * command name (in parentheses) may hold spaces and parentheses itself: the fields are counted from the
 * last ") ".
 */
export function statCpuMicros(stat: string): number {
  const end = stat.lastIndexOf(') ');
  const fields = stat.slice(end + 2).split(' ');
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  if (end < 0 || !Number.isFinite(user) || !Number.isFinite(system))
    throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  return ((user + system) / CLOCK_TICKS) * 1e6;
}

/** Resident memory of a live process now, in MiB. */
export function rssMiB(pid: number): number {
  return statusRssMiB(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

/** The `VmRSS:` line of a /proc/<pid>/status text, in MiB (one decimal). */
export function statusRssMiB(status: string): number {
  const kiB = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kiB === undefined) throw new Error('no VmRSS line in /proc/<pid>/status (a process that has exited?)');
  return Math.round(Number(kiB) / 102.4) / 10;
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
