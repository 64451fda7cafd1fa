import fc from 'fast-check';
import {
  type Consumer,
  type FailoverReading,
  failoverRowsOf,
  failoverTable,
  kclTable,
  marginalsOf,
  range,
  type Reading,
  rowsOf,
  windowOf,
} from '../../../bench/kclSideBySide/figures';
import { statCpuMicros, statusRssMiB } from '../../../bench/lib';

/** A stat line as the kernel writes it: pid, (comm), then state and 49 more fields; utime and stime 14th and 15th. */
function statLine(comm: string, utime: number, stime: number): string {
  const after = ['S', ...Array.from({ length: 10 }, (_, i) => String(i + 1)), String(utime), String(stime)];
  return `4242 (${comm}) ${[...after, ...Array.from({ length: 37 }, () => '0')].join(' ')}\n`;
}

describe('/proc readings', () => {
  test('CPU time is user + system, in µs, whatever the command name holds', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 15 }),
        fc.nat(1e9),
        fc.nat(1e9),
        (comm, utime, stime) =>
          Math.abs(statCpuMicros(statLine(comm, utime, stime)) - (utime + stime) * 10_000) < 1e-3 * (utime + stime + 1),
      ),
    );
    expect(statCpuMicros(statLine('java) (x', 7, 3))).toBe(100_000);
    expect(() => statCpuMicros('not a stat line')).toThrow(/not a \/proc\/<pid>\/stat line/);
  });

  test('RSS is the VmRSS line, in MiB', () => {
    const status = 'Name:\tjava\nVmHWM:\t  400000 kB\nVmRSS:\t  262144 kB\nThreads:\t80\n';
    expect(statusRssMiB(status)).toBe(256);
    expect(() => statusRssMiB('Name:\tzombie\n')).toThrow(/no VmRSS line/);
  });
});

function reading(
  consumer: Consumer,
  shards: number,
  round: number,
  cpuPercent: number,
  getRecords = shards * 30,
): Reading {
  return {
    regime: 'idle',
    round,
    consumer,
    shards,
    pickupSeconds: 1,
    seconds: 30,
    cpuMicros: cpuPercent * 1e4 * 30,
    driverCpuMicros: 0,
    storeCpuMicros: 0,
    emulatorCpuMicros: 0,
    rssMiB: 100,
    calls: { GetRecords: getRecords },
    load: 1,
  };
}

describe('window figures', () => {
  test('a window: CPU %, per shard in ms/s, calls per second and CPU per call', () => {
    const w = windowOf(reading('spout', 64, 0, 6.4, 64 * 30));
    expect(w.cpuPercent).toBe(6.4);
    expect(w.cpuMsPerSecondPerShard).toBe(1);
    expect(w.getRecordsPerSecond).toBe(64);
    expect(w.cpuMicrosPerGetRecords).toBe(1_000);
    expect(Number.isNaN(windowOf({ ...reading('kcl', 4, 0, 1), calls: {} }).cpuMicrosPerGetRecords)).toBe(true);
    expect(() => windowOf({ ...reading('kcl', 4, 0, 1), seconds: 0 })).toThrow(/must last longer than 0 s/);
  });

  test('the marginal cost of an idle shard is the slope a + b × shards has: b, for any rounds and sizes', () => {
    fc.assert(
      fc.property(
        fc.record({
          kcl: fc.tuple(fc.double({ min: 0, max: 20, noNaN: true }), fc.double({ min: 0.01, max: 1, noNaN: true })),
          spout: fc.tuple(fc.double({ min: 0, max: 20, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
          baseline: fc.tuple(
            fc.double({ min: 0, max: 20, noNaN: true }),
            fc.double({ min: 0.01, max: 1, noNaN: true }),
          ),
        }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 512 }),
        fc.integer({ min: 1, max: 512 }),
        (lines, rounds, a, b) => {
          fc.pre(a !== b);
          const windows = [];
          for (let round = 0; round < rounds; round += 1)
            for (const consumer of ['kcl', 'spout', 'baseline'] as const)
              for (const shards of [a, b]) {
                // ms/s of CPU = base + slope × shards; the window's CPU % is a tenth of it.
                const [base, slope] = lines[consumer];
                windows.push(windowOf(reading(consumer, shards, round, (base + slope * shards) / 10)));
              }
          const [m] = marginalsOf(windows);
          const close = (x: number, y: number) => Math.abs(x - y) < 1e-3 + 1e-3 * Math.abs(y);
          return (
            m.from === Math.min(a, b) &&
            m.to === Math.max(a, b) &&
            close(m.kcl.median, lines.kcl[1]) &&
            close(m.spout.median, lines.spout[1]) &&
            close(m.baseline.median, lines.baseline[1]) &&
            m.spoutOverKcl.n === rounds &&
            close(m.spoutOverKcl.median, lines.spout[1] / lines.kcl[1]) &&
            m.spoutOverBaseline.n === rounds &&
            close(m.spoutOverBaseline.median, lines.spout[1] / lines.baseline[1])
          );
        },
      ),
    );
  });

  test('rounds without both sizes of a consumer give no slope; one size gives no marginals', () => {
    const windows = [reading('kcl', 64, 0, 6), reading('kcl', 256, 0, 12), reading('spout', 64, 0, 5)].map(windowOf);
    const [m] = marginalsOf(windows);
    expect(m.kcl.median).toBeCloseTo(60 / 192, 2);
    expect(m.spout.n).toBe(0);
    expect(m.spoutOverKcl.n).toBe(0);
    expect(marginalsOf([windowOf(reading('kcl', 64, 0, 6))])).toEqual([]);
  });
});

describe('the page table', () => {
  test('a row per regime, size and consumer with medians and ranges; then the slopes', () => {
    const windows = [
      reading('kcl', 64, 0, 6),
      reading('kcl', 64, 1, 7),
      reading('kcl', 256, 0, 12),
      reading('kcl', 256, 1, 13),
      reading('spout', 64, 0, 5),
      reading('spout', 64, 1, 5),
      reading('spout', 256, 0, 8),
      reading('spout', 256, 1, 9),
    ].map(windowOf);
    const lines = kclTable(rowsOf(windows), marginalsOf(windows));
    expect(lines[2]).toMatch(
      /^\| idle \| 64 \| KCL 2\.7\.0 \| 1\.00 s \| 7\.0 \(6\.0–7\.0\) % \| 1\.09 \(0\.94–1\.09\) ms\/s \|/,
    );
    expect(lines[3]).toMatch(/^\| idle \| 64 \| this spout \| 1\.00 s \| 5\.0 % \|/);
    expect(lines.filter((l) => l.startsWith('| idle |'))).toHaveLength(5);
    expect(lines[lines.length - 1]).toBe(
      '| idle | 64 → 256 shards | 0.313 ms/s | 0.208 (0.156–0.208) ms/s | 0.67 (0.50–0.67) |',
    );
    expect(range({ median: 1, min: 1, max: 1, n: 0 }, 2)).toBe('—');
  });

  test('the spout beside an earlier build of itself, without KCL: their slopes and ratio only', () => {
    const windows = [
      reading('baseline', 64, 0, 6),
      reading('baseline', 256, 0, 12),
      reading('spout', 64, 0, 5),
      reading('spout', 256, 0, 8),
    ].map(windowOf);
    const lines = kclTable(rowsOf(windows), marginalsOf(windows));
    expect(lines).toContain(
      '| CPUs | one more idle shard, slope | this spout | the spout before | spout ÷ the spout before, round by round |',
    );
    expect(lines[lines.length - 1]).toBe('| idle | 64 → 256 shards | 0.156 ms/s | 0.313 ms/s | 0.50 |');
  });
});

function failover(consumer: Consumer, round: number, seconds: number[], unread = 0): FailoverReading {
  return {
    regime: 'idle',
    round,
    consumer,
    shards: 64,
    settleSeconds: 100,
    delaySeconds: 10,
    held: [seconds.length + unread, 64 - seconds.length - unread],
    seconds,
    unread,
    timeoutSeconds: 120,
    load: 1,
  };
}

describe('failover figures', () => {
  test("each round's median and maximum, their ranges over the rounds; the unread summed", () => {
    const rows = failoverRowsOf([
      failover('spout', 0, [10.4, 10.9, 11.2]),
      failover('kcl', 0, [31, 22, 40, 25]),
      failover('kcl', 1, [20, 21, 35], 2),
    ]);
    expect(rows.map((r) => r.consumer)).toEqual(['kcl', 'spout']);
    const [kcl, spout] = rows;
    expect(kcl.medianSeconds).toEqual({ median: 31, min: 21, max: 31, n: 2 });
    expect(kcl.maxSeconds).toEqual({ median: 40, min: 35, max: 40, n: 2 });
    expect(kcl.allSeconds.n).toBe(7);
    expect(kcl.unread).toBe(2);
    expect(kcl.killedShards).toEqual({ median: 5, min: 4, max: 5, n: 2 });
    expect(spout.medianSeconds.median).toBe(10.9);
    expect(failoverTable(rows)).toEqual([
      '| CPUs | shards | consumer | the killed one held | kill → survivor reads, median | max | not read in time |',
      '|---|---|---|---|---|---|---|',
      '| idle | 64 | KCL 2.7.0 | 5 (4–5) | 31.0 (21.0–31.0) s | 40.0 (35.0–40.0) s | 2 (120 s) |',
      '| idle | 64 | this spout | 3 | 10.9 s | 11.2 s | 0 (120 s) |',
    ]);
  });

  test('a round where nothing was read in time counts its shards as unread, not as a median', () => {
    const [row] = failoverRowsOf([failover('kcl', 0, [], 30), failover('kcl', 1, [12, 14])]);
    expect(row.medianSeconds).toEqual({ median: 14, min: 14, max: 14, n: 1 });
    expect(row.unread).toBe(30);
    expect(failoverTable([row])[2]).toBe('| idle | 64 | KCL 2.7.0 | 30 (2–30) | 14.0 s | 14.0 s | 30 (120 s) |');
  });
});
