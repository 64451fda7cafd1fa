import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemorySoakFigures } from '../../../bench/memorySoak';
import {
  BENCHMARK_PAGES,
  type BenchmarkPage,
  renderBenchmarks,
  type Report,
  withEarlierLongSections,
} from '../../../bench/report';
import type { TwoAppsFigures } from '../../../bench/twoApps';
import type { StormSection } from '../../../bench/storm';
import { perTaskTuplesPerSecond } from '../../../bench/storm/report';
import { deploySection } from '../../../bench/deploy';
import { Regime } from '../../../bench/protocol';

const RESULTS = join(__dirname, '../../../bench/results/2026-12-01T04-43-31.json');

const page = (which: BenchmarkPage) => readFileSync(BENCHMARK_PAGES[which].file, 'utf8');

test.each(Object.keys(BENCHMARK_PAGES) as BenchmarkPage[])(
  "a run's figures go between docs/benchmarks-%s.md's markers, with machine, date and commit; the prose stays",
  (which) => {
    const text = page(which);
    const { marker } = BENCHMARK_PAGES[which];
    const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
    const moved = { ...report, date: '2030-01-02T03:04:05.000Z', commit: 'abc1234' };
    const out = renderBenchmarks(text, moved, which);
    const [before, rest] = text.split(`<!-- ${marker}:start -->`);
    const after = rest.split(`<!-- ${marker}:end -->`)[1];
    expect(
      out.startsWith(`${before}<!-- ${marker}:start -->\nMeasured 2030-01-02 on ${report.machine.cores} cores`),
    ).toBe(true);
    expect(out).toContain(`Node ${report.node}, commit abc1234`);
    expect(out.endsWith(`<!-- ${marker}:end -->${after}`)).toBe(true);
    expect(renderBenchmarks(out, report, which)).toBe(renderBenchmarks(text, report, which));
  },
);

test('each section is on one page: the protocol and Storm on the task page, resharding and scale on the other', () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  const task = renderBenchmarks(page('task'), report, 'task');
  const scale = renderBenchmarks(page('scale'), report, 'scale');
  expect(task).toContain('**Protocol**');
  expect(scale).not.toContain('**Protocol**');
  expect(scale).toContain('**Against kinesis-local**');
  expect(task).not.toContain('**Against kinesis-local**');
});

test('a page without the markers is refused, not left as it was', () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  expect(() => renderBenchmarks('# Benchmarks\n', report, 'task')).toThrow(
    'docs/benchmarks-task.md: needs exactly one',
  );
  expect(() => renderBenchmarks(page('task'), report, 'scale')).toThrow('docs/benchmarks-scale.md: needs exactly one');
});

const summary = (median: number) => ({ median, min: median - 1, max: median + 1, n: 3 });
const app = (records: number, throttled: number, latency: number) => ({
  recordsPerSecond: summary(records),
  throttledCalls: summary(throttled),
  getRecordsPerSecond: summary(3.5),
  latencyMedianMs: summary(latency),
  latencyP99Ms: summary(latency * 3),
});

test('two applications on one stream: one row per application, configuration and CPU regime, and what bounds them', () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  const twoApps: TwoAppsFigures = {
    shards: 1,
    putRecordsPerSecond: 50,
    payloadBytes: 1000,
    warmupSeconds: 5,
    windowSeconds: 20,
    frontPollMs: 50,
    runs: [
      {
        regime: 'idle',
        mode: 'polling',
        putRecordsPerSecond: summary(50),
        apps: [app(50, 40, 300), app(49, 38, 310)],
        loadAverage: [3.5, 4],
      },
      {
        regime: 'idle',
        mode: 'budgets',
        putRecordsPerSecond: summary(50),
        apps: [app(50, 0, 400), app(50, 0, 410)],
        loadAverage: [3.5, 4],
      },
      {
        regime: 'busy',
        mode: 'fanOut',
        putRecordsPerSecond: summary(48),
        apps: [app(20, 0, 120), app(48, 0, 130)],
        loadAverage: [5, 6.25],
      },
    ],
  };
  const out = renderBenchmarks(page('scale'), { ...report, twoApps }, 'scale');
  const rows = out.split('\n').filter((line) => line.startsWith('| idle (') || line.startsWith('| both busy ('));
  expect(rows).toEqual([
    '| idle (3.5 → 4) | polling, no budgets (`maxGetRecordsPerSecond` 5 + 5) | 50 (49–51, n=3) | 1 | 50 (49–51, n=3) | 3.5 (2.5–4.5, n=3) | 40 (39–41, n=3) | 300 ms (299–301, n=3) | 900 ms (899–901, n=3) |',
    '| idle (3.5 → 4) | polling, no budgets (`maxGetRecordsPerSecond` 5 + 5) | 50 (49–51, n=3) | 2 | 49 (48–50, n=3) | 3.5 (2.5–4.5, n=3) | 38 (37–39, n=3) | 310 ms (309–311, n=3) | 930 ms (929–931, n=3) |',
    '| idle (3.5 → 4) | polling, budgets 2 + 2 | 50 (49–51, n=3) | 1 | 50 (49–51, n=3) | 3.5 (2.5–4.5, n=3) | 0 (-1–1, n=3) | 400 ms (399–401, n=3) | 1200 ms (1199–1201, n=3) |',
    '| idle (3.5 → 4) | polling, budgets 2 + 2 | 50 (49–51, n=3) | 2 | 50 (49–51, n=3) | 3.5 (2.5–4.5, n=3) | 0 (-1–1, n=3) | 410 ms (409–411, n=3) | 1230 ms (1229–1231, n=3) |',
    '| both busy (5 → 6.25) | fan-out, two consumers | 48 (47–49, n=3) | 1 | 20 (19–21, n=3) | none (SubscribeToShard) | 0 (-1–1, n=3) | 120 ms (119–121, n=3) | 360 ms (359–361, n=3) |',
    '| both busy (5 → 6.25) | fan-out, two consumers | 48 (47–49, n=3) | 2 | 48 (47–49, n=3) | none (SubscribeToShard) | 0 (-1–1, n=3) | 130 ms (129–131, n=3) | 390 ms (389–391, n=3) |',
  ]);
  expect(out).toContain(
    '**Two applications on one stream** (1 shard, records of 1000 B put steadily in 5 batches a second, aiming at 50/s;',
  );
  expect(out).toContain('GetRecords every 50 ms for each subscription');
  // One application fell behind the producer: the page does not claim that all kept up.
  expect(out).not.toContain('keep up in every configuration');
  twoApps.runs[2].apps[0].recordsPerSecond = summary(47);
  expect(renderBenchmarks(out, { ...report, twoApps }, 'scale')).toContain('keep up in every configuration');
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
    latencyFrom: 'spout',
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
  const out = renderBenchmarks(page('task'), { ...report, storm }, 'task');
  // The lean driver's spout figures of the same regime and payload, from the protocol section.
  const lean = report.protocol!.find((p) => p.regime === 'idle' && p.payloadBytes === 100)!.responders.spout!;
  expect(out).toContain(
    `| 1000 | **kinesis-shell-spout**, synthetic source (1 shard) | 12000 | 40.0 | 15.0 | 12.5 ms | ${Math.round(lean.tuplesPerSecond.median)}, ${lean.cpuMicrosPerTuple.median.toFixed(1)} |`,
  );
  expect(out).toContain('| 100 | native Java spout (Storm’s own limit) | 50000 | 20.0 | — | 3.0 ms | — |');
  // 10,000 tuples/s of 100 B: 1 MB/s a task, so 10 tasks for 10 MB/s; native 4.5 MB/s, 3 tasks.
  expect(out).toContain('| one task: MB/s | 4.50 | 1.00 |');
  expect(out).toContain('| spout tasks for 10 MB/s | 3 | 10 |');
  expect(out.indexOf('**Protocol**')).toBeLessThan(out.indexOf('**End to end in Storm**'));
  expect(out).not.toContain('**Against kinesis-local**');
});

describe('the memory soak', () => {
  const sample = (atS: number, rssMiB: number) => ({
    atS,
    rssMiB,
    rssAnonMiB: rssMiB - 50,
    rssFileMiB: 50,
    heapUsedMiB: 15,
    heapTotalMiB: 22,
    externalMiB: 3,
    shards: 2,
    inMemory: 10,
  });
  const soak: MemorySoakFigures = {
    seconds: 900,
    shards: 4,
    tasks: 1,
    payloadBytes: 1024,
    failRate: 0.02,
    reshardEverySeconds: 45,
    spoutNode: 'v24.22.3',
    nodeOptions: ['--max-semi-space-size=2'],
    putRecordsPerSecond: { target: 200, achieved: 199 },
    reshards: { splits: 10, merges: 9, failed: 0, openShardsMin: 4, openShardsMax: 5 },
    records: {
      put: 179_000,
      putUncertain: 0,
      emitted: 183_000,
      failed: 3_600,
      acked: 179_000,
      lost: 0,
      duplicates: 12,
      drainSeconds: 1.5,
    },
    loadAverages: [2.5, 4, 3],
    tasksFigures: [
      {
        task: 1,
        rssAt: [
          { atS: 60, rssMiB: 98.5 },
          { atS: 300, rssMiB: 104 },
          { atS: 600, rssMiB: 110 },
          { atS: 900, rssMiB: 111 },
        ],
        rssMaxMiB: 112,
        slopeMiBPerMin: 0.2,
        anonSlopeMiBPerMin: 0.15,
        heapUsedSlopeMiBPerMin: 0.01,
        slopeWindowS: 300,
        emitted: 61_000,
        failed: 1_200,
        samples: [sample(60, 98.5), sample(900, 111)],
      },
    ],
  };

  test('a row per task: RSS at each minute mark, its max and slope, and the records lost and duplicated', () => {
    const report = { ...(JSON.parse(readFileSync(RESULTS, 'utf8')) as Report), memorySoak: soak };
    const out = renderBenchmarks(page('scale'), report, 'scale');
    expect(out).toContain('| task | RSS at 1 min | RSS at 5 min | RSS at 10 min | RSS at 15 min | RSS max |');
    expect(out).toContain('| 1 | 98.5 MiB | 104.0 MiB | 110.0 MiB | 111.0 MiB | 112.0 MiB | 0.20 / 0.15 / 0.01 |');
    expect(out).toContain('**0 lost**, 12 duplicates');
    expect(out).toContain('10 splits, 9 merges, 4–5 open shards');
  });

  test("a run without the soak keeps the newest full run's soak figures, said to be older; a quick run's are not taken", () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
    try {
      const base = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
      const at = (date: string, extra: Partial<Report>) => ({ ...base, date, commit: date.slice(0, 4), ...extra });
      writeFileSync(join(dir, '1.json'), JSON.stringify(at('2001-01-01T00:00:00Z', { memorySoak: soak })));
      const newer = { ...soak, seconds: 600 };
      writeFileSync(join(dir, '2.json'), JSON.stringify(at('2002-01-01T00:00:00Z', { memorySoak: newer })));
      writeFileSync(
        join(dir, '3-quick.json'),
        JSON.stringify(at('2003-01-01T00:00:00Z', { quick: true, memorySoak: { ...soak, seconds: 50 } })),
      );
      const kept = withEarlierLongSections(base, dir);
      expect(kept.memorySoak?.seconds).toBe(600);
      expect(kept.notes?.at(-1)).toMatch(/^Section memorySoak: from an earlier run, 2002-01-01 .* commit 2002\.$/);
      const own = withEarlierLongSections({ ...base, memorySoak: soak }, dir);
      expect(own.memorySoak).toBe(soak);
      expect(own.notes).toEqual(base.notes ?? []);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});

test('deploying a new version: one row per way and regime, each run in order, the sums of what must be 0', () => {
  const run = (longestWaitMs: number, duplicates: number) => ({
    way: 'greenThenKill' as const,
    regime: Regime.Idle,
    waitSeconds: 30,
    longestWaitMs,
    steadyMs: 1200,
    duplicates,
    lost: 0,
    overlapping: 0,
    loadAverage: [1.5, 2] as [number, number],
  });
  const rows = deploySection({ shards: 8, tasks: 2, ackWithinMs: 20, runs: [run(2600, 0), run(1300, 3)] });
  expect(rows.at(-1)).toBe(
    '| idle, 1.5–2 | submit green; then `storm kill blue` (its default wait) | 30 s | 2.6, 1.3 | 1.2, 1.2 | 3 / 0 / 0 |',
  );
});
