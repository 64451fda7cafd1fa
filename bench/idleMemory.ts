/**
 * Resident memory of one spout process holding S idle shards (nothing put to the stream), for S = 1, 8, 64
 * by default: RSS (VmRSS, median of the last samples of a settle window), the V8 heap and the external (Buffer)
 * memory, read from the process's own `stats:` lines (BENCH_GC=1 starts it with `--expose-gc`, so that they
 * are measured after a full GC: what is retained). BENCH_IDLE_SHARDS=1,8,64 and BENCH_IDLE_SECONDS choose the runs,
 * BENCH_IDLE_CONF (JSON) overrides spout configuration keys. BENCH_IDLE_SCRIPTS=a.cjs,b.cjs compares bundles: each
 * round runs every shard count with each of them in turn, BENCH_IDLE_ROUNDS times (default 1). The RSS is split into file pages (the node binary's
 * code and data that the process touched, shared with the other node processes of the host) and anonymous memory.
 * The spout processes start as KinesisShellSpout starts them (bench/lib.ts: benchNodeOptions; StormDriver: its environment).
 * BENCH_IDLE_LOG=<file> appends each process's log lines (stats lines left out), timed from its start.
 * Run alone: `npx tsx bench/idleMemory.ts` (after `npm run build`).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, benchNodeOptions, runStandalone, sleep } from './lib';

export interface IdleMemoryRun {
  shards: number;
  /** The bundle run, when not the built one. */
  script?: string;
  rssMiB: number;
  /** Of the RSS, file pages (mostly the node binary's code and read-only data, shared between processes) and anonymous memory. */
  rssFileMiB: number;
  rssAnonMiB: number;
  heapTotalMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  /** Sockets the process had open to the Kinesis endpoint at the end (from /proc/<pid>/net/tcp). */
  kinesisSockets: number;
  /** The process's CPU (user + system, all threads, /proc/<pid>/stat) over the settle window: % of a core. */
  cpuPercent: number;
  /** That CPU per GetRecords call made in the window (from the process's `stats:` counters). */
  cpuMicrosPerGetRecords: number;
}

/** User + system CPU of `pid` so far, in microseconds (clock ticks of 10 ms: Linux's USER_HZ 100). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A `/proc/<pid>/status` figure in MiB: VmRSS, RssFile, RssAnon. */
function statusMiB(pid: number, key: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/** Established TCP connections of `pid` to `port` on loopback. */
export function socketsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  try {
    for (const fd of require('node:fs').readdirSync(`/proc/${pid}/fd`) as string[]) {
      try {
        const target = require('node:fs').readlinkSync(`/proc/${pid}/fd/${fd}`) as string;
        const m = /^socket:\[(\d+)\]$/.exec(target);
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return 0;
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync(`/proc/${pid}/net/tcp`, 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length > 9 && f[2]?.endsWith(`:${hexPort}`) && f[3] === '01' && inodes.has(f[9])).length;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const round1 = (x: number) => Math.round(x * 10) / 10;

export async function idleMemoryBench(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  shardCounts: number[],
  settleSeconds: number,
  log: (line: string) => void,
  script?: string,
): Promise<IdleMemoryRun[]> {
  const runs: IdleMemoryRun[] = [];
  for (const shards of shardCounts) {
    const stream = `idle-${shards}-${Date.now()}`;
    await createStream(client, stream, shards);
    const driver = await StormDriver.start({
      conf: benchConf(zk, server, stream, `idle-${shards}-${Date.now()}`, {
        statsIntervalMs: 1_000,
        ...(JSON.parse(process.env.BENCH_IDLE_CONF ?? '{}') as Record<string, unknown>),
      }),
      // RSS as in production: no forced GC unless BENCH_GC=1 (then the heap figure is what is retained).
      nodeOptions: [
        ...(process.env.BENCH_GC === '1' ? ['--expose-gc'] : []),
        ...(process.env.BENCH_HEAPSNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2'] : []),
        ...benchNodeOptions(),
      ],
      keepHistory: false,
      ...(script === undefined ? {} : { script }),
    });
    const startedAt = Date.now();
    let stopped = false;
    const pumping = driver.pump(() => stopped, { timeoutMs: 600_000 });
    try {
      const held = () => driver.lastStats()?.shards ?? 0;
      const deadline = Date.now() + 120_000;
      while (held() < shards && Date.now() < deadline) await sleep(500);
      if (held() < shards) throw new Error(`idle memory: ${held()} of ${shards} shards held after 120 s`);
      const samples: { rss: number; file: number; anon: number }[] = [];
      const windowStart = { at: Date.now(), cpu: cpuMicros(driver.pid), calls: driver.lastStats()?.getRecords ?? 0 };
      const end = Date.now() + settleSeconds * 1000;
      while (Date.now() < end) {
        await sleep(1000);
        samples.push({
          rss: statusMiB(driver.pid, 'VmRSS'),
          file: statusMiB(driver.pid, 'RssFile'),
          anon: statusMiB(driver.pid, 'RssAnon'),
        });
      }
      const cpu = cpuMicros(driver.pid) - windowStart.cpu;
      const elapsedMs = Date.now() - windowStart.at;
      const calls = (driver.lastStats()?.getRecords ?? 0) - windowStart.calls;
      const settled = samples.slice(-Math.max(3, Math.floor(samples.length / 2)));
      if (process.env.BENCH_HEAPSNAPSHOT) {
        driver.signal('SIGUSR2');
        await sleep(5_000);
      }
      const stats = driver.lastStats() ?? {};
      const run: IdleMemoryRun = {
        shards,
        ...(script === undefined ? {} : { script }),
        rssMiB: round1(median(settled.map((s) => s.rss))),
        rssFileMiB: round1(median(settled.map((s) => s.file))),
        rssAnonMiB: round1(median(settled.map((s) => s.anon))),
        heapTotalMiB: round1(stats.heapTotalMiB ?? NaN),
        heapUsedMiB: round1(stats.heapUsedMiB ?? NaN),
        externalMiB: round1(stats.externalMiB ?? NaN),
        kinesisSockets: socketsTo(driver.pid, Number(new URL(server.endpoint).port)),
        cpuPercent: round1(cpu / (elapsedMs * 10)),
        cpuMicrosPerGetRecords: Math.round(cpu / calls),
      };
      log(
        `idle memory: ${script === undefined ? '' : `${script}: `}${shards} shards: RSS ${run.rssMiB} MiB (file ${run.rssFileMiB}, anonymous ${run.rssAnonMiB}), heap ${run.heapUsedMiB} of ${run.heapTotalMiB} MiB, external ${run.externalMiB} MiB, ${run.kinesisSockets} sockets to Kinesis, CPU ${run.cpuPercent} % (${run.cpuMicrosPerGetRecords} us per GetRecords, ${calls} calls)`,
      );
      runs.push(run);
    } finally {
      if (process.env.BENCH_IDLE_LOG) {
        const lines = driver.logs
          .filter((l) => !l.msg.startsWith('stats: '))
          .map((l) => `${((l.at - startedAt) / 1000).toFixed(1)} [${l.level}] ${l.msg}\n`);
        appendFileSync(process.env.BENCH_IDLE_LOG, `--- pid ${driver.pid}, ${shards} shards\n${lines.join('')}`);
      }
      stopped = true;
      await pumping;
      await driver.stop(3_000);
    }
  }
  return runs;
}

if (require.main === module)
  runStandalone(async (zk, server, client, log) => {
    const counts = (process.env.BENCH_IDLE_SHARDS ?? '1,8,64').split(',').map(Number);
    const seconds = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
    const scripts = process.env.BENCH_IDLE_SCRIPTS?.split(',') ?? [undefined];
    const runs: IdleMemoryRun[] = [];
    for (let round = 0; round < Number(process.env.BENCH_IDLE_ROUNDS ?? 1); round += 1)
      // Alternating: a load that changes during the run weighs on each bundle alike.
      for (const script of round % 2 === 0 ? scripts : [...scripts].reverse())
        runs.push(...(await idleMemoryBench(zk, server, client, counts, seconds, log, script)));
    if (scripts.length > 1 || runs.length > counts.length) {
      for (const script of scripts)
        for (const shards of counts) {
          const rss = runs.filter((r) => r.script === script && r.shards === shards).map((r) => r.rssMiB);
          const cpu = runs
            .filter((r) => r.script === script && r.shards === shards)
            .map((r) => r.cpuMicrosPerGetRecords);
          log(
            `median: ${script ?? 'built bundle'}: ${shards} shards: RSS ${median(rss)} MiB (${rss.join(', ')}), CPU per GetRecords ${median(cpu)} us (${cpu.join(', ')})`,
          );
        }
    }
  });
