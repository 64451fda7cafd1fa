/**
 * The simulation with every task at `delivery: "at-most-once"` (tracked): no record is ever emitted twice
 * (`twice`), and none before a checkpoint past it is written (`uncovered`), whatever the faults. 100 seeds
 * here (about 20 s of CPU); SIM_DELIVERY=at-most-once with simulation.test.ts runs more, or replays one.
 */
import { describeReport, runSeeds, seedPlan } from './seeds';

const AT_MOST_ONCE_SEEDS = 100;

describe('deterministic simulation, at most once', () => {
  it(
    `keeps every invariant over ${AT_MOST_ONCE_SEEDS} seeds, nothing emitted twice`,
    async () => {
      const plan = { ...seedPlan({}), count: AT_MOST_ONCE_SEEDS, delivery: 'at-most-once' as const };
      const report = await runSeeds(plan, (text) => process.stdout.write(text));
      const summary = describeReport(report, plan);
      if (report.firstFailure) throw new Error(summary);
    },
    60_000 + AT_MOST_ONCE_SEEDS * 1_000,
  );
});
