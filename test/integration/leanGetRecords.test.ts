/**
 * The lean GetRecords path (src/kinesis/leanGetRecords.ts) against kinesis-local, beside the SDK's client as
 * the reference: the same outputs along a shard read to its end through a split (records, next iterator,
 * millisBehindLatest, child shards), and the same errors (class, name, message, `$fault`, `$metadata`) with
 * the same number of requests on the wire, through the fault proxy: a bad iterator, an unknown stream, an
 * expired iterator, a throttle (sent once, not retried), 500s (retried by the SDK up to its 3 attempts),
 * and a refused connection. On kinesalite and the parallel emulator too, the same records.
 */
import {
  DeleteStreamCommand,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import { createKinesisClient, sharedAgents, sharedRawPool } from '../../src/kinesis/client';
import { readGetRecordsLean } from '../../src/kinesis/leanGetRecords';
import { servicesForFile, uniqueName } from '../helpers/fixture';
import { type HttpFaultProxy, KinesisFault, startHttpFaultProxy } from '../helpers/httpFaultProxy';
import { createStream, kinesisClient, listAllShards, splitShard } from '../helpers/kinesisAdmin';
import { type KinesisServer, startFastKinesis, startKinesalite } from '../helpers/kinesisServer';
import { kplAggregate } from '../helpers/kpl';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';

const services = servicesForFile(async () => undefined);
let proxy: HttpFaultProxy;
const clients: KinesisClient[] = [];

beforeAll(async () => {
  proxy = await startHttpFaultProxy(services().kinesis.endpoint);
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await proxy.close();
  sharedAgents().http.destroy();
  sharedRawPool().destroy();
});

/** The SDK's client as the spout makes it, without the lean path, and one with it (its ways counted). */
function bothClients(endpoint: string) {
  const { region } = services().kinesis;
  const sdk = createKinesisClient({ region, endpoint, leanGetRecords: false });
  const lean = createKinesisClient({ region, endpoint, leanGetRecords: false });
  const ways = { lean: 0, sdk: 0, handed: 0 };
  readGetRecordsLean(lean, {
    pool: sharedRawPool(),
    observe: (way) => {
      ways[way] += 1;
    },
  });
  clients.push(sdk, lean);
  return { sdk, lean, ways };
}

/**
 * The output with what differs between any two requests on kinesis-local replaced by its kind: the request
 * ids and the next iterator (a new one each call; where it leads is compared by following it). The retry
 * delay is left out: the SDK draws it with full jitter, so a retry waits 0 ms about one time in a hundred
 * (`attempts` tells a retried call).
 */
function comparable(output: GetRecordsCommandOutput) {
  const { requestId, extendedRequestId, totalRetryDelay: _jittered, ...metadata } = output.$metadata;
  return {
    ...output,
    NextShardIterator: typeof output.NextShardIterator,
    $metadata: { ...metadata, ids: [typeof requestId, typeof extendedRequestId] },
  };
}

/** What the readers and errors.ts look at in an error, and what tells one kind from another. */
function errorShape(err: unknown) {
  const e = err as Error & {
    $fault?: string;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number; attempts?: number };
    code?: string;
    $response?: { statusCode?: number };
  };
  return {
    class: e.constructor.name,
    instanceOfError: e instanceof Error,
    name: e.name,
    message: e.message,
    code: e.code,
    fault: e.$fault,
    retryable: e.$retryable,
    status: e.$metadata?.httpStatusCode,
    attempts: e.$metadata?.attempts,
    responseStatus: e.$response?.statusCode,
  };
}

async function iteratorOf(client: KinesisClient, stream: string, shardId: string): Promise<string> {
  const answer = await client.send(
    new GetShardIteratorCommand({ StreamName: stream, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
  );
  return answer.ShardIterator!;
}

/** GetRecords requests the proxy saw while `call` ran. */
async function requestsDuring(call: () => Promise<unknown>): Promise<{ requests: number; outcome: unknown }> {
  const before = proxy.requests.get('GetRecords') ?? 0;
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (err) {
    outcome = err;
  }
  return { requests: (proxy.requests.get('GetRecords') ?? 0) - before, outcome };
}

test("a shard read to its end through a split: the lean path's outputs are the SDK's", async () => {
  const { client: admin } = services();
  const stream = uniqueName('lean');
  await createStream(admin, stream, 1);
  const [parent] = (await listAllShards(admin, stream)).map((s) => s.ShardId!);
  const aggregate = kplAggregate([{ partitionKey: 'agg-ü', data: '{"i":0}' }]);
  await admin.send(
    new PutRecordsCommand({
      StreamName: stream,
      Records: [
        ...['plain', 'clé-日本-🙂', 'ключ "quoted" \\ back'].map((k, i) => ({
          PartitionKey: k,
          Data: Buffer.from(`record ${i} 🙂`),
        })),
        { PartitionKey: aggregate.partitionKey, ExplicitHashKey: aggregate.explicitHashKey, Data: aggregate.data },
        { PartitionKey: 'big', Data: Buffer.alloc(10_000, 'x') },
      ],
    }),
  );
  const { sdk, lean, ways } = bothClients(services().kinesis.endpoint);
  const streamArn = `arn:aws:kinesis:${services().kinesis.region}:000000000000:stream/${stream}`;
  const outputs: GetRecordsCommandOutput[] = [];
  /** Each client follows its own iterators: the same call both ways, each on the iterator its client was given. */
  const start = await iteratorOf(admin, stream, parent);
  let iterators: [string | undefined, string | undefined] = [start, start];
  const both = async (input: Omit<GetRecordsCommand['input'], 'ShardIterator'>) => {
    const expected = await sdk.send(new GetRecordsCommand({ ...input, ShardIterator: iterators[0] }));
    const actual = await lean.send(new GetRecordsCommand({ ...input, ShardIterator: iterators[1] }));
    expect(comparable(actual)).toEqual(comparable(expected));
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
    outputs.push(actual);
    iterators = [expected.NextShardIterator, actual.NextShardIterator];
  };
  for (let i = 0; i < 4 && iterators[0]; i += 1) await both({ Limit: 2, ...(i % 2 ? { StreamARN: streamArn } : {}) });
  await splitShard(admin, stream, parent);
  for (let i = 0; i < 5 && iterators[0]; i += 1) await both({});
  expect(iterators).toEqual([undefined, undefined]);
  // What the walk must have held for the comparison to mean something.
  expect(outputs.flatMap((o) => o.Records ?? [])).toHaveLength(5);
  expect(outputs.some((o) => (o.Records ?? []).length === 0)).toBe(true);
  expect(outputs.at(-1)?.ChildShards).toHaveLength(2);
  expect(outputs.every((o) => typeof o.MillisBehindLatest === 'number')).toBe(true);
  // The first call of each route (no ARN, then the ARN) is the SDK's, where the lean path learns where to send.
  expect(ways).toEqual({ lean: outputs.length - 2, sdk: 2, handed: 0 });
});

describe.each([
  ['kinesalite', startKinesalite],
  ['the parallel emulator', startFastKinesis],
])("on %s: the lean path's outputs are the SDK's", (_name, start) => {
  let server: KinesisServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('records, an empty batch at the tip, the next iterators', async () => {
    const admin = kinesisClient(server);
    clients.push(admin);
    const stream = uniqueName('lean-other');
    await createStream(admin, stream, 1);
    const [shard] = (await listAllShards(admin, stream)).map((s) => s.ShardId!);
    await admin.send(
      new PutRecordsCommand({
        StreamName: stream,
        Records: ['a', 'clé-🙂', 'c'].map((k, i) => ({ PartitionKey: k, Data: Buffer.from(`record ${i} 🙂`) })),
      }),
    );
    const { sdk, lean, ways } = bothClients(server.endpoint);
    const first = await iteratorOf(admin, stream, shard);
    let iterators: [string | undefined, string | undefined] = [first, first];
    const records: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      // Within the parallel emulator's 5 reads a second per shard.
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      const expected = await sdk.send(new GetRecordsCommand({ ShardIterator: iterators[0], Limit: 2 }));
      const actual = await lean.send(new GetRecordsCommand({ ShardIterator: iterators[1], Limit: 2 }));
      const { MillisBehindLatest: _a, ...sameActual } = comparable(actual);
      const { MillisBehindLatest: _e, ...sameExpected } = comparable(expected);
      expect(sameActual).toEqual(sameExpected);
      records.push(actual.Records?.length ?? -1);
      iterators = [expected.NextShardIterator, actual.NextShardIterator];
    }
    expect(records).toEqual([2, 1, 0, 0]);
    // The first call is the SDK's, where the lean path learns where to send.
    expect(ways).toEqual({ lean: 3, sdk: 1, handed: 0 });
  });
});

describe('errors: the SDK meaning, the same requests on the wire', () => {
  let stream: string;
  let shardId: string;
  let both: ReturnType<typeof bothClients>;

  beforeAll(async () => {
    const { client: admin } = services();
    stream = uniqueName('lean-errors');
    await createStream(admin, stream, 1);
    shardId = (await listAllShards(admin, stream))[0].ShardId!;
    both = bothClients(proxy.endpoint);
    // Each client's first call, so that the lean one has learned its route.
    const iterator = await iteratorOf(admin, stream, shardId);
    await both.sdk.send(new GetRecordsCommand({ ShardIterator: iterator }));
    await both.lean.send(new GetRecordsCommand({ ShardIterator: iterator }));
  });

  /** The same failing call both ways (`fault` set up before each): same outcome, same requests sent. */
  async function compare(input: () => Promise<GetRecordsCommand['input']>, fault?: () => void) {
    fault?.();
    const expected = await requestsDuring(async () => both.sdk.send(new GetRecordsCommand(await input())));
    const handed = both.ways.handed;
    fault?.();
    const actual = await requestsDuring(async () => both.lean.send(new GetRecordsCommand(await input())));
    // Sent the lean way, whatever came of it.
    if (expected.outcome instanceof Error) expect(both.ways.handed).toBe(handed + 1);
    expect(actual.requests).toBe(expected.requests);
    if (expected.outcome instanceof Error) expect(errorShape(actual.outcome)).toEqual(errorShape(expected.outcome));
    else
      expect(comparable(actual.outcome as GetRecordsCommandOutput)).toEqual(
        comparable(expected.outcome as GetRecordsCommandOutput),
      );
    return { expected, actual };
  }

  test('an iterator that is none', async () => {
    const { actual } = await compare(async () => ({ ShardIterator: 'not-an-iterator' }));
    expect(actual.outcome).toBeInstanceOf(Error);
  });

  test('a throttled read is sent once and not retried: ProvisionedThroughputExceededException', async () => {
    const { actual } = await compare(
      async () => ({ ShardIterator: await iteratorOf(services().client, stream, shardId) }),
      () => proxy.inject({ operations: ['GetRecords'], ...KinesisFault.Throttled, times: 1 }),
    );
    expect(errorShape(actual.outcome)).toMatchObject({
      name: 'ProvisionedThroughputExceededException',
      status: 400,
      attempts: 1,
      fault: 'client',
    });
    expect(actual.requests).toBe(1);
  });

  test('an expired iterator: ExpiredIteratorException, not retried', async () => {
    const { actual } = await compare(
      async () => ({ ShardIterator: await iteratorOf(services().client, stream, shardId) }),
      () => proxy.inject({ operations: ['GetRecords'], ...KinesisFault.ExpiredIterator, times: 1 }),
    );
    expect(errorShape(actual.outcome)).toMatchObject({ name: 'ExpiredIteratorException', attempts: 1 });
    expect(actual.requests).toBe(1);
  });

  test('one 500: retried by the SDK, the lean attempt counting as its first', async () => {
    const { actual } = await compare(
      async () => ({ ShardIterator: await iteratorOf(services().client, stream, shardId) }),
      () => proxy.inject({ operations: ['GetRecords'], ...KinesisFault.InternalFailure, times: 1 }),
    );
    expect((actual.outcome as GetRecordsCommandOutput).$metadata.attempts).toBe(2);
    expect(actual.requests).toBe(2);
  });

  test('500s throughout: three attempts, then the SDK error', async () => {
    const { actual } = await compare(
      async () => ({ ShardIterator: await iteratorOf(services().client, stream, shardId) }),
      () => proxy.inject({ operations: ['GetRecords'], ...KinesisFault.InternalFailure, times: 3 }),
    );
    expect(errorShape(actual.outcome)).toMatchObject({ name: 'InternalFailure', status: 500, attempts: 3 });
    expect(actual.requests).toBe(3);
  });

  test('an unknown stream: ResourceNotFoundException', async () => {
    const gone = uniqueName('lean-gone');
    await createStream(services().client, gone, 1);
    const [shard] = await listAllShards(services().client, gone);
    const iterator = await iteratorOf(services().client, gone, shard.ShardId!);
    await services().client.send(new DeleteStreamCommand({ StreamName: gone }));
    await new Promise((r) => setTimeout(r, 300));
    const { actual } = await compare(async () => ({ ShardIterator: iterator }));
    expect(errorShape(actual.outcome)).toMatchObject({ name: 'ResourceNotFoundException', attempts: 1 });
  });

  test('a refused connection: the same network error after the same attempts', async () => {
    const closed = await startHttpFaultProxy(services().kinesis.endpoint);
    const pair = bothClients(closed.endpoint);
    const iterator = await iteratorOf(services().client, stream, shardId);
    await pair.sdk.send(new GetRecordsCommand({ ShardIterator: iterator }));
    await pair.lean.send(new GetRecordsCommand({ ShardIterator: iterator }));
    await closed.close();
    const outcome = async (client: KinesisClient) => {
      try {
        return await client.send(new GetRecordsCommand({ ShardIterator: iterator }));
      } catch (err) {
        return err;
      }
    };
    const expected = await outcome(pair.sdk);
    const actual = await outcome(pair.lean);
    expect(pair.ways.handed).toBe(1);
    expect(errorShape(actual)).toEqual(errorShape(expected));
    // (Under jest, Node's own errors come from another realm, so the SDK wraps them: the message tells.)
    expect(errorShape(actual)).toMatchObject({ message: expect.stringContaining('ECONNREFUSED'), attempts: 3 });
  });
});
