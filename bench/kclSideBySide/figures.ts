/**
 * The side by side's figures (bench/kclSideBySide.ts), from the windows' raw readings: each window's
 * rates, their medians and ranges by regime, consumer and size, the marginal cost of one more idle shard
 * (the slope between the smallest and the largest size, round by round) and the page's table. Pure.
 */
import { type Summary, summarize } from '../lib';

/** `baseline`: the spout built from an earlier commit (BENCH_KCL_BASELINE), to measure a change side by side. */
export const CONSUMERS = ['kcl', 'spout', 'baseline'] as const;
export type Consumer = (typeof CONSUMERS)[number];

/** What one window read: CPU times in µs of CPU, the window's length in s, the Kinesis calls made in it. */
export interface Reading {
  regime: string;
  round: number;
  consumer: Consumer;
  shards: number;
  /** Process start → every shard's first record handled, s. */
  pickupSeconds: number;
  seconds: number;
  cpuMicros: number;
  /** The bench's own process (the driver and the counting proxy) over the window. */
  driverCpuMicros: number;
  /** The consumer's coordination store over the window: dynalite for KCL, ZooKeeper for the spout. */
  storeCpuMicros: number;
  emulatorCpuMicros: number;
  rssMiB: number;
  /** Kinesis calls in the window by operation (`GetRecords`, ...). */
  calls: Record<string, number>;
  /** The 1-minute load average at the window's end. */
  load: number;
}

export interface Window extends Reading {
  cpuPercent: number;
  /** ms of CPU per second per shard: the process's CPU ÷ the shards. */
  cpuMsPerSecondPerShard: number;
  getRecordsPerSecond: number;
  /** The process's CPU ÷ its GetRecords calls, µs (everything it did, not only the calls). */
  cpuMicrosPerGetRecords: number;
  driverCpuPercent: number;
  storeCpuPercent: number;
  emulatorCpuPercent: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function windowOf(reading: Reading): Window {
  if (!(reading.seconds > 0)) throw new Error(`a window of ${reading.seconds} s: it must last longer than 0 s`);
  if (!(reading.shards > 0)) throw new Error(`a window of ${reading.shards} shards: it needs at least one`);
  const percent = (micros: number) => round3(micros / 1e4 / reading.seconds);
  const getRecords = reading.calls.GetRecords ?? 0;
  return {
    ...reading,
    cpuPercent: percent(reading.cpuMicros),
    cpuMsPerSecondPerShard: round3(reading.cpuMicros / 1e3 / reading.seconds / reading.shards),
    getRecordsPerSecond: round3(getRecords / reading.seconds),
    cpuMicrosPerGetRecords: getRecords ? round3(reading.cpuMicros / getRecords) : Number.NaN,
    driverCpuPercent: percent(reading.driverCpuMicros),
    storeCpuPercent: percent(reading.storeCpuMicros),
    emulatorCpuPercent: percent(reading.emulatorCpuMicros),
  };
}

export interface Row {
  regime: string;
  consumer: Consumer;
  shards: number;
  pickupSeconds: Summary;
  cpuPercent: Summary;
  cpuMsPerSecondPerShard: Summary;
  getRecordsPerSecond: Summary;
  cpuMicrosPerGetRecords: Summary;
  rssMiB: Summary;
  driverCpuPercent: Summary;
  storeCpuPercent: Summary;
  load: Summary;
}

/** `items` grouped by regime, consumer (in CONSUMERS' order) and size, in that order; empty groups left out. */
function groupsOf<T extends { regime: string; consumer: Consumer; shards: number }>(
  items: T[],
): { regime: string; consumer: Consumer; shards: number; of: T[] }[] {
  const groups: { regime: string; consumer: Consumer; shards: number; of: T[] }[] = [];
  for (const regime of unique(items.map((w) => w.regime)))
    for (const consumer of CONSUMERS)
      for (const shards of unique(items.map((w) => w.shards)).sort((a, b) => a - b)) {
        const of = items.filter((w) => w.regime === regime && w.consumer === consumer && w.shards === shards);
        if (of.length) groups.push({ regime, consumer, shards, of });
      }
  return groups;
}

/** Medians and ranges over the rounds, by regime, consumer and size, in that order. */
export function rowsOf(windows: Window[]): Row[] {
  return groupsOf(windows).map(({ regime, consumer, shards, of }) => {
    const s = (pick: (w: Window) => number) => summarize(of.map(pick).filter((v) => !Number.isNaN(v)));
    return {
      regime,
      consumer,
      shards,
      pickupSeconds: s((w) => w.pickupSeconds),
      cpuPercent: s((w) => w.cpuPercent),
      cpuMsPerSecondPerShard: s((w) => w.cpuMsPerSecondPerShard),
      getRecordsPerSecond: s((w) => w.getRecordsPerSecond),
      cpuMicrosPerGetRecords: s((w) => w.cpuMicrosPerGetRecords),
      rssMiB: s((w) => w.rssMiB),
      driverCpuPercent: s((w) => w.driverCpuPercent),
      storeCpuPercent: s((w) => w.storeCpuPercent),
      load: s((w) => w.load),
    };
  });
}

export interface Marginal {
  regime: string;
  from: number;
  to: number;
  /** ms of CPU per second that one more idle shard costs, round by round, by consumer (none: not run). */
  kcl: Summary;
  spout: Summary;
  baseline: Summary;
  /** The spout's slope ÷ KCL's, in the same round (the target: at most 0.5). */
  spoutOverKcl: Summary;
  /** The spout's slope ÷ the baseline's, in the same round. */
  spoutOverBaseline: Summary;
}

/**
 * One more idle shard's cost: in each round, (CPU at the largest size − at the smallest) ÷ the shards
 * between, in ms of CPU per second, for each consumer; rounds where a consumer lacks either size are left out.
 */
export function marginalsOf(windows: Window[]): Marginal[] {
  const sizes = unique(windows.map((w) => w.shards)).sort((a, b) => a - b);
  if (sizes.length < 2) return [];
  const [from, to] = [sizes[0], sizes[sizes.length - 1]];
  return unique(windows.map((w) => w.regime)).map((regime) => {
    const slopes: Record<Consumer, Map<number, number>> = { kcl: new Map(), spout: new Map(), baseline: new Map() };
    for (const consumer of CONSUMERS)
      for (const round of unique(windows.map((w) => w.round))) {
        const at = (shards: number) =>
          windows.find(
            (w) => w.regime === regime && w.consumer === consumer && w.round === round && w.shards === shards,
          );
        const low = at(from);
        const high = at(to);
        if (low && high) slopes[consumer].set(round, (msPerSecond(high) - msPerSecond(low)) / (to - from));
      }
    const over = (other: Consumer) =>
      summarize(
        [...slopes.spout].flatMap(([round, spout]) => {
          const slope = slopes[other].get(round);
          return slope === undefined || slope <= 0 ? [] : [spout / slope];
        }),
      );
    return {
      regime,
      from,
      to,
      kcl: summarize([...slopes.kcl.values()]),
      spout: summarize([...slopes.spout.values()]),
      baseline: summarize([...slopes.baseline.values()]),
      spoutOverKcl: over('kcl'),
      spoutOverBaseline: over('baseline'),
    };
  });
}

/** The window's CPU in ms per second, unrounded. */
const msPerSecond = (w: Reading) => w.cpuMicros / 1e3 / w.seconds;

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

const NAMES: Record<Consumer, string> = { kcl: 'KCL 2.7.0', spout: 'this spout', baseline: 'the spout before' };

/** `median (min–max)` with `digits` decimals; a single value alone; `—` for none. */
export function range(s: Summary, digits: number): string {
  if (!s.n) return '—';
  const f = (x: number) => x.toFixed(digits);
  return s.min === s.max ? f(s.median) : `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** The page's tables: one row per regime, size and consumer; then the marginal cost of an idle shard. */
export function kclTable(rows: Row[], marginals: Marginal[]): string[] {
  const lines = [
    "| CPUs | shards | consumer | pickup | process CPU | per shard | GetRecords/s | CPU per GetRecords | RSS | its store's CPU | driver CPU | load (1 min) |",
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const regime of unique(rows.map((r) => r.regime)))
    for (const shards of unique(rows.map((r) => r.shards)))
      for (const row of rows.filter((r) => r.regime === regime && r.shards === shards))
        lines.push(
          `| ${regime} | ${shards} | ${NAMES[row.consumer]} | ${range(row.pickupSeconds, 2)} s | ${range(row.cpuPercent, 1)} % | ${range(row.cpuMsPerSecondPerShard, 2)} ms/s | ${range(row.getRecordsPerSecond, 0)} | ${range(row.cpuMicrosPerGetRecords, 0)} µs | ${range(row.rssMiB, 0)} MiB | ${range(row.storeCpuPercent, 1)} % | ${range(row.driverCpuPercent, 1)} % | ${range(row.load, 1)} |`,
        );
  if (marginals.length) {
    const ran = CONSUMERS.filter((c) => marginals.some((m) => m[c].n > 0));
    const ratios = [
      ...(ran.includes('kcl') ? [['spout ÷ KCL', 'spoutOverKcl'] as const] : []),
      ...(ran.includes('baseline') ? [['spout ÷ the spout before', 'spoutOverBaseline'] as const] : []),
    ];
    lines.push(
      '',
      `| CPUs | one more idle shard, slope | ${[...ran.map((c) => NAMES[c]), ...ratios.map(([name]) => `${name}, round by round`)].join(' | ')} |`,
      `|---|---|${[...ran, ...ratios].map(() => '---|').join('')}`,
    );
    for (const m of marginals)
      lines.push(
        `| ${m.regime} | ${m.from} → ${m.to} shards | ${[...ran.map((c) => `${range(m[c], 3)} ms/s`), ...ratios.map(([, key]) => range(m[key], 2))].join(' | ')} |`,
      );
  }
  return lines;
}

/**
 * One failover: two processes of one application on a stream, one SIGKILLed once both held shards and
 * every shard had been read; for each shard the killed one held, the time from the kill until the survivor
 * handled a record of it (a record was put to every shard right after the kill).
 */
export interface FailoverReading {
  regime: string;
  round: number;
  consumer: Consumer;
  shards: number;
  /** Start of both → both holding shards and every shard read, s. */
  settleSeconds: number;
  /** Of it, the random wait between both holding shards and the kill, s. */
  delaySeconds: number;
  /** Shards each process held at the kill, the killed one first. */
  held: [number, number];
  /** Kill → the survivor's first record of each of the killed one's shards read within the timeout, s. */
  seconds: number[];
  /** The killed one's shards the survivor had not read when the timeout passed. */
  unread: number;
  timeoutSeconds: number;
  /** The 1-minute load average when the last shard was read (or the timeout passed). */
  load: number;
}

export interface FailoverRow {
  regime: string;
  consumer: Consumer;
  shards: number;
  /** The killed process's shards, round by round. */
  killedShards: Summary;
  /** Each round's median and maximum, kill → read, s; then over every shard of every round. */
  medianSeconds: Summary;
  maxSeconds: Summary;
  allSeconds: Summary;
  unread: number;
  timeoutSeconds: number;
}

/** The failovers by regime, consumer and size, in that order: the rounds' medians and maxima. */
export function failoverRowsOf(readings: FailoverReading[]): FailoverRow[] {
  return groupsOf(readings).map(({ regime, consumer, shards, of }) => {
    const read = of.filter((r) => r.seconds.length);
    return {
      regime,
      consumer,
      shards,
      killedShards: summarize(of.map((r) => r.held[0])),
      medianSeconds: summarize(read.map((r) => summarize(r.seconds).median)),
      maxSeconds: summarize(read.map((r) => Math.max(...r.seconds))),
      allSeconds: summarize(of.flatMap((r) => r.seconds)),
      unread: of.reduce((sum, r) => sum + r.unread, 0),
      timeoutSeconds: Math.max(...of.map((r) => r.timeoutSeconds)),
    };
  });
}

/** The page's failover table: one row per regime, size and consumer. */
export function failoverTable(rows: FailoverRow[]): string[] {
  const lines = [
    '| CPUs | shards | consumer | the killed one held | kill → survivor reads, median | max | not read in time |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of rows)
    lines.push(
      `| ${row.regime} | ${row.shards} | ${NAMES[row.consumer]} | ${range(row.killedShards, 0)} | ${range(row.medianSeconds, 1)} s | ${range(row.maxSeconds, 1)} s | ${row.unread} (${row.timeoutSeconds} s) |`,
    );
  return lines;
}
