/** docs/benchmarks-task.md's end-to-end figures in Storm, beside the lean driver's, and the sizing table made from them. */
import type { Summary } from '../lib';
import type { ProtocolFigures, Responder } from '../protocol';
import { STORM_SPOUTS, type StormSection, type StormSpout } from '../storm';

/** What each spout is, in the section's words (the synthetic source's shards as that run had them). */
function spoutNames(s: Pick<StormSection, 'synthetic'>): Record<StormSpout, string> {
  const shards = s.synthetic ? `${s.synthetic.shards} shards` : '1 shard';
  return {
    native: 'native Java spout (Storm’s own limit)',
    stormjs: 'storm.js in a ShellSpout',
    spout: `**kinesis-shell-spout**, synthetic source (${shards})`,
    spoutCompact: `**kinesis-shell-spout**, synthetic source (${shards}), compact serializer`,
    spoutCompactWide: `kinesis-shell-spout, synthetic source (${s.synthetic?.wideShards ?? '?'} shards), compact serializer`,
    spoutKinesis: '**kinesis-shell-spout** against kinesis-local',
    spoutPaced: '**kinesis-shell-spout**, synthetic source paced at the kinesis-local run’s rate',
  };
}
/** The lean driver's responder measuring the same process, where there is one. */
const LEAN: Partial<Record<StormSpout, Responder>> = { stormjs: 'stormjs', spout: 'spout' };
const n0 = (s: Summary | undefined) => (s && !Number.isNaN(s.median) ? String(Math.round(s.median)) : '—');
const n1 = (s: Summary | undefined) => (s && !Number.isNaN(s.median) ? s.median.toFixed(1) : '—');
const ratio = (s: Summary) =>
  `${s.median.toFixed(2)}×${s.min !== s.max ? ` (${s.min.toFixed(2)}–${s.max.toFixed(2)}, n=${s.n})` : ''}`;
const spread = (s: Summary) => (s.min !== s.max ? ` (${Math.round(s.min)}–${Math.round(s.max)})` : '');
/** The target rates of the sizing table, in MB/s. */
const SIZING_MBPS = [1, 5, 10, 50, 100];

export function stormSection(s: StormSection, protocol: ProtocolFigures[] | undefined): string[] {
  const NAMES = spoutNames(s);
  const out = [
    '',
    `**End to end in Storm** (Storm ${s.stormVersion} LocalCluster in its own JVM, \`-Xmx768m -XX:+UseSerialGC\`; one worker, one spout task → one acking bolt task, shuffle grouping; ` +
      `multilang serializer \`${s.serializer}\` (the compact rows: \`io.github.kinesisshellspout.CompactSerializer\`); ${s.payloadBytes} B records (data as UTF-8 text in the tuple); each run a topology of its own, ${s.seconds} s measured after warm-up, spouts alternating in each of ${s.rounds} rounds; ` +
      'tuples/s counted by the bolt; CPU per tuple from /proc (the JVM: the whole LocalCluster, ' +
      `${s.jvmIdleCpuPercent} % of a core with no topology; Node: the ShellSpout's process); complete latency: ${s.latencyFrom === 'spout' ? "the mean over every tuple tree acked in the window, timed in the spout task from its emit to its `ack` (Storm's definition; not Storm's `__complete-latency` V2 gauge, which is the mean of the last three sampled trees in whole ms)" : "not measured in this run (it read Storm's `__complete-latency` V2 gauge, the mean of the last three sampled trees in whole ms)"}; against kinesis-local: ${s.kinesis.shards} shards pre-filled with ${s.kinesis.records} records, each run reading them from the start, its warm-up ended at a quarter read and its window at 90 % (runs with fewer than 100 tuples in the window left out); ` +
      `${s.synthetic ? `the synthetic source: ${s.synthetic.shards} shards, each read as Kinesis allows (5 calls a second of up to 10,000 records), so at most ${s.synthetic.ceilingPerSecond} records/s (${s.synthetic.wideShards} shards: ${s.synthetic.wideCeilingPerSecond}); ` : 'the synthetic source: one shard of 20,000 records a call, at most 100,000 records/s; '}` +
      `lean driver: the protocol section's figures for the same process, without Storm; load average ${s.loadAverage.before.join(' / ')} before, ${s.loadAverage.after.join(' / ')} after):`,
  ];
  for (const regime of [...new Set(s.figures.map((f) => f.regime))]) {
    out.push(
      '',
      regime === 'busy' ? '*Both CPUs kept busy* (two `nice -n 19` busy loops):' : '*CPUs idle*:',
      '',
      '| max.spout.pending | spout | tuples/s per spout task | µs CPU per tuple: worker JVM | µs CPU per tuple: Node | complete latency | lean driver: tuples/s, µs Node CPU per tuple |',
      '|---|---|---|---|---|---|---|',
    );
    const lean = protocol?.find((p) => p.regime === regime && p.payloadBytes === s.payloadBytes);
    for (const f of s.figures.filter((x) => x.regime === regime)) {
      for (const name of STORM_SPOUTS) {
        const t = f.spouts[name];
        if (!t) continue;
        const responder = LEAN[name];
        const l = responder ? lean?.responders[responder] : undefined;
        out.push(
          `| ${f.maxSpoutPending} | ${NAMES[name]} | ${n0(t.tuplesPerSecond)}${spread(t.tuplesPerSecond)} | ${n1(t.jvmCpuMicrosPerTuple)} | ${n1(t.nodeCpuMicrosPerTuple)} | ` +
            `${s.latencyFrom === 'spout' ? `${n1(t.completeLatencyMs)} ms` : '—'} | ${l ? `${n0(l.tuplesPerSecond)}, ${n1(l.cpuMicrosPerTuple)}` : '—'} |`,
        );
      }
    }
    const reading = s.figures.filter((x) => x.regime === regime && x.kinesisOverPaced);
    if (reading.length)
      out.push(
        '',
        `What reading Kinesis costs: CPU per tuple against kinesis-local over the paced synthetic source's, each kinesis-local run with the paced run right after it (target: Node ≤ 1.3×): ${reading
          .map(
            (f) =>
              `pending ${f.maxSpoutPending}: Node ${ratio(f.kinesisOverPaced!.nodeCpuPerTuple)}, JVM ${ratio(f.kinesisOverPaced!.jvmCpuPerTuple)}`,
          )
          .join('; ')}.`,
      );
  }
  out.push(...sizing(s));
  return out;
}

/** Per spout, the best median tuples/s over max.spout.pending in the slower regime: what one task can be counted on for. */
export function perTaskTuplesPerSecond(
  s: StormSection,
): Partial<Record<StormSpout, { tuples: number; pending: number }>> {
  const best: Partial<Record<StormSpout, { tuples: number; pending: number }>> = {};
  for (const name of STORM_SPOUTS) {
    const byRegime = new Map<string, { tuples: number; pending: number }>();
    for (const f of s.figures) {
      const t = f.spouts[name]?.tuplesPerSecond.median;
      if (t === undefined || Number.isNaN(t)) continue;
      const seen = byRegime.get(f.regime);
      if (!seen || t > seen.tuples) byRegime.set(f.regime, { tuples: t, pending: f.maxSpoutPending });
    }
    const slowest = [...byRegime.values()].sort((a, b) => a.tuples - b.tuples)[0];
    if (slowest) best[name] = slowest;
  }
  return best;
}

function sizing(s: StormSection): string[] {
  const NAMES = spoutNames(s);
  const best = perTaskTuplesPerSecond(s);
  // The paced source's rate is the kinesis-local run's, not a capacity.
  const names = STORM_SPOUTS.filter((n) => best[n] && n !== 'spoutPaced');
  if (!names.length) return [];
  const mbps = (n: StormSpout) => (best[n]!.tuples * s.payloadBytes) / 1e6;
  return [
    '',
    `**Sizing** (${s.payloadBytes} B records; per spout task, the best median over max.spout.pending in the slower of the two CPU regimes; ` +
      'spout tasks = the rate over one task’s, rounded up; a real stream also needs a shard per 2 MB/s read and a bolt that keeps up):',
    '',
    `| | ${names.map((n) => NAMES[n]).join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
    `| one task: tuples/s (max.spout.pending) | ${names.map((n) => `${Math.round(best[n]!.tuples)} (${best[n]!.pending})`).join(' | ')} |`,
    `| one task: MB/s | ${names.map((n) => mbps(n).toFixed(2)).join(' | ')} |`,
    ...SIZING_MBPS.map(
      (rate) => `| spout tasks for ${rate} MB/s | ${names.map((n) => Math.ceil(rate / mbps(n))).join(' | ')} |`,
    ),
  ];
}
