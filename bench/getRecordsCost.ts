/**
 * CPU per GetRecords call of idle shards, each way of sending one side by side: one process polls S idle
 * shards of the project's parallel emulator (test/helpers/fastKinesis, its own process, 15 ms a call) once a
 * second each, spread over the second, and reports the process's CPU (user + system) and TCP connections
 * opened per call over each window, the modes' order rotating by round, with CPUs idle and with both kept
 * busy by `nice -n 19` loops. Modes: `sdk` and `lean`, the spout's client (createKinesisClient) with
 * `leanGetRecords` off and on; `raw` and `agent`, the lean path's signed request alone on its transport
 * (src/kinesis/rawHttp.ts) and on http.request with the shared agent (its transport before); `bare`, an
 * unsigned http.request on the agent read by JSON.parse. GET_RECORDS_COST_PROFILE=1 runs each window under
 * the inspector's CPU profiler and writes `<mode>-<regime>-<round>.cpuprofile` beside the results;
 * GET_RECORDS_COST_MODES (`sdk,lean,agent,raw,bare`) and GET_RECORDS_COST_REGIMES (`idle,busy`) pick.
 *
 * Usage: tsx bench/getRecordsCost.ts [rounds=3] [shards=256] [seconds=20]; writes bench/results/getRecordsCost-<time>.json.
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import {
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { request } from 'node:http';
import { createKinesisClient, sharedAgents, sharedRawPool } from '../src/kinesis/client';
import { parseGetRecords } from '../src/kinesis/fastGetRecords';
import { getRecordsBody, getRecordsHeaders } from '../src/kinesis/leanGetRecords';
import { requestText } from '../src/kinesis/rawHttp';
import { SigV4Signer } from '../src/kinesis/sigv4';
import { createStream, kinesisClient, listAllShards } from '../test/helpers/kinesisAdmin';
import { startFastKinesis } from '../test/helpers/kinesisServer';
import { summarize } from './lib';
import { startBusyLoops } from './protocol';

process.env.AWS_ACCESS_KEY_ID ??= 'bench';
process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';

/**
 * `bare`: a floor, not a client: an unsigned keep-alive http.request on the same agent, its answer JSON.parse'd.
 * `raw` and `agent`: the lean path's signed request without the SDK's client, on rawHttp.ts's pool (the lean
 * path's transport) or on http.request and the agent (its transport before), its answer read by the fast parser.
 */
const ALL_MODES = ['sdk', 'lean', 'agent', 'raw', 'bare'] as const;
type Mode = (typeof ALL_MODES)[number];
const MODES = (process.env.GET_RECORDS_COST_MODES?.split(',') ?? ALL_MODES).map((m) => {
  if (!(ALL_MODES as readonly string[]).includes(m))
    throw new Error(`GET_RECORDS_COST_MODES: ${JSON.stringify(m)} is not one of ${ALL_MODES.join(', ')}`);
  return m as Mode;
});
const REGIMES = (process.env.GET_RECORDS_COST_REGIMES?.split(',') ?? ['idle', 'busy']).map((r) => {
  if (r !== 'idle' && r !== 'busy')
    throw new Error(`GET_RECORDS_COST_REGIMES: ${JSON.stringify(r)} is not one of idle, busy`);
  return r;
});

interface Window {
  mode: Mode;
  regime: 'idle' | 'busy';
  round: number;
  calls: number;
  cpuMicrosPerCall: number;
  userMicrosPerCall: number;
  /** The CPU of the process's main thread alone (the rest: V8's GC and compiler threads, the profiler's). */
  mainThreadMicrosPerCall: number;
  /** TCP connections opened per call (a pool keeping too few idle sockets opens and closes them). */
  connectsPerCall: number;
  load: number;
}

/** User + system CPU of this process's main thread (its task id is the process id), from /proc, in µs. */
function mainThreadMicros(): number {
  const fields = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

let connects = 0;
subscribe('net.client.socket', () => {
  connects += 1;
});

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

/** The body of an answer read whole by Node's http.request on the shared agent (the lean path's transport before rawHttp.ts). */
function postOnAgent(
  url: URL,
  headers: Record<string, string>,
  body: string,
): Promise<{ statusCode: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: 'POST', path: '/', agent: sharedAgents().http, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ statusCode: res.statusCode ?? -1, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The lean path's request alone (its body, headers and SigV4 signature with a cached key, without the SDK's
 * client behind it), sent by `transport`: `raw` written whole to a socket of the process's RawHttpPool,
 * `agent` by http.request on the shared agent; a 200 read by the fast parser. A measurement, not a client:
 * anything but a readable 200 throws.
 */
function signedClient(endpoint: string, region: string, transport: 'raw' | 'agent'): KinesisClient {
  const url = new URL(endpoint);
  const route = {
    protocol: url.protocol as 'http:' | 'https:',
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    host: url.host,
    path: '/',
    region,
    service: 'kinesis',
  };
  const signer = new SigV4Signer();
  const credentials = {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID!,
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY!,
  };
  const send = async (command: GetRecordsCommand) => {
    const body = getRecordsBody(command.input);
    const signed = signer.sign(
      { method: 'POST', path: '/', headers: getRecordsHeaders(route, body), body },
      credentials,
      region,
      'kinesis',
      new Date(),
    );
    const answer =
      transport === 'raw'
        ? await sharedRawPool().request(route, requestText('POST', '/', signed.headers, body))
        : await postOnAgent(url, signed.headers, body);
    const fast =
      answer.statusCode === 200 && !(answer.body instanceof Error) ? parseGetRecords(answer.body) : undefined;
    if (!fast) throw new Error(`${transport} GetRecords: ${answer.statusCode} ${String(answer.body)}`);
    return fast;
  };
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
  const loadAtStart = loadavg()[0];
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
      for (const regime of REGIMES) {
        const stopLoops = regime === 'busy' ? startBusyLoops() : () => undefined;
        try {
          const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]);
          for (const mode of order) {
            const client =
              mode === 'bare'
                ? bareClient(server.endpoint)
                : mode === 'raw' || mode === 'agent'
                  ? signedClient(server.endpoint, server.region, mode)
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
            const connectsBefore = connects;
            const mainBefore = mainThreadMicros();
            const cpu = process.cpuUsage();
            const calls = await poll(client, iterators, seconds);
            const used = process.cpuUsage(cpu);
            if (session) {
              const { profile: cpuProfile } = await session.post('Profiler.stop');
              writeFileSync(
                join(resultsDir, `getRecordsCost-${stamp}-${mode}-${regime}-${round}.cpuprofile`),
                JSON.stringify(cpuProfile),
              );
            }
            const window: Window = {
              mode,
              regime,
              round,
              calls,
              cpuMicrosPerCall: (used.user + used.system) / calls,
              userMicrosPerCall: used.user / calls,
              connectsPerCall: (connects - connectsBefore) / calls,
              mainThreadMicrosPerCall: (mainThreadMicros() - mainBefore) / calls,
              load: loadavg()[0],
            };
            windows.push(window);
            process.stdout.write(
              `getRecords cost round ${round + 1} ${regime} ${mode}: ${calls} calls, ${window.cpuMicrosPerCall.toFixed(0)} us CPU/call (user ${window.userMicrosPerCall.toFixed(0)}, main thread ${window.mainThreadMicrosPerCall.toFixed(0)}), ${window.connectsPerCall.toFixed(3)} connects/call, load ${window.load.toFixed(2)}\n`,
            );
            client.destroy();
          }
        } finally {
          stopLoops();
        }
      }
    }
    session?.disconnect();
  } finally {
    admin.destroy();
    await server.stop();
  }
  const of = (mode: Mode, regime: string) => windows.filter((w) => w.mode === mode && w.regime === regime);
  const summary = Object.fromEntries(
    REGIMES.map((regime) => [
      regime,
      Object.fromEntries(MODES.map((mode) => [mode, summarize(of(mode, regime).map((w) => w.cpuMicrosPerCall))])),
    ]),
  );
  /** a ÷ b, round by round in each regime: the pairs this page compares. */
  const pairs = (
    [
      ['sdk', 'lean'],
      ['agent', 'raw'],
      ['lean', 'raw'],
      ['bare', 'raw'],
      ['bare', 'lean'],
    ] as const
  ).filter(([a, b]) => MODES.includes(a) && MODES.includes(b));
  const ratios = Object.fromEntries(
    REGIMES.map((regime) => [
      regime,
      Object.fromEntries(
        pairs.map(([a, b]) => [
          `${a}/${b}`,
          summarize(
            of(a, regime).map(
              (w) => w.cpuMicrosPerCall / of(b, regime).find((o) => o.round === w.round)!.cpuMicrosPerCall,
            ),
          ),
        ]),
      ),
    ]),
  );
  for (const regime of REGIMES) {
    for (const mode of MODES) {
      const s = summary[regime][mode];
      process.stdout.write(
        `getRecords cost ${regime} ${mode}: ${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)}, n=${s.n}) us CPU/call\n`,
      );
    }
    for (const [pair, r] of Object.entries(ratios[regime]))
      process.stdout.write(
        `getRecords cost ${regime} ${pair}: ${r.median.toFixed(2)} (${r.min.toFixed(2)}-${r.max.toFixed(2)}) round by round\n`,
      );
  }
  const file = join(resultsDir, `getRecordsCost-${stamp}.json`);
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, loadAtStart };
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, machine, shards, seconds, rounds, windows, summary, ratios }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${file}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
