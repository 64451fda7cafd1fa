/**
 * GetRecords answers parsed on a fast path (config `fastGetRecords`). The SDK's JSON protocol spends
 * several times what a plain JSON.parse and base64 decode cost on each record (bench/decode.ts): its
 * schema-driven deserializer walks every value. Here only the reading of a successful GetRecords body
 * changes: the request is built, signed, sent on the shared HTTP/1.1 handler and retried by the SDK as
 * before, and every error answer (any status outside 2xx) goes to the SDK's own deserializer untouched, so
 * errors are mapped exactly as the SDK maps them.
 *
 * A 2xx body is parsed by `parseGetRecords` for the one shape Kinesis sends. Whatever is not that shape
 * (bad JSON, a null, a type other than the service's, base64 the SDK would refuse) is handed to the SDK's
 * deserializer instead, bytes as read, so that its result or its error is the answer: the fast path either
 * gives the SDK's output or is not taken.
 */
import type { ChildShard, GetRecordsOutput, KinesisClient, _Record } from '@aws-sdk/client-kinesis';
import { Readable } from 'node:stream';

/** The fields of a GetRecords output, as many as the body has; the SDK's `$metadata` comes from its deserializer. */
export type FastGetRecordsOutput = Partial<GetRecordsOutput>;

const FAST = Symbol('kinesis-spout.fastGetRecords');
const EMPTY_OBJECT = Buffer.from('{}');

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === 'string';
/** The SDK leaves a member out when it is null (kinesis-local sends `"ChildShards":null`), as when it is missing. */
const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

/**
 * Base64 as the SDK accepts it, decoded; undefined otherwise. The SDK's fromBase64 (@smithy) takes a length
 * that is a multiple of 4 matching /^[A-Za-z0-9+/]*={0,2}$/, and decodes it with Node's decoder. Node's
 * decoder alone is no test: it skips what is not base64, takes the URL alphabet, and reads a non-ASCII UTF-16
 * unit by its low byte (`Ł`, U+0141, as `A`). Checked here without the SDK's regular expression (twenty times
 * the decode's cost on a megabyte): any non-ASCII character makes the UTF-8 length differ from the length;
 * `-` and `_` are looked for; any other skipped character (padding inside included) makes the output
 * shorter than the length and padding say.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  const length = text.length;
  if (length % 4 !== 0) return undefined;
  if (Buffer.byteLength(text, 'utf8') !== length) return undefined;
  if (text.indexOf('-') !== -1 || text.indexOf('_') !== -1) return undefined;
  const padding =
    length === 0 ? 0 : text.charCodeAt(length - 1) !== 61 ? 0 : text.charCodeAt(length - 2) === 61 ? 2 : 1;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== (length / 4) * 3 - padding) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An epoch-seconds timestamp as the SDK reads it (to the millisecond, rounded). */
function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return new Date(Math.round(value * 1000));
}

function recordOf(r: unknown): _Record | undefined {
  if (!isObject(r)) return undefined;
  const { SequenceNumber, PartitionKey, Data, ApproximateArrivalTimestamp, EncryptionType } = r;
  if (!isString(SequenceNumber) || !isString(PartitionKey) || !isString(Data)) return undefined;
  const data = decodeBase64(Data);
  if (!data) return undefined;
  const record: _Record = { SequenceNumber, PartitionKey, Data: data };
  if (!absent(ApproximateArrivalTimestamp)) {
    const date = dateOf(ApproximateArrivalTimestamp);
    if (!date) return undefined;
    record.ApproximateArrivalTimestamp = date;
  }
  if (!absent(EncryptionType)) {
    if (!isString(EncryptionType)) return undefined;
    record.EncryptionType = EncryptionType as _Record['EncryptionType'];
  }
  return record;
}

function childShardOf(c: unknown): ChildShard | undefined {
  if (!isObject(c)) return undefined;
  const { ShardId, ParentShards, HashKeyRange } = c;
  if (!isString(ShardId) || !Array.isArray(ParentShards) || !ParentShards.every(isString)) return undefined;
  if (!isObject(HashKeyRange)) return undefined;
  const { StartingHashKey, EndingHashKey } = HashKeyRange;
  if (!isString(StartingHashKey) || !isString(EndingHashKey)) return undefined;
  return { ShardId, ParentShards: [...ParentShards], HashKeyRange: { StartingHashKey, EndingHashKey } };
}

function listOf<T>(value: unknown, item: (v: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: T[] = new Array(value.length);
  for (let i = 0; i < value.length; i += 1) {
    const v = item(value[i]);
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}

/**
 * A GetRecords body as the SDK would read it, or undefined when it is not the shape Kinesis sends (the
 * SDK then reads it). Members the SDK does not know are left out, as it leaves them out; so are null ones.
 * A record without its sequence number, partition key or data, or a null in a list, is left to the SDK.
 */
export function parseGetRecords(body: Uint8Array): FastGetRecordsOutput | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  const { Records, NextShardIterator, MillisBehindLatest, ChildShards } = parsed;
  const out: FastGetRecordsOutput = {};
  if (!absent(Records)) {
    const records = listOf(Records, recordOf);
    if (!records) return undefined;
    out.Records = records;
  }
  if (!absent(NextShardIterator)) {
    if (!isString(NextShardIterator)) return undefined;
    out.NextShardIterator = NextShardIterator;
  }
  if (!absent(MillisBehindLatest)) {
    if (typeof MillisBehindLatest !== 'number' || !Number.isFinite(MillisBehindLatest)) return undefined;
    out.MillisBehindLatest = MillisBehindLatest;
  }
  if (!absent(ChildShards)) {
    const children = listOf(ChildShards, childShardOf);
    if (!children) return undefined;
    out.ChildShards = children;
  }
  return out;
}

/** A body whose reading fails with `err`. */
function failing(err: unknown): Readable {
  return new Readable({
    read() {
      this.destroy(err instanceof Error ? err : new Error(String(err)));
    },
  });
}

interface ResponseLike {
  statusCode: number;
  headers: Record<string, string>;
  body?: unknown;
  [FAST]?: FastGetRecordsOutput;
}

function isResponse(value: unknown): value is ResponseLike {
  return isObject(value) && typeof value.statusCode === 'number' && isObject(value.headers);
}

/**
 * Installs the fast path on `client`'s GetRecords calls. `observe` is told, per successful answer, whether
 * the fast path read it (true) or the SDK did (false): for tests and benchmarks.
 */
export function readGetRecordsFast(client: KinesisClient, observe?: (fast: boolean) => void): void {
  const collect = client.config.streamCollector;
  // Innermost, next to the HTTP handler: the raw answer, before the SDK's deserializer sees it.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const response = result.response;
      if (context.commandName !== 'GetRecordsCommand' || !isResponse(response)) return result;
      if (response.statusCode < 200 || response.statusCode >= 300) return result;
      let bytes: Uint8Array;
      try {
        bytes = await collect(response.body);
      } catch (err) {
        // A body cut off (a reset, an abort): the SDK's deserializer meets the same failure, and reports it its way.
        return { ...result, response: { ...response, body: failing(err) } };
      }
      const fast = parseGetRecords(bytes);
      observe?.(fast !== undefined);
      // The SDK's deserializer still runs, on `{}` (its `$metadata`, from the status and headers), or on the bytes.
      const body = fast ? EMPTY_OBJECT : bytes;
      return { ...result, response: { ...response, body, [FAST]: fast } };
    },
    { step: 'deserialize', priority: 'low', name: 'kinesisSpoutFastGetRecords' },
  );
  // Outside the SDK's deserializer: its output (only `$metadata`) with the records read above.
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const fast = isResponse(result.response) ? result.response[FAST] : undefined;
      if (!fast) return result;
      return { ...result, output: { ...(result.output as object), ...fast } as typeof result.output };
    },
    { step: 'deserialize', priority: 'high', name: 'kinesisSpoutFastGetRecordsOutput' },
  );
}
