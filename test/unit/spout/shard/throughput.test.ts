/** A held shard's smoothed throughput, when it is worth publishing, and the lease value that carries it. */
import { leaseLoadOf, leaseOwnerOf, leaseValue } from '../../../../src/coordination/storedValues';
import {
  PUBLISH_EVERY_MS,
  publishDue,
  TAU_MS,
  ThroughputMeter,
  WARMUP_MS,
} from '../../../../src/spout/shard/throughput';

describe('ThroughputMeter', () => {
  it('reads a steady rate as that rate, from the first seconds on', () => {
    const meter = new ThroughputMeter(0);
    for (let t = 1_000; t <= 3_000; t += 1_000) meter.record(10, 5_000, t);
    expect(meter.at(3_000).bytesPerSec).toBeGreaterThan(4_500);
    expect(meter.at(3_000).bytesPerSec).toBeLessThan(6_500);
    for (let t = 4_000; t <= 60_000; t += 1_000) meter.record(10, 5_000, t);
    // Just after a delivery the average stands a little above the mean rate, just before the next a little below.
    expect(meter.at(60_000).bytesPerSec).toBeGreaterThan(4_900);
    expect(meter.at(60_000).bytesPerSec).toBeLessThan(5_300);
    expect(meter.at(60_999).bytesPerSec).toBeLessThan(5_000);
    expect(meter.at(60_000).recordsPerSec).toBeGreaterThan(9);
  });

  it('decays when nothing comes', () => {
    const meter = new ThroughputMeter(0);
    for (let t = 1_000; t <= 30_000; t += 1_000) meter.record(1, 1_000, t);
    const before = meter.at(30_000).bytesPerSec;
    expect(meter.at(30_000 + 3 * TAU_MS).bytesPerSec).toBeLessThan(before / 10);
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
