import { iteratorRequest } from '../../../src/kinesis/shardReader';

const stream = { streamName: 'orders' };

describe('iteratorRequest (the spout readers and the tools start a shard the same way)', () => {
  it('starts after a whole record', () => {
    expect(iteratorRequest(stream, 'shardId-0', { kind: 'AFTER', sequenceNumber: '42' })).toEqual({
      StreamName: 'orders',
      ShardId: 'shardId-0',
      ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
      StartingSequenceNumber: '42',
    });
  });

  it('starts AT a KPL aggregate the checkpoint stopped inside (its later user records are not done)', () => {
    expect(iteratorRequest(stream, 'shardId-0', { kind: 'AFTER', sequenceNumber: '42', subSequence: 3 })).toMatchObject(
      { ShardIteratorType: 'AT_SEQUENCE_NUMBER', StartingSequenceNumber: '42' },
    );
  });

  it('names the stream by ARN when it has one, and starts at a timestamp or the trim horizon', () => {
    const byArn = { streamName: 'orders', streamArn: 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders' };
    expect(iteratorRequest(byArn, 's', { kind: 'AT_TIMESTAMP', timestampMs: 1_000 })).toEqual({
      StreamARN: byArn.streamArn,
      ShardId: 's',
      ShardIteratorType: 'AT_TIMESTAMP',
      Timestamp: new Date(1_000),
    });
    expect(iteratorRequest(stream, 's', { kind: 'TRIM_HORIZON' })).toEqual({
      StreamName: 'orders',
      ShardId: 's',
      ShardIteratorType: 'TRIM_HORIZON',
    });
  });
});
