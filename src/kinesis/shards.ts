/** The shard graph and the stream's identity, from ListShards (paged) and DescribeStreamSummary. */
import { type ChildShard, DescribeStreamSummaryCommand, ListShardsCommand, type Shard } from '@aws-sdk/client-kinesis';
import type { KinesisApi } from './client';
import type { ShardNode } from '../core/shard';

export interface StreamRef {
  streamName: string;
  streamArn?: string;
}

export interface StreamIdentity {
  streamArn: string;
  createdMs: number;
}

function toNode(shard: Shard): ShardNode {
  const parents = [shard.ParentShardId, shard.AdjacentParentShardId].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  const node: ShardNode = {
    shardId: shard.ShardId!,
    parents,
    closed: shard.SequenceNumberRange?.EndingSequenceNumber !== undefined,
  };
  withRange(node, shard.HashKeyRange);
  return node;
}

function withRange(node: ShardNode, range: Shard['HashKeyRange']): void {
  if (range?.StartingHashKey && range.EndingHashKey)
    node.hashKeyRange = { start: range.StartingHashKey, end: range.EndingHashKey };
}

/**
 * The children Kinesis names at a shard's end (GetRecords' or the fan-out's final event's `ChildShards`), as
 * nodes of the shard graph with their parents and hash key ranges as given; open as far as this tells (only a
 * listing says a shard is closed). Entries without an id are dropped.
 */
export function childShardNodes(children: readonly ChildShard[] | undefined): ShardNode[] {
  const nodes: ShardNode[] = [];
  for (const child of children ?? []) {
    if (!child.ShardId) continue;
    const node: ShardNode = {
      shardId: child.ShardId,
      parents: (child.ParentShards ?? []).filter((p) => p !== ''),
      closed: false,
    };
    withRange(node, child.HashKeyRange);
    nodes.push(node);
  }
  return nodes;
}

/** Every shard the stream still retains (an unfiltered listing: the only one that may declare expiry). */
export async function listShards(
  kinesis: KinesisApi,
  stream: StreamRef,
  abortSignal?: AbortSignal,
): Promise<ShardNode[]> {
  const shards: ShardNode[] = [];
  let nextToken: string | undefined;
  do {
    // Later pages carry only NextToken: the stream name is not allowed with it.
    const input = nextToken
      ? { NextToken: nextToken }
      : stream.streamArn
        ? { StreamARN: stream.streamArn }
        : { StreamName: stream.streamName };
    const page = await kinesis.send(new ListShardsCommand(input), { abortSignal });
    for (const shard of page.Shards ?? []) shards.push(toNode(shard));
    nextToken = page.NextToken;
  } while (nextToken);
  return shards;
}

/**
 * Shards created after `lastShardId` (shard ids grow with each reshard): a cheap check for new shards.
 * A filtered listing never says a shard expired.
 */
export async function listShardsAfter(
  kinesis: KinesisApi,
  stream: StreamRef,
  lastShardId: string,
): Promise<ShardNode[]> {
  const input = {
    ExclusiveStartShardId: lastShardId,
    ...(stream.streamArn ? { StreamARN: stream.streamArn } : { StreamName: stream.streamName }),
  };
  const page = await kinesis.send(new ListShardsCommand(input));
  return (page.Shards ?? []).map(toNode);
}

export async function describeStream(kinesis: KinesisApi, stream: StreamRef): Promise<StreamIdentity> {
  const input = stream.streamArn ? { StreamARN: stream.streamArn } : { StreamName: stream.streamName };
  const { StreamDescriptionSummary: summary } = await kinesis.send(new DescribeStreamSummaryCommand(input));
  return { streamArn: summary!.StreamARN!, createdMs: summary!.StreamCreationTimestamp?.getTime() ?? 0 };
}
