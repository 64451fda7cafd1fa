/**
 * Two applications on one stream (issue 16): two spout processes, each its own application, read one
 * kinesis-local stream while a steady producer writes to it, in three configurations run alternately round
 * by round: polling without budgets (`maxGetRecordsPerSecond` 5 each) and with budgets 2 + 2, both through
 * the HTTP fault proxy's Kinesis read limit (5 GetRecords and 2 MB per second per shard, every caller
 * together), and fan-out through the fan-out front (each consumer its own 2 MB/s per shard; the front reads
 * kinesis-local directly). Per application over a fixed window: records emitted per second, throttled
 * calls (the spout's `throttledCalls` metric) and put-to-emit latency.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { loadavg } from 'node:os';
import { DEFAULT_FAN_OUT_SETTINGS, startFanOutServer } from '../test/helpers/fanOutServer';
import { KINESIS_READ_LIMITS, startHttpFaultProxy } from '../test/helpers/httpFaultProxy';
import { createStream, putRecords } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { StormDriver } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, percentile, sleep, summarize, type Summary } from './lib';
import { Regime, startBusyLoops } from './protocol';

export const TWO_APPS_MODES = ['polling', 'budgets', 'fanOut'] as const;
export type TwoAppsMode = (typeof TWO_APPS_MODES)[number];

const OVERRIDES: Record<TwoAppsMode, Record<string, unknown>> = {
  polling: { maxGetRecordsPerSecond: 5 },
  budgets: { maxGetRecordsPerSecond: 2 },
  fanOut: { readMode: 'fanOut' },
};

export interface AppFigures {
  recordsPerSecond: Summary;
  /** Over the window, from the spout's metrics. */
  throttledCalls: Summary;
  /** GetRecords calls per second, throttled ones included (the `stats:` line's `getRecords`; 0 in fan-out). */
  getRecordsPerSecond: Summary;
  latencyMedianMs: Summary;
  latencyP99Ms: Summary;
}

export interface TwoAppsRun {
  regime: Regime;
  mode: TwoAppsMode;
  /** The first and the second application. */
  apps: AppFigures[];
  /** Records the producer put per second over the window (below the target when kinesis-local is slow). */
  putRecordsPerSecond: Summary;
  /** GetRecords the proxy refused over the window, both applications (polling only). */
  proxyThrottled?: Summary;
  /** 1-minute load average when the regime's rounds began and ended (the machine is shared). */
  loadAverage: [number, number];
}

export interface TwoAppsFigures {
  shards: number;
  /** The producer's target. */
  putRecordsPerSecond: number;
  payloadBytes: number;
  warmupSeconds: number;
  windowSeconds: number;
  frontPollMs: number;
  runs: TwoAppsRun[];
}

export interface TwoAppsOptions {
  rounds: number;
  regimes: Regime[];
  warmupSeconds: number;
  windowSeconds: number;
  putRecordsPerSecond: number;
}

const METRICS = { version: 1, process: 'kinesis-spout', shards: 'kinesis-spout-shards', intervalSecs: 1 };
const PAYLOAD_BYTES = 1_000;
const PUTS_PER_SECOND = 5;

interface AppSample {
  recordsPerSecond: number;
  throttledCalls: number;
  getRecordsPerSecond: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
}

/** Puts `perSecond` records to `stream` in 5 batches a second (fewer when a put is slow), remembering when each was sent, until `stop`. */
function producer(client: KinesisClient, stream: string, perSecond: number, putAt: Map<string, number>) {
  let stopped = false;
  const data = 'x'.repeat(PAYLOAD_BYTES);
  const batch = Math.max(1, Math.round(perSecond / PUTS_PER_SECOND));
  const running = (async () => {
    let next = performance.now();
    for (let n = 0; !stopped; n += 1) {
      const sent = performance.now();
      const puts = await putRecords(
        client,
        stream,
        Array.from({ length: batch }, (_, i) => ({ partitionKey: `k${n}-${i}`, data })),
      );
      for (const put of puts) putAt.set(`${put.shardId}:${put.sequenceNumber}`, sent);
      // A put that took longer than its interval is not made up for with a burst: the rate stays steady.
      next = Math.max(next + 1_000 / PUTS_PER_SECOND, performance.now());
      await sleep(next - performance.now());
    }
  })();
  return async () => {
    stopped = true;
    await running;
  };
}

/** The throttled calls of the `kinesis-spout` metrics frames from index `from` on. */
function throttledSince(driver: StormDriver, from: number): number {
  return driver.metrics
    .slice(from)
    .filter((m) => m.name === METRICS.process)
    .reduce((sum, m) => sum + ((m.params as { counters: Record<string, number> }).counters.throttledCalls ?? 0), 0);
}

/** One run of one configuration: both applications on a new stream, measured over the window. */
async function runOnce(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  mode: TwoAppsMode,
  name: string,
  options: TwoAppsOptions,
): Promise<{ apps: AppSample[]; put: number; proxyThrottled?: number }> {
  const stream = `bench-twoapps-${name}-${process.pid}`;
  await createStream(client, stream, 1);
  const proxy =
    mode === 'fanOut' ? undefined : await startHttpFaultProxy(kinesis.endpoint, { readLimits: KINESIS_READ_LIMITS });
  const front = mode === 'fanOut' ? await startFanOutServer(kinesis.endpoint) : undefined;
  const endpoint = proxy?.endpoint ?? front!.endpoint;
  const putAt = new Map<string, number>();
  const drivers: StormDriver[] = [];
  let measuring = false;
  let stopped = false;
  const seen = [0, 0];
  const latencies: number[][] = [[], []];
  const pumps: Promise<boolean>[] = [];
  const stopProducer = producer(client, stream, options.putRecordsPerSecond, putAt);
  try {
    for (const app of [0, 1]) {
      // Stats lines every second: the GetRecords calls each application makes.
      const overrides = { ...OVERRIDES[mode], statsIntervalMs: 1_000 };
      const driver = await StormDriver.start({
        conf: {
          ...benchConf(zk, { ...kinesis, endpoint }, stream, `twoApps-${name}-${app}`, overrides),
          'kinesis.spout.metrics': METRICS,
        },
        keepHistory: false,
      });
      drivers.push(driver);
      pumps.push(
        driver.pump(() => stopped, {
          timeoutMs: 600_000,
          onEmit: async (emit) => {
            seen[app] += 1;
            const sent = putAt.get(emit.id);
            if (measuring && sent !== undefined) latencies[app].push(emit.receivedAt - sent);
            await driver.ack(emit.id);
          },
        }),
      );
    }
    // Warm-up: leases taken (fan-out: the consumers registered), and both applications caught up with the
    // producer (within a second of its records) before the window opens.
    await sleep(options.warmupSeconds * 1_000);
    const deadline = Date.now() + 30_000;
    const behind = () => seen.some((n) => n < putAt.size - options.putRecordsPerSecond);
    while (behind() && Date.now() < deadline) await sleep(100);
    const frames = drivers.map((d) => d.metrics.length);
    const calls = () => drivers.map((d) => d.lastStats()?.getRecords ?? 0);
    const callsBefore = calls();
    const counted = [...seen];
    const refused = sum(proxy?.throttled);
    const putBefore = putAt.size;
    const began = performance.now();
    measuring = true;
    await sleep(options.windowSeconds * 1_000);
    measuring = false;
    const seconds = (performance.now() - began) / 1_000;
    const emitted = seen.map((n, app) => n - counted[app]);
    const callsAfter = calls();
    const put = Math.round((putAt.size - putBefore) / seconds);
    const proxyThrottled = proxy ? sum(proxy.throttled) - refused : undefined;
    // The metrics frame (1 s interval) that covers the window's last second.
    await sleep(1_200);
    const apps = drivers.map((driver, app) => ({
      recordsPerSecond: Math.round(emitted[app] / seconds),
      throttledCalls: throttledSince(driver, frames[app]),
      getRecordsPerSecond: Math.round(((callsAfter[app] - callsBefore[app]) / seconds) * 10) / 10,
      latencyMedianMs: Math.round(percentile(latencies[app], 50) ?? NaN),
      latencyP99Ms: Math.round(percentile(latencies[app], 99) ?? NaN),
    }));
    return { apps, put, proxyThrottled };
  } finally {
    stopped = true;
    await stopProducer();
    await Promise.all(pumps);
    await Promise.all(drivers.map((d) => d.stop(3_000)));
    await proxy?.close();
    await front?.close();
  }
}

function sum(counts: ReadonlyMap<string, number> | undefined): number {
  return [...(counts?.values() ?? [])].reduce((a, b) => a + b, 0);
}

export async function twoAppsBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  options: TwoAppsOptions,
  log: (line: string) => void,
): Promise<TwoAppsFigures> {
  const runs: TwoAppsRun[] = [];
  for (const regime of options.regimes) {
    const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
    const loadBefore = Math.round(loadavg()[0] * 100) / 100;
    const samples = new Map<TwoAppsMode, Awaited<ReturnType<typeof runOnce>>[]>();
    try {
      // Configurations alternate within each round: a drift of the shared machine falls on all of them.
      for (let round = 1; round <= options.rounds; round += 1) {
        for (const mode of TWO_APPS_MODES) {
          const sample = await runOnce(zk, kinesis, client, mode, `${regime}-${mode}-${round}`, options);
          samples.set(mode, [...(samples.get(mode) ?? []), sample]);
          log(
            `twoApps ${regime} ${mode} round ${round}: put ${sample.put} records/s; ${sample.apps
              .map(
                (a, i) =>
                  `app ${i + 1} ${a.recordsPerSecond} records/s, ${a.getRecordsPerSecond} GetRecords/s, ${a.throttledCalls} throttled, latency ${a.latencyMedianMs}/${a.latencyP99Ms} ms`,
              )
              .join('; ')}${sample.proxyThrottled === undefined ? '' : `; proxy refused ${sample.proxyThrottled}`}`,
          );
        }
      }
    } finally {
      stopLoops();
    }
    const loadAfter = Math.round(loadavg()[0] * 100) / 100;
    for (const mode of TWO_APPS_MODES) {
      const of = samples.get(mode) ?? [];
      const field = (app: number, key: keyof AppSample) => summarize(of.map((s) => s.apps[app][key]));
      runs.push({
        regime,
        mode,
        apps: [0, 1].map((app) => ({
          recordsPerSecond: field(app, 'recordsPerSecond'),
          throttledCalls: field(app, 'throttledCalls'),
          getRecordsPerSecond: field(app, 'getRecordsPerSecond'),
          latencyMedianMs: field(app, 'latencyMedianMs'),
          latencyP99Ms: field(app, 'latencyP99Ms'),
        })),
        putRecordsPerSecond: summarize(of.map((s) => s.put)),
        ...(mode === 'fanOut' ? {} : { proxyThrottled: summarize(of.map((s) => s.proxyThrottled ?? 0)) }),
        loadAverage: [loadBefore, loadAfter],
      });
    }
  }
  return {
    shards: 1,
    putRecordsPerSecond: options.putRecordsPerSecond,
    payloadBytes: PAYLOAD_BYTES,
    warmupSeconds: options.warmupSeconds,
    windowSeconds: options.windowSeconds,
    frontPollMs: DEFAULT_FAN_OUT_SETTINGS.pollIntervalMs,
    runs,
  };
}
