/**
 * `npm run bench`: every benchmark in one run on this machine, results in bench/results/<date>.json and
 * the figures of docs/benchmarks-task.md and docs/benchmarks-scale.md regenerated from them. BENCH_SECTIONS=protocol,reshard,... picks some;
 * BENCH_QUICK=1 is a smoke run (numbers meaningless, nothing asserted). The protocol section's runs:
 * BENCH_ROUNDS, BENCH_SECONDS, BENCH_PAYLOADS=100,1024, BENCH_REGIMES=idle,busy,
 * BENCH_RESPONDERS=ceiling,floor,stormjs,spout,spout64,spoutLoop. BENCH_NOTE is printed under the heading.
 * twoApps: two applications on one stream, polling without and with budgets and fan-out (bench/twoApps.ts);
 * balance: balance by throughput against balance by count, one shard at 20 times the others' rate (bench/balance.ts);
 * BENCH_BALANCE_MODES=count,throughput, BENCH_BALANCE_QUIET_S (how long each run goes on after the producer
 * stopped, default 120). BENCH_ROUNDS, BENCH_REGIMES and BENCH_PUT_RATE (records/s put to its one shard, default 50) apply.
 * Every spout process starts as KinesisShellSpout starts it: its NODE_OPTIONS and ENVIRONMENT, read from the Java
 * class (bench/lib.ts); BENCH_NODE_OPTIONS replaces the options ("" for none), a variable in the environment wins.
 * deploy: a new version deployed beside the running topology, several ways, Storm's commands as ShellSpout sees
 * them (bench/deploy.ts): BENCH_DEPLOY_WAYS=greenThenKill,killThenGreen,..., BENCH_DEPLOY_WAIT_S (the kill's
 * wait, default 30, Storm's), BENCH_DEPLOY_PREVIOUS (the commit blue runs in the previous* ways; default
 * test/helpers/previousRelease.ts's), BENCH_ROUNDS and BENCH_REGIMES apply.
 * idleMemory: RSS of one process holding 1, 8 and 64 idle shards (bench/idleMemory.ts).
 * memorySoak: RSS of 3 tasks reading 4 shards for 15 minutes, records put, 2 % failed, a split or a merge every
 * 45 s (bench/memorySoak.ts; BENCH_SOAK_SECONDS, BENCH_SOAK_PUT_RATE, ...). Being long it runs only when named
 * (BENCH_SECTIONS=memorySoak), and in BENCH_QUICK's smoke run (50 s).
 * decode: CPU per record of reading GetRecords answers, the SDK's deserializer and the fast path against the
 * rest of the path to the emit frame (bench/decode.ts): BENCH_DECODE_SIZES=100,1024,10240 (bytes a record),
 * BENCH_DECODE_BATCHES=500,10000 (records a call, at most 10 MiB), BENCH_ROUNDS, BENCH_REGIMES; then the real spout
 * process on its synthetic source in three wires (objects, the SDK's reading, the fast path): BENCH_PAYLOADS,
 * BENCH_SECONDS, at most 3 rounds. BENCH_DECODE_SPOUT_ONLY=1 skips the stages.
 * The scale sections: SCALE=16x4,64x8 (shards x tasks, real processes; `64x8@fast` names the emulator of one
 * size), SCALE_KINESIS=kinesis-local,fast (the emulators each other size runs on, in turn: kinesis-local by
 * default; fast is ours, test/helpers/fastKinesis/, its fixed latency SCALE_FAST_LATENCY_MS, default 15),
 * SCALE_SPOUT_CONF (a JSON object of `kinesis.spout` keys every task of a scale run gets), SCALE_PROXY_TASKS (the
 * tasks whose counting proxies share one process, default 8: the proxies and the producer run apart from the driver),
 * SCALE_SIM=64x8,256x16,1024x32,4096x64,8192x128 (the simulation, virtual time; SCALE_SIM_SEED, default 1), SCALE_EMULATOR=16,64,256,512 (the
 * emulators' own round trips, each of SCALE_KINESIS).
 * trickle: what a caught-up shard receiving 0, 1 or 10 records/s costs and how soon its records are emitted, under
 * four choices of its polling pause side by side (bench/trickle.ts; its figures: docs/configuration.md);
 * fanOutScale: one process holding 1,024 fan-out subscriptions through two renewals' worth of lifetimes, the
 * SDK's HTTP/2 handler against the spout's (bench/fanOutScale.ts; docs/benchmarks-thousands.md). Both run only
 * when named, and in BENCH_QUICK's smoke run.
 * kclSideBySide: the real KCL 2.7.0 (Java, test/kcl, lease table on dynalite) and one spout process, each alone
 * holding 64 then 256 idle shards of the parallel emulator: idle CPU per shard and per GetRecords, RSS, pickup
 * (bench/kclSideBySide.ts; docs/benchmarks-thousands.md): BENCH_KCL_SHARDS=64,256, BENCH_ROUNDS, BENCH_REGIMES,
 * BENCH_KCL_SETTLE_S, BENCH_KCL_WINDOW_S; BENCH_KCL_MEASURE=failover (or cost,failover) kills one of two processes
 * instead and times the survivor's takeover. Run only when named, and not in BENCH_QUICK's smoke run: a fresh KCL
 * application's first shard sync waits 1-30 s on an empty lease table and then its 60 s sync interval before it
 * takes a lease, so even 4 shards cost over 90 s.
 * storm: end to end in LocalCluster (bench/storm.ts): BENCH_STORM_SPOUTS=native,stormjs,spout,spoutCompact,spoutKinesis,spoutPaced,
 * BENCH_STORM_PENDING=100,1000,5000, BENCH_STORM_ROUNDS, BENCH_STORM_SECONDS, BENCH_REGIMES,
 * BENCH_STORM_SERIALIZER (a `topology.multilang.serializer` class for the shell spouts but spoutCompact, which has
 * CompactSerializer; JSON otherwise).
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { kinesisClient } from '../test/helpers/kinesisAdmin';
import {
  startFastKinesis,
  startKinesalite,
  startKinesisLocal,
  type KinesisServer,
} from '../test/helpers/kinesisServer';
import { startZooKeeper } from '../test/helpers/zookeeperServer';
import { protocolBench, Regime, RESPONDERS, type Responder } from './protocol';
import { LONG_SECTIONS, PAGE_SECTIONS, type Report, withEarlierLongSections, writeBenchmarkPages } from './report';
import { failoverBench, reshardBench } from './resharding';
import { decodeBench, fanOutLatencyBench } from './fanOut';
import { idleMemoryBench } from './idleMemory';
import { memorySoakBench, soakOptions } from './memorySoak';
import { decodeBench as getRecordsDecodeBench, spoutWireBench } from './decode';
import { parseKinesis, parseSizes, type ScaleKinesis, scaleBench, scaleRuns } from './scale';
import { emulatorBench } from './scale/emulator';
import { scaleSimBench } from './scaleSim';
import { STORM_SPOUTS, stormBench, type StormSpout } from './storm';
import { costBench, latencyBench, throughputBench } from './stream';
import { twoAppsBench } from './twoApps';
import { BALANCE_MODES, type BalanceMode, balanceBench } from './balance';
import { DEPLOY_WAYS, type DeployWay, deployBench } from './deploy';
import { fanOutScaleBench, fanOutScaleOptions } from './fanOutScale';
import { kclSideBySideBench, kclSideOptions } from './kclSideBySide';
import { trickleBench, trickleOptions } from './trickle';

const ROOT = resolve(__dirname, '..');
const QUICK = process.env.BENCH_QUICK === '1';
/** What a plain `npm run bench` runs; the long sections (the soak) only when named, or in the quick smoke run. */
const DEFAULT_SECTIONS: string[] = [...PAGE_SECTIONS, 'idleMemory'];
/** Sections whose figures are written by hand to their page: run when named, and in the quick smoke run. */
const NAMED_SECTIONS = ['trickle', 'fanOutScale'];
/** Run only when named, not even in the quick smoke run (too long there). */
const NAMED_ONLY_SECTIONS = ['kclSideBySide'];
const QUICK_SECTIONS: string[] = [...DEFAULT_SECTIONS, ...LONG_SECTIONS, ...NAMED_SECTIONS];
const ALL_SECTIONS: string[] = [...QUICK_SECTIONS, ...NAMED_ONLY_SECTIONS];
const SECTIONS = (process.env.BENCH_SECTIONS ?? (QUICK ? QUICK_SECTIONS : DEFAULT_SECTIONS).join(',')).split(',');
const unknownSections = SECTIONS.filter((s) => !ALL_SECTIONS.includes(s));
if (unknownSections.length)
  throw new Error(`BENCH_SECTIONS: unknown ${unknownSections.join(', ')}; allowed: ${ALL_SECTIONS.join(', ')}`);
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').filter(Boolean);
function regimesOf(fallback: string): Regime[] {
  const regimes = list('BENCH_REGIMES', fallback);
  const bad = regimes.find((r) => r !== Regime.Idle && r !== Regime.Busy);
  if (bad) throw new Error(`BENCH_REGIMES: unknown ${bad}; allowed: idle, busy`);
  return regimes as Regime[];
}
const log = (line: string) => process.stdout.write(`${line}\n`);

async function withEmulator<T>(
  start: () => Promise<KinesisServer>,
  work: (server: KinesisServer, client: KinesisClient) => Promise<T>,
): Promise<T> {
  const server = await start();
  const client = kinesisClient(server);
  try {
    return await work(server, client);
  } finally {
    client.destroy();
    await server.stop();
  }
}

async function main(): Promise<void> {
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const zk = await startZooKeeper();
  const report: Report = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    node: process.version,
    commit: execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim(),
    quick: QUICK,
    // What the figures cannot say themselves (a shared machine, a shortened run).
    ...(process.env.BENCH_NOTE ? { notes: [process.env.BENCH_NOTE] } : {}),
  };
  try {
    const has = (section: string) => SECTIONS.includes(section);
    if (has('protocol')) {
      const responders = list('BENCH_RESPONDERS', RESPONDERS.join(','));
      const unknown = responders.filter((r) => !(RESPONDERS as readonly string[]).includes(r));
      if (unknown.length)
        throw new Error(`BENCH_RESPONDERS: unknown ${unknown.join(', ')}; allowed: ${RESPONDERS.join(', ')}`);
      const regimes = regimesOf('idle,busy');
      report.protocol = await protocolBench(
        ROOT,
        zk,
        {
          rounds: Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 5)),
          seconds: Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 5)),
          warmupSeconds: QUICK ? 0.5 : 1,
          payloads: list('BENCH_PAYLOADS', QUICK ? '100' : '100,1024').map(Number),
          regimes,
          responders: responders as Responder[],
        },
        log,
      );
    }
    if (has('decode')) {
      const regimes = regimesOf(QUICK ? 'idle' : 'idle,busy');
      const rounds = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 5));
      report.decode = {
        stages: process.env.BENCH_DECODE_SPOUT_ONLY
          ? []
          : await getRecordsDecodeBench(
              {
                rounds,
                sizes: list('BENCH_DECODE_SIZES', QUICK ? '100' : '100,1024,10240').map(Number),
                batches: list('BENCH_DECODE_BATCHES', QUICK ? '500' : '500,10000').map(Number),
                regimes,
                minMs: QUICK ? 50 : 300,
              },
              log,
            ),
        spout: await spoutWireBench(
          ROOT,
          zk,
          {
            rounds: Math.min(rounds, 3),
            seconds: Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 5)),
            warmupSeconds: QUICK ? 0.5 : 1,
            payloads: list('BENCH_PAYLOADS', QUICK ? '100' : '100,1024').map(Number),
            regimes,
          },
          log,
        ),
      };
    }
    if (has('fanOut'))
      report.fanOut = { decode: await decodeBench(QUICK ? 1 : 3, [1, 64], QUICK ? 4_000 : 32_000, log) };
    if (has('trickle')) report.trickle = await trickleBench(zk, trickleOptions(QUICK), log);
    if (has('fanOutScale')) report.fanOutScale = await fanOutScaleBench(fanOutScaleOptions(QUICK), log);
    if (has('kclSideBySide')) report.kclSideBySide = await kclSideBySideBench(zk, kclSideOptions(QUICK), log);
    if (has('scaleSim'))
      report.scaleSim = await scaleSimBench(
        parseSizes(process.env.SCALE_SIM ?? (QUICK ? '16x4' : '64x8,256x16,1024x32,4096x64,8192x128')),
        log,
      );
    if (has('scale') || has('emulator')) {
      const kinesis = parseKinesis(process.env.SCALE_KINESIS);
      // An emulator apart from the other sections' (the scale runs leave hundreds of shards behind).
      const startScaleKinesis = (which: ScaleKinesis) =>
        which === 'fast'
          ? startFastKinesis({ latencyMs: Number(process.env.SCALE_FAST_LATENCY_MS ?? 15) })
          : startKinesisLocal({ shardLimit: 20_000 });
      if (has('emulator')) {
        report.emulator = [];
        for (const which of kinesis)
          report.emulator.push(
            ...(await withEmulator(
              () => startScaleKinesis(which),
              (_, client) =>
                emulatorBench(
                  which,
                  client,
                  list('SCALE_EMULATOR', QUICK ? '16,64' : '16,64,256,512').map(Number),
                  QUICK ? 3 : 20,
                  log,
                ),
            )),
          );
      }
      if (has('scale'))
        report.scale = await scaleBench(
          scaleRuns(parseSizes(process.env.SCALE ?? (QUICK ? '8x2' : '16x4,64x8')), kinesis),
          zk,
          startScaleKinesis,
          QUICK,
          log,
        );
    }
    if (has('storm')) {
      const spouts = list('BENCH_STORM_SPOUTS', STORM_SPOUTS.join(','));
      const unknown = spouts.filter((s) => !(STORM_SPOUTS as readonly string[]).includes(s));
      if (unknown.length)
        throw new Error(`BENCH_STORM_SPOUTS: unknown ${unknown.join(', ')}; allowed: ${STORM_SPOUTS.join(', ')}`);
      const regimes = regimesOf(QUICK ? 'idle' : 'idle,busy');
      const pendings = list('BENCH_STORM_PENDING', QUICK ? '1000' : '100,1000,5000').map(Number);
      const badPending = pendings.find((p) => !Number.isInteger(p) || p < 1);
      if (badPending !== undefined) throw new Error(`BENCH_STORM_PENDING: ${badPending} is not a positive integer`);
      report.storm = await withEmulator(startKinesisLocal, (server, client) =>
        stormBench(
          ROOT,
          zk,
          { server, client },
          {
            rounds: Number(process.env.BENCH_STORM_ROUNDS ?? (QUICK ? 1 : 3)),
            warmupSeconds: QUICK ? 0.5 : 3,
            seconds: Number(process.env.BENCH_STORM_SECONDS ?? (QUICK ? 1 : 5)),
            pendings,
            regimes,
            spouts: spouts as StormSpout[],
            payloadBytes: 100,
            ...(process.env.BENCH_STORM_SERIALIZER ? { serializer: process.env.BENCH_STORM_SERIALIZER } : {}),
            kinesisRecords: QUICK ? 3_000 : 15_000,
            kinesisShards: 4,
          },
          log,
        ),
      );
    }
    const onKinesisLocal = [
      'reshard',
      'failover',
      'latency',
      'cost',
      'throughput',
      'fanOut',
      'twoApps',
      'balance',
      'deploy',
      'idleMemory',
      'memorySoak',
    ];
    if (onKinesisLocal.some(has)) {
      await withEmulator(startKinesisLocal, async (server, client) => {
        if (has('fanOut')) report.fanOut!.latency = await fanOutLatencyBench(zk, server, client, QUICK ? 10 : 100, log);
        if (has('twoApps'))
          report.twoApps = await twoAppsBench(
            zk,
            server,
            client,
            {
              rounds: Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3)),
              regimes: regimesOf(QUICK ? 'idle' : 'idle,busy'),
              warmupSeconds: QUICK ? 1 : 5,
              windowSeconds: QUICK ? 1 : 20,
              putRecordsPerSecond: Number(process.env.BENCH_PUT_RATE ?? 50),
            },
            log,
          );
        if (has('balance')) {
          const modes = list('BENCH_BALANCE_MODES', QUICK ? 'throughput' : BALANCE_MODES.join(','));
          const bad = modes.find((m) => !(BALANCE_MODES as readonly string[]).includes(m));
          if (bad) throw new Error(`BENCH_BALANCE_MODES: unknown ${bad}; allowed: ${BALANCE_MODES.join(', ')}`);
          report.balance = await balanceBench(
            zk,
            server,
            client,
            {
              rounds: Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3)),
              modes: modes as BalanceMode[],
              regimes: regimesOf(QUICK ? 'idle' : 'idle,busy'),
              // Balance by count never gets there (the hot shard's task holds about half the shards).
              timeoutMs: { count: 45_000, throughput: QUICK ? 60_000 : 120_000 },
              // Long enough for the hot shard's load to decay below the planner's floor and the idle shards to be shared by count.
              quietMs: Number(process.env.BENCH_BALANCE_QUIET_S ?? (QUICK ? 0 : 120)) * 1000,
            },
            log,
          );
        }
        if (has('deploy')) {
          const ways = list('BENCH_DEPLOY_WAYS', QUICK ? 'greenThenKill,killThenGreen' : DEPLOY_WAYS.join(','));
          const bad = ways.find((w) => !(DEPLOY_WAYS as readonly string[]).includes(w));
          if (bad) throw new Error(`BENCH_DEPLOY_WAYS: unknown ${bad}; allowed: ${DEPLOY_WAYS.join(', ')}`);
          report.deploy = await deployBench(
            zk,
            server,
            client,
            {
              ways: ways as DeployWay[],
              regimes: regimesOf(QUICK ? 'idle' : 'idle,busy'),
              rounds: Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 2)),
              // Storm's default: the message timeout. The smoke run's is short: numbers meaningless.
              waitSeconds: Number(process.env.BENCH_DEPLOY_WAIT_S ?? (QUICK ? 3 : 30)),
              steadySeconds: QUICK ? 1 : 10,
              afterSeconds: QUICK ? 1 : 5,
              previousCommit: process.env.BENCH_DEPLOY_PREVIOUS || undefined,
            },
            log,
          );
        }
        if (has('reshard')) report.reshard = await reshardBench(zk, server, client, QUICK ? 1 : 7, log);
        if (has('failover')) report.failover = await failoverBench(zk, server, client, QUICK ? 1 : 3, log);
        if (has('latency')) report.latency = await latencyBench(zk, server, client, QUICK ? 10 : 100, log);
        if (has('cost')) report.cost = await costBench(zk, server, client, QUICK ? 2 : 10, log);
        if (has('idleMemory'))
          report.idleMemory = await idleMemoryBench(
            zk,
            server,
            client,
            QUICK ? [1, 8] : [1, 8, 64],
            QUICK ? 5 : 30,
            log,
          );
        if (has('memorySoak')) report.memorySoak = await memorySoakBench(zk, server, client, soakOptions(QUICK), log);
        if (has('throughput'))
          report.throughput = [
            await throughputBench('kinesis-local', zk, server, client, QUICK ? 1_000 : 8_000, QUICK ? 1 : 3, log),
          ];
      });
      if (has('throughput')) {
        report.throughput!.push(
          await withEmulator(startKinesalite, (server, client) =>
            throughputBench('kinesalite', zk, server, client, QUICK ? 1_000 : 20_000, QUICK ? 1 : 3, log),
          ),
        );
      }
    }
  } finally {
    await zk.stop();
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const file = join(ROOT, `bench/results/${report.date.slice(0, 19).replace(/:/g, '-')}${QUICK ? '-quick' : ''}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote ${file}`);
  if (!QUICK && DEFAULT_SECTIONS.every((s) => SECTIONS.includes(s))) {
    // The long sections not run this time: the last full run's figures stay on the page, said to be older.
    const page = withEarlierLongSections(report, join(ROOT, 'bench/results'));
    writeBenchmarkPages(page);
    log('docs/benchmarks-task.md and docs/benchmarks-scale.md regenerated');
  } else if (!QUICK) {
    log(
      `some sections only: the benchmark pages left alone (npx tsx bench/report.ts <older full result> ${file} merges them into them)`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
