/**
 * The fast GetRecords path (src/kinesis/fastGetRecords.ts) on kinesis-local: answers recorded from the
 * emulator (plain records with unicode keys, a KPL aggregate, empty batches, a shard's end with its
 * children, error answers) read the same by the SDK and the fast path; and the built spout, which reads
 * through the fast path by default, emits the same tuples as with `fastGetRecords: false`.
 */
import {
  DeleteStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { idsOf, spoutSuite, uniqueName } from '../helpers/fixture';
import { type Answer, bothWays } from '../helpers/getRecordsReplay';
import { createStream, listAllShards, splitShard } from '../helpers/kinesisAdmin';
import { kplAggregate } from '../helpers/kpl';

const suite = spoutSuite();

/** A client on kinesis-local whose GetRecords answers are kept, as they came over the wire. */
function recordingClient(): { client: KinesisClient; answers: Answer[] } {
  const inner = new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true }), requestTimeout: 10_000 });
  const answers: Answer[] = [];
  const handler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: Parameters<NodeHttpHandler['handle']>[0], options?: { abortSignal?: AbortSignal }) {
      const { response } = await inner.handle(request, options);
      if (!String(request.headers['x-amz-target']).endsWith('.GetRecords')) return { response };
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as Readable) chunks.push(Buffer.from(chunk));
      const body = Buffer.concat(chunks);
      answers.push({ status: response.statusCode, headers: { ...response.headers }, body });
      return { response: { ...response, body: Readable.from([body]) } };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => inner.destroy(),
  };
  const { endpoint, region } = suite.services.kinesis;
  const client = new KinesisClient({
    endpoint,
    region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: handler as never,
    maxAttempts: 1,
  });
  return { client, answers };
}

const KEYS = ['plain', 'clé-日本-🙂', 'ключ "quoted" \\ back'];

async function putSome(stream: string): Promise<void> {
  const aggregate = kplAggregate([
    { partitionKey: 'agg-ü', data: JSON.stringify({ i: 0 }) },
    { partitionKey: 'agg-🙂', data: JSON.stringify({ i: 1 }) },
  ]);
  await suite.services.client.send(
    new PutRecordsCommand({
      StreamName: stream,
      Records: [
        ...KEYS.map((k, i) => ({ PartitionKey: k, Data: Buffer.from(`record ${i} données 🙂`) })),
        { PartitionKey: aggregate.partitionKey, ExplicitHashKey: aggregate.explicitHashKey, Data: aggregate.data },
        { PartitionKey: 'big', Data: Buffer.alloc(10_000, 'x') },
      ],
    }),
  );
}

test('answers recorded from kinesis-local: the fast path reads each as the SDK does', async () => {
  const stream = uniqueName('fastget');
  const { client, answers } = recordingClient();
  try {
    await createStream(suite.services.client, stream, 1);
    const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
    await putSome(stream);
    const iteratorOf = async (shardId: string) =>
      (
        await client.send(
          new GetShardIteratorCommand({ StreamName: stream, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
        )
      ).ShardIterator;
    // Two records a call, to the tip (an empty batch there), then the split: the parent read to its end.
    let iterator = await iteratorOf(parent);
    for (let i = 0; i < 4 && iterator; i += 1)
      iterator = (await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 2 }))).NextShardIterator;
    await splitShard(suite.services.client, stream, parent);
    for (let i = 0; i < 5 && iterator; i += 1)
      iterator = (await client.send(new GetRecordsCommand({ ShardIterator: iterator }))).NextShardIterator;
    expect(iterator).toBeUndefined();
    // Error answers: an iterator that is none, and a stream deleted under a good iterator.
    await expect(client.send(new GetRecordsCommand({ ShardIterator: 'not-an-iterator' }))).rejects.toThrow();
    const late = await iteratorOf((await listAllShards(suite.services.client, stream)).at(-1)!.ShardId!);
    await suite.services.client.send(new DeleteStreamCommand({ StreamName: stream }));
    await new Promise((r) => setTimeout(r, 300));
    await expect(client.send(new GetRecordsCommand({ ShardIterator: late }))).rejects.toThrow();
  } finally {
    client.destroy();
  }
  const ok = answers.filter((a) => a.status === 200);
  const bodies = ok.map((a) => JSON.parse(a.body.toString()) as { Records: unknown[]; ChildShards?: unknown[] });
  // What the recording must hold for the comparison to mean something.
  expect(bodies.some((b) => b.Records.length === 0)).toBe(true);
  expect(bodies.some((b) => (b.ChildShards ?? []).length === 2)).toBe(true);
  expect(bodies.flatMap((b) => b.Records).length).toBe(KEYS.length + 2);
  expect(answers.filter((a) => a.status >= 400)).toHaveLength(2);
  for (const answer of answers) {
    const { seen, fast } = await bothWays([answer]);
    if (answer.status === 200) expect(seen).toMatchObject({ fast: 1, sdk: 0 });
    else expect(fast).toHaveProperty('error.name');
  }
});

test('the spout reads through the fast path (the default): the same tuples as through the SDK', async () => {
  const stream = uniqueName('fastget');
  await createStream(suite.services.client, stream, 1);
  await putSome(stream);
  const tuples = async (overrides: Record<string, unknown>) => {
    const driver = await suite.spout(stream, uniqueName('app'), { dataFormat: 'base64', ...overrides });
    await driver.pump(() => driver.emits.length >= KEYS.length + 3, { timeoutMs: 30_000 });
    await driver.stop(2_000);
    expect(driver.errors).toEqual([]);
    return driver.emits.map((e) => ({ id: e.id, tuple: e.tuple }));
  };
  const fast = await tuples({});
  const sdk = await tuples({ fastGetRecords: false });
  expect(idsOf(fast as never)).toHaveLength(KEYS.length + 3);
  expect(fast).toEqual(sdk);
  const keys = fast.map((e) => (e.tuple as string[])[0]);
  expect(keys).toEqual(expect.arrayContaining([...KEYS, 'agg-ü', 'agg-🙂', 'big']));
});
