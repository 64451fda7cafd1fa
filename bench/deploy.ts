/**
 * Deploying a new version (issue 33): a running topology (blue, 2 tasks) replaced by a new one (green, 2 tasks,
 * the same `applicationName`, another `storm.id`), each task a spout process driven as ShellSpout drives it
 * (no `next` while deactivated; acks and fails still sent), against kinesis-local and ZooKeeper: 8 shards, one
 * record per shard every 100 ms, every tuple acked within 20 ms. `storm kill blue -w <wait>` is what Storm
 * does: blue deactivated, the wait, then SIGTERM (Storm's default wait is the message timeout, 30 s). Ways:
 * - greenThenKill: submit green; once it reads, `storm kill blue -w 30`;
 * - killThenGreen: `storm kill blue -w 30`, green submitted at once (another topology name);
 * - killThenGreenAfter: the same, green submitted once blue is gone (the same name: Storm refuses it before);
 * - waitZero: submit green; then `storm kill blue -w 0` (tuples in flight when blue is stopped);
 * - previousBlue / previousBlueWaitZero: greenThenKill / waitZero with blue on the previous release
 *   (test/helpers/previousRelease.ts), built from its commit.
 * Per run: the longest wait from put to first emit of the records put from SETTLE_MS before the deploy's
 * first command on (a record put just before it may be waiting for its shard's next poll then), and, as
 * steady state, of those put before that, blue alone, over `steadySeconds`; duplicates (emits beyond the first
 * of a record: nothing fails here), lost (never emitted 60 s after the producer stopped).
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { loadavg } from 'node:os';
import { uniqueName } from '../test/helpers/fixture';
import { Flow } from '../test/helpers/flow';
import { createStream } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { buildRelease, type BuiltRelease } from '../test/helpers/previousRelease';
import type { StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { sleep } from './lib';
import { Regime, startBusyLoops } from './protocol';

export const DEPLOY_WAYS = [
  'greenThenKill',
  'killThenGreen',
  'killThenGreenAfter',
  'waitZero',
  'previousBlue',
  'previousBlueWaitZero',
] as const;
export type DeployWay = (typeof DEPLOY_WAYS)[number];

const SHARDS = 8;
const TASKS = 2;
const ACK_WITHIN_MS = 20;
/** Longer than a record waits in steady state (an idle poll every second). */
const SETTLE_MS = 3_000;

export interface DeployRun {
  way: DeployWay;
  regime: Regime;
  /** `storm kill -w`, in seconds. */
  waitSeconds: number;
  longestWaitMs: number;
  steadyMs: number;
  duplicates: number;
  lost: number;
  /** Shards two processes emitted from over overlapping times. */
  overlapping: number;
  /** 1-minute load average when the run began and ended. */
  loadAverage: [number, number];
}

export interface DeployFigures {
  shards: number;
  tasks: number;
  ackWithinMs: number;
  /** The previous release's commit (blue in the previous* ways). */
  previousRelease?: string;
  runs: DeployRun[];
}

export interface DeployOptions {
  ways: DeployWay[];
  regimes: Regime[];
  rounds: number;
  /** Storm's default kill wait is the message timeout: 30 s. */
  waitSeconds: number;
  /** Blue alone, before the deploy: the steady state's window. */
  steadySeconds: number;
  /** After blue's stop, before the producer stops. */
  afterSeconds: number;
  /** Blue's commit in the previous* ways (default: test/helpers/previousRelease.ts's). */
  previousCommit?: string;
}

export async function deployBench(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  options: DeployOptions,
  log: (line: string) => void,
): Promise<DeployFigures> {
  const needsPrevious = options.ways.some((w) => w.startsWith('previous'));
  const previous = needsPrevious ? buildRelease(options.previousCommit) : undefined;
  const runs: DeployRun[] = [];
  try {
    for (const regime of options.regimes) {
      const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
      try {
        for (let round = 0; round < options.rounds; round += 1)
          for (const way of options.ways) {
            const run = await deployRun(zk, server, client, way, regime, options, previous);
            log(
              `deploy ${regime} ${way}: longest wait ${run.longestWaitMs} ms (steady ${run.steadyMs} ms), ${run.duplicates} duplicates, ${run.lost} lost, ${run.overlapping} overlapping`,
            );
            runs.push(run);
          }
      } finally {
        stopLoops();
      }
    }
  } finally {
    previous?.remove();
  }
  return { shards: SHARDS, tasks: TASKS, ackWithinMs: ACK_WITHIN_MS, previousRelease: previous?.commit, runs };
}

async function deployRun(
  zk: ZooKeeperServer,
  server: KinesisServer,
  client: KinesisClient,
  way: DeployWay,
  regime: Regime,
  options: DeployOptions,
  previous: BuiltRelease | undefined,
): Promise<DeployRun> {
  const loadBefore = Math.round(loadavg()[0] * 100) / 100;
  const stream = uniqueName('deploy');
  await createStream(client, stream, SHARDS);
  // The defaults (spoutConf's are a test's fast timings), which the previous release knows too.
  const flow = new Flow({ zk, kinesis: server, client }, stream, uniqueName('app'), {
    zookeeper: { connect: zk.connectString, root: '/bench' },
    idlePollIntervalMs: 1_000,
    checkpointIntervalMs: 2_000,
    rebalanceIntervalMs: 2_000,
    handoffTimeoutMs: 5_000,
  });
  flow.ackWithin(ACK_WITHIN_MS);
  const ids = Array.from({ length: TASKS }, (_, i) => i + 1);
  const topology = async (id: string, script?: string) => {
    flow.topologyConf = { 'storm.id': id };
    const drivers: StormDriver[] = [];
    for (const task of ids) drivers.push(await flow.addSpout(task, ids, script));
    return drivers;
  };
  const waitMs = (way === 'waitZero' || way === 'previousBlueWaitZero' ? 0 : options.waitSeconds) * 1000;
  /** `storm kill blue -w <wait>`: deactivated, the wait, SIGTERM (as ShellSpout.close() and the supervisor). */
  const kill = async (blue: StormDriver[]) => {
    for (const d of blue) await flow.deactivate(d);
    await sleep(waitMs);
    await Promise.all(blue.map((d) => d.stop()));
  };
  const readsEveryShard = () =>
    new Set(flow.put.filter((p) => flow.firstDelivery.has(p.id)).map((p) => p.id.split(':')[0])).size;
  try {
    const blue = await topology('blue-1-1000', way.startsWith('previous') ? previous?.script : undefined);
    flow.startProducer(SHARDS, 100);
    const started = performance.now();
    while (readsEveryShard() < SHARDS) {
      if (performance.now() - started > 60_000)
        throw new Error(`deploy: blue read ${readsEveryShard()} of ${SHARDS} shards in 60 s`);
      await sleep(200);
    }
    const steadyFrom = performance.now();
    await sleep(options.steadySeconds * 1000 + SETTLE_MS);
    const deployFrom = performance.now();
    if (way === 'killThenGreen') await Promise.all([kill(blue), topology('green-2-2000')]);
    else if (way === 'killThenGreenAfter') {
      await kill(blue);
      await topology('green-2-2000');
    } else {
      const green = await topology('green-2-2000');
      while (!green.some((d) => d.emitCount > 0)) await sleep(50);
      await kill(blue);
    }
    await sleep(options.afterSeconds * 1000);
    await flow.stopProducer();
    await flow.waitAllDelivered(60_000).catch(() => undefined);
    const steady = flow.put.filter((p) => p.at >= steadyFrom && p.at < deployFrom - SETTLE_MS);
    return {
      way,
      regime,
      waitSeconds: waitMs / 1000,
      longestWaitMs: Math.round(flow.longestWait(deployFrom - SETTLE_MS)),
      steadyMs: Math.round(
        Math.max(0, ...steady.map((p) => (flow.firstDelivery.get(p.id)?.at ?? Number.POSITIVE_INFINITY) - p.at)),
      ),
      duplicates: flow.duplicates(),
      lost: flow.missing().length,
      overlapping: flow.concurrentReaders().length,
      loadAverage: [loadBefore, Math.round(loadavg()[0] * 100) / 100],
    };
  } finally {
    await flow.stop();
  }
}

const WAYS: Record<DeployWay, string> = {
  greenThenKill: 'submit green; then `storm kill blue` (its default wait)',
  killThenGreen: '`storm kill blue` (its default wait); green submitted at once (another name)',
  killThenGreenAfter: '`storm kill blue` (its default wait); green submitted once blue is gone (the same name)',
  waitZero: 'submit green; then `storm kill blue -w 0`',
  previousBlue: 'submit green; then `storm kill blue` (its default wait), blue on the previous release',
  previousBlueWaitZero: 'submit green; then `storm kill blue -w 0`, blue on the previous release',
};

/**
 * The section of docs/benchmarks-scale.md: one row per way and regime, each run's figure (in run order,
 * ways alternating within a round) rather than a median of two or three, and the load average around them.
 */
export function deploySection(d: DeployFigures): string[] {
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const out = [
    `**Deploying a new version** (bench/deploy.ts; kinesis-local and ZooKeeper; ${d.shards} shards, one record per shard every 100 ms; blue and green ${d.tasks} spout processes each, driven as ShellSpout drives them, one application, every tuple acked within ${d.ackWithinMs} ms; default settings (\`handoffTimeoutMs\` 5 s); \`storm kill\` = deactivate, the wait, SIGTERM${d.previousRelease ? `; previous release: commit ${d.previousRelease.slice(0, 7)}` : ''}; longest wait from put to first emit of the records put from 3 s before the deploy's first command on; steady state: the same over the 10 s before those, blue alone; each run's figure, in seconds; duplicates / lost / shards read by two processes at once, summed over the runs):`,
    '',
    '| CPUs, 1-min load average | how the team deploys | `-w` | longest wait from put to emit | steady state | duplicates / lost / overlapping |',
    '|---|---|---|---|---|---|',
  ];
  const groups = new Map<string, DeployRun[]>();
  for (const run of d.runs) {
    const key = `${run.regime} ${run.way}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const sum = (runs: DeployRun[], pick: (r: DeployRun) => number) => runs.reduce((n, r) => n + pick(r), 0);
  for (const runs of groups.values()) {
    const { regime, way, waitSeconds } = runs[0];
    const loads = runs.flatMap((r) => r.loadAverage);
    out.push(
      `| ${regime === Regime.Busy ? 'both busy' : 'idle'}, ${Math.min(...loads)}–${Math.max(...loads)} | ${WAYS[way]} | ${waitSeconds} s | ${runs.map((r) => seconds(r.longestWaitMs)).join(', ')} | ${runs.map((r) => seconds(r.steadyMs)).join(', ')} | ${sum(runs, (r) => r.duplicates)} / ${sum(runs, (r) => r.lost)} / ${sum(runs, (r) => r.overlapping)} |`,
    );
  }
  return out;
}
