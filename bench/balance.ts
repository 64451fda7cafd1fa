/**
 * Balance by throughput against balance by count on real servers (issue 20): kinesis-local and ZooKeeper,
 * 21 shards, the first put to at 20 times each other's rate (test/helpers/skewedLoad.ts, as the integration
 * test `balance.test.ts` does), read by two spout processes driven as ShellSpout drives them, every emit
 * acked, on the default settings but `balance`. Modes alternate round by round; with CPUs idle, and with both
 * kept busy. Per run: from the first task's start to every shard emitted, and to the tasks' put rates (the
 * hot shard 20 units, every other 1) within ±10 % of their mean and staying there for `STEADY_MS`; the
 * planned hand-overs; then, the producer stopped: records never delivered, emitted twice without a fail,
 * and shards read by two tasks at once (all must be 0: every owner lives); and for `quietMs` after the
 * producer stopped, while every load decays, the hand-overs and the shards handed over more than once (a
 * lease going back and forth). `BENCH_BALANCE_TRACE=1` prints each run's joins, takes and hand-overs with
 * their times from the start.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { loadavg } from 'node:os';
import { uniqueName } from '../test/helpers/fixture';
import { Flow } from '../test/helpers/flow';
import { createStream } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import {
  handOvers,
  HOT_RATE,
  holders,
  keysByShard,
  skewedProducer,
  taskLoads,
  withinBand,
} from '../test/helpers/skewedLoad';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { sleep } from './lib';
import { Regime, startBusyLoops } from './protocol';

export const BALANCE_MODES = ['count', 'throughput'] as const;
export type BalanceMode = (typeof BALANCE_MODES)[number];

const SHARDS = 21;
const TASKS = 2;
/** Balanced: within the band at every check for this long. */
const STEADY_MS = 3_000;
const CHECK_MS = 250;

export interface BalanceRun {
  mode: BalanceMode;
  regime: Regime;
  /** 1-min load average at the start and the end of the run. */
  loadAverage: [number, number];
  /** From the first task's start (ms). */
  everyShardEmittedMs: number;
  /** From the first task's start to the tasks within ±10 % for good (ms); undefined: not within `timeoutMs`. */
  balancedMs: number | undefined;
  timeoutMs: number;
  /** Each task's share of the put rate when the producer stopped (units: the hot shard 20, others 1). */
  loads: number[];
  handOvers: number;
  /** How long the run went on after the producer stopped (ms; 0: not at all). */
  quietMs: number;
  /** Hand-overs in that time, and the shards handed over more than once in it. */
  quietHandOvers: number;
  quietMovedTwice: number;
  lost: number;
  duplicates: number;
  overlapping: number;
}

export interface BalanceFigures {
  shards: number;
  tasks: number;
  hotRate: number;
  runs: BalanceRun[];
}

export async function balanceBench(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  options: {
    rounds: number;
    modes: BalanceMode[];
    regimes: Regime[];
    timeoutMs: Record<BalanceMode, number>;
    quietMs: number;
  },
  log: (line: string) => void,
): Promise<BalanceFigures> {
  const runs: BalanceRun[] = [];
  for (const regime of options.regimes) {
    const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
    try {
      for (let round = 0; round < options.rounds; round += 1) {
        // Alternating, and starting with the other mode each round.
        const modes = round % 2 === 0 ? options.modes : [...options.modes].reverse();
        for (const mode of modes) {
          const run = await balanceRun(zk, server, client, mode, regime, options.timeoutMs[mode], options.quietMs);
          log(
            `balance: ${regime}, ${mode}: every shard emitted after ${run.everyShardEmittedMs} ms, balanced ${run.balancedMs === undefined ? `not within ${run.timeoutMs} ms` : `after ${run.balancedMs} ms`} (loads ${run.loads.join(' / ')}), ${run.handOvers} hand-over(s); in ${run.quietMs} ms after the producer stopped ${run.quietHandOvers} hand-over(s), ${run.quietMovedTwice} shard(s) twice; lost ${run.lost}, duplicates ${run.duplicates}, overlapping ${run.overlapping}`,
          );
          runs.push(run);
        }
      }
    } finally {
      stopLoops();
    }
  }
  return { shards: SHARDS, tasks: TASKS, hotRate: HOT_RATE, runs };
}

async function balanceRun(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  mode: BalanceMode,
  regime: Regime,
  timeoutMs: number,
  quietMs: number,
): Promise<BalanceRun> {
  const loadBefore = Math.round(loadavg()[0] * 100) / 100;
  const stream = uniqueName('balance');
  await createStream(client, stream, SHARDS);
  const keys = await keysByShard(client, stream);
  const hot = [...keys.keys()].sort()[0];
  // The defaults but `balance` (spoutConf's are a test's fast timings).
  const flow = new Flow({ zk, kinesis: server, client }, stream, uniqueName('app'), {
    balance: mode,
    zookeeper: { connect: zk.connectString, root: '/bench' },
    idlePollIntervalMs: 1_000,
    checkpointIntervalMs: 2_000,
    rebalanceIntervalMs: 2_000,
    handoffTimeoutMs: 5_000,
  });
  const stopProducer = skewedProducer(client, flow, keys, hot);
  try {
    const started = performance.now();
    const startedWall = Date.now();
    for (let task = 1; task <= TASKS; task += 1)
      await flow.addSpout(
        task,
        Array.from({ length: TASKS }, (_, i) => i + 1),
      );
    while (holders(flow).size < SHARDS) {
      if (performance.now() - started > 120_000)
        throw new Error(`balance: ${holders(flow).size} of ${SHARDS} shards emitted after 120 s`);
      await sleep(CHECK_MS);
    }
    const everyShardEmittedMs = Math.round(performance.now() - started);
    let since: number | undefined;
    let balancedMs: number | undefined;
    while (performance.now() - started < timeoutMs) {
      const now = performance.now();
      if (!withinBand(taskLoads(flow, hot))) since = undefined;
      else if (since === undefined) since = now;
      else if (now - since >= STEADY_MS) {
        balancedMs = Math.round(since - started);
        break;
      }
      await sleep(CHECK_MS);
    }
    if (process.env.BENCH_BALANCE_TRACE)
      for (const spout of flow.spouts)
        for (const l of spout.logs)
          if (/handing|taken|joined as|publish/.test(l.msg))
            console.log(`${spout.pid} ${Math.round(l.at - startedWall)} ${l.msg.slice(0, 300)}`);
    const loads = taskLoads(flow, hot);
    const handedOver = handOvers(flow).length;
    await stopProducer();
    const stoppedAt = Date.now();
    await flow.waitAllDelivered(120_000).catch(() => undefined);
    await sleep(Math.max(1_000, stoppedAt + quietMs - Date.now()));
    const quiet = handOvers(flow)
      .filter((l) => l.at > stoppedAt)
      .map((l) => l.msg.split(' ')[1]);
    return {
      mode,
      regime,
      loadAverage: [loadBefore, Math.round(loadavg()[0] * 100) / 100],
      everyShardEmittedMs,
      balancedMs,
      timeoutMs,
      loads,
      handOvers: handedOver,
      quietMs,
      quietHandOvers: quiet.length,
      quietMovedTwice: new Set(quiet.filter((id, i) => quiet.indexOf(id) !== i)).size,
      lost: flow.missing().length,
      duplicates: flow.unexplainedEmits().length,
      overlapping: flow.concurrentReaders().length,
    };
  } finally {
    await stopProducer();
    await flow.stop();
  }
}
