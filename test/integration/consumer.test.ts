/**
 * The fan-out consumer's lifecycle against kinesis-local: tasks racing to register one consumer all get
 * its ARN once ACTIVE; an operator's ARN that does not exist is an error naming what to do; the
 * `deregister-consumer` tool deregisters only when told (and the spout's next start registers it again).
 */
import { ListStreamConsumersCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../../src/cli/tools';
import { realScheduler } from '../../src/core/scheduler';
import { StreamConsumer } from '../../src/kinesis/consumer';
import { kinesisProblem } from '../../src/kinesis/errors';
import type { ToolIo } from '../../src/tools/io';
import { createStream, kinesisClient } from '../helpers/kinesisAdmin';
import { startKinesisLocal, type KinesisServer } from '../helpers/kinesisServer';
import { uniqueName } from '../helpers/fixture';

let server: KinesisServer;
let client: KinesisClient;
beforeAll(async () => {
  // The tool's client takes the default credential chain.
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  server = await startKinesisLocal();
  client = kinesisClient(server);
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

const consumerFor = (stream: string, ref: ConstructorParameters<typeof StreamConsumer>[1]) =>
  new StreamConsumer(
    {
      kinesis: client,
      scheduler: realScheduler,
      stream: { streamName: stream },
      streamLabel: stream,
      log: () => undefined,
    },
    ref,
  );

async function consumers(streamArn: string): Promise<string[]> {
  const listed = await client.send(new ListStreamConsumersCommand({ StreamARN: streamArn }));
  return (listed.Consumers ?? []).map((c) => `${c.ConsumerName} ${c.ConsumerStatus}`);
}

function toolIo(answer: string | undefined) {
  const out: string[] = [];
  const io: ToolIo = {
    out: (text) => void out.push(text),
    err: (text) => void out.push(`ERR ${text}`),
    interactive: false,
    readLine: async () => answer,
    interrupted: () => new Promise(() => undefined),
    now: () => Date.now(),
  };
  return { io, out };
}

test('tasks racing to register one consumer get the same ARN; the tool deregisters it only when told', async () => {
  const stream = uniqueName('stream');
  await createStream(client, stream, 1);
  const racing = await Promise.all([1, 2, 3].map(() => consumerFor(stream, { consumerName: 'app' }).arn()));
  expect(new Set(racing).size).toBe(1);
  const streamArn = racing[0].split('/consumer/')[0];
  expect(await consumers(streamArn)).toEqual(['app ACTIVE']);

  const dir = mkdtempSync(join(tmpdir(), 'consumer-'));
  const file = join(dir, 'spout.json');
  const conf = {
    streamName: stream,
    region: server.region,
    endpoint: server.endpoint,
    applicationName: 'app',
    readMode: 'fanOut',
    zookeeper: { connect: '127.0.0.1:1' },
  };
  writeFileSync(file, JSON.stringify(conf));
  const refused = toolIo('no');
  expect([await runTool('deregister-consumer', ['--config', file], refused.io), refused.out]).toEqual([
    5,
    expect.anything(),
  ]);
  expect(refused.out.join('')).toContain('nothing deregistered');
  expect(await consumers(streamArn)).toEqual(['app ACTIVE']);

  const told = toolIo(undefined);
  expect(await runTool('deregister-consumer', ['--config', file, '--yes'], told.io)).toBe(0);
  expect(told.out.join('')).toContain(`deregistered consumer app of ${streamArn}`);
  for (let i = 0; i < 100 && (await consumers(streamArn)).length > 0; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await consumers(streamArn)).toEqual([]);
  const again = toolIo(undefined);
  expect(await runTool('deregister-consumer', ['--config', file, '--yes'], again.io)).toBe(0);
  expect(again.out.join('')).toContain('was not registered');
});

test('a consumerArn that does not exist is reported with what to do', async () => {
  const stream = uniqueName('stream');
  await createStream(client, stream, 1);
  const arn = `arn:aws:kinesis:${server.region}:000000000000:stream/${stream}/consumer/nobody:1`;
  const err = await consumerFor(stream, { consumerArn: arn })
    .arn()
    .catch((e: unknown) => e);
  expect(kinesisProblem(err, stream)).toMatchObject({ name: 'ConsumerNotFound', transient: false });
  expect(kinesisProblem(err, stream).fix).toContain('register-stream-consumer');
});
