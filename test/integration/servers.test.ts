/** Proves the real-server helpers work: every other integration test builds on them. */
import {
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { type Client, createClient } from 'node-zookeeper-client';
import {
  createStream,
  kinesisClient,
  listAllShards,
  mergeShards,
  openShards,
  putRecords,
  splitShard,
  updateShardCount,
} from '../helpers/kinesisAdmin';
import { type KinesisServer, startKinesalite, startKinesisLocal } from '../helpers/kinesisServer';
import { portIsFree } from '../helpers/ports';
import { startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeperServer';

describe('ZooKeeper helper', () => {
  let zk: ZooKeeperServer | undefined;
  let client: Client | undefined;
  afterAll(async () => {
    client?.close();
    await zk?.stop();
  });

  it('serves requests, keeps data across restart, frees its port on stop', async () => {
    zk = await startZooKeeper();
    client = await connectZk(zk.connectString);
    await new Promise<void>((resolve, reject) =>
      client!.create('/helper-check', Buffer.from('hello'), (err) => (err ? reject(err) : resolve())),
    );
    expect(await getData(client, '/helper-check')).toBe('hello');
    client.close();

    await zk.restart();
    client = await connectZk(zk.connectString);
    expect(await getData(client, '/helper-check')).toBe('hello');
    client.close();
    client = undefined;

    await zk.stop();
    await expect(portIsFree(zk.port)).resolves.toBe(true);
  });
});

describe('kinesis-local helper', () => {
  const emulator = emulatorFor(startKinesisLocal);

  it('creates, writes, reads and reshards a stream', async () => {
    const kinesis = await emulator.client();
    const stream = 'helper-check';
    // Observed (kinesis-local 0.6.2): the two shards are [0, 2^127-2] and [2^127-1, 2^128-1],
    // one key off AWS's even split, so never hard-code hash ranges.
    await createStream(kinesis, stream, 2);

    const records = Array.from({ length: 20 }, (_, i) => ({ partitionKey: `pk-${i}`, data: `record-${i}` }));
    const put = await putRecords(kinesis, stream, records);
    expect(put).toHaveLength(20);
    const [first, second] = (await listAllShards(kinesis, stream)).map((s) => s.ShardId!);
    const onFirst = put.filter((p) => p.shardId === first);
    expect(onFirst.length + put.filter((p) => p.shardId === second).length).toBe(20);

    const children = await splitShard(kinesis, stream, first);
    expect(children).toHaveLength(2);
    // Observed: the closed parent's EndingSequenceNumber is "9223372036854775807" (Long.MAX_VALUE),
    // not the sequence number of its last record as on AWS (kinesalite does give the real one).
    // So "closed" means EndingSequenceNumber is present; its value must not be compared.
    const parent = (await listAllShards(kinesis, stream)).find((s) => s.ShardId === first)!;
    expect(parent.SequenceNumberRange?.EndingSequenceNumber).toBeDefined();

    // Observed: one GetRecords returned all of the parent's remaining records *and* ChildShards
    // (both children, ParentShards [parent], their hash ranges) with NextShardIterator absent.
    // A reader must emit a page's records before treating the shard as finished.
    // kinesalite instead ends with a separate empty page and never sends ChildShards.
    const { records: read, last } = await drainShard(kinesis, stream, first);
    expect(read.map((r) => r.SequenceNumber)).toEqual(onFirst.map((p) => p.sequenceNumber));
    expect(last.NextShardIterator).toBeUndefined();
    expect((last.ChildShards ?? []).map((c) => c.ShardId).sort()).toEqual([...children].sort());

    const open = openShards(await listAllShards(kinesis, stream)).sort((a, b) =>
      BigInt(a.HashKeyRange!.StartingHashKey!) < BigInt(b.HashKeyRange!.StartingHashKey!) ? -1 : 1,
    );
    expect(open).toHaveLength(3);
    const merged = await mergeShards(kinesis, stream, open[1].ShardId!, open[2].ShardId!);
    expect(openShards(await listAllShards(kinesis, stream)).map((s) => s.ShardId)).toContain(merged);

    // Observed: UpdateShardCount closes every open shard and opens 4 new ones (9 shards in total).
    const scaled = await updateShardCount(kinesis, stream, 4);
    expect(scaled).toHaveLength(4);
  });
});

describe('kinesalite helper', () => {
  const emulator = emulatorFor(startKinesalite);

  it('writes and reads records', async () => {
    const kinesis = await emulator.client();
    await createStream(kinesis, 'helper-check', 1);
    const records = Array.from({ length: 5 }, (_, i) => ({ partitionKey: `pk-${i}`, data: `record-${i}` }));
    const put = await putRecords(kinesis, 'helper-check', records);
    const iterator = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: 'helper-check',
        ShardId: put[0].shardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    const got = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator.ShardIterator }));
    expect((got.Records ?? []).map((r) => Buffer.from(r.Data!).toString())).toEqual(records.map((r) => r.data));
  });
});

/** An emulator started by the test that needs it, and its client, both stopped after the describe block. */
function emulatorFor(start: () => Promise<KinesisServer>): { client(): Promise<KinesisClient> } {
  let server: KinesisServer | undefined;
  let kinesis: KinesisClient | undefined;
  afterAll(async () => {
    kinesis?.destroy();
    await server?.stop();
  });
  return {
    async client() {
      server = await start();
      kinesis = kinesisClient(server);
      return kinesis;
    },
  };
}

function connectZk(connectString: string): Promise<Client> {
  const client = createClient(connectString, { sessionTimeout: 5000, spinDelay: 100 });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`no ZooKeeper session with ${connectString} within 10 s`));
    }, 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

function getData(client: Client, path: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.getData(path, (err, data) => (err ? reject(err) : resolve(data.toString()))),
  );
}

/** Reads a shard from TRIM_HORIZON until the service says it is finished (no NextShardIterator). */
async function drainShard(client: KinesisClient, stream: string, shardId: string) {
  const start = await client.send(
    new GetShardIteratorCommand({ StreamName: stream, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
  );
  let iterator = start.ShardIterator;
  const records: NonNullable<GetRecordsCommandOutput['Records']> = [];
  for (let calls = 0; calls < 100; calls++) {
    const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator }));
    records.push(...(page.Records ?? []));
    if (!page.NextShardIterator) return { records, last: page };
    iterator = page.NextShardIterator;
  }
  throw new Error(`shard ${shardId} still had a NextShardIterator after 100 GetRecords calls`);
}
