/**
 * The order jest starts test files in, so that the two workers finish together. Jest's own order (failed
 * first, then the longest by the durations it cached in an earlier run, and without a cache the largest
 * file first) has two faults on CI's fresh clone: with no cache, file size says little (a 130-line soak or
 * balance file runs a minute, a 500-line unit file a second), so a long integration file could start last
 * and leave the other worker idle; and it may start two end-to-end files side by side, the second then
 * waiting on the first's Maven build (one lock for every build: maven.ts).
 *
 * So: a file jest has a duration for keeps it; one it has none for is given its tier's (end-to-end, then
 * simulation, then integration, then unit), the larger file first within a tier. Failed files still come
 * first. Then the end-to-end files are spread out: at most one among the first two files to start, the
 * rest one in every two after it, so that no worker waits on Maven's lock while the other builds.
 */
const Sequencer = require('@jest/test-sequencer').default;

/**
 * A file's duration in seconds when jest has none, by where it lives: about what a long file there takes.
 * The simulation files are CPU-bound and a few take minutes (1,000 seeds at ~0.1-0.2 s of CPU each, measured
 * on the shared machine): before the integration files, which mostly wait.
 */
const TIER_SECONDS = [
  ['/test/e2e/', 120],
  ['/test/cluster/', 120],
  ['/test/sim/', 60],
  ['/test/integration/', 40],
  ['/test/unit/', 1],
];

function tierSeconds(path) {
  const tier = TIER_SECONDS.find(([dir]) => path.includes(dir));
  return tier ? tier[1] : 1;
}

const isEndToEnd = (test) => test.path.includes('/test/e2e/');

class TieredSequencer extends Sequencer {
  sort(tests) {
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    const keyed = tests.map((test) => {
      const cached = this.time(test);
      test.duration = cached;
      return {
        test,
        failed: Boolean(this.hasFailed(test)),
        // ms, as jest caches them; a tier's estimate a little under a measured file of that length.
        ms: cached ?? tierSeconds(test.path) * 1000 + size(test) / 1000,
      };
    });
    keyed.sort((a, b) => (a.failed !== b.failed ? (a.failed ? -1 : 1) : b.ms - a.ms));
    const ordered = keyed.map((k) => k.test);
    const endToEnd = ordered.filter(isEndToEnd);
    const others = ordered.filter((t) => !isEndToEnd(t));
    const spread = [];
    while (endToEnd.length > 0 || others.length > 0) {
      if (endToEnd.length > 0) spread.push(endToEnd.shift());
      if (others.length > 0) spread.push(others.shift());
    }
    return spread;
  }
}

module.exports = TieredSequencer;
