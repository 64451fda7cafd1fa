/**
 * How far each shard's checkpoint is behind: one GetShardIterator and one GetRecords (Limit 1) at the
 * checkpoint, where the spout's reader would start (inside a KPL aggregate: at it), whose MillisBehindLatest
 * Kinesis computes, and the arrival time of the first record not yet checkpointed. These calls count against the shard's 5 reads a second that the spout shares.
 */
import type { Position } from '../core/position';
import { describeError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import { peekAt } from '../kinesis/iterators';
import type { StreamRef } from '../kinesis/shards';

export interface ShardLag {
  /** Kinesis's MillisBehindLatest for a reader at the checkpoint. */
  millisBehindLatest?: number;
  /** How long ago the first record after the checkpoint arrived (none: nothing unread). */
  nextRecordAgeMs?: number;
  error?: string;
}

const PARALLEL_SHARDS = 4;

export async function shardLag(
  kinesis: KinesisApi,
  stream: StreamRef,
  shardId: string,
  position: Exclude<Position, { kind: 'SHARD_END' }>,
  nowMs: number,
): Promise<ShardLag> {
  try {
    const { millisBehindLatest, firstArrivalMs } = await peekAt(kinesis, stream, shardId, position);
    return {
      millisBehindLatest,
      nextRecordAgeMs: firstArrivalMs === undefined ? undefined : Math.max(0, nowMs - firstArrivalMs),
    };
  } catch (err) {
    return { error: describeError(err) };
  }
}

/** Lag of each shard in `positions`, a few shards at a time. */
export async function lagOf(
  kinesis: KinesisApi,
  stream: StreamRef,
  positions: ReadonlyMap<string, Exclude<Position, { kind: 'SHARD_END' }>>,
  nowMs: number,
): Promise<Map<string, ShardLag>> {
  const queue = [...positions];
  const lags = new Map<string, ShardLag>();
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift())
      lags.set(next[0], await shardLag(kinesis, stream, next[0], next[1], nowMs));
  };
  await Promise.all(Array.from({ length: PARALLEL_SHARDS }, worker));
  return lags;
}
