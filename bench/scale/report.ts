/** The scale figures of docs/benchmarks-scale.md (real processes, the simulation, the emulator alone) from a report. */
import type { Summary } from '../lib';
import type { ScaleRun } from '../scale';
import type { ScaleSimRun, SimPhase } from '../scaleSim';
import type { EmulatorFigures } from './emulator';
import type { PickupBreakdown } from './breakdown';

const s = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? '—' : `${(ms / 1000).toFixed(1)} s`);
const mmm = (x: Summary) => `${s(x.min)} / ${s(x.median)} / ${s(x.max)}`;
const mm = (x: Summary) => `${s(x.median)} / ${s(x.max)}`;
const mid = (x: Summary) => (Number.isNaN(x.median) ? '—' : String(x.median));
const span = (x: Summary) => (x.min === x.max ? `${x.median}` : `${x.min}–${x.max}`);

/** The size and the emulator it ran on (results from before there was a choice ran on kinesis-local). */
const label = (x: { shards: number; tasks: number; kinesis?: string }, times = ' × ') =>
  `${x.shards}${times}${x.tasks}, ${x.kinesis ?? 'kinesis-local'}`;

/** The driver's CPU and loop delay; then its helper processes', when they ran apart. */
function harness(h: ScaleRun['harness']): string {
  const driver = `${h.cpuPercent} % of a core / ${h.loopDelayP99Ms} ms`;
  if (!h.helpers?.length) return driver;
  return `${driver}; ${h.helpers.map((x) => `${x.name} ${x.cpuPercent} % / ${x.loopDelayP99Ms} ms`).join(', ')}`;
}

function breakdownLine(what: string, b: PickupBreakdown): string {
  const rtt = (op: string) => (b.kinesisRttMs[op] ? `${b.kinesisRttMs[op].median}/${b.kinesisRttMs[op].p99}` : '—');
  return (
    `| ${what} | ${s(b.toFirstIteratorMs.median)} / ${s(b.toFirstIteratorMs.max)} | ${s(b.iteratorToEmitMs.median)} / ${s(b.iteratorToEmitMs.max)} | ` +
    `${s(b.firstNotificationMs)} | ${s(b.firstListShardsMs)} | ${b.zkReads} / ${b.zkWrites} | ${b.zkRttMs.median} / ${b.zkRttMs.p99} | ` +
    `${b.slowestTask.zkRequests} (${b.slowestTask.getChildrenLeases}; ${b.slowestTask.zkRttSumMs} ms) | ${b.listShards} / ${b.getShardIterator} | ` +
    `${rtt('ListShards')} | ${rtt('GetShardIterator')} | ${rtt('GetRecords')} | ${b.untrustedTasks ?? '—'} | ${b.slowRounds ? `${b.slowRounds.count} (${s(b.slowRounds.maxMs)})` : '—'} |`
  );
}

export function scaleSections(r: {
  scale?: ScaleRun[];
  scaleSim?: ScaleSimRun[];
  scaleSimBaseline?: { commit: string; runs: ScaleSimRun[] };
  emulator?: EmulatorFigures[];
}): string[] {
  const out: string[] = [];
  if (r.scale?.length) {
    out.push(
      '',
      '**Scale** (real ZooKeeper and a Kinesis emulator: kinesis-local, or fast, ours, answering every call on its own after a fixed 15 ms; ' +
        'S shards read by T spout processes driven as ShellSpout drives them, ' +
        'session timeout 6 s, one record put to every open shard every 0.5 s, every emit acked; one row per run, in the order run; reshard pickups from the ' +
        'emulator reporting the stream ACTIVE; per task figures: median (min–max) over the tasks):',
      '',
      '| shards × tasks | start → every shard emitted (from the last task started) | → leases balanced | UpdateShardCount ×2 → new shards’ first emit (min / median / max) | ÷2 (min / median / max) | SIGKILL of one task → its shards emit again (median / max) | load average (1 min) before → after | lost / duplicates |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const x of r.scale)
      out.push(
        `| ${label(x)} | ${s(x.allEmittedMs.fromLastStart)} | ${s(x.balancedMs)} | ${mmm(x.double.firstEmitMs)} | ${mmm(x.halve.firstEmitMs)} | ` +
          `${mm(x.kill.firstEmitMs)} (${x.kill.orphans} shards) | ${x.loadAverage.before[0]} → ${x.loadAverage.after[0]} | ${x.records.lost} / ${x.records.duplicates} |`,
      );
    out.push(
      '',
      '| shards × tasks | RSS per task, idle | CPU per task, idle | ZooKeeper reads / writes per s per task, idle | the same, busy | GetRecords per s per task, idle | ListShards / GetShardIterator per task over the run | harness CPU / event-loop delay p99: the driver (older runs: with the proxies and the producer in it); the proxies’ processes, the producer’s | ZooKeeper / Kinesis emulator CPU |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const x of r.scale) {
      const total = (op: 'listShards' | 'getShardIterator') => `${x.perTaskCalls ? mid(x.perTaskCalls[op]) : '—'}`;
      out.push(
        `| ${label(x)} | ${x.idle.rssMiB.median} MiB (${span(x.idle.rssMiB)}) | ${x.idle.cpuPercent.median} % (${span(x.idle.cpuPercent)}) | ` +
          `${x.idle.zkReadsPerSecond.median} / ${x.idle.zkWritesPerSecond.median} | ${x.busy.zkReadsPerSecond.median} / ${x.busy.zkWritesPerSecond.median} | ` +
          `${x.idle.getRecordsPerSecond.median} | ${total('listShards')} / ${total('getShardIterator')} | ${harness(x.harness)} | ` +
          `${x.servers.zooKeeperCpuPercent} % / ${x.servers.kinesisCpuPercent} % |`,
      );
    }
    out.push(
      '',
      'Where the time goes (from the proxies: each shard from the event to its first GetShardIterator, i.e. found and taken, then to its first emit; ' +
        'the first watch notification and ListShards any task got or made; ZooKeeper requests of all tasks, their round trips through the proxy; ' +
        'the requests of the task whose shard came last, with its `getChildren leases/` reads and the sum of its round trips (concurrent requests overlap); Kinesis round trips median/p99 ms; tasks that logged they emit nothing because ZooKeeper had not confirmed their session recently enough; the spout’s own “shard assignment took N ms” warnings):',
      '',
      '| size, event | → first GetShardIterator (median / max) | → first emit (median / max) | first watch fired | first ListShards | ZooKeeper reads / writes | ZooKeeper round trip ms (median / p99) | slowest task: ZooKeeper requests (getChildren leases/; round trips) | ListShards / GetShardIterator | ListShards ms | GetShardIterator ms | GetRecords ms | tasks not trusting their session | slow rounds logged (longest) |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const x of r.scale) {
      out.push(breakdownLine(`${label(x, '×')}: start`, x.startBreakdown));
      out.push(breakdownLine(`${label(x, '×')}: ×2`, x.double.breakdown));
      out.push(breakdownLine(`${label(x, '×')}: ÷2`, x.halve.breakdown));
      out.push(breakdownLine(`${label(x, '×')}: SIGKILL`, x.kill.breakdown));
    }
  }
  if (r.scaleSim?.length) {
    out.push(
      '',
      '**Scale in the simulation** (test/sim: the real coordinators and spouts on the in-memory ZooKeeper and Kinesis, virtual time, no faults, ' +
        'session timeout 6 s, defaults otherwise, ListShards pages of 1,000; doubling = every open shard split at once, halving = every pair of siblings merged):',
      '',
      '| shards × tasks | start → every shard emitted | → balanced | ×2 → new shards’ first emit (min / median / max) | ÷2 (min / median / max) | kill → session expired on the server | kill → its shards emit again (median / max) | ZooKeeper requests during ×2 | cost here (wall / CPU for virtual) |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const x of r.scaleSim) {
      const zk = Object.values(x.double.zkRequests).reduce((a, b) => a + b, 0);
      out.push(
        `| ${x.shards} × ${x.tasks} | ${s(x.start.allMs)} | ${s(x.start.balancedMs)} | ${mmm(x.double.firstEmitMs)} | ${mmm(x.halve.firstEmitMs)} | ` +
          `${s(x.kill.sessionExpiredMs)} | ${mm(x.kill.firstEmitMs)} (${x.kill.orphans} shards) | ${zk} | ${x.wallSeconds} s / ${x.cpuSeconds} s for ${x.virtualSeconds} s |`,
      );
    }
  }
  if (r.scaleSim?.some((x) => x.double.zkReads !== undefined)) out.push(...zooKeeperLoad(r));
  if (r.emulator?.length) {
    out.push(
      '',
      "**The emulators alone** (one client, one call at a time, medians (min–max) in ms; the emulator's share of every figure above):",
      '',
      '| emulator, shards | ListShards, whole listing | GetShardIterator | GetRecords | DescribeStreamSummary |',
      '|---|---|---|---|---|',
    );
    const f = (x: Summary) => `${x.median} (${x.min}–${x.max})`;
    for (const e of r.emulator)
      out.push(
        `| ${e.kinesis ?? 'kinesis-local'}, ${e.shards} | ${f(e.listAllShardsMs)} | ${f(e.getShardIteratorMs)} | ${f(e.getRecordsMs)} | ${f(e.describeStreamSummaryMs)} |`,
      );
  }
  return out;
}

/** What the simulation's runs cost ZooKeeper, beside the baseline's runs of the same sizes when there are any. */
function zooKeeperLoad(r: {
  scaleSim?: ScaleSimRun[];
  scaleSimBaseline?: { commit: string; runs: ScaleSimRun[] };
}): string[] {
  const base = r.scaleSimBaseline;
  const before = (x: ScaleSimRun) => base?.runs.find((b) => b.shards === x.shards && b.tasks === x.tasks);
  const pair = (now: number | undefined, then: number | undefined) =>
    then === undefined ? `${now ?? '—'}` : `${then} → ${now ?? '—'}`;
  const rate = (n: number | undefined, x: ScaleSimRun) =>
    n === undefined ? '—' : (n / x.steady.windowSeconds / x.tasks).toFixed(2);
  const steady = (w: ScaleSimRun['steady']['busy'], x: ScaleSimRun) =>
    `${w.readsPerTaskPerSecond} / ${w.writesPerTaskPerSecond} / ${rate(w.byFolder.ping, x)}`;
  const out = [
    '',
    `**ZooKeeper load in the simulation** (the runs above${base ? `; before → after: commit ${base.commit} → this one` : ''}; ` +
      'reads = getData and getChildren by every task, from the event to the last new shard’s first emit; the settled ' +
      'windows last 20 virtual s, busy with one record put to every shard every 0.5 s, idle with none; heartbeats apart; ' +
      'JS heap = the whole simulation’s after the run, divided by the tasks):',
    '',
    '| shards × tasks | reads during ×2 | of them lease nodes | reads during ÷2 | reads after a kill | largest getChildren reply | per task per s, busy: reads / writes / heartbeats | idle: the same | JS heap per task |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const x of r.scaleSim ?? []) {
    const b = before(x);
    const leaseReads = (p: SimPhase) => p.zkByFolder?.['getData leases'];
    out.push(
      `| ${x.shards} × ${x.tasks} | ${pair(x.double.zkReads, b?.double.zkReads)} (${(x.double.zkReads / x.shards).toFixed(1)} per shard) | ` +
        `${pair(leaseReads(x.double), b && leaseReads(b.double))} | ${pair(x.halve.zkReads, b?.halve.zkReads)} | ${pair(x.kill.zkReads, b?.kill.zkReads)} | ` +
        `${x.double.largestListingBytes} B | ${steady(x.steady.busy, x)} | ${steady(x.steady.idle, x)} | ${x.heapPerTaskMiB} MiB |`,
    );
  }
  return out;
}
