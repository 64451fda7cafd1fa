/**
 * Where the time goes, from what the counting proxies saw on the wire: per window, each task's resident
 * memory, CPU and calls per second; per pickup (start, reshard, failover), how long each shard waited to be
 * taken (its first GetShardIterator) and then to be read (its first emit), the ZooKeeper traffic and round
 * trips in between, the listings, and when the first watch fired.
 */
import { readFileSync } from 'node:fs';
import { cpuMicros, percentile, sleep, summarize, type Summary } from '../lib';
import type { ScaleWorld } from './world';

export interface WindowCounts {
  seconds: number;
  /** Per live task. */
  rssMiB: Summary;
  cpuPercent: Summary;
  shardsHeld: Summary;
  zkReadsPerSecond: Summary;
  zkWritesPerSecond: Summary;
  getRecordsPerSecond: Summary;
  listShardsPerSecond: Summary;
  getShardIteratorPerSecond: Summary;
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

/** Measures every live task over `ms`. */
export async function windowCounts(world: ScaleWorld, ms: number): Promise<WindowCounts> {
  const live = world.tasks.filter((t) => t.alive);
  const from = performance.now();
  const cpu0 = live.map((t) => cpuMicros(t.driver.pid));
  await sleep(ms);
  const to = performance.now();
  await world.syncCounters();
  const seconds = (to - from) / 1000;
  const held = world.holdings();
  const per = (f: (i: number) => number) => summarize(live.map((_, i) => Math.round(f(i) * 100) / 100));
  const rate = (i: number, op: string) => (live[i].kinesis.counts(from, to)[op] ?? 0) / seconds;
  return {
    seconds: Math.round(seconds * 10) / 10,
    rssMiB: per((i) => rssMiB(live[i].driver.pid)),
    cpuPercent: per((i) => ((cpuMicros(live[i].driver.pid) - cpu0[i]) / 1000 / (to - from)) * 100),
    shardsHeld: per((i) => held?.get(live[i].driver.pid) ?? NaN),
    zkReadsPerSecond: per((i) => live[i].zk.counts(from, to).reads / seconds),
    zkWritesPerSecond: per((i) => live[i].zk.counts(from, to).writes / seconds),
    getRecordsPerSecond: per((i) => rate(i, 'GetRecords')),
    listShardsPerSecond: per((i) => rate(i, 'ListShards')),
    getShardIteratorPerSecond: per((i) => rate(i, 'GetShardIterator')),
  };
}

export interface PickupBreakdown {
  /** Per shard: event -> its first GetShardIterator (found and taken), and that -> its first emit (read). */
  toFirstIteratorMs: Summary;
  iteratorToEmitMs: Summary;
  /** Event -> the first watch notification any task got, and the first ListShards any task made. */
  firstNotificationMs: number | undefined;
  firstListShardsMs: number | undefined;
  /** All tasks, from the event to the last shard's first emit. */
  windowMs: number;
  zkReads: number;
  zkWrites: number;
  zkNotifications: number;
  /** Requests by type and folder (`getData checkpoints`, `getChildren leases`, ...). */
  zkByOp: Record<string, number>;
  zkRttMs: { median: number; p99: number };
  /** Of the task that took longest: its ZooKeeper requests, and the round trips' total (as if serial). */
  slowestTask: { zkRequests: number; zkRttSumMs: number; getChildrenLeases: number };
  listShards: number;
  getShardIterator: number;
  /**
   * Tasks that logged "not emitting ... ZooKeeper has not confirmed this process's session recently enough"
   * in the window (the warning is rate-limited: a task that lost trust, not how often).
   */
  untrustedTasks: number;
  /** The spout's own "shard assignment took N ms" warnings in the window (slow rounds): how many, the longest. */
  slowRounds: { count: number; maxMs: number };
  kinesisRttMs: Record<string, { median: number; p99: number; n: number }>;
}

const ms = (x: number) => Math.round(x);

/** From the proxies' counts, brought up to date first (`to` is past). */
export async function pickupBreakdown(
  world: ScaleWorld,
  shards: string[],
  from: number,
  to: number,
): Promise<PickupBreakdown> {
  await world.syncCounters();
  const end = to + 1;
  const zkEvents = world.tasks.flatMap((t) => t.zk.events.filter((e) => e.at >= from && e.at < end));
  const calls = world.tasks.flatMap((t) => t.kinesis.calls.filter((c) => c.at >= from && c.at < end));
  const firstIterator = new Map<string, number>();
  for (const c of calls)
    if (c.op === 'GetShardIterator' && c.shardId && !firstIterator.has(c.shardId)) firstIterator.set(c.shardId, c.at);
  const toIterator: number[] = [];
  const toEmit: number[] = [];
  for (const shard of shards) {
    const it = firstIterator.get(shard);
    const emit = world.firstEmit(shard, from);
    if (it !== undefined) toIterator.push(it - from);
    if (it !== undefined && emit !== undefined) toEmit.push(emit - it);
  }
  const notifications = world.tasks.flatMap((t) => t.zk.notifications.filter((at) => at >= from && at < end));
  const listings = calls.filter((c) => c.op === 'ListShards').map((c) => c.at);
  const byOp: Record<string, number> = {};
  for (const e of zkEvents) {
    const key = e.folder ? `${e.op} ${e.folder}` : e.op;
    byOp[key] = (byOp[key] ?? 0) + 1;
  }
  const rtts = zkEvents.map((e) => e.rttMs).filter((x): x is number => x !== undefined);
  // The task whose last shard was emitted last.
  let slowest = world.tasks[0];
  let latest = -Infinity;
  for (const shard of shards) {
    const list = world.emits.get(shard) ?? [];
    const first = list.find(([at]) => at >= from);
    if (first && first[0] > latest) {
      latest = first[0];
      slowest = world.tasks.find((t) => t.driver.pid === first[1]) ?? slowest;
    }
  }
  const own = slowest.zk.events.filter((e) => e.at >= from && e.at < end);
  const kinesisRttMs: PickupBreakdown['kinesisRttMs'] = {};
  for (const op of new Set(calls.map((c) => c.op))) {
    const values = calls.filter((c) => c.op === op && c.rttMs !== undefined).map((c) => c.rttMs!);
    if (values.length)
      kinesisRttMs[op] = { median: ms(percentile(values, 50)), p99: ms(percentile(values, 99)), n: values.length };
  }
  const wallFrom = performance.timeOrigin + from;
  const wallTo = performance.timeOrigin + end;
  const untrustedTasks = world.tasks.filter((t) =>
    t.driver.logs.some((l) => l.at >= wallFrom && l.at < wallTo && /^not emitting from .*trust/.test(l.msg)),
  ).length;
  const rounds = world.tasks.flatMap((t) =>
    t.driver.logs
      .filter((l) => l.at >= wallFrom && l.at < wallTo)
      .map((l) => /^shard assignment took (\d+) ms/.exec(l.msg))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1])),
  );
  return {
    untrustedTasks,
    slowRounds: { count: rounds.length, maxMs: rounds.length ? Math.max(...rounds) : 0 },
    toFirstIteratorMs: summarize(toIterator.map(ms)),
    iteratorToEmitMs: summarize(toEmit.map(ms)),
    firstNotificationMs: notifications.length ? ms(Math.min(...notifications) - from) : undefined,
    firstListShardsMs: listings.length ? ms(Math.min(...listings) - from) : undefined,
    windowMs: ms(to - from),
    zkReads: zkEvents.filter((e) => e.kind === 'read').length,
    zkWrites: zkEvents.filter((e) => e.kind === 'write').length,
    zkNotifications: notifications.length,
    zkByOp: byOp,
    zkRttMs: rtts.length
      ? { median: ms(percentile(rtts, 50) * 10) / 10, p99: ms(percentile(rtts, 99)) }
      : { median: NaN, p99: NaN },
    slowestTask: {
      zkRequests: own.length,
      zkRttSumMs: ms(own.reduce((sum, e) => sum + (e.rttMs ?? 0), 0)),
      getChildrenLeases: own.filter((e) => (e.op === 'getChildren' || e.op === 'getChildren2') && e.folder === 'leases')
        .length,
    },
    listShards: listings.length,
    getShardIterator: calls.filter((c) => c.op === 'GetShardIterator').length,
    kinesisRttMs,
  };
}
