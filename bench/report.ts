/** The benchmark report's shape, and the README section made from it. */
import type { ProtocolFigures, ScalingFigures, TargetFigures } from './protocol';
import type { FailoverFigures, ReshardFigures } from './resharding';
import type { CostFigures, LatencyFigures, ThroughputFigures } from './stream';
import type { Summary } from './lib';

export interface Report {
  date: string;
  machine: { cpu: string; cores: number; memoryGiB: number };
  node: string;
  commit: string;
  quick: boolean;
  protocol?: ProtocolFigures[];
  scaling?: ScalingFigures[];
  reshard?: ReshardFigures;
  failover?: FailoverFigures;
  latency?: LatencyFigures;
  cost?: CostFigures;
  throughput?: ThroughputFigures[];
}

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';
const range = (s: Summary, unit = '') => `${s.median}${unit} (${s.min}–${s.max}, n=${s.n})`;
const pct = (s: Summary) => `${Math.round(s.median * 100)} % (${Math.round(s.min * 100)}–${Math.round(s.max * 100)} %)`;
const ms = (s: Summary) => `${Math.round(s.median)} ms (${Math.round(s.min)}–${Math.round(s.max)}, n=${s.n})`;

function sections(r: Report): string[] {
  const out = [`Measured ${r.date.slice(0, 10)} on ${r.machine.cores} cores (${r.machine.cpu}), ${r.machine.memoryGiB} GiB, Node ${r.node}, commit ${r.commit}: medians (min–max, n runs).`, ''];
  if (r.protocol) {
    out.push(
      '**Protocol** (one process on real pipes, synthetic records, every ack a round trip waiting for its sync; ceiling = a process that only answers the protocol, through Node\'s event loop; ratios taken within each round, then summarized):',
      '',
    );
    out.push('| payload | process | tuples/s | of the ceiling | µs CPU per tuple |', '|---|---|---|---|---|');
    for (const p of r.protocol) {
      const row = (name: string, t: TargetFigures) =>
        out.push(`| ${p.payloadBytes} B | ${name} | ${range(t.tuplesPerSecond)} | ${pct(t.toCeiling)} | ${range(t.cpuMicrosPerTuple)} |`);
      row('ceiling', p.ceiling);
      row('floor: the ceiling with blocking pipe I/O and no event loop', p.floor);
      if (p.stormjs) row('storm.js (Storm\'s library)', p.stormjs);
      row('kinesis-shell-spout, `directStdio: false`', p.spoutLoop);
      row('**kinesis-shell-spout** (default)', p.spout);
    }
    out.push('', '| payload | spout CPU per tuple vs storm.js | direct stdio vs event loop only |', '|---|---|---|');
    for (const p of r.protocol) out.push(`| ${p.payloadBytes} B | ${p.spoutCpuToStormjs ? pct(p.spoutCpuToStormjs) : 'n/a'} | ${pct(p.directCpuToLoop)} |`);
    out.push('');
  }
  if (r.scaling) {
    out.push('**Scaling** (one process, default settings, synthetic 1 KB records):', '', '| shards held | tuples/s | peak RSS |', '|---|---|---|');
    for (const s of r.scaling) out.push(`| ${s.shards} | ${s.tuplesPerSecond} | ${s.peakRssMiB} MiB |`);
    out.push('');
  }
  const rows: string[] = [];
  if (r.reshard) {
    rows.push(`| SplitShard → first child record emitted (target < 2 s) | ${ms(r.reshard.splitToFirstChildEmitMs)} |`);
    rows.push(`| parent's last ack → first child record emitted | ${ms(r.reshard.parentLastAckToFirstChildEmitMs)} |`);
  }
  if (r.failover) {
    rows.push(`| SIGKILL of 1 of 3 processes → its shards emitted again (10 s session timeout) | ${ms(r.failover.killToResumeMs)} |`);
    rows.push(`| duplicates per SIGKILL | ${range(r.failover.duplicatesPerKill)} |`);
  }
  if (r.latency) rows.push(`| put → emit at idle (median / p99, ${r.latency.samples} records) | ${r.latency.medianMs} ms / ${r.latency.p99Ms} ms |`);
  if (r.cost) {
    rows.push(`| GetRecords per second per idle shard | ${r.cost.idleGetRecordsPerShardPerSecond} |`);
    rows.push(`| ZooKeeper checkpoint writes per second per busy shard | ${r.cost.busyCheckpointWritesPerShardPerSecond} |`);
  }
  for (const t of r.throughput ?? []) {
    rows.push(`| ${t.emulator}: ${t.records} pre-filled records (4 shards), spout acked vs the emulator's raw GetRecords read just before | ${t.spoutRecordsPerSecond.median} vs ${t.rawRecordsPerSecond.median} records/s: ${pct(t.ratio)} |`);
  }
  if (rows.length) out.push('**Against kinesis-local** (default settings unless said):', '', '| figure | value |', '|---|---|', ...rows);
  return out;
}

export function renderReadme(readme: string, report: Report): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < 0) return readme;
  return `${readme.slice(0, start)}${START}\n${sections(report).join('\n')}\n${END}${readme.slice(end + END.length)}`;
}
