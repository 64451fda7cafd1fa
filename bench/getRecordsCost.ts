/**
 * CPU per GetRecords call of idle shards, the SDK's way and the lean way (src/kinesis/leanGetRecords.ts),
 * side by side: one process polls S idle shards of the project's parallel emulator (test/helpers/fastKinesis,
 * its own process, 15 ms a call) once a second each, spread over the second, through the spout's client
 * (createKinesisClient) with `leanGetRecords` off and on, and through a bare unsigned http.request as the floor
 * (the order rotating by round), and reports the
 * process's CPU (user + system) per call over each window. GET_RECORDS_COST_PROFILE=1 runs each window under
 * the inspector's CPU profiler and writes `<mode>-<round>.cpuprofile` beside the results.
 *
 * Usage: tsx bench/getRecordsCost.ts [rounds=3] [shards=256] [seconds=20]; writes bench/results/getRecordsCost-<time>.json.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { request } from 'node:http';
import { createKinesisClient, sharedAgents } from '../src/kinesis/client';
import { createStream, kinesisClient, listAllShards } from '../test/helpers/kinesisAdmin';
import { startFastKinesis } from '../test/helpers/kinesisServer';
import { summarize } from './lib';

process.env.AWS_ACCESS_KEY_ID ??= 'bench';
process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';

/** `bare`: a floor, not a client: an unsigned keep-alive http.request on the same agent, its answer JSON.parse'd. */
const MODES = ['sdk', 'lean', 'bare'] as const;
type Mode = (typeof MODES)[number];

interface Window {
  mode: Mode;
  round: number;
  calls: number;
  cpuMicrosPerCall: number;
  userMicrosPerCall: number;
  load: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The floor's client: the request the lean path sends, without signing, credentials or the SDK behind it. */
function bareClient(endpoint: string): KinesisClient {
  const url = new URL(endpoint);
  const send = (command: GetRecordsCommand) =>
    new Promise<GetRecordsCommandOutput>((resolve, reject) => {
      const body = JSON.stringify(command.input);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          agent: sharedAgents().http,
          headers: {
            'content-type': 'application/x-amz-json-1.1',
            'x-amz-target': 'Kinesis_20131202.GetRecords',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { send, destroy: () => undefined } as unknown as KinesisClient;
}

/** Polls every shard once a second for `seconds`, each at its own offset in the second; the calls made. */
async function poll(client: KinesisClient, iterators: string[], seconds: number): Promise<number> {
  let calls = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    iterators.map(async (first, i) => {
      let iterator: string | undefined = first;
      await sleep((i * 1000) / iterators.length);
      while (iterator && performance.now() < until) {
        const started = performance.now();
        const answer: GetRecordsCommandOutput = await client.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
        );
        calls += 1;
        iterator = answer.NextShardIterator;
        iterators[i] = iterator ?? iterators[i];
        await sleep(Math.max(0, 1000 - (performance.now() - started)));
      }
    }),
  );
  return calls;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const shards = Number(process.argv[3] ?? 256);
  const seconds = Number(process.argv[4] ?? 20);
  const profile = process.env.GET_RECORDS_COST_PROFILE === '1';
  const server = await startFastKinesis();
  const admin = kinesisClient(server);
  const stream = `get-records-cost-${process.pid}`;
  const windows: Window[] = [];
  const resultsDir = join(__dirname, 'results');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  try {
    await createStream(admin, stream, shards);
    const shardIds = (await listAllShards(admin, stream)).map((s) => s.ShardId!);
    const iterators = await Promise.all(
      shardIds.map(
        async (ShardId) =>
          (await admin.send(new GetShardIteratorCommand({ StreamName: stream, ShardId, ShardIteratorType: 'LATEST' })))
            .ShardIterator!,
      ),
    );
    const session = profile ? new Session() : undefined;
    session?.connect();
    for (let round = 0; round < rounds; round += 1) {
      const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]);
      for (const mode of order) {
        const client =
          mode === 'bare'
            ? bareClient(server.endpoint)
            : createKinesisClient({
                region: server.region,
                endpoint: server.endpoint,
                leanGetRecords: mode === 'lean',
              });
        // Warm: the lean path learns its route from the SDK's first call, sockets open, code is compiled.
        await poll(client, iterators, 2);
        if (session) {
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        const cpu = process.cpuUsage();
        const calls = await poll(client, iterators, seconds);
        const used = process.cpuUsage(cpu);
        if (session) {
          const { profile: cpuProfile } = await session.post('Profiler.stop');
          writeFileSync(
            join(resultsDir, `getRecordsCost-${stamp}-${mode}-${round}.cpuprofile`),
            JSON.stringify(cpuProfile),
          );
        }
        const window: Window = {
          mode,
          round,
          calls,
          cpuMicrosPerCall: (used.user + used.system) / calls,
          userMicrosPerCall: used.user / calls,
          load: loadavg()[0],
        };
        windows.push(window);
        process.stdout.write(
          `getRecords cost round ${round + 1} ${mode}: ${calls} calls, ${window.cpuMicrosPerCall.toFixed(0)} us CPU/call (user ${window.userMicrosPerCall.toFixed(0)}), load ${window.load.toFixed(2)}\n`,
        );
        client.destroy();
      }
    }
    session?.disconnect();
  } finally {
    admin.destroy();
    await server.stop();
  }
  const summary = Object.fromEntries(
    MODES.map((mode) => [mode, summarize(windows.filter((w) => w.mode === mode).map((w) => w.cpuMicrosPerCall))]),
  );
  const ratioTo = (mode: Mode) =>
    summarize(
      windows
        .filter((w) => w.mode === 'sdk')
        .map((w) => w.cpuMicrosPerCall / windows.find((l) => l.mode === mode && l.round === w.round)!.cpuMicrosPerCall),
    );
  const ratio = ratioTo('lean');
  for (const mode of MODES) {
    const s = summary[mode];
    process.stdout.write(
      `getRecords cost ${mode}: ${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)}, n=${s.n}) us CPU/call\n`,
    );
  }
  for (const [mode, r] of [
    ['lean', ratio],
    ['bare', ratioTo('bare')],
  ] as const)
    process.stdout.write(
      `getRecords cost sdk / ${mode}: ${r.median.toFixed(2)} (${r.min.toFixed(2)}-${r.max.toFixed(2)}) round by round\n`,
    );
  const file = join(resultsDir, `getRecordsCost-${stamp}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, shards, seconds, rounds, windows, summary, ratio }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${file}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
