/** Test-side Kinesis administration against an emulator: streams, records, resharding. */
import { Agent } from 'node:http';
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListShardsCommand,
  type ListShardsCommandInput,
  MergeShardsCommand,
  PutRecordsCommand,
  type PutRecordsRequestEntry,
  type Shard,
  SplitShardCommand,
  UpdateShardCountCommand,
} from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';

const WAIT_TIMEOUT_MS = 30_000;
const PUT_BATCH = 500; // PutRecords' per-call record limit
const PUT_ATTEMPTS = 20;

export function kinesisClient(server: { endpoint: string; region: string }): KinesisClient {
  return new KinesisClient({
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    // The Kinesis client defaults to NodeHttp2Handler: kinesalite then fails with "Protocol error".
    requestHandler: new NodeHttpHandler({
      connectionTimeout: 2000,
      requestTimeout: 10_000,
      httpAgent: new Agent({ keepAlive: true }),
    }),
    // Emulator errors are deterministic; retrying at length only slows failing tests.
    maxAttempts: 2,
  });
}

export async function createStream(client: KinesisClient, name: string, shards: number): Promise<void> {
  await client.send(new CreateStreamCommand({ StreamName: name, ShardCount: shards }));
  await waitForStream(client, name, (all) => all.length === shards);
}

export interface PutResult {
  sequenceNumber: string;
  shardId: string;
}

/** Returns one result per input record, in input order, after retrying throttled/failed entries. */
export async function putRecords(
  client: KinesisClient,
  name: string,
  records: { partitionKey: string; data: string }[],
): Promise<PutResult[]> {
  const results: PutResult[] = new Array(records.length);
  for (let start = 0; start < records.length; start += PUT_BATCH) {
    let pending = records.slice(start, start + PUT_BATCH).map((_, i) => start + i);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > PUT_ATTEMPTS)
        throw new Error(`${pending.length} records still failing after ${PUT_ATTEMPTS} attempts`);
      const entries: PutRecordsRequestEntry[] = pending.map((i) => ({
        PartitionKey: records[i].partitionKey,
        Data: Buffer.from(records[i].data),
      }));
      const response = await client.send(new PutRecordsCommand({ StreamName: name, Records: entries }));
      const failed: number[] = [];
      (response.Records ?? []).forEach((entry, j) => {
        if (entry.SequenceNumber && entry.ShardId) {
          results[pending[j]] = { sequenceNumber: entry.SequenceNumber, shardId: entry.ShardId };
        } else {
          failed.push(pending[j]);
        }
      });
      pending = failed;
      if (pending.length > 0) await sleep(50 * attempt);
    }
  }
  return results;
}

/** Splits at the middle of the hash range; resolves with the two child shard ids once ACTIVE. */
export async function splitShard(client: KinesisClient, name: string, shardId: string): Promise<string[]> {
  const shard = (await listAllShards(client, name)).find((s) => s.ShardId === shardId);
  if (!shard?.HashKeyRange) throw new Error(`shard ${shardId} not found in ${name}`);
  const start = BigInt(shard.HashKeyRange.StartingHashKey!);
  const end = BigInt(shard.HashKeyRange.EndingHashKey!);
  // Rounded up so the new key is always > start, as SplitShard requires.
  const middle = (start + end + 1n) / 2n;
  await client.send(
    new SplitShardCommand({ StreamName: name, ShardToSplit: shardId, NewStartingHashKey: middle.toString() }),
  );
  const shards = await waitForStream(client, name, (all) => all.some((s) => s.ParentShardId === shardId));
  return shards.filter((s) => s.ParentShardId === shardId).map((s) => s.ShardId!);
}

/** The two shards must be adjacent; resolves with the child shard id once ACTIVE. */
export async function mergeShards(client: KinesisClient, name: string, a: string, b: string): Promise<string> {
  await client.send(new MergeShardsCommand({ StreamName: name, ShardToMerge: a, AdjacentShardToMerge: b }));
  const isChild = (s: Shard) => s.ParentShardId === a && s.AdjacentParentShardId === b;
  const shards = await waitForStream(client, name, (all) => all.some(isChild));
  return shards.find(isChild)!.ShardId!;
}

/** Resolves with the open shards once the stream is ACTIVE with exactly n of them. */
export async function updateShardCount(client: KinesisClient, name: string, n: number): Promise<Shard[]> {
  await client.send(
    new UpdateShardCountCommand({ StreamName: name, TargetShardCount: n, ScalingType: 'UNIFORM_SCALING' }),
  );
  const shards = await waitForStream(client, name, (all) => openShards(all).length === n);
  return openShards(shards);
}

export function openShards(shards: Shard[]): Shard[] {
  return shards.filter((s) => s.SequenceNumberRange?.EndingSequenceNumber === undefined);
}

/** All shards, open and closed. Continuation requests must carry NextToken alone, without StreamName. */
export async function listAllShards(client: KinesisClient, name: string): Promise<Shard[]> {
  const shards: Shard[] = [];
  let input: ListShardsCommandInput = { StreamName: name };
  for (;;) {
    const page = await client.send(new ListShardsCommand(input));
    shards.push(...(page.Shards ?? []));
    if (!page.NextToken) return shards;
    input = { NextToken: page.NextToken };
  }
}

/**
 * Waits for ACTIVE *and* for the expected shard layout: status alone could be
 * read before the emulator has even flipped the stream to UPDATING.
 */
async function waitForStream(
  client: KinesisClient,
  name: string,
  ready: (shards: Shard[]) => boolean,
): Promise<Shard[]> {
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  for (;;) {
    const summary = await client.send(new DescribeStreamSummaryCommand({ StreamName: name }));
    if (summary.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') {
      const shards = await listAllShards(client, name);
      if (ready(shards)) return shards;
    }
    if (Date.now() > deadline)
      throw new Error(`stream ${name} did not reach the expected state in ${WAIT_TIMEOUT_MS} ms`);
    await sleep(50);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
