/** A held shard's smoothed throughput, when it is worth publishing, and the lease value that carries it. */
import { leaseLoadOf, leaseOwnerOf, leaseValue } from '../../../src/coordination/storedValues';
import { PUBLISH_EVERY_MS } from '../../../src/core/load';
import { publishDue, ShardThroughput, TAU_MS, ThroughputMeter, WARMUP_MS } from '../../../src/held/throughput';

describe('ThroughputMeter', () => {
  it('reads a steady rate as that rate, from the first answer on, at any moment between answers', () => {
    const meter = new ThroughputMeter(0);
    for (let t = 1_000; t <= 3_000; t += 1_000) meter.record(10, 5_000, t);
    expect(meter.at(3_000).bytesPerSec).toBeCloseTo(5_000, 6);
    for (let t = 4_000; t <= 60_000; t += 1_000) meter.record(10, 5_000, t);
    expect(meter.at(60_000).bytesPerSec).toBeCloseTo(5_000, 6);
    expect(meter.at(60_999).bytesPerSec).toBeCloseTo(5_000, 6);
    expect(meter.at(60_000).recordsPerSec).toBeCloseTo(10, 6);
  });

  it('decays when answers come with nothing', () => {
    const meter = new ThroughputMeter(0);
    for (let t = 1_000; t <= 30_000; t += 1_000) meter.record(1, 1_000, t);
    const before = meter.at(30_000).bytesPerSec;
    for (let t = 31_000; t <= 30_000 + 3 * TAU_MS; t += 1_000) meter.record(0, 0, t);
    expect(meter.at(30_000 + 3 * TAU_MS).bytesPerSec).toBeLessThan(before / 10);
  });

  it('takes answers in the same millisecond as one burst', () => {
    const meter = new ThroughputMeter(0);
    meter.record(1, 1_000, 1_000);
    meter.record(1, 1_000, 1_000);
    meter.record(0, 0, 2_000);
    expect(meter.at(2_000).bytesPerSec).toBeGreaterThan(900);
    expect(meter.at(2_000).bytesPerSec).toBeLessThan(1_100);
  });
});

describe('ShardThroughput', () => {
  /**
   * A shard put to every 500 ms (`perPut` records of 200 bytes, since long before its take at 0), read every
   * second from `firstRead` on, the first answer holding what arrived after `readBefore` (a last holder's
   * checkpoint, or long before: a backlog); monotonic and wall clocks alike here. Its load when it is first
   * published: `WARMUP_MS` after the first answer.
   */
  function publishedAfterTake(firstRead: number, perPut: number, readBefore = -60_000): number {
    const throughput = new ShardThroughput();
    let lastRead = readBefore;
    for (let read = firstRead; read <= firstRead + WARMUP_MS; read += 1_000) {
      const records = [];
      for (let put = Math.ceil((lastRead + 1) / 500) * 500; put <= read; put += 500)
        for (let i = 0; i < perPut; i += 1) records.push(record(put));
      throughput.deliver(records, 0, read, read);
      lastRead = read;
    }
    expect(throughput.measuredSince).toBe(firstRead);
    return throughput.load(firstRead + WARMUP_MS).bytesPerSec;
  }
  const record = (arrivalMs: number) => ({
    shardId: 's',
    data: new Uint8Array(200),
    partitionKey: '',
    sequenceNumber: '1',
    arrivalMs,
  });

  it('reads the rate of what arrived since its first delivery counts from, whenever that delivery came', () => {
    // 2 puts a second of 20 records of 200 bytes (and the key): about 8 KB/s.
    const rate = (firstRead: number) => publishedAfterTake(firstRead, 20) / 8_000;
    for (const firstRead of [50, 300, 900, 1_800]) {
      expect(rate(firstRead)).toBeGreaterThan(0.9);
      expect(rate(firstRead)).toBeLessThan(1.15);
    }
    // A shard taken in a hand-over: its first answer holds only what came after its last holder's checkpoint.
    for (const readBefore of [-100, 0, 200]) {
      expect(publishedAfterTake(300, 20, readBefore) / 8_000).toBeGreaterThan(0.9);
      expect(publishedAfterTake(300, 20, readBefore) / 8_000).toBeLessThan(1.15);
    }
    // Two shards at one rate, first answered at different times, are told alike.
    expect(publishedAfterTake(1_800, 1) / publishedAfterTake(50, 1)).toBeGreaterThan(0.9);
    expect(publishedAfterTake(1_800, 1) / publishedAfterTake(50, 1)).toBeLessThan(1.1);
  });

  it('counts nothing of the backlog read after the take', () => {
    const throughput = new ShardThroughput();
    throughput.deliver([record(-10_000), record(-5_000)], 9_000, 100, 100);
    // Still catching up: the rest of the backlog comes in the next answers.
    throughput.deliver([record(-4_000), record(-3_000)], 3_000, 200, 200);
    expect(throughput.load(200).bytesPerSec).toBe(0);
    // What arrived since (and a little before the first answer: clocks differ) counts.
    throughput.deliver([record(-1_000), record(150), record(250)], 0, 300, 300);
    expect(throughput.load(300).recordsPerSec).toBeGreaterThan(0);
  });
});

describe('publishDue', () => {
  const load = (bytesPerSec: number) => ({ bytesPerSec, recordsPerSec: bytesPerSec / 100 });
  it('waits for the warm-up, then publishes once, then only material changes at most every interval', () => {
    expect(publishDue(undefined, load(1_000), WARMUP_MS - 1, 0)).toBe(false);
    expect(publishDue(undefined, load(1_000), WARMUP_MS, 0)).toBe(true);
    const last = { load: load(1_000), at: WARMUP_MS };
    expect(publishDue(last, load(5_000), WARMUP_MS + PUBLISH_EVERY_MS - 1, 0)).toBe(false);
    expect(publishDue(last, load(1_150), WARMUP_MS + PUBLISH_EVERY_MS, 0)).toBe(false);
    expect(publishDue(last, load(1_300), WARMUP_MS + PUBLISH_EVERY_MS, 0)).toBe(true);
    expect(publishDue({ load: load(10), at: 0 }, load(17), PUBLISH_EVERY_MS * 2, 0)).toBe(false);
    // A first publication made before anything arrived (0) is corrected once something does.
    expect(publishDue({ load: load(0), at: 0 }, load(30), PUBLISH_EVERY_MS * 2, 0)).toBe(true);
  });
});

describe('lease value with a load', () => {
  it('keeps version 1 and its owner, so a spout that knows no load reads it as before', () => {
    const data = leaseValue('task0-h-1-s', { bytesPerSec: 1_200, recordsPerSec: 3.5 });
    expect(JSON.parse(data.toString()).v).toBe(1);
    expect(leaseOwnerOf('/x', data)).toBe('task0-h-1-s');
    expect(leaseLoadOf(data)).toEqual({ bytesPerSec: 1_200, recordsPerSec: 3.5 });
  });

  it('reads a lease without a load, or with a bad one, as load unknown', () => {
    expect(leaseLoadOf(leaseValue('a'))).toBeUndefined();
    expect(leaseLoadOf(Buffer.from('{"v":1,"owner":"a","load":{"bytesPerSec":-1,"recordsPerSec":1}}'))).toBeUndefined();
    expect(leaseLoadOf(Buffer.from('{"v":1,"owner":"a","load":"fast"}'))).toBeUndefined();
    expect(leaseLoadOf(Buffer.from('not json'))).toBeUndefined();
  });
});
