/**
 * How far each shard's checkpoint is behind: one GetShardIterator and one GetRecords (Limit 1) at the
 * checkpoint, whose MillisBehindLatest Kinesis computes, and the arrival time of the first record not yet
 * checkpointed. These calls count against the shard's 5 reads a second that the spout shares.
 */
import { GetRecordsCommand, GetShardIteratorCommand, type GetShardIteratorCommandInput } from '@aws-sdk/client-kinesis';
import type { Position } from '../core/position';
import { describeError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import type { StreamRef } from '../kinesis/shards';

export interface ShardLag {
  /** Kinesis's MillisBehindLatest for a reader at the checkpoint. */
  millisBehindLatest?: number;
  /** How long ago the first record after the checkpoint arrived (none: nothing unread). */
  nextRecordAgeMs?: number;
  error?: string;
}

const PARALLEL_SHARDS = 4;

/** The GetShardIterator request that starts a reader at `position` (the one the spout's reader makes). */
export function iteratorRequest(stream: StreamRef, shardId: string, position: Exclude<Position, { kind: 'SHARD_END' }>): GetShardIteratorCommandInput {
  const input: GetShardIteratorCommandInput = { ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON', ...(stream.streamArn ? { StreamARN: stream.streamArn } : { StreamName: stream.streamName }) };
  if (position.kind === 'AFTER') {
    input.ShardIteratorType = 'AFTER_SEQUENCE_NUMBER';
    input.StartingSequenceNumber = position.sequenceNumber;
  } else if (position.kind === 'AT_TIMESTAMP') {
    input.ShardIteratorType = 'AT_TIMESTAMP';
    input.Timestamp = new Date(position.timestampMs);
  }
  return input;
}

export async function shardLag(kinesis: KinesisApi, stream: StreamRef, shardId: string, position: Exclude<Position, { kind: 'SHARD_END' }>, nowMs: number): Promise<ShardLag> {
  try {
    const { ShardIterator } = await kinesis.send(new GetShardIteratorCommand(iteratorRequest(stream, shardId, position)));
    const response = await kinesis.send(new GetRecordsCommand({ ShardIterator, Limit: 1, StreamARN: stream.streamArn }));
    const arrival = response.Records?.[0]?.ApproximateArrivalTimestamp?.getTime();
    return { millisBehindLatest: response.MillisBehindLatest, nextRecordAgeMs: arrival === undefined ? undefined : Math.max(0, nowMs - arrival) };
  } catch (err) {
    return { error: describeError(err) };
  }
}

/** Lag of each shard in `positions`, a few shards at a time. */
export async function lagOf(kinesis: KinesisApi, stream: StreamRef, positions: ReadonlyMap<string, Exclude<Position, { kind: 'SHARD_END' }>>, nowMs: number): Promise<Map<string, ShardLag>> {
  const queue = [...positions];
  const lags = new Map<string, ShardLag>();
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) lags.set(next[0], await shardLag(kinesis, stream, next[0], next[1], nowMs));
  };
  await Promise.all(Array.from({ length: PARALLEL_SHARDS }, worker));
  return lags;
}
