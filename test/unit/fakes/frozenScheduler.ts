import type { Scheduler } from '../../../src/core/scheduler';

/** A scheduler whose clocks stand still at 1 s and whose timers never fire: for the spout's answers alone. */
export const frozenScheduler: Scheduler = {
  now: () => 1_000,
  wallNow: () => 1_000,
  after: () => () => undefined,
  every: () => () => undefined,
  sleep: () => Promise.resolve(),
  random: () => 0.5,
};
