import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCHMARKS_PAGE, renderBenchmarks, type Report } from '../../../bench/report';
import type { StormSection } from '../../../bench/storm';
import { perTaskTuplesPerSecond } from '../../../bench/storm/report';

const RESULTS = join(__dirname, '../../../bench/results/2026-12-01T04-43-31.json');

test("a run's figures go between docs/benchmarks.md's markers, with machine, date and commit; the prose stays", () => {
  const page = readFileSync(BENCHMARKS_PAGE, 'utf8');
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  const moved = { ...report, date: '2030-01-02T03:04:05.000Z', commit: 'abc1234' };
  const out = renderBenchmarks(page, moved);
  const [before, rest] = page.split('<!-- bench:start -->');
  const after = rest.split('<!-- bench:end -->')[1];
  expect(out.startsWith(`${before}<!-- bench:start -->\nMeasured 2030-01-02 on ${report.machine.cores} cores`)).toBe(
    true,
  );
  expect(out).toContain(`Node ${report.node}, commit abc1234`);
  expect(out.endsWith(`<!-- bench:end -->${after}`)).toBe(true);
  expect(renderBenchmarks(out, report)).toBe(renderBenchmarks(page, report));
});

test('a page without the markers is refused, not left as it was', () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  expect(() => renderBenchmarks('# Benchmarks\n', report)).toThrow('docs/benchmarks.md: needs exactly one');
});

test("the Storm section: a row per spout and max.spout.pending beside the lean driver's figures, and the sizing table from the slower regime's best pending", () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  const s = (median: number) => ({ median, min: median, max: median, n: 3 });
  const spouts = (native: number, spout: number) => ({
    native: { tuplesPerSecond: s(native), jvmCpuMicrosPerTuple: s(20), completeLatencyMs: s(3) },
    spout: {
      tuplesPerSecond: s(spout),
      jvmCpuMicrosPerTuple: s(40),
      nodeCpuMicrosPerTuple: s(15),
      completeLatencyMs: s(12.5),
    },
  });
  const storm: StormSection = {
    stormVersion: '2.8.3',
    serializer: 'org.apache.storm.multilang.JsonSerializer',
    payloadBytes: 100,
    kinesis: { shards: 4, records: 30_000 },
    rounds: 3,
    seconds: 5,
    jvmIdleCpuPercent: 7,
    loadAverage: { before: [1, 1, 1], after: [2, 2, 2] },
    figures: [
      { regime: 'idle', maxSpoutPending: 100, spouts: spouts(50_000, 8_000) },
      { regime: 'idle', maxSpoutPending: 1000, spouts: spouts(60_000, 12_000) },
      { regime: 'busy', maxSpoutPending: 100, spouts: spouts(40_000, 9_000) },
      { regime: 'busy', maxSpoutPending: 1000, spouts: spouts(45_000, 10_000) },
    ],
  };
  expect(perTaskTuplesPerSecond(storm)).toEqual({
    native: { tuples: 45_000, pending: 1000 },
    spout: { tuples: 10_000, pending: 1000 },
  });
  const out = renderBenchmarks(readFileSync(BENCHMARKS_PAGE, 'utf8'), { ...report, storm });
  // The lean driver's spout figures of the same regime and payload, from the protocol section.
  const lean = report.protocol!.find((p) => p.regime === 'idle' && p.payloadBytes === 100)!.responders.spout!;
  expect(out).toContain(
    `| 1000 | **kinesis-shell-spout**, synthetic source (1 shard) | 12000 | 40.0 | 15.0 | 12.5 ms | ${Math.round(lean.tuplesPerSecond.median)}, ${lean.cpuMicrosPerTuple.median.toFixed(1)} |`,
  );
  expect(out).toContain('| 100 | native Java spout (Storm’s own limit) | 50000 | 20.0 | — | 3.0 ms | — |');
  // 10,000 tuples/s of 100 B: 1 MB/s a task, so 10 tasks for 10 MB/s; native 4.5 MB/s, 3 tasks.
  expect(out).toContain('| one task: MB/s | 4.50 | 1.00 |');
  expect(out).toContain('| spout tasks for 10 MB/s | 3 | 10 |');
  expect(out.indexOf('**End to end in Storm**')).toBeLessThan(out.indexOf('**Against kinesis-local**'));
});
