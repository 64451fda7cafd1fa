/**
 * The simulation with a tight `maxCheckpointWritesPerSecond` (1: each of the 2–4 tasks writes one periodic
 * checkpoint a second, against up to 20 a second per shard at the drawn intervals): deferred writes leave
 * checkpoints older, never lose a record, never move one back, never let a child be read before its parents
 * end; and planned runs emit nothing again on a hand-over, whose last checkpoint is never deferred. Chaos
 * and planned seeds both. SIM_CHECKPOINT_CAP with simulation.test.ts runs more, or replays one.
 */
import { describeReport, runSeeds, seedPlan } from './seeds';

const SEEDS = 100;

describe('deterministic simulation, checkpoint writes capped', () => {
  it(
    `keeps every invariant over ${SEEDS} seeds with one periodic checkpoint write a second per task`,
    async () => {
      const plan = { ...seedPlan({}), count: SEEDS, checkpointCap: 1 };
      const report = await runSeeds(plan, (text) => process.stdout.write(text));
      const summary = describeReport(report, plan);
      if (report.firstFailure) throw new Error(summary);
      process.stdout.write(`${summary}\n`);
      // The cap bit: writes were deferred.
      expect(report.checkpointWritesDeferred).toBeGreaterThan(SEEDS);
    },
    60_000 + SEEDS * 1_000,
  );
});
