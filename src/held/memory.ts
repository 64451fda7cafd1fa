/**
 * The memory caps (invariant 7): what the shards of a process hold, in records and bytes, and how much
 * the next GetRecords of a shard may bring. Pure, so the pause at the caps is tested in milliseconds.
 */
import type { SpoutConfig } from '../config/config';
import type { KinesisRecord } from '../kinesis/records';

/** What records occupy: their count, and the bytes of their data and partition keys. */
export interface Held {
  records: number;
  bytes: number;
}

/** What one shard holds: prefetched, in flight, acked behind an unacked one, and reserved for a GetRecords. */
export interface ShardHolding {
  /** Prefetched, not emitted. */
  readonly buffered: number;
  readonly held: Held;
  /** Mean bytes of the records this shard fetched (0 before the first), to turn bytes of room into records. */
  readonly averageRecordBytes: number;
  /** Records held per Kinesis record fetched (KPL aggregates hold many); 1 when absent. */
  readonly userRecordsPerRecord?: number;
}

export type MemoryLimits = Pick<
  SpoutConfig,
  'maxRecordsInMemory' | 'maxBytesInMemory' | 'shardBufferSize' | 'maxRecordsPerRequest'
>;

/** Bytes a record holds while the spout keeps it; the fixed cost per record is bounded by the record cap. */
export function recordBytes(record: KinesisRecord): number {
  return record.data.byteLength + record.partitionKey.length;
}

export function heldIn(shards: Iterable<{ readonly held: Held }>): Held {
  const total = { records: 0, bytes: 0 };
  for (const shard of shards) {
    total.records += shard.held.records;
    total.bytes += shard.held.bytes;
  }
  return total;
}

/**
 * The part of the caps one shard may hold: the caps divided by the shards held, and never more than half
 * of them. A shard stuck behind a record that keeps failing stops at its share and leaves room for the
 * others, including those taken after it filled its share (shares shrink as shards are added).
 */
export function shardShare(limits: MemoryLimits, shardsHeld: number): Held {
  const shards = Math.max(2, shardsHeld);
  return {
    records: Math.max(1, Math.floor(limits.maxRecordsInMemory / shards)),
    bytes: limits.maxBytesInMemory / shards,
  };
}

/**
 * A shard's buffer is refilled once it holds no more than this: room for a whole request, or for half the
 * buffer if that is less. Topped up as soon as there is any room, a buffer that Storm drains steadily is
 * read in calls of what it drained since the last one (a fifth of a second's worth at 5 calls/s), and each
 * call has a fixed cost (signing, the SDK's middleware, HTTP: 1-2 ms of CPU, as much as a few hundred
 * records' own); the half still buffered feeds Storm meanwhile.
 */
function refillBelow(limits: Pick<MemoryLimits, 'shardBufferSize' | 'maxRecordsPerRequest'>): number {
  return limits.shardBufferSize - Math.min(limits.maxRecordsPerRequest, Math.ceil(limits.shardBufferSize / 2));
}

/**
 * How many records the next GetRecords of a shard may ask for: 0 while its buffer holds more than
 * `refillBelow`, when the process is at or over either cap or the shard holds its share, else what fits in
 * the shard's buffer, in what is left of the caps and of its share, and in one request. `process` includes
 * this shard, without what it reserved for the request this room is for. Bytes of room become records at the
 * shard's mean record size, at least one while there is room at all; before the shard has read any record,
 * one (records can be 1 MiB each). A response goes past the byte cap only by what its records larger than
 * that mean add.
 */
export function fetchRoom(process: Held, shard: ShardHolding, shardsHeld: number, limits: MemoryLimits): number {
  if (shard.buffered > refillBelow(limits)) return 0;
  const share = shardShare(limits, shardsHeld);
  const held = Math.min(
    limits.shardBufferSize - shard.buffered,
    limits.maxRecordsInMemory - process.records,
    share.records - shard.held.records,
  );
  const bytes = Math.min(limits.maxBytesInMemory - process.bytes, share.bytes - shard.held.bytes);
  if (held <= 0 || bytes <= 0) return 0;
  // The caps count user records; a GetRecords limit counts Kinesis records, each a KPL aggregate of many maybe.
  const records = Math.min(
    limits.maxRecordsPerRequest,
    Math.max(1, Math.floor(held / (shard.userRecordsPerRecord ?? 1))),
  );
  if (shard.averageRecordBytes <= 0) return 1;
  return Math.min(records, Math.max(1, Math.floor(bytes / shard.averageRecordBytes)));
}
