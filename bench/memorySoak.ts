/**
 * Resident memory of spout processes over a long busy run: a stream of 4 shards read by 3 tasks (each its own
 * process, driven as ShellSpout drives it, started as KinesisShellSpout starts it: bench/lib.ts), records of
 * 1 KB put steadily (BENCH_SOAK_PUT_RATE records/s, default 200), 2 % of the tuples failed (BENCH_SOAK_FAIL_RATE,
 * the spout re-emits them), a split or a merge every 45 s in turn (BENCH_SOAK_RESHARD_SECONDS; the open shards
 * kept between 3 and 8), for BENCH_SOAK_SECONDS (default 900; 50 with BENCH_QUICK=1). Every 10 s each task's
 * VmRSS, RssAnon and RssFile (/proc/<pid>/status) and the heap and external memory of its last `stats:` line
 * (logged every 10 s here). Then the producer and the resharding stop and every record put must be acked:
 * the records lost (put, never acked) and the duplicates (emitted again without having been failed) are counted.
 * BENCH_HEAPSNAPSHOT=300,900 starts the processes with `--heapsnapshot-signal=SIGUSR2` and has each write a heap
 * snapshot (into the current directory) at those seconds of the run; BENCH_SOAK_SMAPS=1 keeps each task's
 * /proc/<pid>/smaps_rollup at every sample.
 * Run alone: `npx tsx bench/memorySoak.ts` (after `npm run build`), or `BENCH_SECTIONS=memorySoak npm run bench`.
 */
import { readFileSync } from 'node:fs';
import { type KinesisClient, PutRecordsCommand, type Shard } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, mergeShards, openShards, splitShard } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { seededRandom } from '../test/helpers/seededRandom';
import { spoutNodeVersion } from '../test/helpers/spoutNode';
import { type Emit, StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, benchNodeOptions, runStandalone, sleep } from './lib';

export interface MemorySoakOptions {
  seconds: number;
  shards: number;
  tasks: number;
  putRecordsPerSecond: number;
  payloadBytes: number;
  failRate: number;
  reshardEverySeconds: number;
  sampleEverySeconds: number;
  /** Seconds of the run at which each task writes a heap snapshot (none by default). */
  heapSnapshotAt: number[];
  /** Keep /proc/<pid>/smaps_rollup with every sample. */
  smaps: boolean;
  seed: number;
}

export interface SoakSample {
  /** Seconds since the tasks started. */
  atS: number;
  rssMiB: number;
  rssAnonMiB: number;
  rssFileMiB: number;
  /** From the task's last `stats:` line (at most 10 s old). */
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  shards: number;
  inMemory: number;
  smapsRollup?: string;
}

export interface SoakTask {
  task: number;
  /** VmRSS at 1, 5, 10 and 15 minutes (those within the run) and at its end. */
  rssAt: { atS: number; rssMiB: number }[];
  rssMaxMiB: number;
  /** Least-squares slope of VmRSS (and of RssAnon, and of the V8 heap used) over the last 5 minutes (the last half of a shorter run), MiB a minute. */
  slopeMiBPerMin: number;
  anonSlopeMiBPerMin: number;
  heapUsedSlopeMiBPerMin: number;
  slopeWindowS: number;
  emitted: number;
  failed: number;
  samples: SoakSample[];
}

export interface MemorySoakFigures {
  seconds: number;
  shards: number;
  tasks: number;
  payloadBytes: number;
  failRate: number;
  reshardEverySeconds: number;
  /** The node that ran the spout processes (SPOUT_NODE), and its options. */
  spoutNode: string;
  nodeOptions: string[];
  putRecordsPerSecond: { target: number; achieved: number };
  reshards: { splits: number; merges: number; failed: number; openShardsMin: number; openShardsMax: number };
  records: {
    put: number;
    /** Put calls that failed as a whole: their records may or may not be in the stream, and are not counted. */
    putUncertain: number;
    emitted: number;
    failed: number;
    acked: number;
    lost: number;
    /** Emits of a record beyond its first and its re-emits after a fail. */
    duplicates: number;
    /** Seconds from the end of the run to the last record put acked. */
    drainSeconds: number;
  };
  /** 1-min load averages, one a minute from the start (the machine may be shared). */
  loadAverages: number[];
  tasksFigures: SoakTask[];
}

const MARKS_S = [60, 300, 600, 900];
const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(VmRSS|RssAnon|RssFile):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]) / 1024;
  }
  return out;
}

const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** Least-squares slope of y over x. */
export function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

/** The sample nearest `atS`. */
const nearest = (samples: SoakSample[], atS: number) =>
  samples.reduce((best, s) => (Math.abs(s.atS - atS) < Math.abs(best.atS - atS) ? s : best));

/** Adjacent open shards (a's range ends where b's begins). */
function adjacentPairs(open: Shard[]): [Shard, Shard][] {
  const sorted = [...open].sort((a, b) =>
    BigInt(a.HashKeyRange!.StartingHashKey!) < BigInt(b.HashKeyRange!.StartingHashKey!) ? -1 : 1,
  );
  const pairs: [Shard, Shard][] = [];
  for (let i = 0; i + 1 < sorted.length; i += 1)
    if (BigInt(sorted[i].HashKeyRange!.EndingHashKey!) + 1n === BigInt(sorted[i + 1].HashKeyRange!.StartingHashKey!))
      pairs.push([sorted[i], sorted[i + 1]]);
  return pairs;
}

const width = (s: Shard) => BigInt(s.HashKeyRange!.EndingHashKey!) - BigInt(s.HashKeyRange!.StartingHashKey!);

export async function memorySoakBench(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  options: MemorySoakOptions,
  log: (line: string) => void,
): Promise<MemorySoakFigures> {
  const stream = `soak-${Date.now()}`;
  await createStream(client, stream, options.shards);
  const taskIds = Array.from({ length: options.tasks }, (_, i) => i + 1);
  const application = `soak-${Date.now()}`;
  const nodeOptions = [
    ...(options.heapSnapshotAt.length ? ['--heapsnapshot-signal=SIGUSR2'] : []),
    ...benchNodeOptions(),
  ];
  const drivers = await Promise.all(
    taskIds.map((taskId) =>
      StormDriver.start({
        conf: benchConf(zk, server, stream, application, { statsIntervalMs: 10_000 }),
        taskId,
        componentTasks: taskIds,
        nodeOptions,
        keepHistory: false,
      }),
    ),
  );
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;

  // Records: number n, `n|` and padding to payloadBytes. What was put, emitted, failed, acked.
  const putAt = new Map<number, number>();
  let putUncertain = 0;
  const emitsOf = new Map<number, number>();
  const failsOf = new Map<number, number>();
  const acked = new Set<number>();
  let emitted = 0;
  let failed = 0;
  let lastAckAt = 0;
  const random = seededRandom(options.seed);
  const numberOf = (emit: Emit) => Number(String(emit.tuple[1]).slice(0, String(emit.tuple[1]).indexOf('|')));

  let stopped = false;
  const pumps = drivers.map((driver) =>
    driver.pump(() => stopped, {
      timeoutMs: (options.seconds + 600) * 1000,
      onEmit: async (emit) => {
        const n = numberOf(emit);
        emitted += 1;
        emitsOf.set(n, (emitsOf.get(n) ?? 0) + 1);
        if (random() < options.failRate) {
          failed += 1;
          failsOf.set(n, (failsOf.get(n) ?? 0) + 1);
          await driver.fail(emit.id);
        } else {
          await driver.ack(emit.id);
          acked.add(n);
          lastAckAt = performance.now();
        }
      },
    }),
  );

  // The producer: every 100 ms a tenth of a second's records, spread over the hash space by random keys.
  let producing = true;
  let next = 0;
  const padding = 'x'.repeat(options.payloadBytes);
  const perTick = Math.max(1, Math.round(options.putRecordsPerSecond / 10));
  // A put slower than a tick does not slow the producer: up to 4 calls in flight.
  const inFlight = new Set<Promise<void>>();
  const put = async (batch: number[]) => {
    try {
      const answer = await client.send(
        new PutRecordsCommand({
          StreamName: stream,
          Records: batch.map((n) => {
            const head = `${n}|`;
            return {
              PartitionKey: `k${Math.floor(random() * 1e9)}`,
              Data: Buffer.from(head + padding.slice(head.length)),
            };
          }),
        }),
      );
      (answer.Records ?? []).forEach((r, i) => {
        if (r.SequenceNumber) putAt.set(batch[i], performance.now());
      });
    } catch {
      putUncertain += batch.length;
    }
  };
  const producer = (async () => {
    let tick = performance.now();
    while (producing) {
      while (inFlight.size >= 4) await Promise.race(inFlight);
      const call = put(Array.from({ length: perTick }, () => next++)).finally(() => inFlight.delete(call));
      inFlight.add(call);
      tick += 100;
      const wait = tick - performance.now();
      if (wait > 0) await sleep(wait);
      else tick = performance.now();
    }
    await Promise.all(inFlight);
  })();
  const producedUntil = () => (producing ? elapsedS() : options.seconds);

  // Resharding: a split or a merge in turn, the open shards kept between 3 and 8.
  const reshards = { splits: 0, merges: 0, failed: 0, openShardsMin: options.shards, openShardsMax: options.shards };
  let resharding = true;
  const resharder = (async () => {
    let splitNext = true;
    for (let at = options.reshardEverySeconds; resharding; at += options.reshardEverySeconds) {
      while (resharding && elapsedS() < at) await sleep(200);
      if (!resharding) break;
      try {
        const open = openShards(await listAllShards(client, stream));
        const split: boolean = open.length <= 3 ? true : open.length >= 8 ? false : splitNext;
        if (split) {
          const widest = open.reduce((a, b) => (width(b) > width(a) ? b : a));
          await splitShard(client, stream, widest.ShardId!);
          reshards.splits += 1;
        } else {
          const pairs = adjacentPairs(open);
          const [a, b] = pairs.reduce((p, q) => (width(q[0]) + width(q[1]) < width(p[0]) + width(p[1]) ? q : p));
          await mergeShards(client, stream, a.ShardId!, b.ShardId!);
          reshards.merges += 1;
        }
        splitNext = !split;
        const now = openShards(await listAllShards(client, stream)).length;
        reshards.openShardsMin = Math.min(reshards.openShardsMin, now);
        reshards.openShardsMax = Math.max(reshards.openShardsMax, now);
        log(`memory soak: ${Math.round(elapsedS())} s: ${split ? 'split' : 'merge'}, ${now} open shards`);
      } catch (err) {
        reshards.failed += 1;
        log(`memory soak: reshard failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  })();

  // Sampling, heap snapshots, load averages.
  const samples = new Map<number, SoakSample[]>(taskIds.map((t) => [t, []]));
  const loadAverages = [loadAverage()];
  const snapshotsDue = [...options.heapSnapshotAt].sort((a, b) => a - b);
  try {
    for (let at = options.sampleEverySeconds; at <= options.seconds; at += options.sampleEverySeconds) {
      while (elapsedS() < at) await sleep(Math.min(1000, (at - elapsedS()) * 1000));
      drivers.forEach((driver, i) => {
        const st = status(driver.pid);
        const stats = driver.lastStats() ?? {};
        samples.get(taskIds[i])!.push({
          atS: Math.round(elapsedS()),
          rssMiB: round1(st.VmRSS ?? NaN),
          rssAnonMiB: round1(st.RssAnon ?? NaN),
          rssFileMiB: round1(st.RssFile ?? NaN),
          heapUsedMiB: stats.heapUsedMiB ?? NaN,
          heapTotalMiB: stats.heapTotalMiB ?? NaN,
          externalMiB: stats.externalMiB ?? NaN,
          shards: stats.shards ?? NaN,
          inMemory: stats.inMemory ?? NaN,
          ...(options.smaps ? { smapsRollup: readFileSync(`/proc/${driver.pid}/smaps_rollup`, 'utf8') } : {}),
        });
      });
      if (at % 60 === 0) {
        loadAverages.push(loadAverage());
        const rss = drivers.map((_, i) => samples.get(taskIds[i])!.at(-1)!.rssMiB).join(' / ');
        const heap = drivers.map((_, i) => samples.get(taskIds[i])!.at(-1)!.heapUsedMiB).join(' / ');
        log(
          `memory soak: ${at} s: RSS ${rss} MiB, heap used ${heap} MiB; put ${putAt.size}, emitted ${emitted}, acked ${acked.size}; load ${loadAverages.at(-1)}`,
        );
      }
      while (snapshotsDue.length && snapshotsDue[0] <= at) {
        snapshotsDue.shift();
        for (const driver of drivers) driver.signal('SIGUSR2');
        log(`memory soak: ${at} s: heap snapshots asked for`);
      }
    }
  } finally {
    producing = false;
    resharding = false;
    await producer;
    await resharder;
  }

  // Every record put must be acked, however long its retries take (a cap: 3 minutes).
  const endedAt = performance.now();
  const unacked = () => [...putAt.keys()].filter((n) => !acked.has(n));
  const drainDeadline = Date.now() + 180_000;
  while (unacked().length && Date.now() < drainDeadline) await sleep(1000);
  const lost = unacked();
  stopped = true;
  await Promise.all(pumps);
  const perTask = drivers.map((driver) => driver.lastStats() ?? {});
  await Promise.all(drivers.map((driver) => driver.stop(3_000)));
  if (lost.length) log(`memory soak: ${lost.length} records put and never acked, e.g. ${lost.slice(0, 10).join(', ')}`);

  let duplicates = 0;
  for (const [n, count] of emitsOf) duplicates += Math.max(0, count - 1 - (failsOf.get(n) ?? 0));
  const windowS = Math.min(300, options.seconds / 2);
  const tasksFigures: SoakTask[] = taskIds.map((task, i) => {
    const own = samples.get(task)!;
    const last = own.at(-1)!;
    const marks = [...MARKS_S.filter((m) => m < last.atS - 5), last.atS];
    const recent = own.filter((s) => s.atS >= last.atS - windowS);
    const perMinute = (pick: (s: SoakSample) => number) =>
      round3(slope(recent.map((s) => [s.atS / 60, pick(s)] as [number, number])));
    return {
      task,
      rssAt: marks.map((m) => ({ atS: nearest(own, m).atS, rssMiB: nearest(own, m).rssMiB })),
      rssMaxMiB: Math.max(...own.map((s) => s.rssMiB)),
      slopeMiBPerMin: perMinute((s) => s.rssMiB),
      anonSlopeMiBPerMin: perMinute((s) => s.rssAnonMiB),
      heapUsedSlopeMiBPerMin: perMinute((s) => s.heapUsedMiB),
      slopeWindowS: windowS,
      emitted: perTask[i].emitted ?? NaN,
      failed: perTask[i].failed ?? NaN,
      samples: own,
    };
  });
  const figures: MemorySoakFigures = {
    seconds: options.seconds,
    shards: options.shards,
    tasks: options.tasks,
    payloadBytes: options.payloadBytes,
    failRate: options.failRate,
    reshardEverySeconds: options.reshardEverySeconds,
    spoutNode: spoutNodeVersion(),
    nodeOptions,
    putRecordsPerSecond: {
      target: options.putRecordsPerSecond,
      achieved: Math.round(putAt.size / producedUntil()),
    },
    reshards,
    records: {
      put: putAt.size,
      putUncertain,
      emitted,
      failed,
      acked: acked.size,
      lost: lost.length,
      duplicates,
      drainSeconds: round1(Math.max(0, lastAckAt - endedAt) / 1000),
    },
    loadAverages: [...loadAverages, loadAverage()],
    tasksFigures,
  };
  for (const t of tasksFigures)
    log(
      `memory soak: task ${t.task}: RSS ${t.rssAt.map((r) => `${r.rssMiB} at ${r.atS} s`).join(', ')}; max ${t.rssMaxMiB}; ` +
        `slope over the last ${windowS} s ${t.slopeMiBPerMin} MiB/min (anonymous ${t.anonSlopeMiBPerMin}, heap used ${t.heapUsedSlopeMiBPerMin})`,
    );
  const r = figures.records;
  log(
    `memory soak: put ${r.put} (${figures.putRecordsPerSecond.achieved}/s, ${r.putUncertain} uncertain), emitted ${r.emitted}, failed ${r.failed}, acked ${r.acked}, lost ${r.lost}, duplicates ${r.duplicates}; ` +
      `${reshards.splits} splits, ${reshards.merges} merges (${reshards.failed} failed), ${reshards.openShardsMin}–${reshards.openShardsMax} open shards; load ${figures.loadAverages.join(', ')}`,
  );
  return figures;
}

/** The options from the environment (BENCH_SOAK_*, BENCH_HEAPSNAPSHOT, BENCH_QUICK). */
export function soakOptions(quick: boolean): MemorySoakOptions {
  const env = process.env;
  return {
    seconds: Number(env.BENCH_SOAK_SECONDS ?? (quick ? 50 : 900)),
    shards: 4,
    tasks: 3,
    putRecordsPerSecond: Number(env.BENCH_SOAK_PUT_RATE ?? 200),
    payloadBytes: 1024,
    failRate: Number(env.BENCH_SOAK_FAIL_RATE ?? 0.02),
    reshardEverySeconds: Number(env.BENCH_SOAK_RESHARD_SECONDS ?? 45),
    sampleEverySeconds: 10,
    heapSnapshotAt: (env.BENCH_HEAPSNAPSHOT ?? '').split(',').filter(Boolean).map(Number),
    smaps: env.BENCH_SOAK_SMAPS === '1',
    seed: Number(env.BENCH_SOAK_SEED ?? 1),
  };
}

if (require.main === module)
  runStandalone(async (zk, server, client, log) => {
    const figures = await memorySoakBench(zk, server, client, soakOptions(process.env.BENCH_QUICK === '1'), log);
    if (process.env.BENCH_SOAK_OUT)
      require('node:fs').writeFileSync(process.env.BENCH_SOAK_OUT, `${JSON.stringify(figures, null, 2)}\n`);
  });
