/**
 * Enhanced fan-out at size: one process (a child of the bench, so that its memory is its own) holds S
 * subscriptions, one per shard, through the spout's fan-out readers and client against the project's fan-out
 * front (test/helpers/fanOutServer.ts, before the parallel emulator), for longer than a subscription's
 * lifetime, so that every one is renewed. Two clients side by side, each through its own consumer: `sdk`, the
 * SDK's own HTTP/2 handler (a connection per subscription, made again at every renewal), and `shared`, the
 * spout's (fanOutClient.ts: up to 100 streams a connection, never more than the server advertises, 100 here).
 * Reported per client: how long until every subscription was open, the SubscribeToShard calls refused (by
 * error; the one-call-per-second-per-shard rule is LimitExceededException), renewals and the most calls that
 * arrived in any one second, the connections open, and the process's RSS and heap, before the readers and
 * with every subscription open (its peak too), per subscription.
 *
 * Usage: tsx bench/fanOutScale.ts [shards=1024] [lifetimeSeconds=300] [clients=sdk,shared]; FAN_OUT_SCALE_QUICK=1
 * (32 shards, 6 s lifetimes, past the 5 s in which a renewal is refused: a smoke run; `BENCH_SECTIONS=fanOutScale npm run bench` runs it too); writes bench/results/fanOutScale-<time>.json.
 * `tsx bench/fanOutScale.ts hold <endpoint> <consumerArn> <streamName> <shards> <streamsPerConnection>` is
 * the child.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DescribeStreamConsumerCommand, RegisterStreamConsumerCommand } from '@aws-sdk/client-kinesis';
import { realScheduler } from '../src/core/scheduler';
import { createFanOutClient } from '../src/kinesis/fanOutClient';
import { fanOutReaders } from '../src/kinesis/fanOutReader';
import type { ShardReaderEvents } from '../src/kinesis/reader';
import { startFanOutServer } from '../test/helpers/fanOutServer';
import { createStream, kinesisClient } from '../test/helpers/kinesisAdmin';
import { startFastKinesis } from '../test/helpers/kinesisServer';
import { peakRssMiB, sleep } from './lib';

const CLIENTS = { sdk: 1, shared: 100 } as const;
type Client = keyof typeof CLIENTS;

/** What the child prints once a second. */
interface HoldReport {
  phase: 'before' | 'holding';
  rssMiB: number;
  heapMiB: number;
  opened: number;
  ended: number;
  retried: number;
  errors: number;
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

async function hold(args: string[]): Promise<void> {
  const [endpoint, consumerArn, streamName, shardsArg, perConnection] = args;
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const kinesis = createFanOutClient(
    { region: 'us-east-1', endpoint },
    { streamsPerConnection: Number(perConnection) },
  );
  const counts = { opened: 0, ended: 0, retried: 0, errors: 0 };
  const gc = (globalThis as { gc?: () => void }).gc;
  const report = (phase: HoldReport['phase']) => {
    // Collected first: what the subscriptions hold, not what the last second left to collect.
    gc?.();
    const memory = process.memoryUsage();
    process.stdout.write(
      `${JSON.stringify({ phase, rssMiB: mib(memory.rss), heapMiB: mib(memory.heapUsed), ...counts })}\n`,
    );
  };
  await sleep(1_000);
  report('before');
  const readers = fanOutReaders({
    kinesis,
    scheduler: realScheduler,
    stream: { streamName },
    consumer: { arn: async () => consumerArn, forget: () => undefined },
  });
  const shards = Number(shardsArg);
  for (let i = 0; i < shards; i += 1) {
    const events: ShardReaderEvents = {
      records: () => undefined,
      end: () => undefined,
      notFound: async () => undefined,
      error: () => {
        counts.errors += 1;
      },
      room: () => 10_000,
      hasRoom: () => true,
      requested: () => undefined,
      log: () => undefined,
      subscription: (what) => {
        if (what === 'opened') counts.opened += 1;
        else if (what === 'ended') counts.ended += 1;
        else counts.retried += 1;
      },
    };
    readers(`shardId-${String(i).padStart(12, '0')}`, events).start({ kind: 'TRIM_HORIZON' });
  }
  setInterval(() => report('holding'), 1_000);
}

export interface ClientFigures {
  client: Client;
  shards: number;
  lifetimeSeconds: number;
  allOpenAfterMs: number | null;
  calls: number;
  refused: Record<string, number>;
  renewals: number;
  mostCallsInOneSecond: number;
  connections: number;
  rssBeforeMiB: number;
  rssHoldingMiB: number;
  peakRssMiB: number;
  heapHoldingMiB: number;
  kibPerSubscription: number;
}

async function measure(
  client: Client,
  world: { endpoint: string; streamName: string; consumerArn: string },
  front: Awaited<ReturnType<typeof startFanOutServer>>,
  shards: number,
  lifetimeSeconds: number,
  log: (line: string) => void,
): Promise<ClientFigures> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      __filename,
      'hold',
      world.endpoint,
      world.consumerArn,
      world.streamName,
      String(shards),
      String(CLIENTS[client]),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const reports: HoldReport[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => reports.push(JSON.parse(line)));
  const callsBefore = front.subscribeCalls.length;
  const ours = () => front.subscribeCalls.slice(callsBefore).filter((c) => c.consumerArn === world.consumerArn);
  try {
    while (!reports.some((r) => r.phase === 'before')) await sleep(100);
    const started = performance.now();
    let allOpenAt: number | undefined;
    // Until every subscription has been open for longer than a lifetime: each renewed once at least.
    const deadline = started + (lifetimeSeconds * 1.3 + 20) * 1_000;
    while (performance.now() < deadline) {
      await sleep(250);
      const last = reports[reports.length - 1];
      if (allOpenAt === undefined && last.phase === 'holding' && last.opened >= shards) allOpenAt = performance.now();
      if (allOpenAt !== undefined && performance.now() > allOpenAt + lifetimeSeconds * 1.1 * 1_000 + 5_000) break;
    }
    const calls = ours();
    const refused: Record<string, number> = {};
    for (const call of calls) if (call.outcome !== 'ok') refused[call.outcome] = (refused[call.outcome] ?? 0) + 1;
    const arrivals = calls.map((c) => c.arrivedAt).sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < arrivals.length; i += 1) {
      while (arrivals[i] - arrivals[j] >= 1_000) j += 1;
      most = Math.max(most, i - j + 1);
    }
    const before = reports.find((r) => r.phase === 'before')!;
    // Holding: the median report once every subscription was open (renewals included).
    const holding = reports.filter((r) => r.phase === 'holding' && r.opened >= shards);
    const byRss = [...(holding.length ? holding : reports)].sort((a, b) => a.rssMiB - b.rssMiB);
    const last = { ...byRss[Math.floor(byRss.length / 2)], errors: reports[reports.length - 1].errors };
    const figures: ClientFigures = {
      client,
      shards,
      lifetimeSeconds,
      allOpenAfterMs: allOpenAt === undefined ? null : Math.round(allOpenAt - started),
      calls: calls.length,
      refused,
      renewals: calls.filter((c) => c.outcome === 'ok').length - shards,
      mostCallsInOneSecond: most,
      connections: front.sessions(),
      rssBeforeMiB: before.rssMiB,
      rssHoldingMiB: last.rssMiB,
      peakRssMiB: peakRssMiB(child.pid!),
      heapHoldingMiB: last.heapMiB,
      kibPerSubscription: Math.round(((last.rssMiB - before.rssMiB) * 1024) / shards),
    };
    log(
      `fan-out scale ${client}: ${shards} subscriptions open after ${figures.allOpenAfterMs} ms; ${figures.calls} calls, refused ${JSON.stringify(refused)}, ${figures.renewals} renewals, at most ${most} calls in a second; ${figures.connections} connections; RSS ${before.rssMiB} → ${last.rssMiB} MiB (peak ${figures.peakRssMiB}), heap ${last.heapMiB} MiB, ${figures.kibPerSubscription} KiB per subscription; reader errors ${last.errors}`,
    );
    return figures;
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

export interface FanOutScaleOptions {
  shards: number;
  lifetimeSeconds: number;
  clients: Client[];
}

/** Each client in turn, through a consumer of its own, against one front and emulator. */
export async function fanOutScaleBench(
  options: FanOutScaleOptions,
  log: (line: string) => void,
): Promise<ClientFigures[]> {
  const { shards, lifetimeSeconds, clients } = options;
  const bad = clients.find((c) => !(c in CLIENTS));
  if (bad) throw new Error(`clients: unknown ${bad}; allowed: ${Object.keys(CLIENTS).join(', ')}`);
  const kinesis = await startFastKinesis({ latencyMs: 15 });
  // The front reads each shard every 5 s and sends an event as often when there is nothing (Kinesis: every
  // few seconds): its own load, in the bench's process, is then not what limits the child.
  const front = await startFanOutServer(kinesis.endpoint, {
    lifetimeMs: lifetimeSeconds * 1_000,
    pollIntervalMs: 5_000,
    idleEventMs: 5_000,
  });
  const admin = kinesisClient({ endpoint: front.endpoint, region: kinesis.region });
  const results: ClientFigures[] = [];
  try {
    const streamName = `fan-out-scale-${process.pid}-${Date.now()}`;
    await createStream(admin, streamName, shards);
    const streamArn = await arnOf(admin, streamName);
    for (const client of clients) {
      const consumerArn = await consumer(admin, streamArn, `scale-${client}`);
      results.push(
        await measure(
          client,
          { endpoint: front.endpoint, streamName, consumerArn },
          front,
          shards,
          lifetimeSeconds,
          log,
        ),
      );
    }
  } finally {
    admin.destroy();
    await front.close();
    await kinesis.stop();
  }
  return results;
}

/** `npm run bench`'s options: FAN_OUT_SCALE_QUICK or BENCH_QUICK, a smoke run of well under a minute. */
export function fanOutScaleOptions(quick: boolean, args: string[] = []): FanOutScaleOptions {
  return {
    shards: quick ? 32 : Number(args[0] ?? 1024),
    lifetimeSeconds: quick ? 6 : Number(args[1] ?? 300),
    clients: (args[2] ?? 'sdk,shared').split(',') as Client[],
  };
}

async function main(): Promise<void> {
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const quick = process.env.FAN_OUT_SCALE_QUICK === '1';
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const results = await fanOutScaleBench(fanOutScaleOptions(quick, process.argv.slice(2)), log);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const file = join(__dirname, 'results', `fanOutScale-${stamp}${quick ? '-quick' : ''}.json`);
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2)}\n`);
  log(`results: ${file}`);
}

async function arnOf(admin: ReturnType<typeof kinesisClient>, streamName: string): Promise<string> {
  const { DescribeStreamSummaryCommand } = await import('@aws-sdk/client-kinesis');
  const summary = await admin.send(new DescribeStreamSummaryCommand({ StreamName: streamName }));
  return summary.StreamDescriptionSummary!.StreamARN!;
}

/** A consumer registered and ACTIVE: its ARN. */
async function consumer(admin: ReturnType<typeof kinesisClient>, streamArn: string, name: string): Promise<string> {
  const { Consumer } = await admin.send(
    new RegisterStreamConsumerCommand({ StreamARN: streamArn, ConsumerName: name }),
  );
  for (;;) {
    const described = await admin.send(new DescribeStreamConsumerCommand({ ConsumerARN: Consumer!.ConsumerARN }));
    if (described.ConsumerDescription?.ConsumerStatus === 'ACTIVE') return Consumer!.ConsumerARN!;
    await sleep(200);
  }
}

if (require.main === module) {
  const run = process.argv[2] === 'hold' ? hold(process.argv.slice(3)) : main();
  run.catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
