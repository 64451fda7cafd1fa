/** The order jest starts test files in (test/helpers/sequencer.js): longest first, end-to-end files apart. */
// jest loads the sequencer as CommonJS (as it loads jest.config.js): required, not imported.
const TieredSequencer = require('../helpers/sequencer.js');

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { cache: boolean }; hasteFS: { getSize(path: string): number } };
}

/** Test files under /repo with their sizes; the cache (durations, failures) as given. */
function order(files: Record<string, number>, cached: Record<string, number> = {}, failed: string[] = []): string[] {
  const context = { config: { cache: false }, hasteFS: { getSize: (path: string) => files[path.slice(6)] } };
  const tests: FakeTest[] = Object.keys(files).map((path) => ({ path: `/repo/${path}`, context }));
  const sequencer = new TieredSequencer({});
  sequencer.time = (test: FakeTest) => cached[test.path.slice(6)];
  sequencer.hasFailed = (test: FakeTest) => failed.includes(test.path.slice(6));
  return (sequencer.sort(tests) as FakeTest[]).map((t) => t.path.slice(6));
}

test('without a cache: tiers before file size, so a small simulation or integration file starts before a large unit file', () => {
  expect(
    order({
      'test/unit/big.test.ts': 40_000,
      'test/sim/simulation.test.ts': 5_000,
      'test/integration/soak.test.ts': 4_000,
      'test/integration/tools.test.ts': 20_000,
    }),
  ).toEqual([
    'test/sim/simulation.test.ts',
    'test/integration/tools.test.ts',
    'test/integration/soak.test.ts',
    'test/unit/big.test.ts',
  ]);
});

test("with jest's durations: the longest first, a file without one placed by its tier's estimate", () => {
  expect(
    order(
      {
        'test/unit/a.test.ts': 1_000,
        'test/integration/fast.test.ts': 1_000,
        'test/integration/slow.test.ts': 1_000,
        'test/integration/new.test.ts': 1_000,
      },
      { 'test/unit/a.test.ts': 200, 'test/integration/fast.test.ts': 10_000, 'test/integration/slow.test.ts': 90_000 },
    ),
  ).toEqual([
    'test/integration/slow.test.ts',
    'test/integration/new.test.ts',
    'test/integration/fast.test.ts',
    'test/unit/a.test.ts',
  ]);
});

test('a file that failed last time first', () => {
  expect(
    order(
      { 'test/integration/slow.test.ts': 1_000, 'test/unit/broken.test.ts': 1_000 },
      { 'test/integration/slow.test.ts': 90_000, 'test/unit/broken.test.ts': 100 },
      ['test/unit/broken.test.ts'],
    ),
  ).toEqual(['test/unit/broken.test.ts', 'test/integration/slow.test.ts']);
});

test('end-to-end files never two in a row while others are left: both workers do not start on Maven', () => {
  const files = {
    'test/e2e/topology.test.ts': 9_000,
    'test/e2e/metrics.test.ts': 6_000,
    'test/e2e/clojure.test.ts': 3_000,
    'test/integration/faults.test.ts': 12_000,
    'test/integration/spout.test.ts': 11_000,
    'test/unit/a.test.ts': 500,
  };
  expect(order(files)).toEqual([
    'test/e2e/topology.test.ts',
    'test/integration/faults.test.ts',
    'test/e2e/metrics.test.ts',
    'test/integration/spout.test.ts',
    'test/e2e/clojure.test.ts',
    'test/unit/a.test.ts',
  ]);
});
