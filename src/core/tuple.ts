/** What a tuple can carry, and how a record's data is put in it: config/ offers the choice, kinesis/ builds the tuple. */
export const TUPLE_FIELDS = [
  'partitionKey',
  'data',
  'shardId',
  'sequenceNumber',
  'arrivalTimestamp',
  'subSequence',
  /** The stream the record was read from (its name; the tail of its ARN when given by ARN). */
  'streamName',
] as const;
export type TupleField = (typeof TUPLE_FIELDS)[number];

/** `data` as UTF-8 text, base64, or parsed JSON. */
export const DATA_FORMATS = ['utf8', 'base64', 'json'] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];
