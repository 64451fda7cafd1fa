import { iteratorRequest, peekAt, shardIteratorAt } from '../../../src/kinesis/iterators';
import type { KinesisApi } from '../../../src/kinesis/client';

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

/** One shard as Kinesis answers for it: an iterator per request, then the records from where it points. */
class FakeShard {
  readonly asked: { command: string; input: Record<string, unknown> }[] = [];
  private refuseSequenceNumbers = false;

  constructor(
    private readonly records: { arrival: Date }[],
    private readonly millisBehindLatest: number,
  ) {}

  /** Kinesis refuses every StartingSequenceNumber (not one of this shard's). */
  refusesSequenceNumbers(): this {
    this.refuseSequenceNumbers = true;
    return this;
  }

  readonly client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name.replace(/Command$/, '');
      this.asked.push({ command: name, input: command.input });
      if (name === 'GetShardIterator') {
        if (this.refuseSequenceNumbers && command.input.StartingSequenceNumber !== undefined)
          throw Object.assign(new Error('StartingSequenceNumber is invalid'), { name: 'InvalidArgumentException' });
        return { ShardIterator: `iterator-${this.asked.length}` };
      }
      const limit = command.input.Limit as number;
      return {
        Records: this.records
          .slice(0, limit)
          .map((r, i) => ({ SequenceNumber: String(i), ApproximateArrivalTimestamp: r.arrival })),
        MillisBehindLatest: this.millisBehindLatest,
        NextShardIterator: 'next',
      };
    },
  } as unknown as KinesisApi;
}

describe('shardIteratorAt and peekAt (every iterator request of the spout and the tools)', () => {
  it('peeks at one record from the iterator it was given', async () => {
    const shard = new FakeShard([{ arrival: new Date(5_000) }, { arrival: new Date(6_000) }], 1_234);
    const peek = await peekAt(shard.client, stream, 'shardId-0', { kind: 'AFTER', sequenceNumber: '42' });
    expect(peek).toEqual({ millisBehindLatest: 1_234, firstArrivalMs: 5_000 });
    expect(shard.asked).toEqual([
      {
        command: 'GetShardIterator',
        input: iteratorRequest(stream, 'shardId-0', { kind: 'AFTER', sequenceNumber: '42' }),
      },
      { command: 'GetRecords', input: { ShardIterator: 'iterator-1', Limit: 1, StreamARN: undefined } },
    ]);
  });

  it('says nothing arrived when nothing is there yet', async () => {
    const shard = new FakeShard([], 0);
    expect(await peekAt(shard.client, stream, 's', { kind: 'TRIM_HORIZON' })).toEqual({
      millisBehindLatest: 0,
      firstArrivalMs: undefined,
    });
  });

  it("passes on Kinesis's refusal of a sequence number (how reset checks one)", async () => {
    const shard = new FakeShard([], 0).refusesSequenceNumbers();
    await expect(
      shardIteratorAt(shard.client, stream, 's', { kind: 'AFTER', sequenceNumber: '7' }),
    ).rejects.toMatchObject({ name: 'InvalidArgumentException' });
    expect(await shardIteratorAt(shard.client, stream, 's', { kind: 'TRIM_HORIZON' })).toBe('iterator-2');
  });
});
