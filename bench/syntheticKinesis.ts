/**
 * An in-memory Kinesis that always has records: the spout's own cost is measured, not the emulator's.
 * Answers just the calls the spout makes; every shard is open and always "behind".
 */
import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';

/**
 * `recordsPerCall` above the call's `Limit` lets one shard outrun the reader's pacing (5 calls/s, as
 * Kinesis allows): the protocol benchmark must measure the spout, not a shard's read limit.
 */
export function syntheticKinesis(options: {
  shards: number;
  payloadBytes: number;
  recordsPerCall?: number;
}): KinesisClient {
  const data = new Uint8Array(Buffer.from('x'.repeat(options.payloadBytes)));
  const shardIds = Array.from({ length: options.shards }, (_, i) => `shardId-${String(i).padStart(12, '0')}`);
  // Sequence numbers as long as real ones, made without BigInt arithmetic: the source should cost little.
  const prefix = '4968069227638';
  const sequence = (n: number) => `${prefix}${String(n).padStart(20, '0')}`;
  const arrival = new Date();
  const keys = Array.from({ length: 64 }, (_, i) => `key-${i}`);
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
        const limit = options.recordsPerCall ?? Number(input.Limit ?? 10_000);
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
