/**
 * KPL de-aggregation: a Kinesis record written by the Kinesis Producer Library may pack many user records
 * as `F3 89 9A C2` + protobuf `AggregatedRecord` + MD5 of the protobuf bytes. Decoded here with
 * the small protobuf reader of protobuf.ts (no run-time dependency). Never throws on bad bytes: a record that
 * is not a well-formed aggregate says why, and the caller emits it as it is. Each user record gets a copy
 * of its bytes, not a view into the aggregate: a view would keep the whole aggregate (up to 10 MiB) alive
 * while one of its user records waits for an ack, and the memory caps count the user record only.
 *
 *   message AggregatedRecord { repeated string partition_key_table = 1; repeated string explicit_hash_key_table = 2; repeated Record records = 3; }
 *   message Record { required uint64 partition_key_index = 1; optional uint64 explicit_hash_key_index = 2; required bytes data = 3; repeated Tag tags = 4; }
 *   message Tag { required string key = 1; optional string value = 2; }
 */
import { createHash } from 'node:crypto';
import { expectWire, MalformedProtobuf, ProtoReader, WireType } from './protobuf';
import type { KinesisRecord } from './records';

export const KPL_MAGIC: readonly number[] = [0xf3, 0x89, 0x9a, 0xc2];
const MD5_BYTES = 16;

export interface UserRecord {
  partitionKey: string;
  /** Decimal 128-bit hash key the producer chose instead of the MD5 of the partition key. */
  explicitHashKey?: string;
  data: Uint8Array;
  tags: { key: string; value?: string }[];
}

export type Deaggregated =
  /** No KPL magic: an ordinary record. */
  | { kind: 'plain' }
  | { kind: 'aggregate'; records: UserRecord[] }
  /** KPL magic, but a bad checksum or protobuf: the record is emitted as it is. */
  | { kind: 'corrupt'; reason: string };

export function hasKplMagic(data: Uint8Array): boolean {
  return (
    data.length >= KPL_MAGIC.length &&
    data[0] === KPL_MAGIC[0] &&
    data[1] === KPL_MAGIC[1] &&
    data[2] === KPL_MAGIC[2] &&
    data[3] === KPL_MAGIC[3]
  );
}

export function deaggregate(data: Uint8Array): Deaggregated {
  if (!hasKplMagic(data)) return { kind: 'plain' };
  if (data.length < KPL_MAGIC.length + MD5_BYTES)
    return { kind: 'corrupt', reason: `KPL magic but only ${data.length} bytes (no room for the MD5 trailer)` };
  // A plain Uint8Array whatever came in: a Buffer's `slice` is a view, not the copy each user record needs.
  const body = new Uint8Array(
    data.buffer,
    data.byteOffset + KPL_MAGIC.length,
    data.length - KPL_MAGIC.length - MD5_BYTES,
  );
  const trailer = data.subarray(data.length - MD5_BYTES);
  const digest = createHash('md5').update(body).digest();
  if (!digest.equals(trailer)) return { kind: 'corrupt', reason: 'MD5 trailer does not match the protobuf bytes' };
  try {
    const records = parseAggregate(body);
    if (records.length === 0) return { kind: 'corrupt', reason: 'the aggregate holds no user record' };
    return { kind: 'aggregate', records };
  } catch (err) {
    if (err instanceof MalformedProtobuf) return { kind: 'corrupt', reason: `bad protobuf: ${err.message}` };
    throw err;
  }
}

const utf8 = new TextDecoder('utf-8');

interface RawRecord {
  partitionKeyIndex?: number;
  explicitHashKeyIndex?: number;
  /** Where the data lies in the aggregate's bytes (copied out once the whole aggregate parsed). */
  data?: { start: number; end: number };
  tags: { key: string; value?: string }[];
}

function parseAggregate(bytes: Uint8Array): UserRecord[] {
  const reader = new ProtoReader(bytes);
  const partitionKeys: string[] = [];
  const hashKeys: string[] = [];
  const raw: RawRecord[] = [];
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1 || field === 2) {
      expectWire(wire, WireType.Bytes, field === 1 ? 'partition_key_table' : 'explicit_hash_key_table');
      const { start, end } = reader.delimited();
      (field === 1 ? partitionKeys : hashKeys).push(utf8.decode(bytes.subarray(start, end)));
    } else if (field === 3) {
      expectWire(wire, WireType.Bytes, 'records');
      const { start, end } = reader.delimited();
      raw.push(parseRecord(bytes, start, end));
    } else reader.skip(wire);
  }
  return raw.map((r, i) => {
    if (r.partitionKeyIndex === undefined) throw new MalformedProtobuf(`record ${i} has no partition_key_index`);
    if (r.data === undefined) throw new MalformedProtobuf(`record ${i} has no data`);
    const partitionKey = partitionKeys[r.partitionKeyIndex];
    if (partitionKey === undefined)
      throw new MalformedProtobuf(
        `record ${i}: partition_key_index ${r.partitionKeyIndex} outside the table of ${partitionKeys.length}`,
      );
    const user: UserRecord = { partitionKey, data: bytes.slice(r.data.start, r.data.end), tags: r.tags };
    if (r.explicitHashKeyIndex !== undefined) {
      const hashKey = hashKeys[r.explicitHashKeyIndex];
      if (hashKey === undefined)
        throw new MalformedProtobuf(
          `record ${i}: explicit_hash_key_index ${r.explicitHashKeyIndex} outside the table of ${hashKeys.length}`,
        );
      user.explicitHashKey = hashKey;
    }
    return user;
  });
}

function parseRecord(bytes: Uint8Array, from: number, to: number): RawRecord {
  const reader = new ProtoReader(bytes, from, to);
  const record: RawRecord = { tags: [] };
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1) {
      expectWire(wire, WireType.Varint, 'partition_key_index');
      record.partitionKeyIndex = reader.varint();
    } else if (field === 2) {
      expectWire(wire, WireType.Varint, 'explicit_hash_key_index');
      record.explicitHashKeyIndex = reader.varint();
    } else if (field === 3) {
      expectWire(wire, WireType.Bytes, 'data');
      record.data = reader.delimited();
    } else if (field === 4) {
      expectWire(wire, WireType.Bytes, 'tags');
      const { start, end } = reader.delimited();
      record.tags.push(parseTag(bytes, start, end));
    } else reader.skip(wire);
  }
  return record;
}

function parseTag(bytes: Uint8Array, from: number, to: number): { key: string; value?: string } {
  const reader = new ProtoReader(bytes, from, to);
  let key: string | undefined;
  let value: string | undefined;
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1 || field === 2) {
      expectWire(wire, WireType.Bytes, field === 1 ? 'tag key' : 'tag value');
      const { start, end } = reader.delimited();
      const text = utf8.decode(bytes.subarray(start, end));
      if (field === 1) key = text;
      else value = text;
    } else reader.skip(wire);
  }
  if (key === undefined) throw new MalformedProtobuf('tag without a key');
  return value === undefined ? { key } : { key, value };
}

/**
 * The 128-bit hash key Kinesis routes a record by: its explicit hash key, else the MD5 of its partition key
 * read as a big-endian integer. Undefined for an explicit hash key that is not a decimal number.
 */
export function hashKeyOf(partitionKey: string, explicitHashKey?: string): bigint | undefined {
  if (explicitHashKey !== undefined) return /^\d{1,39}$/.test(explicitHashKey) ? BigInt(explicitHashKey) : undefined;
  const digest = createHash('md5').update(partitionKey, 'utf8').digest();
  return (digest.readBigUInt64BE(0) << 64n) | digest.readBigUInt64BE(8);
}

const MAX_HASH_KEY = (1n << 128n) - 1n;

/** A shard's hash key range, inclusive at both ends. */
export interface HashRange {
  start: bigint;
  end: bigint;
}

export interface Expanded {
  /** The user records (the record itself when it is no aggregate), in order. */
  records: KinesisRecord[];
  /** Why a record with the KPL magic was emitted as it is. */
  corrupt?: string;
  /** User records whose hash key lies outside the shard's range (a producer's shard map was stale at a reshard): delivered all the same. */
  outsideRange: KinesisRecord[];
}

/**
 * A fetched Kinesis record as the records to emit. `skipThrough`: user records up to that sub-sequence are
 * done already (the checkpoint stopped inside this aggregate) and left out.
 */
export function expandRecord(record: KinesisRecord, hashRange: HashRange | undefined, skipThrough?: number): Expanded {
  const result = deaggregate(record.data);
  if (result.kind === 'plain') return { records: [record], outsideRange: [] };
  if (result.kind === 'corrupt') return { records: [record], corrupt: result.reason, outsideRange: [] };
  const last = result.records.length - 1;
  const records: KinesisRecord[] = [];
  const outsideRange: KinesisRecord[] = [];
  // An MD5 per user record costs more than decoding it: skipped when the shard takes every key, once per key otherwise.
  const range = hashRange && !(hashRange.start === 0n && hashRange.end >= MAX_HASH_KEY) ? hashRange : undefined;
  const outside = new Map<string, boolean>();
  result.records.forEach((user, subSequence) => {
    if (skipThrough !== undefined && subSequence <= skipThrough) return;
    const expanded: KinesisRecord = {
      shardId: record.shardId,
      sequenceNumber: record.sequenceNumber,
      partitionKey: user.partitionKey,
      data: user.data,
      arrivalMs: record.arrivalMs,
      subSequence,
      lastSubSequence: last,
    };
    if (user.explicitHashKey !== undefined) expanded.explicitHashKey = user.explicitHashKey;
    records.push(expanded);
    if (range) {
      const key = user.explicitHashKey === undefined ? `p${user.partitionKey}` : `e${user.explicitHashKey}`;
      let isOutside = outside.get(key);
      if (isOutside === undefined) {
        const hashKey = hashKeyOf(user.partitionKey, user.explicitHashKey);
        isOutside = hashKey === undefined || hashKey < range.start || hashKey > range.end;
        outside.set(key, isOutside);
      }
      if (isOutside) outsideRange.push(expanded);
    }
  });
  return { records, outsideRange };
}
