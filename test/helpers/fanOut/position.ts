/**
 * Where a subscription starts, turned into a kinesis-local shard iterator and a first continuation.
 *
 * kinesis-local has no sequence number for "before the first record" except the shard's own
 * StartingSequenceNumber, which it accepts with AFTER_SEQUENCE_NUMBER as "from the first record". So:
 *
 * - TRIM_HORIZON: a TRIM_HORIZON iterator; continuation = the shard's StartingSequenceNumber.
 * - AFTER_SEQUENCE_NUMBER x: an AFTER x iterator; continuation = x.
 * - AT_SEQUENCE_NUMBER x: an AT x iterator; continuation unknown until x is pushed (x is the first record
 *   read), unless x is the shard's StartingSequenceNumber.
 * - LATEST: the shard read to its end here, before the call is answered; continuation = the last record
 *   (or the shard's start), the iterator the one after it. That is LATEST as of the call, and it can be
 *   continued from with no gap, which a kinesis-local LATEST iterator could not.
 * - AT_TIMESTAMP t: a TRIM_HORIZON iterator whose records before t are skipped (each becoming the
 *   continuation), so the continuation is known before the first record at or after t.
 */
import { KinesisError, type Upstream } from './upstream';

export interface ShardInfo {
  ShardId: string;
  ParentShardId?: string | null;
  AdjacentParentShardId?: string | null;
  HashKeyRange: { StartingHashKey: string; EndingHashKey: string };
  SequenceNumberRange: { StartingSequenceNumber: string; EndingSequenceNumber?: string | null };
}

export interface KinesisRecord {
  SequenceNumber: string;
  ApproximateArrivalTimestamp: number;
  Data: string;
  PartitionKey: string;
  [more: string]: unknown;
}

export interface GetRecordsPage {
  Records?: KinesisRecord[];
  NextShardIterator?: string | null;
  MillisBehindLatest?: number;
  ChildShards?: unknown[] | null;
}

export interface Start {
  iterator: string | null;
  continuation: string | undefined;
  /** Records with an arrival time before this (epoch seconds) are skipped: AT_TIMESTAMP. */
  skipBefore?: number;
}

const TYPES = ['AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER', 'TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP'];
const invalid = (message: string) => new KinesisError(400, 'InvalidArgumentException', message);

/** Per upstream and stream: callers waiting for a listing, and whether one is being made. */
interface Listings {
  running: boolean;
  waiting: { resolve: (shards: ShardInfo[]) => void; reject: (err: unknown) => void }[];
}
const listings = new WeakMap<Upstream, Map<string, Listings>>();

/**
 * The stream's shards, as a listing made after the call: concurrent callers share one (a thousand
 * subscriptions opened at once would otherwise list a thousand shards a thousand times). A listing serves
 * only the callers that were waiting when it started; those that come meanwhile get the next one.
 */
export function listShards(kinesis: Upstream, streamName: string): Promise<ShardInfo[]> {
  const byStream = listings.get(kinesis) ?? new Map<string, Listings>();
  listings.set(kinesis, byStream);
  const state = byStream.get(streamName) ?? { running: false, waiting: [] };
  byStream.set(streamName, state);
  return new Promise((resolve, reject) => {
    state.waiting.push({ resolve, reject });
    if (!state.running) void drain(kinesis, streamName, state);
  });
}

async function drain(kinesis: Upstream, streamName: string, state: Listings): Promise<void> {
  state.running = true;
  while (state.waiting.length > 0) {
    const batch = state.waiting.splice(0);
    try {
      const shards = await listOnce(kinesis, streamName);
      for (const waiter of batch) waiter.resolve(shards);
    } catch (err) {
      for (const waiter of batch) waiter.reject(err);
    }
  }
  state.running = false;
}

async function listOnce(kinesis: Upstream, streamName: string): Promise<ShardInfo[]> {
  const shards: ShardInfo[] = [];
  let input: Record<string, unknown> = { StreamName: streamName };
  for (;;) {
    const page = await kinesis.call<{ Shards?: ShardInfo[]; NextToken?: string | null }>('ListShards', input);
    shards.push(...(page.Shards ?? []));
    if (!page.NextToken) return shards;
    input = { NextToken: page.NextToken };
  }
}

/** Checks the request's StartingPosition; throws InvalidArgumentException naming what is wrong. */
export function checkStartingPosition(position: unknown): {
  type: string;
  sequenceNumber?: string;
  timestamp?: number;
} {
  if (position === null || typeof position !== 'object') throw invalid('StartingPosition is required');
  const { Type, SequenceNumber, Timestamp } = position as Record<string, unknown>;
  if (typeof Type !== 'string' || !TYPES.includes(Type))
    throw invalid(`StartingPosition.Type ${String(Type)} is not one of ${TYPES.join(', ')}`);
  if (Type === 'AT_SEQUENCE_NUMBER' || Type === 'AFTER_SEQUENCE_NUMBER') {
    if (typeof SequenceNumber !== 'string' || !/^\d+$/.test(SequenceNumber))
      throw invalid(`StartingPosition.SequenceNumber is required with ${Type}`);
    return { type: Type, sequenceNumber: SequenceNumber };
  }
  if (Type === 'AT_TIMESTAMP') {
    if (typeof Timestamp !== 'number' || !Number.isFinite(Timestamp))
      throw invalid('StartingPosition.Timestamp is required with AT_TIMESTAMP');
    return { type: Type, timestamp: Timestamp };
  }
  return { type: Type };
}

export async function resolveStart(
  kinesis: Upstream,
  streamName: string,
  shard: ShardInfo,
  position: { type: string; sequenceNumber?: string; timestamp?: number },
): Promise<Start> {
  const shardStart = shard.SequenceNumberRange.StartingSequenceNumber;
  const iterator = async (type: string, sequenceNumber?: string) =>
    (
      await kinesis.call<{ ShardIterator?: string | null }>('GetShardIterator', {
        StreamName: streamName,
        ShardId: shard.ShardId,
        ShardIteratorType: type,
        ...(sequenceNumber ? { StartingSequenceNumber: sequenceNumber } : {}),
      })
    ).ShardIterator ?? null;
  switch (position.type) {
    case 'TRIM_HORIZON':
      return { iterator: await iterator('TRIM_HORIZON'), continuation: shardStart };
    case 'AFTER_SEQUENCE_NUMBER':
      return {
        iterator: await iterator('AFTER_SEQUENCE_NUMBER', position.sequenceNumber),
        continuation: position.sequenceNumber,
      };
    case 'AT_SEQUENCE_NUMBER':
      return {
        iterator: await iterator('AT_SEQUENCE_NUMBER', position.sequenceNumber),
        continuation: position.sequenceNumber === shardStart ? shardStart : undefined,
      };
    case 'AT_TIMESTAMP':
      return { iterator: await iterator('TRIM_HORIZON'), continuation: shardStart, skipBefore: position.timestamp };
    default: {
      // LATEST: read to the end now.
      let current = await iterator('TRIM_HORIZON');
      let continuation = shardStart;
      while (current) {
        const page = await kinesis.call<GetRecordsPage>('GetRecords', { ShardIterator: current, Limit: 10_000 });
        const records = page.Records ?? [];
        if (records.length > 0) continuation = records[records.length - 1].SequenceNumber;
        if (records.length === 0 && page.NextShardIterator) return { iterator: page.NextShardIterator, continuation };
        current = page.NextShardIterator ?? null;
      }
      return { iterator: null, continuation };
    }
  }
}
