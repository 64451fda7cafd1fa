import { GetRecordsCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { getRecordsBody, memoryHandler } from '../../../bench/decode';

test("the decode benchmark's answers are Kinesis's shape, read by the SDK to the records asked for", async () => {
  const body = getRecordsBody(7, 100);
  const parsed = JSON.parse(body);
  expect(Object.keys(parsed).sort()).toEqual(['MillisBehindLatest', 'NextShardIterator', 'Records']);
  for (const r of parsed.Records) {
    expect(Object.keys(r).sort()).toEqual([
      'ApproximateArrivalTimestamp',
      'Data',
      'EncryptionType',
      'PartitionKey',
      'SequenceNumber',
    ]);
    // Epoch seconds with milliseconds, as Kinesis sends them; 56-digit sequence numbers.
    expect(r.ApproximateArrivalTimestamp).toBeGreaterThan(1.7e9);
    expect(r.ApproximateArrivalTimestamp).toBeLessThan(1.8e9);
    expect(r.SequenceNumber).toMatch(/^\d{56}$/);
  }
  const client = new KinesisClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    requestHandler: memoryHandler(() => Buffer.from(body)) as never,
  });
  const out = await client.send(new GetRecordsCommand({ ShardIterator: 'it' }));
  expect(out.Records).toHaveLength(7);
  for (const r of out.Records ?? []) {
    expect(r.Data).toHaveLength(100);
    expect(() => JSON.parse(Buffer.from(r.Data!).toString())).not.toThrow();
  }
  expect(JSON.parse(getRecordsBody(0, 100)).Records).toEqual([]);
});
