/** A Kinesis record as the spout keeps it, and the tuple built from it. */
import type { DataFormat } from '../config/config';
import type { TupleField } from '../config/schema';

export interface KinesisRecord {
  shardId: string;
  sequenceNumber: string;
  partitionKey: string;
  data: Uint8Array;
  arrivalMs: number;
}

export function messageId(shardId: string, sequenceNumber: string): string {
  return `${shardId}:${sequenceNumber}`;
}

/** Splits `<shardId>:<sequenceNumber>[:<sub>]`; undefined for anything else. */
const MESSAGE_ID = /^([^:]+):(\d+)(?::\d+)?$/;

export function parseMessageId(id: unknown): { shardId: string; sequenceNumber: string } | undefined {
  if (typeof id !== 'string') return undefined;
  const match = MESSAGE_ID.exec(id);
  return match ? { shardId: match[1], sequenceNumber: match[2] } : undefined;
}

export type DataDecodeFailure = (record: KinesisRecord, err: unknown) => void;

export function tupleOf(record: KinesisRecord, fields: readonly TupleField[], format: DataFormat, onBadJson: DataDecodeFailure): unknown[] {
  return fields.map((field) => {
    switch (field) {
      case 'partitionKey':
        return record.partitionKey;
      case 'data':
        return decodeData(record, format, onBadJson);
      case 'shardId':
        return record.shardId;
      case 'sequenceNumber':
        return record.sequenceNumber;
      case 'arrivalTimestamp':
        return record.arrivalMs;
    }
  });
}

function decodeData(record: KinesisRecord, format: DataFormat, onBadJson: DataDecodeFailure): unknown {
  const bytes = Buffer.from(record.data.buffer, record.data.byteOffset, record.data.byteLength);
  if (format === 'base64') return bytes.toString('base64');
  const text = bytes.toString('utf8');
  if (format === 'utf8') return text;
  try {
    return JSON.parse(text);
  } catch (err) {
    onBadJson(record, err);
    return text;
  }
}
