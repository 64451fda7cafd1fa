/**
 * What reading Kinesis costs the spout process, without Storm: the lean driver drives the spout at one fixed
 * tuple rate against kinesis-local (4 shards, pre-filled, each run reading from the start, as the storm
 * section's spoutKinesis) and against the synthetic source paced at that rate on as many shards (as its
 * spoutPaced), alternating, and reports each one's CPU per tuple acked. READ_COST_PROFILE_DIR adds
 * `--cpu-prof` to every spout process (bench/profileWindow.ts reads the measured window out of a profile).
 *
 * Usage: tsx bench/readCost.ts [rounds] [tuples/s] [seconds]; `tsx bench/readCost.ts serve [records]` keeps
 * ZooKeeper and a filled stream up for several runs (kinesis-local fills slowly) and prints READ_COST_WORLD.
 * Env: READ_COST_SOURCES (kinesis,paced), READ_COST_ENV_<SOURCE> (extra spout env, `K=V,K=V`), READ_COST_CONF_<SOURCE> (`kinesis.spout` settings as
 * JSON, over the section's), READ_COST_SCRIPT_<SOURCE> (another spout bundle, e.g. the code before a change),
 * READ_COST_NODE_OPTIONS_<SOURCE> (node options after benchNodeOptions', space-separated, e.g. `--no-maglev`),
 * READ_COST_LIVE=1 (a producer puts the rate's records during the runs, the stream read from its tip, every
 * tuple acked as it comes), READ_COST_PARALLEL=1 (a round's sources run at once, on the same load).
 */
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { createStream, kinesisClient, putRecords } from '../test/helpers/kinesisAdmin';
import { startKinesisLocal } from '../test/helpers/kinesisServer';
import { startZooKeeper } from '../test/helpers/zookeeperServer';
import type { DriverResult } from './driver/spec';
import { benchConf, benchNodeOptions, summarize } from './lib';
import { shellSpoutEnv } from '../test/helpers/spoutNode';
import { bundle, drive } from './protocol';

const SHARDS = 4;
const SETTINGS = {
  maxEmitPerNext: 100,
  maxRecordsPerRequest: 10_000,
  shardBufferSize: 20_000,
  maxRecordsInMemory: 100_000,
  statsIntervalMs: 1_000,
};
const WARMUP_SECONDS = 2;

interface World {
  zk: { connectString: string };
  kinesis: { endpoint: string; region: string };
  stream: string;
}

/** ZooKeeper and kinesis-local with a stream of `records` records put across its shards. */
async function startWorld(records: number, log: (line: string) => void) {
  const zk = await startZooKeeper();
  const kinesis = await startKinesisLocal();
  const client = kinesisClient(kinesis);
  const stream = `read-cost-${process.pid}`;
  await createStream(client, stream, SHARDS);
  const data = 'x'.repeat(100);
  const started = performance.now();
  const batches = Array.from({ length: Math.ceil(records / 500) }, (_, b) => b);
  const put = async () => {
    for (let b = batches.shift(); b !== undefined; b = batches.shift()) {
      const from = b * 500;
      const length = Math.min(500, records - from);
      await putRecords(
        client,
        stream,
        Array.from({ length }, (_, j) => ({ partitionKey: `k${from + j}`, data })),
      );
    }
  };
  await Promise.all([put(), put()]);
  log(`read cost: ${records} records put in ${Math.round(performance.now() - started)} ms`);
  client.destroy();
  const world: World = {
    zk: { connectString: zk.connectString },
    kinesis: { endpoint: kinesis.endpoint, region: kinesis.region },
    stream,
  };
  return {
    world,
    stop: async () => {
      await kinesis.stop();
      await zk.stop();
    },
  };
}

/** GetRecords calls and records emitted over the process's life, from its last `stats:` line. */
function callsOf(stats: string | undefined): string {
  const emitted = Number(/emitted=(\d+)/.exec(stats ?? '')?.[1] ?? NaN);
  const calls = Number(/getRecords=(\d+)/.exec(stats ?? '')?.[1] ?? NaN);
  return `${calls} GetRecords, ${(emitted / calls).toFixed(0)} emitted per call`;
}

/** Puts `perSecond` records a second (in batches every 100 ms) until stopped: a live stream. */
function produce(
  server: { endpoint: string; region: string },
  stream: string,
  perSecond: number,
  log: (line: string) => void,
) {
  const client = kinesisClient(server);
  let stopped = false;
  let put = 0;
  const started = performance.now();
  const data = 'x'.repeat(100);
  const done = (async () => {
    for (let tick = 1; !stopped; tick += 1) {
      const due = Math.floor((tick * perSecond) / 10) - put;
      if (due > 0) {
        await putRecords(
          client,
          stream,
          Array.from({ length: due }, (_, j) => ({ partitionKey: `p${put + j}`, data })),
        );
        put += due;
      }
      const wait = started + tick * 100 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      client.destroy();
      log(`read cost: producer put ${put} records at ${Math.round(put / ((performance.now() - started) / 1000))}/s`);
    },
  };
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  if (process.argv[2] === 'serve') {
    // The servers (and the stream, slow to fill) kept for several invocations: READ_COST_WORLD=<printed JSON>.
    const { world, stop } = await startWorld(Number(process.argv[3] ?? 60_000), log);
    log(`READ_COST_WORLD='${JSON.stringify(world)}'`);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    await stop();
    return;
  }
  const rounds = Number(process.argv[2] ?? 3);
  const rate = Number(process.argv[3] ?? 5000);
  const seconds = Number(process.argv[4] ?? 8);
  const sources = (process.env.READ_COST_SOURCES ?? 'kinesis,paced').split(',');
  const profileDir = process.env.READ_COST_PROFILE_DIR;
  const live = process.env.READ_COST_LIVE === '1';
  const parallel = process.env.READ_COST_PARALLEL === '1';
  const root = join(__dirname, '..');
  // Enough for the warm-up and the window at the rate, with a margin: each run reads the stream from the start.
  const shared = process.env.READ_COST_WORLD;
  const own = shared ? undefined : await startWorld(Math.ceil(rate * (WARMUP_SECONDS + seconds + 4)), log);
  const { zk, kinesis, stream } = shared ? (JSON.parse(shared) as World) : own!.world;
  try {
    const driver = await bundle(root, 'bench/driver/leanDriver.ts', 'lean-driver.js');
    const synthetic = await bundle(root, 'bench/syntheticSpout.ts', 'synthetic-spout.js');
    const extraEnv = (source: string) =>
      Object.fromEntries(
        (process.env[`READ_COST_ENV_${source.toUpperCase()}`] ?? '')
          .split(',')
          .filter(Boolean)
          .map((kv) => kv.split('=') as [string, string]),
      );
    const results = new Map<string, DriverResult[]>(sources.map((s) => [s, []]));
    const runOne = async (source: string, round: number) => {
      const name = `read-cost-${process.pid}-${source}-${round}`;
      const isKinesis = source.startsWith('kinesis');
      // A live stream is read from its tip; a pre-filled one from the start.
      const settings = {
        ...SETTINGS,
        ...(live ? { initialPosition: 'LATEST' } : {}),
        ...JSON.parse(process.env[`READ_COST_CONF_${source.toUpperCase()}`] ?? '{}'),
      };
      const conf = isKinesis
        ? benchConf(zk, kinesis, stream, name, settings)
        : benchConf(zk, undefined, 'synthetic', name, settings);
      // A directory per run: the watchdog thread writes a profile of its own (the main thread's has the lowest seq).
      const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : [];
      const script = process.env[`READ_COST_SCRIPT_${source.toUpperCase()}`];
      const result = await drive(driver, {
        script: script ?? (isKinesis ? join(root, 'multilang/resources/kinesis-spout.cjs') : synthetic),
        nodeOptions: [
          ...benchNodeOptions(),
          ...(process.env[`READ_COST_NODE_OPTIONS_${source.toUpperCase()}`] ?? '').split(' ').filter(Boolean),
          ...profile,
        ],
        env: {
          ...shellSpoutEnv(),
          AWS_ACCESS_KEY_ID: 'bench',
          AWS_SECRET_ACCESS_KEY: 'bench',
          PAYLOAD_BYTES: '100',
          SYNTHETIC_SHARDS: String(SHARDS),
          SYNTHETIC_RECORDS_PER_SECOND: String(rate / SHARDS),
          ...extraEnv(source),
        },
        conf,
        startTimeoutMs: 30_000,
        warmupSeconds: WARMUP_SECONDS,
        seconds,
        windowMs: 100,
        // Live: every record as it comes (Storm's wait strategy between empty nexts); else paced at the rate.
        ...(live ? {} : { tuplesPerSecond: rate }),
      });
      results.get(source)!.push(result);
      if (profileDir) writeFileSync(join(profileDir, `${name}.json`), JSON.stringify(result));
      log(
        `read cost round ${round + 1} ${source}: ${Math.round(result.tuplesPerSecond)} tuples/s, ` +
          `${result.responderCpuMicrosPerTuple.toFixed(1)} us CPU/tuple (user ${result.responderUserMicrosPerTuple.toFixed(1)}), ` +
          `${result.emptyNexts} empty nexts, ${result.rssMiB} MiB, ${callsOf(result.responderStats)} (load ${loadavg()[0].toFixed(2)})`,
      );
    };
    const producer = live ? produce(kinesis, stream, rate, log) : undefined;
    try {
      for (let round = 0; round < rounds; round += 1) {
        const order = sources.map((_, i) => sources[(i + round) % sources.length]);
        if (parallel) await Promise.all(order.map((source) => runOne(source, round)));
        else for (const source of order) await runOne(source, round);
      }
    } finally {
      await producer?.stop();
    }
    for (const [source, list] of results) {
      const cpu = summarize(list.map((r) => r.responderCpuMicrosPerTuple));
      const user = summarize(list.map((r) => r.responderUserMicrosPerTuple));
      log(
        `read cost ${source}: ${cpu.median.toFixed(1)} (${cpu.min.toFixed(1)}-${cpu.max.toFixed(1)}, n=${cpu.n}) us CPU/tuple, user ${user.median.toFixed(1)}`,
      );
    }
    for (const [i, first] of sources.entries())
      for (const other of sources.slice(i + 1)) {
        const a = results.get(first)!;
        const b = results.get(other)!;
        const ratio = summarize(a.map((r, i) => r.responderCpuMicrosPerTuple / b[i].responderCpuMicrosPerTuple));
        log(
          `read cost ${first} / ${other}: ${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)}) round by round`,
        );
      }
  } finally {
    await own?.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
