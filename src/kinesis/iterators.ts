/**
 * Where a shard is read from, as Kinesis requests: the one home of GetShardIterator (the spout's readers and
 * the tools start a shard the same way), and the one-record look the tools take at a checkpoint.
 */
import { GetRecordsCommand, GetShardIteratorCommand, type GetShardIteratorCommandInput } from '@aws-sdk/client-kinesis';
import type { Position } from '../core/position';
import type { KinesisApi } from './client';
import type { StreamRef } from './shards';

/** A position a reader can start at (SHARD_END has nothing left to read). */
export type StartPosition = Exclude<Position, { kind: 'SHARD_END' }>;

/** The GetShardIterator request that starts a reader at `position`. */
export function iteratorRequest(
  stream: StreamRef,
  shardId: string,
  position: StartPosition,
): GetShardIteratorCommandInput {
  const input: GetShardIteratorCommandInput = {
    ShardId: shardId,
    ShardIteratorType: 'TRIM_HORIZON',
    ...(stream.streamArn ? { StreamARN: stream.streamArn } : { StreamName: stream.streamName }),
  };
  if (position.kind === 'AFTER') {
    // Stopped inside a KPL aggregate: read it again (its owner skips the user records already done).
    input.ShardIteratorType = position.subSequence === undefined ? 'AFTER_SEQUENCE_NUMBER' : 'AT_SEQUENCE_NUMBER';
    input.StartingSequenceNumber = position.sequenceNumber;
  } else if (position.kind === 'AT_TIMESTAMP') {
    input.ShardIteratorType = 'AT_TIMESTAMP';
    input.Timestamp = new Date(position.timestampMs);
  }
  return input;
}

/**
 * A shard iterator at `position`. Kinesis refuses a sequence number that is not one of the shard's with
 * InvalidArgumentException, so this is also how a position is checked before it is written.
 */
export async function shardIteratorAt(
  kinesis: KinesisApi,
  stream: StreamRef,
  shardId: string,
  position: StartPosition,
  abortSignal?: AbortSignal,
): Promise<string> {
  const response = await kinesis.send(new GetShardIteratorCommand(iteratorRequest(stream, shardId, position)), {
    abortSignal,
  });
  return response.ShardIterator!;
}

export interface Peek {
  /** Kinesis's MillisBehindLatest for a reader at the position. */
  millisBehindLatest?: number;
  /** Arrival time (epoch ms) of the first record at the position; none when nothing is there yet. */
  firstArrivalMs?: number;
}

/** What a reader at `position` would see first: one GetShardIterator and one GetRecords of one record. */
export async function peekAt(
  kinesis: KinesisApi,
  stream: StreamRef,
  shardId: string,
  position: StartPosition,
): Promise<Peek> {
  const iterator = await shardIteratorAt(kinesis, stream, shardId, position);
  const response = await kinesis.send(
    new GetRecordsCommand({ ShardIterator: iterator, Limit: 1, StreamARN: stream.streamArn }),
  );
  return {
    millisBehindLatest: response.MillisBehindLatest,
    firstArrivalMs: response.Records?.[0]?.ApproximateArrivalTimestamp?.getTime(),
  };
}

/** The record with `sequenceNumber` (AT_SEQUENCE_NUMBER, one record); undefined when the shard has nothing there any more. */
export async function peekRecord(
  kinesis: KinesisApi,
  stream: StreamRef,
  shardId: string,
  sequenceNumber: string,
): Promise<{ sequenceNumber: string; data: Uint8Array } | undefined> {
  // subSequence 0 asks for AT_SEQUENCE_NUMBER: the record itself, not the one after it.
  const iterator = await shardIteratorAt(kinesis, stream, shardId, { kind: 'AFTER', sequenceNumber, subSequence: 0 });
  const response = await kinesis.send(
    new GetRecordsCommand({ ShardIterator: iterator, Limit: 1, StreamARN: stream.streamArn }),
  );
  const record = response.Records?.[0];
  return record?.SequenceNumber && record.Data
    ? { sequenceNumber: record.SequenceNumber, data: record.Data }
    : undefined;
}
