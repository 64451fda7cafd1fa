/**
 * The benchmark report's shape, and the figures of docs/benchmarks-task.md and docs/benchmarks-scale.md made
 * from it (each between its own markers; the text around them is hand-written). Run directly, `npx tsx bench/report.ts <result.json>...`
 * regenerates them from those results, each section taken from the last file that has it (a partial run
 * on top of an earlier full one).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { FanOutFigures } from './fanOut';
import type { ClientFigures } from './fanOutScale';
import type { KclSideFigures } from './kclSideBySide';
import type { TrickleFigures } from './trickle';
import type { GetRecordsDecodeFigures, SpoutWireFigures } from './decode';
import type { TwoAppsFigures, TwoAppsMode } from './twoApps';
import type { BalanceFigures } from './balance';
import { type DeployFigures, deploySection } from './deploy';
import { basename, join } from 'node:path';
import { replaceBetween } from '../scripts/generated';
import { RESPONDERS, type ProtocolFigures, type Responder } from './protocol';
import type { FailoverFigures, ReshardFigures } from './resharding';
import type { CostFigures, LatencyFigures, ThroughputFigures } from './stream';
import type { Summary } from './lib';
import type { IdleMemoryRun } from './idleMemory';
import type { MemorySoakFigures } from './memorySoak';
import type { ScaleRun } from './scale';
import type { EmulatorFigures } from './scale/emulator';
import type { ScaleSimRun } from './scaleSim';
import type { StormSection } from './storm';
import { scaleSections } from './scale/report';
import { stormSection } from './storm/report';

export interface Report {
  date: string;
  machine: { cpu: string; cores: number; memoryGiB: number };
  node: string;
  commit: string;
  quick: boolean;
  /** Said under the heading (which sections came from an earlier run, when results were merged). */
  notes?: string[];
  protocol?: ProtocolFigures[];
  /** End to end in Storm's LocalCluster (bench/storm.ts). */
  storm?: StormSection;
  /** Set when results are merged: an earlier run's Storm figures for spouts \`storm\` leaves out. */
  stormEarlier?: { section: StormSection; date: string; commit: string };
  reshard?: ReshardFigures;
  failover?: FailoverFigures;
  latency?: LatencyFigures;
  cost?: CostFigures;
  throughput?: ThroughputFigures[];
  fanOut?: FanOutFigures;
  twoApps?: TwoAppsFigures;
  balance?: BalanceFigures;
  /** A new version deployed beside the running topology, several ways (bench/deploy.ts). */
  deploy?: DeployFigures;
  /** A caught-up shard's polling pause, four choices side by side (bench/trickle.ts); written by hand to its page. */
  trickle?: TrickleFigures;
  /** One process holding many fan-out subscriptions (bench/fanOutScale.ts); written by hand to its page. */
  fanOutScale?: ClientFigures[];
  /** KCL 2.7.0 and one spout process side by side, idle cost and pickup (bench/kclSideBySide.ts); written by hand to its page. */
  kclSideBySide?: KclSideFigures;
  /** RSS of one process holding idle shards (bench/idleMemory.ts); not on the page yet. */
  idleMemory?: IdleMemoryRun[];
  /** RSS of busy tasks over a long run with resharding and failed tuples (bench/memorySoak.ts). */
  memorySoak?: MemorySoakFigures;
  /** CPU per record of reading GetRecords answers (bench/decode.ts). */
  decode?: { stages: GetRecordsDecodeFigures[]; spout: SpoutWireFigures[] };
  scale?: ScaleRun[];
  scaleSim?: ScaleSimRun[];
  /** The same simulation at an earlier commit, shown beside `scaleSim` (before and after a change). */
  scaleSimBaseline?: { commit: string; runs: ScaleSimRun[] };
  emulator?: EmulatorFigures[];
}

/**
 * The pages the figures are written to, each between its `<marker>:start` and `<marker>:end` comments: what one
 * spout task carries, and a stream's shards across tasks (resharding, failover, scale). Two pages, so that
 * neither passes the manual's 30 KB.
 */
export const BENCHMARK_PAGES = {
  task: { file: join(__dirname, '../docs/benchmarks-task.md'), marker: 'bench-task' },
  scale: { file: join(__dirname, '../docs/benchmarks-scale.md'), marker: 'bench-scale' },
} as const;
export type BenchmarkPage = keyof typeof BENCHMARK_PAGES;
const fixed = (x: number, digits: number) => (digits === 0 ? String(Math.round(x)) : x.toFixed(digits));
const range = (s: Summary, unit = '', digits = 0) =>
  `${fixed(s.median, digits)}${unit} (${fixed(s.min, digits)}–${fixed(s.max, digits)}, n=${s.n})`;
const pct = (s: Summary) => `${Math.round(s.median * 100)} % (${Math.round(s.min * 100)}–${Math.round(s.max * 100)} %)`;
const ms = (s: Summary) => `${Math.round(s.median)} ms (${Math.round(s.min)}–${Math.round(s.max)}, n=${s.n})`;

/** What both pages say first: the run's machine, date and commit, and which sections came from other runs. */
function heading(r: Report): string[] {
  const out = [
    `Measured ${r.date.slice(0, 10)} on ${r.machine.cores} cores (${r.machine.cpu}), ${r.machine.memoryGiB} GiB, Node ${r.node}, commit ${r.commit}: medians (min–max, n runs).`,
    '',
  ];
  for (const note of r.notes ?? []) out.push(note, '');
  return out;
}

/** One spout task: the protocol, end to end in Storm with the sizing table, and reading GetRecords answers. */
function taskSections(r: Report): string[] {
  const out = heading(r);
  if (r.protocol) {
    out.push(
      '**Protocol** (the lean driver: raw frames over pipes, every ack a round trip waiting for its sync, from 1 s after the first tuple; ' +
        "processes alternating round by round; synthetic records; ceiling = a process that only answers the protocol through Node's event loop; " +
        'fast and slow phases: 100 ms windows split in two by rate; ratios taken within each round, then summarized):',
      '',
    );
    const names: Record<Responder, string> = {
      ceiling: 'ceiling',
      floor: 'floor: the ceiling with blocking pipe I/O, no event loop',
      stormjs: "storm.js (Storm's library)",
      spout: '**kinesis-shell-spout**, 1 shard',
      spout64: '**kinesis-shell-spout**, 64 shards',
      spoutLoop: 'kinesis-shell-spout, 1 shard, `directStdio: false`',
    };
    for (const regime of [...new Set(r.protocol.map((p) => p.regime))]) {
      out.push(
        regime === 'busy'
          ? '*Both CPUs kept busy* (two `nice -n 19` busy loops beside the run, as on a loaded worker host):'
          : '*CPUs idle* (every wake-up is slow on this VM):',
        '',
      );
      out.push(
        '| payload | process | tuples/s | fast phase / slow phase (share of time slow) | of the ceiling | µs CPU per tuple | of which user | RSS |',
        '|---|---|---|---|---|---|---|---|',
      );
      const ofRegime = r.protocol.filter((p) => p.regime === regime);
      for (const p of ofRegime) {
        for (const name of RESPONDERS) {
          const t = p.responders[name];
          if (!t) continue;
          out.push(
            `| ${p.payloadBytes} B | ${names[name]} | ${range(t.tuplesPerSecond)} | ${t.fastTuplesPerSecond.median} / ${t.slowTuplesPerSecond.median} (${Math.round(t.slowShare.median * 100)} %) | ` +
              `${pct(t.toCeiling)} | ${range(t.cpuMicrosPerTuple, '', 1)} | ${t.userCpuMicrosPerTuple.median.toFixed(1)} | ${Math.round(t.rssMiB.median)} MiB |`,
          );
        }
      }
      const dry = ofRegime.flatMap((p) =>
        RESPONDERS.filter((n) => (p.responders[n]?.emptyNextsPerSecond?.median ?? 0) > 0).map(
          (n) => `${names[n]} at ${p.payloadBytes} B (${Math.round(p.responders[n]!.emptyNextsPerSecond.median)}/s)`,
        ),
      );
      if (dry.length) out.push('', `\`next\` answered with nothing (the source ran dry): ${dry.join('; ')}.`);
      out.push(
        '',
        "| payload | spout throughput vs storm.js | spout CPU per tuple vs storm.js | driver's own ceiling (1 / its CPU per tuple, against the ceiling process) | driver's ceiling over the spout's throughput |",
        '|---|---|---|---|---|',
      );
      for (const p of ofRegime) {
        const vs = p.spoutToStormjs;
        out.push(
          `| ${p.payloadBytes} B | ${vs ? pct(vs.throughput) : 'n/a'} | ${vs ? pct(vs.cpuPerTuple) : 'n/a'} | ${range(p.driver.capacityTuplesPerSecond)} tuples/s | ` +
            `${p.driver.toSpout ? `${p.driver.toSpout.median.toFixed(1)}× (${p.driver.toSpout.min.toFixed(1)}–${p.driver.toSpout.max.toFixed(1)})` : 'n/a'} |`,
        );
      }
      out.push('');
    }
  }
  if (r.storm) out.push(...stormSection(r.storm, r.protocol), '');
  if (r.stormEarlier) {
    const { section, date, commit } = r.stormEarlier;
    out.push(
      `*The spouts that run leaves out, from an earlier one* (${date.slice(0, 10)}, commit ${commit}):`,
      ...stormSection(section, r.protocol),
      '',
    );
  }
  if (r.decode) out.push('', ...decodeSection(r.decode));
  return out;
}

/** A stream's shards across tasks: against kinesis-local, fan-out, two applications, balance, scale, the soak. */
function streamSections(r: Report): string[] {
  const out = heading(r);
  const rows: string[] = [];
  if (r.reshard) {
    rows.push(`| SplitShard → first child record emitted (target < 2 s) | ${ms(r.reshard.splitToFirstChildEmitMs)} |`);
    rows.push(`| parent's last ack → first child record emitted | ${ms(r.reshard.parentLastAckToFirstChildEmitMs)} |`);
  }
  if (r.failover) {
    rows.push(
      `| SIGKILL of 1 of 3 processes → its shards emitted again (10 s session timeout) | ${ms(r.failover.killToResumeMs)} |`,
    );
    rows.push(`| duplicates per SIGKILL | ${range(r.failover.duplicatesPerKill)} |`);
  }
  if (r.latency)
    rows.push(
      `| put → emit at idle (median / p99, ${r.latency.samples} records) | ${r.latency.medianMs} ms / ${r.latency.p99Ms} ms |`,
    );
  if (r.cost) {
    rows.push(`| GetRecords per second per idle shard | ${r.cost.idleGetRecordsPerShardPerSecond} |`);
    rows.push(
      `| ZooKeeper checkpoint writes per second per busy shard | ${r.cost.busyCheckpointWritesPerShardPerSecond} |`,
    );
  }
  for (const t of r.throughput ?? []) {
    rows.push(
      `| ${t.emulator}: ${t.records} pre-filled records (4 shards), spout acked vs the emulator's raw GetRecords read just before | ${t.spoutRecordsPerSecond.median} vs ${t.rawRecordsPerSecond.median} records/s: ${pct(t.ratio)} |`,
    );
  }
  if (rows.length)
    out.push(
      '**Against kinesis-local** (default settings unless said):',
      '',
      '| figure | value |',
      '|---|---|',
      ...rows,
    );
  if (r.fanOut) out.push('', ...fanOutSection(r.fanOut));
  if (r.twoApps) out.push('', ...twoAppsSection(r.twoApps));
  if (r.balance) out.push('', ...balanceSection(r.balance));
  if (r.deploy) out.push('', ...deploySection(r.deploy));
  out.push(...scaleSections(r));
  if (r.memorySoak) out.push('', ...memorySoakSection(r.memorySoak));
  return out;
}

function memorySoakSection(m: MemorySoakFigures): string[] {
  const minutes = (s: number) => `${Math.round((s / 60) * 10) / 10} min`;
  const loads = m.loadAverages;
  const marks = m.tasksFigures[0]?.rssAt.map((r) => r.atS) ?? [];
  const rec = m.records;
  const last = (t: MemorySoakFigures['tasksFigures'][number]) => t.samples[t.samples.length - 1];
  return [
    `**Memory over a long busy run** (bench/memorySoak.ts: ${minutes(m.seconds)}, a stream of ${m.shards} shards read by ${m.tasks} tasks, records of ${m.payloadBytes} B put at ${m.putRecordsPerSecond.achieved}/s (aiming at ${m.putRecordsPerSecond.target}), ` +
      `${Math.round(m.failRate * 100)} % of the tuples failed, a split or a merge every ${m.reshardEverySeconds} s (${m.reshards.splits} splits, ${m.reshards.merges} merges, ${m.reshards.openShardsMin}–${m.reshards.openShardsMax} open shards); ` +
      `the spout on Node ${m.spoutNode} (\`${m.nodeOptions.join(' ')}\`, \`MALLOC_ARENA_MAX=2\`); VmRSS every 10 s from the tasks' start; 1-min load average ${loads[0]} at the start, ${Math.max(...loads)} at most, ${loads[loads.length - 1]} at the end):`,
    '',
    `| task | ${marks.map((s) => `RSS at ${minutes(s)}`).join(' | ')} | RSS max | slope over the last ${minutes(m.tasksFigures[0]?.slopeWindowS ?? 0)}: RSS / anonymous / V8 heap used (MiB/min) | at the end: anonymous / file / heap used / external | records emitted first / tuples failed (its last \`stats:\` line) |`,
    `|---|${marks.map(() => '---|').join('')}---|---|---|---|`,
    ...m.tasksFigures.map(
      (t) =>
        `| ${t.task} | ${t.rssAt.map((r) => `${r.rssMiB.toFixed(1)} MiB`).join(' | ')} | ${t.rssMaxMiB.toFixed(1)} MiB | ${t.slopeMiBPerMin.toFixed(2)} / ${t.anonSlopeMiBPerMin.toFixed(2)} / ${t.heapUsedSlopeMiBPerMin.toFixed(2)} | ` +
        `${last(t).rssAnonMiB} / ${last(t).rssFileMiB} / ${last(t).heapUsedMiB} / ${last(t).externalMiB} MiB | ${t.emitted} / ${t.failed} |`,
    ),
    '',
    `Records: ${rec.put} put${rec.putUncertain ? ` (and ${rec.putUncertain} in put calls that failed, not counted)` : ''}, ${rec.emitted} emits, ${rec.failed} failed by the bolt's stand-in, ` +
      `${rec.acked} acked: **${rec.lost} lost**, ${rec.duplicates} duplicates (emitted again without a fail); the last record acked ${rec.drainSeconds} s after the producer stopped.`,
  ];
}

function fanOutSection(f: FanOutFigures): string[] {
  const out = [
    "**Fan-out against polling** (the spout's readers through the AWS SDK, a loopback server in its own process serving every shard as fast as it is read; reader CPU per record):",
    '',
    '| shards | records (per batch, payload) | fan-out: event stream over HTTP/2 | polling: GetRecords JSON over HTTP/1.1 |',
    '|---|---|---|---|',
  ];
  for (const d of f.decode)
    out.push(
      `| ${d.shards} | ${d.shards * d.recordsPerShard} (${d.recordsPerBatch}, ${d.payloadBytes} B) | ${range(d.fanOutMicrosPerRecord, ' µs', 1)} | ${range(d.pollingMicrosPerRecord, ' µs', 1)} |`,
    );
  const l = f.latency;
  if (l)
    out.push(
      '',
      `Put → emit at idle through the fan-out front (median / p99): polling ${l.polling.medianMs} ms / ${l.polling.p99Ms} ms (${l.polling.samples} records; \`idlePollIntervalMs\` 1 s bounds it), ` +
        `fan-out ${l.fanOut.medianMs} ms / ${l.fanOut.p99Ms} ms (${l.fanOut.samples} records). The front reads kinesis-local with GetRecords every ${l.frontPollMs} ms, which bounds the fan-out figure here; AWS documents about 70 ms for enhanced fan-out.`,
    );
  return out;
}

const MODE_NAMES: Record<TwoAppsMode, string> = {
  polling: 'polling, no budgets (`maxGetRecordsPerSecond` 5 + 5)',
  budgets: 'polling, budgets 2 + 2',
  fanOut: 'fan-out, two consumers',
};

function twoAppsSection(t: TwoAppsFigures): string[] {
  const out = [
    `**Two applications on one stream** (1 shard, records of ${t.payloadBytes} B put steadily in 5 batches a second, aiming at ${t.putRecordsPerSecond}/s; two spout processes, each its own application, every emit acked; ` +
      "polling through the HTTP fault proxy's Kinesis read limit, 5 GetRecords and 2 MiB per second per shard for both applications together; " +
      `fan-out through the fan-out front, each consumer its own 2 MiB/s; configurations alternating round by round; a ${t.windowSeconds} s window once both caught up; ` +
      "throttled calls from the spout's `throttledCalls` metric; medians (min–max, n rounds)):",
    '',
    '| CPUs (1-min load average, start → end) | configuration | records/s put | application | records/s emitted | GetRecords calls/s | throttled calls in the window | put → emit median | put → emit p99 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of t.runs) {
    const cpus = `${run.regime === 'busy' ? 'both busy' : 'idle'} (${run.loadAverage[0]} → ${run.loadAverage[1]})`;
    run.apps.forEach((app, i) =>
      out.push(
        `| ${cpus} | ${MODE_NAMES[run.mode]} | ${range(run.putRecordsPerSecond)} | ${i + 1} | ${range(app.recordsPerSecond)} | ${run.mode === 'fanOut' ? 'none (SubscribeToShard)' : range(app.getRecordsPerSecond, '', 1)} | ${range(app.throttledCalls)} | ${ms(app.latencyMedianMs)} | ${ms(app.latencyP99Ms)} |`,
      ),
    );
  }
  const keptUp = t.runs.every((run) =>
    run.apps.every((a) => a.recordsPerSecond.median >= 0.9 * run.putRecordsPerSecond.median),
  );
  out.push(
    '',
    `What bounds these figures: kinesis-local takes puts slowly on this shared machine, so the stream carries at most ${t.putRecordsPerSecond} records/s (the producer's own rate is in the table), far below a shard's 1 MiB/s write limit, ` +
      `and the 2 MiB/s read limit is never reached${keptUp ? ': the applications keep up in every configuration, and what differs is the throttled calls and the latency' : ''}. ` +
      "The proxy's limit is a model of the documented one (a token bucket per shard holding one second's worth: 5 calls, 2 MiB), not AWS's own accounting. " +
      `The fan-out front reads kinesis-local with GetRecords every ${t.frontPollMs} ms for each subscription, which bounds the fan-out latency here; AWS documents about 70 ms.`,
  );
  return out;
}

function balanceSection(b: BalanceFigures): string[] {
  const out = [
    `**Balance by throughput** (kinesis-local and ZooKeeper; ${b.shards} shards, one put to at ${b.hotRate} times each other's rate, 200-byte records every 0.5 s; ${b.tasks} spout processes driven as ShellSpout drives them, every emit acked, default settings but \`balance\`; one row per run, modes alternating; times from the first task's start; balanced: the tasks' put rates, as the producer put them, within ±10 % of their mean and staying there for 3 s; loads when the producer stopped in units of a cold shard's rate; then, while the loads decay, the hand-overs in the given time and how many shards were handed over more than once; lost / emitted twice without a fail / shards read by two tasks at once, all after the producer stopped and every record was delivered):`,
    '',
    '| CPUs (1-min load average, start → end) | `balance` | every shard emitted | balanced | loads | hand-overs | after the producer stopped: hand-overs (shards twice) | lost / duplicates / overlapping |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const run of b.runs)
    out.push(
      `| ${cpus(run.regime)} (${run.loadAverage[0]} → ${run.loadAverage[1]}) | ${run.mode} | ${(run.everyShardEmittedMs / 1000).toFixed(1)} s | ${run.balancedMs === undefined ? `not within ${Math.round(run.timeoutMs / 1000)} s` : `${(run.balancedMs / 1000).toFixed(1)} s`} | ${run.loads.join(' / ')} | ${run.handOvers} | ${run.quietMs ? `${run.quietHandOvers} (${run.quietMovedTwice}) in ${Math.round(run.quietMs / 1000)} s` : 'not measured'} | ${run.lost} / ${run.duplicates} / ${run.overlapping} |`,
    );
  return out;
}

const cpus = (regime: string) => (regime === 'busy' ? 'both busy' : 'idle');
const micros = (x: Summary) => range(x, ' µs', 2);
/** The 1-min load average at a set's first and last round. */
const loads = (averages: string[]) => `${averages[0]?.split(' ')[0]} → ${averages[averages.length - 1]?.split(' ')[0]}`;

function decodeSection(d: NonNullable<Report['decode']>): string[] {
  const out: string[] = [];
  if (d.stages.length)
    out.push(
      "**Reading GetRecords answers** (bench/decode.ts: one process, answers shaped as Kinesis writes them served from memory to the SDK's client; CPU µs per record, medians of alternating rounds; the SDK's share is of the path from answer to emit frame, `dataFormat` utf8):",
      '',
      '| CPUs (1-min load average) | record × per call | SDK | fast path (`fastGetRecords`) | fast / SDK | JSON.parse / base64 / Date alone | SDK share | fast path share | an empty call, SDK / fast |',
      '|---|---|---|---|---|---|---|---|---|',
      ...d.stages.map((f) => {
        const m = f.microsPerRecord;
        return `| ${cpus(f.regime)} (${loads(f.loadAverages)}) | ${f.payloadBytes} B × ${f.recordsPerBatch} | ${micros(m.sdk)} | ${micros(m.fast)} | ${(m.fast.median / m.sdk.median).toFixed(2)} | ${m.jsonParse.median.toFixed(2)} / ${m.base64.median.toFixed(2)} / ${m.dates.median.toFixed(2)} | ${pct(f.sdkShareUtf8)} | ${pct(f.fastShareUtf8)} | ${Math.round(f.emptyCallMicros.sdk.median)} / ${Math.round(f.emptyCallMicros.fast.median)} µs |`;
      }),
    );
  if (d.spout.length)
    out.push(
      '',
      "**The same in the spout process** (the lean driver over OS pipes, 4 synthetic shards, 10,000 records a call: records handed over ready-made (no decoding), or a Kinesis answer read by the SDK or by the fast path; the spout's CPU per tuple acked, medians of alternating rounds):",
      '',
      '| CPUs (1-min load average) | record | ready-made | SDK | fast path | SDK share of the CPU per tuple | fast / SDK (per round) |',
      '|---|---|---|---|---|---|---|',
      ...d.spout.map(
        (f) =>
          `| ${cpus(f.regime)} (${loads(f.loadAverages)}) | ${f.payloadBytes} B | ${micros(f.cpuMicrosPerTuple.objects)} | ${micros(f.cpuMicrosPerTuple.sdk)} | ${micros(f.cpuMicrosPerTuple.fast)} | ${pct(f.sdkShare)} | ${range(f.fastToSdk, '', 2)} |`,
      ),
    );
  return out;
}

/**
 * The sections the two pages show, in report order, that a plain `npm run bench` runs (it also has
 * `idleMemory`, kept in the results only).
 */
export const PAGE_SECTIONS = [
  'protocol',
  'storm',
  'reshard',
  'failover',
  'latency',
  'cost',
  'throughput',
  'fanOut',
  'twoApps',
  'balance',
  'deploy',
  'decode',
  'scale',
  'scaleSim',
  'emulator',
] as const;

/** Sections on the page too, after those, that `npm run bench` runs only when named (BENCH_SECTIONS): the 15-minute soak. */
export const LONG_SECTIONS = ['memorySoak'] as const;

/**
 * `report`, with each long section it lacks taken from the newest full (not quick) result in `dir` that has
 * it, and a note saying so: a plain `npm run bench` keeps the last soak's figures on the page.
 */
export function withEarlierLongSections(report: Report, dir: string): Report {
  const out: Report = { ...report, notes: [...(report.notes ?? [])] };
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('-quick.json'))
    .sort()
    .reverse();
  for (const key of LONG_SECTIONS) {
    if (out[key] !== undefined) continue;
    for (const file of files) {
      const earlier = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Report;
      if (earlier[key] === undefined || earlier.quick) continue;
      out[key] = earlier[key];
      out.notes!.push(
        `Section ${key}: from an earlier run, ${earlier.date.slice(0, 10)} on ${earlier.machine.cores} cores (${earlier.machine.cpu}), commit ${earlier.commit}.`,
      );
      break;
    }
  }
  return out;
}

/** `page` (the text of the page `which`) with the figures between its markers made from `report`. */
export function renderBenchmarks(page: string, report: Report, which: BenchmarkPage): string {
  const { file, marker } = BENCHMARK_PAGES[which];
  const body = which === 'task' ? taskSections(report) : streamSections(report);
  return replaceBetween(page, marker, body.join('\n'), `docs/${basename(file)}`);
}

/** Both pages' figures made from `report`, written in place. */
export function writeBenchmarkPages(report: Report): void {
  for (const which of Object.keys(BENCHMARK_PAGES) as BenchmarkPage[]) {
    const { file } = BENCHMARK_PAGES[which];
    writeFileSync(file, renderBenchmarks(readFileSync(file, 'utf8'), report, which));
  }
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: npx tsx bench/report.ts <result.json>...');
  const reports = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Report);
  const sections = [...PAGE_SECTIONS, ...LONG_SECTIONS];
  /** The report each section is taken from: the last that has it. */
  const sourceOf = (key: (typeof sections)[number]) => [...reports].reverse().find((r) => r[key] !== undefined);
  // The heading's run: the last with a page section (a soak run of its own does not replace it).
  const latest =
    [...reports].reverse().find((r) => PAGE_SECTIONS.some((key) => r[key] !== undefined)) ??
    reports[reports.length - 1];
  const merged: Report = Object.assign({}, ...reports, {
    date: latest.date,
    machine: latest.machine,
    node: latest.node,
    commit: latest.commit,
    quick: latest.quick,
  });
  const older = sections.filter((key) => merged[key] !== undefined && sourceOf(key) !== latest);
  const bySource = new Map<Report, string[]>();
  for (const key of older) bySource.set(sourceOf(key)!, [...(bySource.get(sourceOf(key)!) ?? []), key]);
  merged.notes = [
    ...(latest.notes ?? []),
    ...[...bySource].map(
      ([from, keys]) =>
        `Sections ${keys.join(', ')}: from ${from.date < latest.date ? 'an earlier run' : 'a run of its own'}, ${from.date.slice(0, 10)} on ${from.machine.cores} cores (${from.machine.cpu}), commit ${from.commit}.`,
    ),
  ];
  // The Storm section: the last run's, and the last earlier one measuring spouts it leaves out.
  const stormRuns = reports.filter((r) => r.storm);
  const latestStorm = stormRuns[stormRuns.length - 1]?.storm;
  const spoutsOf = (section: StormSection) => new Set(section.figures.flatMap((f) => Object.keys(f.spouts)));
  const earlier = latestStorm
    ? [...stormRuns].reverse().find((r) => [...spoutsOf(r.storm!)].some((name) => !spoutsOf(latestStorm).has(name)))
    : undefined;
  if (earlier) merged.stormEarlier = { section: earlier.storm!, date: earlier.date, commit: earlier.commit };
  // The decode section: each of its two tables from the last run that has it.
  const decodes = reports.flatMap((r) => (r.decode ? [r.decode] : []));
  if (decodes.length)
    merged.decode = {
      stages: [...decodes].reverse().find((d) => d.stages.length)?.stages ?? [],
      spout: [...decodes].reverse().find((d) => d.spout.length)?.spout ?? [],
    };
  // Figures from before the lean driver have another shape: only the current one is rendered.
  if (merged.protocol && !merged.protocol.every((p) => 'regime' in p)) delete merged.protocol;
  writeBenchmarkPages(merged);
  process.stdout.write(`docs/benchmarks-task.md and docs/benchmarks-scale.md regenerated from ${files.join(', ')}\n`);
}
