/**
 * An in-memory Kinesis that always has records: the spout's own cost is measured, not the emulator's.
 * Answers just the calls the spout makes; every shard is open and always "behind".
 */
import { DescribeStreamSummaryCommand, GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis';

export function syntheticKinesis(options: { shards: number; payloadBytes: number }): KinesisClient {
  const data = new Uint8Array(Buffer.from('x'.repeat(options.payloadBytes)));
  const shardIds = Array.from({ length: options.shards }, (_, i) => `shardId-${String(i).padStart(12, '0')}`);
  const base = 10n ** 20n;
  const arrival = new Date();
  const send = async (command: { input: Record<string, unknown> }): Promise<unknown> => {
    const input = command.input;
    switch (true) {
      case command instanceof DescribeStreamSummaryCommand:
        return { StreamDescriptionSummary: { StreamARN: 'arn:aws:kinesis:us-east-1:000000000000:stream/synthetic', StreamCreationTimestamp: new Date(0) } };
      case command instanceof ListShardsCommand:
        return { Shards: shardIds.map((ShardId) => ({ ShardId, SequenceNumberRange: { StartingSequenceNumber: base.toString() } })) };
      case command instanceof GetShardIteratorCommand: {
        const after = input.StartingSequenceNumber ? BigInt(input.StartingSequenceNumber as string) : base;
        return { ShardIterator: `${input.ShardId as string}|${after}` };
      }
      case command instanceof GetRecordsCommand: {
        const [shardId, after] = (input.ShardIterator as string).split('|');
        const limit = Number(input.Limit ?? 10_000);
        let seq = BigInt(after);
        const Records = [];
        for (let i = 0; i < limit; i += 1) {
          seq += 1n;
          Records.push({ SequenceNumber: seq.toString(), PartitionKey: `key-${i % 64}`, Data: data, ApproximateArrivalTimestamp: arrival });
        }
        return { Records, NextShardIterator: `${shardId}|${seq}`, MillisBehindLatest: 60_000 };
      }
      default:
        throw new Error(`synthetic Kinesis does not answer ${JSON.stringify(command.input)}`);
    }
  };
  return { send, destroy: () => undefined } as unknown as KinesisClient;
}
