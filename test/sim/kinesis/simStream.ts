/**
 * An in-memory Kinesis data stream: shards with hash ranges and parents, records with growing sequence
 * numbers (decimal strings past 2^53), split and merge (a closed parent keeps its records and gets an
 * ending sequence number; its children take its hash range). Nothing expires: every record put stays
 * readable, so "no record lost" can be checked against all of them.
 */

export interface SimRecord {
  shardId: string;
  sequenceNumber: string;
  partitionKey: string;
  data: Uint8Array;
  arrivalMs: number;
  /** A KPL aggregate (its data made by aws-kinesis-agg) of this many user records; 0 for a plain record. */
  users: number;
}

export interface SimShard {
  shardId: string;
  parents: string[];
  startingHashKey: bigint;
  endingHashKey: bigint;
  startingSequenceNumber: string;
  endingSequenceNumber: string | undefined;
  records: SimRecord[];
  children: string[];
}

export const MAX_HASH = (1n << 128n) - 1n;
/** Real sequence numbers are 56 digits; these are as long, so they compare as BigInt only. */
const SEQUENCE_BASE = 49_600_000_000_000_000_000_000_000_000_000_000_000_000_000_000_000_000n;

export class SimStream {
  readonly shards = new Map<string, SimShard>();
  private nextShard = 0;
  private nextSequence = 1n;
  readonly streamArn: string;

  constructor(
    readonly streamName: string,
    readonly createdMs: number,
    initialShards: number,
    private readonly clock: () => number,
  ) {
    this.streamArn = `arn:aws:kinesis:us-east-1:000000000000:stream/${streamName}`;
    const width = (MAX_HASH + 1n) / BigInt(initialShards);
    for (let i = 0; i < initialShards; i += 1) {
      const end = i === initialShards - 1 ? MAX_HASH : width * BigInt(i + 1) - 1n;
      this.addShard([], width * BigInt(i), end);
    }
  }

  private sequence(): string {
    const value = SEQUENCE_BASE + this.nextSequence * 1_000n;
    this.nextSequence += 1n;
    return value.toString();
  }

  private addShard(parents: string[], startingHashKey: bigint, endingHashKey: bigint): SimShard {
    const shardId = `shardId-${String(this.nextShard++).padStart(12, '0')}`;
    const shard: SimShard = {
      shardId,
      parents,
      startingHashKey,
      endingHashKey,
      startingSequenceNumber: this.sequence(),
      endingSequenceNumber: undefined,
      records: [],
      children: [],
    };
    this.shards.set(shardId, shard);
    return shard;
  }

  /** Wall-clock ms (arrival timestamps are wall time, as AT_TIMESTAMP iterators are). */
  wallNow(): number {
    return this.clock();
  }

  open(): SimShard[] {
    return [...this.shards.values()].filter((s) => s.endingSequenceNumber === undefined);
  }

  /** Puts one record on the open shard whose hash range holds `hashKey` (a fraction of the key space). */
  put(partitionKey: string, hashFraction: number, data: Uint8Array, users = 0): SimRecord {
    const hash = (MAX_HASH * BigInt(Math.floor(hashFraction * 1e9))) / 1_000_000_000n;
    const shard = this.open().find((s) => s.startingHashKey <= hash && hash <= s.endingHashKey)!;
    return this.append(shard, partitionKey, data, users);
  }

  /** Appends one record to `shard` (open; the caller routed it) with the next sequence number. */
  append(shard: SimShard, partitionKey: string, data: Uint8Array, users = 0): SimRecord {
    const record: SimRecord = {
      shardId: shard.shardId,
      sequenceNumber: this.sequence(),
      partitionKey,
      data,
      arrivalMs: this.clock(),
      users,
    };
    shard.records.push(record);
    return record;
  }

  private close(shard: SimShard): void {
    shard.endingSequenceNumber = this.sequence();
  }

  /** Splits an open shard at the middle of its hash range (plus or minus `skew` of it). */
  split(shard: SimShard, skew: number): [SimShard, SimShard] {
    const width = shard.endingHashKey - shard.startingHashKey;
    const at = shard.startingHashKey + (width * BigInt(Math.floor((0.5 + skew) * 1000))) / 1000n;
    return this.splitAt(shard, at + 1n);
  }

  /** SplitShard's split: the children hold [start, newStartingHashKey - 1] and [newStartingHashKey, end]. */
  splitAt(shard: SimShard, newStartingHashKey: bigint): [SimShard, SimShard] {
    this.close(shard);
    const low = this.addShard([shard.shardId], shard.startingHashKey, newStartingHashKey - 1n);
    const high = this.addShard([shard.shardId], newStartingHashKey, shard.endingHashKey);
    shard.children.push(low.shardId, high.shardId);
    return [low, high];
  }

  /** Open shards with adjacent hash ranges, which may be merged. */
  adjacentPairs(): [SimShard, SimShard][] {
    const open = this.open().sort((a, b) => (a.startingHashKey < b.startingHashKey ? -1 : 1));
    const pairs: [SimShard, SimShard][] = [];
    for (let i = 0; i + 1 < open.length; i += 1) pairs.push([open[i], open[i + 1]]);
    return pairs;
  }

  /** MergeShards: `adjacent`'s range must touch `shard`'s, on either side; the child is their union. */
  merge(shard: SimShard, adjacent: SimShard): SimShard {
    this.close(shard);
    this.close(adjacent);
    const [low, high] = shard.startingHashKey < adjacent.startingHashKey ? [shard, adjacent] : [adjacent, shard];
    const child = this.addShard([shard.shardId, adjacent.shardId], low.startingHashKey, high.endingHashKey);
    shard.children.push(child.shardId);
    adjacent.children.push(child.shardId);
    return child;
  }

  /** Ids of what the spout emits for a record: `<shardId>:<seq>`, or one `<shardId>:<seq>:<sub>` per user record of an aggregate. */
  static unitsOf(record: SimRecord): string[] {
    const id = `${record.shardId}:${record.sequenceNumber}`;
    return record.users === 0 ? [id] : Array.from({ length: record.users }, (_, sub) => `${id}:${sub}`);
  }

  get recordCount(): number {
    let total = 0;
    for (const shard of this.shards.values()) total += shard.records.length;
    return total;
  }
}
