/**
 * The benchmark emulator as a process (its CPU measured apart from the harness's):
 * `node --import tsx test/helpers/fastKinesis/main.ts <port> [options as JSON]`. Stops on SIGTERM.
 */
import { FAST_KINESIS_DEFAULTS, startFastKinesisServer } from './server';

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const options = { ...FAST_KINESIS_DEFAULTS, ...(process.argv[3] ? JSON.parse(process.argv[3]) : {}) };
  const server = await startFastKinesisServer(port, options);
  process.stdout.write(`fast-kinesis listening on 127.0.0.1:${server.port} ${JSON.stringify(options)}\n`);
  process.once('SIGTERM', () => {
    server.close().then(() => process.exit(0));
  });
}

main().catch((err) => {
  process.stderr.write(`fast-kinesis failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
