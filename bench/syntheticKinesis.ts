/**
 * An in-memory Kinesis that always has records: the spout's own cost is measured, not the emulator's.
 * Answers just the calls the spout makes; every shard is open and always "behind".
 */
import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';
import { Readable } from 'node:stream';
import { readGetRecordsFast } from '../src/kinesis/fastGetRecords';

/**
 * How GetRecords answers reach the spout: `objects` (the SDK's output made directly, no decoding), or a
 * JSON body of Kinesis's shape read by a real SDK client (its HTTP exchange answered from memory), by the
 * SDK's deserializer (`sdk`) or the fast path (`fast`, src/kinesis/fastGetRecords.ts).
 */
export type SyntheticWire = 'objects' | 'sdk' | 'fast';

/**
 * `recordsPerCall` above the call's `Limit` lets one shard outrun the reader's pacing (5 calls/s, as
 * Kinesis allows): the protocol benchmark must measure the spout, not a shard's read limit.
 * `recordsPerSecond` paces each shard instead: a call returns only what "arrived" since the client was
 * made, at that rate, and the shard still says it is behind, so the reader keeps its backlog pace. That
 * is how the Storm section reads the synthetic source at the rate kinesis-local gave, to tell the cost of
 * reading Kinesis from the cost of the rate.
 */
export function syntheticKinesis(options: {
  shards: number;
  payloadBytes: number;
  recordsPerCall?: number;
  recordsPerSecond?: number;
  wire?: SyntheticWire;
}): KinesisClient {
  const data = new Uint8Array(Buffer.from('x'.repeat(options.payloadBytes)));
  const shardIds = Array.from({ length: options.shards }, (_, i) => `shardId-${String(i).padStart(12, '0')}`);
  // Sequence numbers as long as real ones, made without BigInt arithmetic: the source should cost little.
  const prefix = '4968069227638';
  const sequence = (n: number) => `${prefix}${String(n).padStart(20, '0')}`;
  const arrival = new Date();
  const keys = Array.from({ length: 64 }, (_, i) => `key-${i}`);
  const reader = options.wire && options.wire !== 'objects' ? jsonReader(options.wire) : undefined;
  const created = performance.now();
  /** Records a shard holds after `after`: all the call may take, or what arrived at the paced rate. */
  const available = (after: number, limit: number) => {
    if (options.recordsPerSecond === undefined) return limit;
    const arrived = Math.floor(((performance.now() - created) / 1000) * options.recordsPerSecond);
    return Math.max(0, Math.min(limit, arrived - after));
  };
  // The JSON answer's parts that do not change: made once, so that making an answer costs little.
  const base64 = Buffer.from(data).toString('base64');
  const arrivalSeconds = arrival.getTime() / 1000;
  const recordJson = keys.map(
    (key) =>
      `{"ApproximateArrivalTimestamp":${arrivalSeconds},"Data":"${base64}","EncryptionType":"NONE","PartitionKey":"${key}","SequenceNumber":"${prefix}`,
  );
  const answerJson = (shardId: string, after: number, limit: number): Buffer => {
    const parts: string[] = [];
    for (let i = 0; i < limit; i += 1)
      parts.push(`${recordJson[i % keys.length]}${String(after + i + 1).padStart(20, '0')}"}`);
    return Buffer.from(
      `{"MillisBehindLatest":60000,"NextShardIterator":"${shardId}|${after + limit}","Records":[${parts.join(',')}]}`,
    );
  };
  const send = async (command: { input: Record<string, unknown> }): Promise<unknown> => {
    const input = command.input;
    switch (true) {
      case command instanceof DescribeStreamSummaryCommand:
        return {
          StreamDescriptionSummary: {
            StreamARN: 'arn:aws:kinesis:us-east-1:000000000000:stream/synthetic',
            StreamCreationTimestamp: new Date(0),
          },
        };
      case command instanceof ListShardsCommand:
        return {
          Shards: shardIds.map((ShardId) => ({
            ShardId,
            SequenceNumberRange: { StartingSequenceNumber: sequence(0) },
          })),
        };
      case command instanceof GetShardIteratorCommand: {
        const after = input.StartingSequenceNumber
          ? Number((input.StartingSequenceNumber as string).slice(prefix.length))
          : 0;
        return { ShardIterator: `${input.ShardId as string}|${after}` };
      }
      case command instanceof GetRecordsCommand: {
        const [shardId, after] = (input.ShardIterator as string).split('|');
        const limit = available(Number(after), options.recordsPerCall ?? Number(input.Limit ?? 10_000));
        if (reader) return reader.send(command as GetRecordsCommand, answerJson(shardId, Number(after), limit));
        let seq = Number(after);
        const Records = [];
        for (let i = 0; i < limit; i += 1) {
          seq += 1;
          Records.push({
            SequenceNumber: sequence(seq),
            PartitionKey: keys[i % keys.length],
            Data: data,
            ApproximateArrivalTimestamp: arrival,
          });
        }
        return { Records, NextShardIterator: `${shardId}|${seq}`, MillisBehindLatest: 60_000 };
      }
      default:
        throw new Error(`synthetic Kinesis does not answer ${JSON.stringify(command.input)}`);
    }
  };
  return { send, destroy: () => undefined } as unknown as KinesisClient;
}

/** A real SDK client whose one exchange at a time is answered with the body given to `send`. */
function jsonReader(wire: 'sdk' | 'fast') {
  let next: Buffer = Buffer.alloc(0);
  const handler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle() {
      const body = next;
      return {
        response: {
          statusCode: 200,
          reason: 'OK',
          headers: { 'content-type': 'application/x-amz-json-1.1', 'content-length': String(body.length) },
          body: Readable.from([body]),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  const client = new KinesisClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    maxAttempts: 3,
    credentials: { accessKeyId: 'synthetic', secretAccessKey: 'synthetic' },
    requestHandler: handler as never,
  });
  if (wire === 'fast') readGetRecordsFast(client);
  // One call at a time: the body is taken by the handler before the next call sets its own.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    send(command: GetRecordsCommand, body: Buffer): Promise<unknown> {
      const call = queue.then(() => {
        next = body;
        return client.send(command);
      });
      queue = call.catch(() => undefined);
      return call;
    },
  };
}
