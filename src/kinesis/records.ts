/** A Kinesis record (or a user record inside a KPL aggregate) as the spout keeps it, its message id, and the tuple built from it. */
import type { _Record } from '@aws-sdk/client-kinesis';
import type { DataFormat, TupleField } from '../core/tuple';

export interface KinesisRecord {
  shardId: string;
  sequenceNumber: string;
  partitionKey: string;
  data: Uint8Array;
  arrivalMs: number;
  /** A user record of a KPL aggregate: its index in the aggregate (the Kinesis record's sequence number is shared). */
  subSequence?: number;
  /** With `subSequence`: the index of the aggregate's last user record. */
  lastSubSequence?: number;
  explicitHashKey?: string;
}

/** A record as Kinesis returns it (GetRecords, SubscribeToShard events), as the spout keeps it. */
export function kinesisRecordOf(shardId: string, r: KinesisRecordIn): KinesisRecord {
  return {
    shardId,
    sequenceNumber: r.SequenceNumber!,
    partitionKey: r.PartitionKey!,
    data: r.Data ?? new Uint8Array(),
    arrivalMs: r.ApproximateArrivalTimestamp?.getTime() ?? 0,
  };
}

type KinesisRecordIn = Pick<_Record, 'SequenceNumber' | 'PartitionKey' | 'Data' | 'ApproximateArrivalTimestamp'>;

/** What tells a record apart inside its shard: `<sequenceNumber>` or `<sequenceNumber>:<subSequence>`. */
export function recordKey(sequenceNumber: string, subSequence?: number): string {
  return subSequence === undefined ? sequenceNumber : `${sequenceNumber}:${subSequence}`;
}

/**
 * The message id of a record: `<shardId>:<sequenceNumber>[:<subSequence>]` for the first (or only) stream,
 * `<streamIndex>/<shardId>:...` for the others (`streams[streamIndex]`): shard ids repeat across streams, and
 * no shard id holds a `/`. A single-stream configuration keeps the ids it always had.
 */
export function messageId(shardId: string, sequenceNumber: string, subSequence?: number, streamIndex = 0): string {
  return messageIdOfKey(shardId, recordKey(sequenceNumber, subSequence), streamIndex);
}

/** The message id of the record with this key (see `recordKey`) in its shard. */
export function messageIdOfKey(shardId: string, key: string, streamIndex = 0): string {
  return streamIndex === 0 ? `${shardId}:${key}` : `${streamIndex}/${shardId}:${key}`;
}

/** Splits `[<streamIndex>/]<shardId>:<sequenceNumber>[:<subSequence>]`; undefined for anything else. */
const MESSAGE_ID = /^(?:([1-9]\d{0,3})\/)?([^:/]+):(\d+)(?::(\d{1,9}))?$/;

export interface ParsedMessageId {
  /** Which of the configured streams (0: the first, or the only one). */
  streamIndex: number;
  shardId: string;
  sequenceNumber: string;
  subSequence?: number;
  /** The id without its stream and shard: the record's key in its shard's in-flight records. */
  key: string;
}

export function parseMessageId(id: unknown): ParsedMessageId | undefined {
  if (typeof id !== 'string') return undefined;
  const match = MESSAGE_ID.exec(id);
  if (!match) return undefined;
  const [, stream, shardId, sequenceNumber, sub] = match;
  const streamIndex = stream === undefined ? 0 : Number(stream);
  if (sub === undefined) return { streamIndex, shardId, sequenceNumber, key: sequenceNumber };
  const subSequence = Number(sub);
  // One spelling per record: "007" is not an id this spout emits.
  if (String(subSequence) !== sub) return undefined;
  return { streamIndex, shardId, sequenceNumber, subSequence, key: recordKey(sequenceNumber, subSequence) };
}

export type DataDecodeFailure = (record: KinesisRecord, err: unknown) => void;

export function tupleOf(
  record: KinesisRecord,
  fields: readonly TupleField[],
  format: DataFormat,
  onBadJson: DataDecodeFailure,
  rawBytes = false,
  /** The `streamName` field's value: the stream the record was read from. */
  streamName = '',
): unknown[] {
  return fields.map((field) => {
    switch (field) {
      case 'partitionKey':
        return record.partitionKey;
      case 'data':
        return decodeData(record, format, onBadJson, rawBytes);
      case 'shardId':
        return record.shardId;
      case 'sequenceNumber':
        return record.sequenceNumber;
      case 'arrivalTimestamp':
        return record.arrivalMs;
      case 'subSequence':
        return record.subSequence ?? null;
      case 'streamName':
        return streamName;
    }
  });
}

/** With `rawBytes` (a wire format that carries bytes: the compact one), `base64` data stays bytes. */
function decodeData(
  record: KinesisRecord,
  format: DataFormat,
  onBadJson: DataDecodeFailure,
  rawBytes: boolean,
): unknown {
  const bytes = Buffer.from(record.data.buffer, record.data.byteOffset, record.data.byteLength);
  if (format === 'base64') return rawBytes ? bytes : bytes.toString('base64');
  const text = bytes.toString('utf8');
  if (format === 'utf8') return text;
  try {
    return JSON.parse(text);
  } catch (err) {
    onBadJson(record, err);
    return text;
  }
}
