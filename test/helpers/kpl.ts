/**
 * KPL aggregates made by an independent encoder (the `aws-kinesis-agg` dev dependency, AWS's own
 * aggregation library): test vectors for our decoder, and aggregated records for the simulation and the
 * integration tests. Test-only: the spout never loads it.
 */
import { createHash } from 'node:crypto';

interface EncodedRecord {
  partitionKey: string;
  data: Buffer;
  ExplicitHashKey?: string;
}
interface Aggregator {
  addUserRecord(record: { partitionKey: string; explicitHashKey?: string; data: Buffer }): void;
  build(): EncodedRecord | undefined;
}
interface ProtoType {
  encode(message: object): { finish(): Uint8Array };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { RecordAggregator } = require('aws-kinesis-agg') as { RecordAggregator: new () => Aggregator };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AggregatedRecord } = require('aws-kinesis-agg/lib/common') as { AggregatedRecord: ProtoType };

export interface UserRecordInput {
  partitionKey: string;
  data: Buffer | string;
  explicitHashKey?: string;
}

export const KPL_MAGIC = Buffer.from('f3899ac2', 'hex');

/** One Kinesis record packing `records` (what KPL would put), with the partition key KPL puts it under. */
export function kplAggregate(records: UserRecordInput[]): {
  partitionKey: string;
  explicitHashKey?: string;
  data: Buffer;
} {
  const aggregator = new RecordAggregator();
  for (const r of records)
    aggregator.addUserRecord({
      partitionKey: r.partitionKey,
      explicitHashKey: r.explicitHashKey,
      data: Buffer.from(r.data),
    });
  const built = aggregator.build();
  if (!built) throw new Error('nothing aggregated');
  return { partitionKey: built.partitionKey, explicitHashKey: built.ExplicitHashKey, data: built.data };
}

/** The same format through the library's protobuf type, with tags (which its aggregator never writes). */
export function kplWithTags(
  partitionKeys: string[],
  hashKeys: string[],
  records: {
    partition_key_index: number;
    explicit_hash_key_index?: number;
    data: Buffer;
    tags: { key: string; value?: string }[];
  }[],
): Buffer {
  const body = Buffer.from(
    AggregatedRecord.encode({
      partition_key_table: partitionKeys,
      explicit_hash_key_table: hashKeys,
      records,
    }).finish(),
  );
  return Buffer.concat([KPL_MAGIC, body, createHash('md5').update(body).digest()]);
}
