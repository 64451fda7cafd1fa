/**
 * Enhanced fan-out on this machine: a kinesis-local and the tests' fan-out front before it, until Ctrl-C.
 *
 *   npx tsx scripts/fanout-local.ts [--lifetimeMs=60000] [--pollIntervalMs=50] [--streams=name:shards,...]
 *   npx tsx scripts/fanout-local.ts --kinesis=http://127.0.0.1:4568 --port=4570
 *
 * `--kinesis` fronts an emulator already running (docs/try-it.md's) instead of starting one; `--port` listens
 * there instead of on a free port. Any setting of the front (test/helpers/fanOutServer.ts, DEFAULT_FAN_OUT_SETTINGS) can be given as
 * `--<setting>=<number>` (`--shardEnd=continuation` for the last event's other form). It prints the endpoint: the spout's `endpoint` with `readMode: "fanOut"` (and any
 * Kinesis client: HTTP/2 for SubscribeToShard, HTTP/1.1 or HTTP/2 for everything else).
 */
import { createStream, kinesisClient } from '../test/helpers/kinesisAdmin';
import { type KinesisServer, startKinesisLocal } from '../test/helpers/kinesisServer';
import { DEFAULT_FAN_OUT_SETTINGS, type FanOutSettings, startFanOutServer } from '../test/helpers/fanOutServer';

interface Options {
  settings: Partial<FanOutSettings>;
  streams: [string, number][];
  /** An emulator to front; without it, one is started. */
  kinesis?: string;
  port: number;
}

function parse(args: string[]): Options {
  const settings: Partial<FanOutSettings> = {};
  let streams: [string, number][] = [];
  let kinesis: string | undefined;
  let port = 0;
  for (const arg of args) {
    const match = /^--([A-Za-z]+)=(.+)$/.exec(arg);
    if (!match) throw new Error(`${arg}: expected --<setting>=<value>`);
    const [, key, value] = match;
    if (key === 'streams') {
      streams = value.split(',').map((spec) => {
        const [name, shards = '1'] = spec.split(':');
        if (!/^[a-zA-Z0-9_.-]+$/.test(name) || !/^\d+$/.test(shards))
          throw new Error(`--streams: ${spec} is not <name>:<shards>`);
        return [name, Number(shards)];
      });
    } else if (key === 'kinesis') {
      if (!/^https?:\/\/[^/]+$/.test(value))
        throw new Error(`--kinesis: ${value} is not an endpoint such as http://127.0.0.1:4568`);
      kinesis = value;
    } else if (key === 'port') {
      port = Number(value);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--port: ${value} is not a port`);
    } else if (key === 'shardEnd') {
      if (value !== 'noContinuation' && value !== 'continuation')
        throw new Error(`--shardEnd: ${value} is not noContinuation or continuation`);
      settings.shardEnd = value;
    } else if (key in DEFAULT_FAN_OUT_SETTINGS) {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0) throw new Error(`--${key}: ${value} is not a number >= 0`);
      (settings as Record<string, number>)[key] = n;
    } else {
      throw new Error(
        `--${key}: not a setting; one of kinesis, port, streams, ${Object.keys(DEFAULT_FAN_OUT_SETTINGS).join(', ')}`,
      );
    }
  }
  return { settings, streams, kinesis, port };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const { settings, streams } = options;
  const kinesis: KinesisServer = options.kinesis
    ? { endpoint: options.kinesis, region: 'us-east-1', logFile: '(not ours)', pid: 0, stop: async () => undefined }
    : await startKinesisLocal();
  const front = await startFanOutServer(kinesis.endpoint, settings, options.port);
  const admin = kinesisClient(kinesis);
  for (const [name, shards] of streams) await createStream(admin, name, shards);
  admin.destroy();
  console.log(`kinesis-local: ${kinesis.endpoint}${options.kinesis ? '' : ` (log ${kinesis.logFile})`}`);
  console.log(`fan-out front: ${front.endpoint}  <- the spout's endpoint, with readMode "fanOut"`);
  console.log(`settings: ${JSON.stringify(front.settings)}`);
  if (streams.length > 0) console.log(`streams: ${streams.map(([n, s]) => `${n} (${s} shards)`).join(', ')}`);
  const stop = async () => {
    await front.close();
    await kinesis.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
