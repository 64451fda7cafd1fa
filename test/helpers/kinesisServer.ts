/** Kinesis emulators (kinesis-local a.k.a. kinesis-mock, kinesalite, and our own fastKinesis/) as child processes. */
import type { ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import type { FastKinesisServerOptions } from './fastKinesis/server';
import { freePort, scratchDir, spawnLogged, stopProcess, waitUntilReady } from './ports';

export interface KinesisServer {
  endpoint: string;
  region: string;
  logFile: string;
  /** The emulator process's pid (its CPU read from /proc by the benchmarks). */
  pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const REGION = 'us-east-1';

/**
 * Every resharding/stream-state transition in kinesis-mock is a timer (default
 * 500ms). Values are Scala durations: "50ms" parses, a bare "50" is rejected.
 */
const TRANSITION = '50ms';
const DURATION_VARIABLES = [
  'CREATE_STREAM_DURATION',
  'DELETE_STREAM_DURATION',
  'MERGE_SHARDS_DURATION',
  'SPLIT_SHARD_DURATION',
  'UPDATE_SHARD_COUNT_DURATION',
  'UPDATE_STREAM_MODE_DURATION',
  'REGISTER_STREAM_CONSUMER_DURATION',
  'DEREGISTER_STREAM_CONSUMER_DURATION',
  'START_STREAM_ENCRYPTION_DURATION',
  'STOP_STREAM_ENCRYPTION_DURATION',
];

/**
 * kinesis-local on free ports. `shardLimit`: the account's open shard limit (the scale benchmark raises it);
 * `env`: further settings of its own (e.g. `INITIALIZE_STREAMS`).
 */
export function startKinesisLocal(
  options: { shardLimit?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<KinesisServer> {
  return onFreePorts(() => kinesisLocalOnce(options));
}

async function kinesisLocalOnce(options: { shardLimit?: number; env?: NodeJS.ProcessEnv }): Promise<KinesisServer> {
  const main = require.resolve('kinesis-local/main.js');
  const port = await freePort();
  let tlsPort = await freePort();
  while (tlsPort === port) tlsPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KINESIS_MOCK_PLAIN_PORT: String(port),
    // The TLS listener cannot be turned off, so it needs a port and its certificate too.
    KINESIS_MOCK_TLS_PORT: String(tlsPort),
    KINESIS_MOCK_CERT_PATH: join(dirname(main), 'server.json'),
    SHARD_LIMIT: String(options.shardLimit ?? 1000),
    AWS_REGION: REGION,
    // WARN keeps rejected requests (useful when a test fails) and drops the INFO startup chatter.
    LOG_LEVEL: 'WARN',
    SHOULD_PERSIST_DATA: 'false',
  };
  for (const name of DURATION_VARIABLES) env[name] = TRANSITION;
  Object.assign(env, options.env);

  return launch('kinesis-local', process.execPath, [main], env, port, (status) => status === 200);
}

/** kinesalite keeps everything in memory (memdown) unless --path is given, so no native leveldown is needed. */
export function startKinesalite(): Promise<KinesisServer> {
  return onFreePorts(kinesaliteOnce);
}

async function kinesaliteOnce(): Promise<KinesisServer> {
  const cli = require.resolve('kinesalite/cli.js');
  const port = await freePort();
  const args = [cli, '--port', String(port), '--createStreamMs', '0', '--deleteStreamMs', '0'];
  args.push('--updateStreamMs', '0', '--shardLimit', '1000');
  // kinesalite has no health endpoint; any HTTP answer means it is listening.
  return launch('kinesalite', process.execPath, args, process.env, port, () => true);
}

/**
 * The benchmarks' own emulator (test/helpers/fastKinesis/): every call answered on its own after a fixed
 * `latencyMs` (15 by default), Kinesis's call quotas enforced, reshards UPDATING for `transitionMs` (100).
 */
export function startFastKinesis(options: Partial<FastKinesisServerOptions> = {}): Promise<KinesisServer> {
  return onFreePorts(() => fastKinesisOnce(options));
}

async function fastKinesisOnce(options: Partial<FastKinesisServerOptions>): Promise<KinesisServer> {
  const root = resolve(__dirname, '../..');
  const port = await freePort();
  const args = ['--import', 'tsx', join(__dirname, 'fastKinesis/main.ts'), String(port), JSON.stringify(options)];
  return launch('fast-kinesis', process.execPath, args, process.env, port, (status) => status === 200, root);
}

/**
 * A server started on ports found free just before: another process (a jest worker's server, a Storm JVM)
 * can bind one of them in between, and the server then exits on EADDRINUSE: it is started again on others.
 */
async function onFreePorts(start: () => Promise<KinesisServer>, attempts = 3): Promise<KinesisServer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !String((err as Error)?.message).includes('EADDRINUSE')) throw err;
    }
  }
}

async function launch(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  healthy: (status: number) => boolean,
  cwd?: string,
): Promise<KinesisServer> {
  const logFile = join(scratchDir(`${name}-`), `${name}.log`);
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawnLogged(command, args, { env, logFile, cwd });
  const probe = async () => {
    const status = await httpStatus(`${endpoint}/healthcheck`);
    return status !== undefined && healthy(status);
  };
  await waitUntilReady(`${name} on port ${port}`, child, logFile, probe, START_TIMEOUT_MS);
  return { endpoint, region: REGION, logFile, pid: child.pid ?? 0, stop: () => stopProcess(child) };
}

function httpStatus(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    // agent:false closes the socket afterwards, so no keep-alive handle outlives the probe.
    const request = get(url, { agent: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}
