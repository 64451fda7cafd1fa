/**
 * One stream of the benchmark emulator: test/sim's `SimStream` (shards, hash ranges, sequence numbers, split
 * and merge) with the indexes that keep each request O(log shards) or O(records returned): every shard in id
 * order (ids grow with creation, so ListShards pages and ExclusiveStartShardId are slices) and the open
 * shards by hash range (a put is routed by binary search). The indexes are rebuilt at each reshard only.
 */
import { createHash } from 'node:crypto';
import { type SimShard, SimStream } from '../../sim/kinesis/simStream';

export const StreamStatus = {
  Creating: 'CREATING',
  Active: 'ACTIVE',
  Updating: 'UPDATING',
  Deleting: 'DELETING',
} as const;
export type StreamStatus = (typeof StreamStatus)[keyof typeof StreamStatus];

/** A Kinesis error answer: `type` is the `__type` the SDK maps to its exception class. */
export class KinesisFault extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new KinesisFault('InvalidArgumentException', message);

/** MD5 of the partition key, read as a 128-bit big-endian integer: Kinesis's hash key of a record. */
export function hashKeyOf(partitionKey: string): bigint {
  return BigInt(`0x${createHash('md5').update(partitionKey, 'utf8').digest('hex')}`);
}

/** Index of the first element for which `before` is false (elements with `before` true come first). */
export function firstNotBefore<T>(items: readonly T[], before: (item: T) => boolean): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(items[middle])) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class FastStream {
  readonly model: SimStream;
  status: StreamStatus = StreamStatus.Creating;
  /** Every shard, open and closed, in id order. */
  readonly shards: SimShard[] = [];
  /** Open shards by starting hash key. */
  private open: SimShard[] = [];

  constructor(
    readonly name: string,
    shardCount: number,
    /** Distinguishes this stream from a later one of the same name (iterators and tokens carry it). */
    readonly generation: number,
    clock: () => number,
  ) {
    this.model = new SimStream(name, clock(), shardCount, clock);
    this.reindex();
  }

  get arn(): string {
    return this.model.streamArn;
  }

  get openCount(): number {
    return this.open.length;
  }

  /** After the model gained shards: the new ones join the id order, and the open ones are sorted again. */
  private reindex(): void {
    let i = 0;
    for (const shard of this.model.shards.values()) {
      if (i >= this.shards.length) this.shards.push(shard);
      i += 1;
    }
    this.open = this.shards
      .filter((s) => s.endingSequenceNumber === undefined)
      .sort((a, b) => (a.startingHashKey < b.startingHashKey ? -1 : 1));
  }

  shard(shardId: string): SimShard | undefined {
    return this.model.shards.get(shardId);
  }

  /** Position in id order of the first shard after `shardId` (which need not exist). */
  indexAfter(shardId: string): number {
    return firstNotBefore(this.shards, (s) => s.shardId <= shardId);
  }

  /** The open shard whose hash range holds `hash`. */
  route(hash: bigint): SimShard {
    const i = firstNotBefore(this.open, (s) => s.endingHashKey < hash);
    return this.open[i];
  }

  /** Index in `shard.records` of the first record at (or after) `sequenceNumber`. */
  recordIndex(shard: SimShard, sequenceNumber: bigint, inclusive: boolean): number {
    return firstNotBefore(shard.records, (r) =>
      inclusive ? BigInt(r.sequenceNumber) < sequenceNumber : BigInt(r.sequenceNumber) <= sequenceNumber,
    );
  }

  /** True when `sequenceNumber` is one this shard gave out: its start, its end, or one of its records'. */
  owns(shard: SimShard, sequenceNumber: bigint): boolean {
    if (sequenceNumber === BigInt(shard.startingSequenceNumber)) return true;
    if (shard.endingSequenceNumber !== undefined && sequenceNumber === BigInt(shard.endingSequenceNumber)) return true;
    const i = this.recordIndex(shard, sequenceNumber, true);
    return i < shard.records.length && BigInt(shard.records[i].sequenceNumber) === sequenceNumber;
  }

  /** Index of the first record that arrived at or after `ms`. */
  timeIndex(shard: SimShard, ms: number): number {
    return firstNotBefore(shard.records, (r) => r.arrivalMs < ms);
  }

  /**
   * UNIFORM_SCALING as far as it goes here: up to twice the open shards by splitting, in hash order, as many
   * as needed at the middle of their range; down to half by merging as many disjoint adjacent pairs. Doubling
   * and halving give uniform ranges, as Kinesis's do; other targets leave the shards not split or merged as
   * they were, where Kinesis would even the ranges out.
   */
  scaleTo(target: number): void {
    const open = this.open.slice();
    if (target > open.length) {
      for (const shard of open.slice(0, target - open.length)) {
        const middle = (shard.startingHashKey + shard.endingHashKey + 1n) / 2n;
        this.model.splitAt(shard, middle);
      }
    } else {
      for (let i = 0; i < open.length - target; i += 1) this.model.merge(open[2 * i], open[2 * i + 1]);
    }
    this.reindex();
  }

  split(shard: SimShard, newStartingHashKey: bigint): void {
    this.model.splitAt(shard, newStartingHashKey);
    this.reindex();
  }

  merge(shard: SimShard, adjacent: SimShard): void {
    this.model.merge(shard, adjacent);
    this.reindex();
  }
}
