/**
 * The scale benchmark: S shards read by T spout processes (real ZooKeeper, a Kinesis emulator started for the
 * run, session timeout 6 s, one record put to every open shard every 0.5 s, every emit acked), for each size
 * of SCALE (default 16x4,64x8; BENCH_QUICK: 8x2) on each emulator of SCALE_KINESIS (kinesis-local by default;
 * `fast`, ours; a size may name its own, `64x8@fast`). Per run, in order:
 *   start      every task started at once: time to every open shard emitted, and to leases balanced
 *   busy       a 10 s window with records flowing: per task ZooKeeper reads/writes per second, Kinesis calls
 *   idle       the producer paused: per task RSS, CPU, ZooKeeper and Kinesis calls per second
 *   double     UpdateShardCount S -> 2S while records flow: every new shard's first emit, from the moment
 *              the emulator reports the stream ACTIVE with 2S open shards (min/median/max)
 *   halve      UpdateShardCount 2S -> S, the same
 *   kill       SIGKILL of one task: each of its shards' first emit by another task after the kill
 * and throughout: the harness's own CPU and event-loop delay (the driver's process; the proxies' and the
 * producer's processes apart), the servers' CPU, nothing lost. ZooKeeper requests are counted by a proxy per
 * task that decodes the wire protocol (bench/scale/zkCounter.ts), Kinesis calls by a proxy per task reading
 * X-Amz-Target (kinesisCounter.ts); the proxies run in processes of their own (bench/scale/proxies.ts: the
 * tasks of SCALE_PROXY_TASKS, default 8, to one process), and so does the producer (bench/scale/producer.ts).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream, kinesisClient } from '../test/helpers/kinesisAdmin';
import { markUnmetered } from '../test/helpers/fastKinesis/server';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { cpuMicros, sleep, summarize, type Summary } from './lib';
import { pickupBreakdown, windowCounts, type PickupBreakdown, type WindowCounts } from './scale/breakdown';
import { ScaleWorld } from './scale/world';

/**
 * The Kinesis a scale run reads: kinesis-local (one Node thread answering every call in turn), or fast, the
 * benchmarks' own emulator (test/helpers/fastKinesis/: every call answered on its own after a fixed latency).
 */
export const SCALE_KINESIS = ['kinesis-local', 'fast'] as const;
export type ScaleKinesis = (typeof SCALE_KINESIS)[number];

export interface ScaleSize {
  shards: number;
  tasks: number;
  /** Set by `@<kinesis>` after the size; otherwise the run is made on each of SCALE_KINESIS. */
  kinesis?: ScaleKinesis;
}

/** `SCALE_KINESIS=fast,kinesis-local` -> the emulators; kinesis-local when unset. */
export function parseKinesis(text: string | undefined, name = 'SCALE_KINESIS'): ScaleKinesis[] {
  const list = (text ?? 'kinesis-local').split(',').filter(Boolean);
  const bad = list.find((k) => !(SCALE_KINESIS as readonly string[]).includes(k));
  if (bad !== undefined || list.length === 0)
    throw new Error(`${name}: "${bad ?? text}" is not one of ${SCALE_KINESIS.join(', ')}`);
  return list as ScaleKinesis[];
}

/** `16x4,64x8@fast` -> sizes; a clear error naming SCALE otherwise. */
export function parseSizes(text: string): ScaleSize[] {
  return text
    .split(',')
    .filter(Boolean)
    .map((part) => {
      const match = /^(\d+)x(\d+)(?:@([a-z-]+))?$/.exec(part.trim());
      if (!match || Number(match[2]) < 2 || Number(match[1]) < Number(match[2]))
        throw new Error(
          `SCALE: "${part}" is not <shards>x<tasks>[@<kinesis>] with tasks >= 2 and shards >= tasks (e.g. 64x8, 64x8@fast)`,
        );
      const size: ScaleSize = { shards: Number(match[1]), tasks: Number(match[2]) };
      if (match[3] !== undefined) size.kinesis = parseKinesis(match[3], `SCALE "${part}"`)[0];
      return size;
    });
}

/** SCALE_SPOUT_CONF: `kinesis.spout` keys every task of a run gets (a JSON object), e.g. `{"idlePollIntervalMs":250}`. */
export function spoutOverrides(text = process.env.SCALE_SPOUT_CONF): Record<string, unknown> {
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`SCALE_SPOUT_CONF: ${text} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** The runs in order: each size on its own emulator, or on each of `kinesis` in turn (side by side). */
export function scaleRuns(sizes: ScaleSize[], kinesis: ScaleKinesis[]): Required<ScaleSize>[] {
  return sizes.flatMap((size) =>
    size.kinesis ? [{ ...size, kinesis: size.kinesis }] : kinesis.map((k) => ({ ...size, kinesis: k })),
  );
}

export interface PickupFigures {
  from: number;
  to: number;
  /** UpdateShardCount call -> the emulator reporting ACTIVE with the new count. */
  emulatorMs: number;
  /** Every new shard's first emit after ACTIVE. */
  firstEmitMs: Summary;
  /** New shards not emitted within the timeout. */
  unread: number;
  breakdown: PickupBreakdown;
}

export interface ScaleRun {
  shards: number;
  tasks: number;
  /** Absent in results from before there was a choice: kinesis-local. */
  kinesis?: ScaleKinesis;
  loadAverage: { before: number[]; after: number[] };
  /** Last task's pid handshake -> every open shard emitted; and from the first task's start. */
  allEmittedMs: { fromLastStart: number | undefined; fromFirstStart: number | undefined };
  balancedMs: number | undefined;
  /** The tasks' start spread (first to last pid). */
  startSpreadMs: number;
  startBreakdown: PickupBreakdown;
  busy: WindowCounts;
  idle: WindowCounts;
  double: PickupFigures;
  halve: PickupFigures;
  kill: { orphans: number; firstEmitMs: Summary; unread: number; breakdown: PickupBreakdown };
  /** Per task, over the whole run. */
  perTaskCalls: { listShards: Summary; getShardIterator: Summary; zkRequests: Summary };
  /**
   * The driver's process: CPU share of one core over the run, event-loop delay (monitorEventLoopDelay at a
   * 10 ms resolution: a figure includes those 10 ms). Results from before `helpers` measured the driver,
   * the proxies and the producer in one process.
   */
  harness: {
    cpuPercent: number;
    loopDelayP50Ms?: number;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
    /** The proxies' processes and the producer's, over the same run: CPU share of one core, event-loop delay. */
    helpers?: HelperFigures[];
  };
  servers: { zooKeeperCpuPercent: number; kinesisCpuPercent: number };
  records: { put: number; lost: number; duplicates: number; putFailures: number };
}

export interface HelperFigures {
  name: string;
  /** The tasks whose proxies it serves. */
  tasks?: number[];
  cpuPercent: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Its clock against the driver's, measured at its start by a round trip: how far its times may be off. */
  skewMs: number;
}

const round = (x: number | undefined) => (x === undefined ? undefined : Math.round(x));

async function pickup(
  world: ScaleWorld,
  from: number,
  to: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<PickupFigures> {
  const before = new Set(world.open.map((s) => s.shardId));
  const { calledAt, activeAt } = await world.updateShardCount(to);
  const fresh = world.open.map((s) => s.shardId).filter((s) => !before.has(s));
  await world.until(() => fresh.every((s) => world.firstEmit(s, activeAt) !== undefined), timeoutMs);
  const firsts = fresh.map((s) => world.firstEmit(s, activeAt)).filter((t): t is number => t !== undefined);
  const figures: PickupFigures = {
    from,
    to,
    emulatorMs: Math.round(activeAt - calledAt),
    firstEmitMs: summarize(firsts.map((t) => t - activeAt)),
    unread: fresh.length - firsts.length,
    breakdown: await pickupBreakdown(world, fresh, activeAt, Math.max(...firsts, activeAt)),
  };
  log(
    `scale ${world.stream}: ${from} -> ${to}: emulator ACTIVE after ${figures.emulatorMs} ms; new shards' first emit ` +
      `${figures.firstEmitMs.min}/${figures.firstEmitMs.median}/${figures.firstEmitMs.max} ms (min/median/max), ${figures.unread} unread`,
  );
  return figures;
}

export async function scaleRun(
  size: Required<ScaleSize>,
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  quick: boolean,
  log: (line: string) => void,
): Promise<ScaleRun> {
  const { shards, tasks, kinesis } = size;
  const loadBefore = loadavg().map((x) => Math.round(x * 100) / 100);
  const stream = `bench-scale-${shards}x${tasks}-${randomUUID().slice(0, 8)}`;
  await createStream(client, stream, shards);
  const world = new ScaleWorld(zk, server, client, stream, `scale-${shards}x${tasks}`, spoutOverrides());
  await world.prepare(tasks);
  await world.relist();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  await world.helpers(true);
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  const servers0 = { zk: cpuMicros(zk.pid), kinesis: cpuMicros(server.pid) };
  const timeout = quick ? 60_000 : 300_000;
  const windowMs = quick ? 2_000 : 10_000;
  try {
    await world.startProducer();
    const firstStart = performance.now();
    await world.startTasks(tasks);
    const lastStart = Math.max(...world.tasks.map((t) => t.startedAt));
    const everyShard = () => world.open.every((s) => world.firstEmit(s.shardId, 0) !== undefined);
    const allAt = await world.until(everyShard, timeout);
    const balancedAt = await world.until(() => world.balanced(), timeout);
    const startBreakdown = await pickupBreakdown(
      world,
      world.open.map((s) => s.shardId),
      lastStart,
      allAt ?? performance.now(),
    );
    log(
      `scale ${shards}x${tasks} on ${kinesis}: every shard emitted ${round(allAt && allAt - lastStart)} ms after the last task started ` +
        `(${round(allAt && allAt - firstStart)} ms after the first); balanced after ${round(balancedAt && balancedAt - lastStart)} ms`,
    );
    await sleep(1_000);
    const busy = await windowCounts(world, windowMs);
    await world.pauseProducer();
    await sleep(quick ? 1_000 : 3_000);
    const idle = await windowCounts(world, windowMs);
    await world.startProducer();
    await sleep(1_000);
    const double = await pickup(world, shards, shards * 2, timeout, log);
    await world.until(() => world.balanced(), quick ? 10_000 : 60_000);
    await sleep(1_000);
    const halve = await pickup(world, shards * 2, shards, timeout, log);
    await world.until(() => world.balanced(), quick ? 10_000 : 60_000);
    await sleep(2_000);
    const victim = world.tasks[1];
    const orphans = world.open.map((s) => s.shardId).filter((s) => world.lastEmitter(s) === victim.driver.pid);
    victim.driver.signal('SIGKILL');
    victim.alive = false;
    const killedAt = performance.now();
    const resumed = () => orphans.map((s) => world.firstEmit(s, killedAt, victim.driver.pid));
    await world.until(() => resumed().every((t) => t !== undefined), timeout);
    const times = resumed().filter((t): t is number => t !== undefined);
    const kill = {
      orphans: orphans.length,
      firstEmitMs: summarize(times.map((t) => t - killedAt)),
      unread: orphans.length - times.length,
      breakdown: await pickupBreakdown(world, orphans, killedAt, Math.max(...times, killedAt)),
    };
    log(
      `scale ${shards}x${tasks}: SIGKILL of a task holding ${orphans.length} shard(s): emitted again after ${kill.firstEmitMs.median}/${kill.firstEmitMs.max} ms (median/max)`,
    );
    await world.pauseProducer();
    await world.until(async () => {
      await world.syncPuts();
      return world.lost() === 0;
    }, 60_000);
    const wall = performance.now() - wallStart;
    const cpu = process.cpuUsage(cpuStart);
    delay.disable();
    const helpers = await world.helpers();
    await world.syncCounters();
    await world.syncPuts();
    const percent = (micros: number) => Math.round((micros / 1000 / wall) * 100);
    const helperFigures: HelperFigures[] = [
      ...helpers.proxies.map((p, i) => ({ name: `proxies ${i + 1}`, ...p })),
      { name: 'producer', ...helpers.producer },
    ].map(({ name, tasks: served, skewMs, usage }) => ({
      name,
      ...(served?.length ? { tasks: served } : {}),
      cpuPercent: percent(usage.cpuMicros),
      loopDelayP50Ms: usage.loopDelayP50Ms,
      loopDelayP99Ms: usage.loopDelayP99Ms,
      loopDelayMaxMs: usage.loopDelayMaxMs,
      skewMs,
    }));
    const run: ScaleRun = {
      shards,
      tasks,
      kinesis,
      loadAverage: { before: loadBefore, after: loadavg().map((x) => Math.round(x * 100) / 100) },
      allEmittedMs: {
        fromLastStart: round(allAt && allAt - lastStart),
        fromFirstStart: round(allAt && allAt - firstStart),
      },
      balancedMs: round(balancedAt && balancedAt - lastStart),
      startSpreadMs: Math.round(lastStart - Math.min(...world.tasks.map((t) => t.startedAt))),
      startBreakdown,
      busy,
      idle,
      double,
      halve,
      kill,
      perTaskCalls: {
        listShards: summarize(world.tasks.map((t) => t.kinesis.counts().ListShards ?? 0)),
        getShardIterator: summarize(world.tasks.map((t) => t.kinesis.counts().GetShardIterator ?? 0)),
        zkRequests: summarize(world.tasks.map((t) => t.zk.events.length)),
      },
      harness: {
        cpuPercent: percent(cpu.user + cpu.system),
        loopDelayP50Ms: Math.round(delay.percentile(50) / 1e6),
        loopDelayP99Ms: Math.round(delay.percentile(99) / 1e6),
        loopDelayMaxMs: Math.round(delay.max / 1e6),
        helpers: helperFigures,
      },
      servers: {
        zooKeeperCpuPercent: Math.round(((cpuMicros(zk.pid) - servers0.zk) / 1000 / wall) * 100),
        kinesisCpuPercent: Math.round(((cpuMicros(server.pid) - servers0.kinesis) / 1000 / wall) * 100),
      },
      records: {
        put: world.putIds.size,
        lost: world.lost(),
        duplicates: world.emitCount - world.emittedIds.size,
        putFailures: world.putFailures,
      },
    };
    log(
      `scale ${shards}x${tasks}: driver ${run.harness.cpuPercent} % CPU (loop delay p50/p99 ${run.harness.loopDelayP50Ms}/${run.harness.loopDelayP99Ms} ms); ` +
        helperFigures.map((h) => `${h.name} ${h.cpuPercent} % (p99 ${h.loopDelayP99Ms} ms)`).join(', ') +
        '; ' +
        `ZooKeeper ${run.servers.zooKeeperCpuPercent} %, ${kinesis} ${run.servers.kinesisCpuPercent} %; ` +
        `${run.records.put} records put, ${run.records.lost} lost, ${run.records.duplicates} duplicates; load ${run.loadAverage.after.join(' ')}`,
    );
    return run;
  } finally {
    delay.disable();
    await world.stop();
  }
}

/** Each run on a Kinesis emulator of its own, started for it and stopped after (a run leaves hundreds of shards). */
export async function scaleBench(
  runs: Required<ScaleSize>[],
  zk: ZooKeeperServer,
  startKinesis: (kinesis: ScaleKinesis) => Promise<KinesisServer>,
  quick: boolean,
  log: (line: string) => void,
): Promise<ScaleRun[]> {
  const out: ScaleRun[] = [];
  for (const size of runs) {
    const server = await startKinesis(size.kinesis);
    // The producer's puts and the ACTIVE polling are the harness's: not held to the quotas the spouts meet.
    const client = markUnmetered(kinesisClient(server));
    try {
      out.push(await scaleRun(size, zk, server, client, quick, log));
    } finally {
      client.destroy();
      await server.stop();
    }
  }
  return out;
}
