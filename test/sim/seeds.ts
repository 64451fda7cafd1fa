/**
 * Runs many seeds and sums them up: which invariants broke, on which seeds, the first failure's trace, and
 * how to replay it. Configured from the environment:
 *   SIM_SEEDS=<n>          how many seeds (default DEFAULT_SEEDS)
 *   SIM_FIRST_SEED=<s>     first seed of the range (default 1), to split a long run across processes
 *   SIM_SEED=<s>           replay one seed, printing its whole trace as it runs
 *   SIM_WITHOUT=<a,b>      faults never injected (names of FaultRates: kinesisNotFound, zkDropAfter, ...)
 *   SIM_IGNORE=<a,b>       invariants only traced, not failed on (e.g. watch-leak), to look past a known defect
 *   SIM_MODE=chaos|planned every seed in one mode (default: one seed in four planned)
 *   SIM_READ_MODE=polling|fanOut every seed reads so (default: one seed in two fans out)
 *   SIM_BALANCE=throughput every task with balance "throughput" (default: count)
 *   SIM_DELIVERY=at-most-once every task so (default: at-least-once), checked for `twice` and `uncovered`
 *   SIM_VERSIONS=green-then-kill|kill-then-green|reactivate|none  every planned seed deploys a new version
 *                          so (default: four planned seeds in ten, drawn)
 *   SIM_CHECKPOINT_CAP=<n> every task with maxCheckpointWritesPerSecond n (default: the configuration's)
 */
import type { FaultRates } from './faults';
import { NO_FAULTS } from './faults';
import { simulate, type SimResult, VERSION_DEPLOYS, type VersionDeploy } from './harness';
import type { SimReadMode } from './simConfig';

/**
 * About 100 s of one core on the 2-core machine (2026-12-02, load average 2: 97–106 ms and 23 virtual s per seed;
 * at d87407b, a day earlier, 40 ms and 14 virtual s: the scenarios have grown longer, and each virtual second
 * costs about 1.5 times what it did).
 */
export const DEFAULT_SEEDS = 1_000;
const TRACE_LINES = 200;

export interface SeedPlan {
  first: number;
  count: number;
  replay: boolean;
  without: (keyof FaultRates)[];
  ignore: string[];
  mode: 'chaos' | 'planned' | undefined;
  readMode?: SimReadMode;
  balance: 'count' | 'throughput' | undefined;
  delivery?: 'at-least-once' | 'at-most-once';
  versions?: VersionDeploy | 'none';
  checkpointCap?: number;
}

const list = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

export function seedPlan(env: NodeJS.ProcessEnv = process.env): SeedPlan {
  const without = list(env.SIM_WITHOUT);
  const ignore = list(env.SIM_IGNORE);
  const mode = env.SIM_MODE === 'chaos' || env.SIM_MODE === 'planned' ? env.SIM_MODE : undefined;
  if (env.SIM_MODE !== undefined && mode === undefined)
    throw new Error(`SIM_MODE: chaos or planned, not ${env.SIM_MODE}`);
  const balance = env.SIM_BALANCE === 'count' || env.SIM_BALANCE === 'throughput' ? env.SIM_BALANCE : undefined;
  if (env.SIM_BALANCE !== undefined && balance === undefined)
    throw new Error(`SIM_BALANCE: count or throughput, not ${env.SIM_BALANCE}`);
  for (const name of without)
    if (!(name in NO_FAULTS))
      throw new Error(`SIM_WITHOUT: unknown fault ${name}; known: ${Object.keys(NO_FAULTS).join(', ')}`);
  const typed = without as (keyof FaultRates)[];
  const readMode = env.SIM_READ_MODE === 'polling' || env.SIM_READ_MODE === 'fanOut' ? env.SIM_READ_MODE : undefined;
  if (env.SIM_READ_MODE !== undefined && readMode === undefined)
    throw new Error(`SIM_READ_MODE: polling or fanOut, not ${env.SIM_READ_MODE}`);
  const delivery =
    env.SIM_DELIVERY === 'at-least-once' || env.SIM_DELIVERY === 'at-most-once' ? env.SIM_DELIVERY : undefined;
  if (env.SIM_DELIVERY !== undefined && delivery === undefined)
    throw new Error(`SIM_DELIVERY: at-least-once or at-most-once, not ${env.SIM_DELIVERY}`);
  const versions = [...VERSION_DEPLOYS, 'none' as const].find((v) => v === env.SIM_VERSIONS);
  if (env.SIM_VERSIONS !== undefined && versions === undefined)
    throw new Error(`SIM_VERSIONS: ${VERSION_DEPLOYS.join(', ')} or none, not ${env.SIM_VERSIONS}`);
  const checkpointCap = env.SIM_CHECKPOINT_CAP === undefined ? undefined : Number(env.SIM_CHECKPOINT_CAP);
  if (checkpointCap !== undefined && !(Number.isInteger(checkpointCap) && checkpointCap >= 1))
    throw new Error(`SIM_CHECKPOINT_CAP: a whole number of writes a second, 1 or more, not ${env.SIM_CHECKPOINT_CAP}`);
  const shared: Omit<SeedPlan, 'first' | 'count' | 'replay'> = {
    versions,
    checkpointCap,
    without: typed,
    ignore,
    mode,
    readMode,
    balance,
    delivery,
  };
  if (env.SIM_SEED !== undefined) return { first: Number(env.SIM_SEED), count: 1, replay: true, ...shared };
  return {
    first: Number(env.SIM_FIRST_SEED ?? 1),
    count: Number(env.SIM_SEEDS ?? DEFAULT_SEEDS),
    replay: false,
    ...shared,
  };
}

export interface SeedsReport {
  seeds: number;
  elapsedMs: number;
  failures: Map<string, number[]>;
  firstFailure: SimResult | undefined;
  /** Virtual time simulated, over all seeds. */
  virtualMs: number;
  /** Planned hand-overs over all seeds: begun, past their deadline with acks owed, re-emits those explained. */
  handOvers: { begun: number; late: number; excused: number };
  /** Checkpoint writes the cap deferred, over all seeds (processes alive at each seed's end). */
  checkpointWritesDeferred: number;
}

export async function runSeeds(plan: SeedPlan, write: (text: string) => void): Promise<SeedsReport> {
  const began = Date.now();
  const failures = new Map<string, number[]>();
  let firstFailure: SimResult | undefined;
  let virtualMs = 0;
  const handOvers = { begun: 0, late: 0, excused: 0 };
  let checkpointWritesDeferred = 0;
  for (let seed = plan.first; seed < plan.first + plan.count; seed += 1) {
    const result = await simulate({
      seed,
      keepTrace: plan.replay ? Infinity : TRACE_LINES,
      echo: plan.replay ? (line) => write(`${line}\n`) : undefined,
      without: plan.without,
      ignore: plan.ignore,
      mode: plan.mode,
      readMode: plan.readMode,
      balance: plan.balance,
      delivery: plan.delivery,
      versions: plan.versions,
      checkpointCap: plan.checkpointCap,
    });
    virtualMs += result.stats.virtualMs;
    handOvers.begun += result.stats.handOvers.begun;
    handOvers.late += result.stats.handOvers.late;
    handOvers.excused += result.stats.handOvers.excused;
    checkpointWritesDeferred += result.stats.checkpointWritesDeferred;
    if (result.violation) {
      const seeds = failures.get(result.violation.invariant) ?? [];
      seeds.push(seed);
      failures.set(result.violation.invariant, seeds);
      firstFailure ??= result;
    }
  }
  return {
    seeds: plan.count,
    elapsedMs: Date.now() - began,
    failures,
    firstFailure,
    virtualMs,
    handOvers,
    checkpointWritesDeferred,
  };
}

export function replayCommand(seed: number, plan: SeedPlan): string {
  const env = [
    plan.without.length > 0 ? ` SIM_WITHOUT=${plan.without.join(',')}` : '',
    plan.ignore.length > 0 ? ` SIM_IGNORE=${plan.ignore.join(',')}` : '',
    plan.mode ? ` SIM_MODE=${plan.mode}` : '',
    plan.balance ? ` SIM_BALANCE=${plan.balance}` : '',
    plan.readMode ? ` SIM_READ_MODE=${plan.readMode}` : '',
    plan.delivery ? ` SIM_DELIVERY=${plan.delivery}` : '',
    plan.versions ? ` SIM_VERSIONS=${plan.versions}` : '',
    plan.checkpointCap ? ` SIM_CHECKPOINT_CAP=${plan.checkpointCap}` : '',
  ].join('');
  return `SIM_SEED=${seed}${env} npx jest test/sim/simulation.test.ts --maxWorkers=1`;
}

/** What a failing run prints: the tally, then the first failing seed, its violation, its last trace lines, and how to replay it. */
export function describeReport(report: SeedsReport, plan: SeedPlan): string {
  const lines = [
    `simulation: ${report.seeds} seed(s) from ${plan.first} in ${(report.elapsedMs / 1000).toFixed(1)} s (${(report.elapsedMs / Math.max(1, report.seeds)).toFixed(1)} ms per seed, ${(report.virtualMs / 1000).toFixed(0)} virtual s)`,
    `  planned hand-overs: ${report.handOvers.begun}, ${report.handOvers.late} past their deadline with acks owed, ${report.handOvers.excused} re-emit(s) of acked records they explain`,
    ...(plan.checkpointCap
      ? [`  checkpoint writes deferred by the cap (${plan.checkpointCap}/s): ${report.checkpointWritesDeferred}`]
      : []),
  ];
  for (const [invariant, seeds] of report.failures) {
    lines.push(`  ${invariant}: ${seeds.length} seed(s), e.g. ${seeds.slice(0, 10).join(' ')}`);
  }
  const first = report.firstFailure;
  if (first?.violation) {
    lines.push(
      '',
      `first failing seed ${first.seed}: ${first.violation.invariant} at virtual ${first.violation.at} ms`,
      `  ${first.violation.detail}`,
      `  stats ${JSON.stringify(first.stats)}`,
      `last ${first.trace.length} trace lines:`,
      ...first.trace,
      '',
      `replay: ${replayCommand(first.seed, plan)}`,
    );
  }
  return lines.join('\n');
}
