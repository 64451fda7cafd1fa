/**
 * The polling reader in virtual time against a fake shard with a backlog that enforces Kinesis's read
 * limit (a bucket of 5 calls/s for every reader together): two applications' readers with budgets 2 + 2
 * are never throttled; at 5 + 5 they are, then back off below the limit; every reader reads every record
 * in order either way; a throttled call is not followed by a new GetShardIterator (the iterator stays good).
 */
import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-kinesis';
import type { KinesisApi } from '../../../src/kinesis/client';
import type { KinesisRecord } from '../../../src/kinesis/records';
import type { ShardReaderEvents } from '../../../src/kinesis/reader';
import { PollingReader } from '../../../src/kinesis/shardReader';
import { TokenBucket } from '../../helpers/httpFaultProxy';
import { Random } from '../../sim/random';
import { Owner, SimLoop, settle, VirtualScheduler } from '../../sim/virtualTime';

const SHARD = 'shardId-000000000000';
const seq = (n: number) => String(n).padStart(20, '0');

/** One shard holding an endless backlog; iterators are `at:<index>`. */
function fakeShard(loop: SimLoop) {
  const bucket = new TokenBucket(5, 5, 0);
  const counts = { getRecords: 0, throttled: 0, iterators: 0 };
  const kinesis: KinesisApi = {
    send: (async (command: unknown) => {
      if (command instanceof GetShardIteratorCommand) {
        counts.iterators += 1;
        const input = command.input;
        const from = input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' ? Number(input.StartingSequenceNumber) + 1 : 0;
        return { ShardIterator: `at:${from}` };
      }
      if (command instanceof GetRecordsCommand) {
        counts.getRecords += 1;
        if (bucket.level(loop.now) < 1) {
          counts.throttled += 1;
          throw Object.assign(new Error('Rate exceeded for shard'), { name: 'ProvisionedThroughputExceededException' });
        }
        bucket.take(loop.now);
        const from = Number(command.input.ShardIterator!.slice(3));
        const n = command.input.Limit ?? 10;
        return {
          Records: Array.from({ length: n }, (_, i) => ({
            SequenceNumber: seq(from + i),
            PartitionKey: 'k',
            Data: new Uint8Array([1]),
          })),
          NextShardIterator: `at:${from + n}`,
          MillisBehindLatest: 60_000,
        };
      }
      throw new Error(`unexpected ${String(command)}`);
    }) as KinesisApi['send'],
  };
  return { kinesis, counts };
}

function readerOf(loop: SimLoop, kinesis: KinesisApi, budget: number, seed: number) {
  const got: KinesisRecord[] = [];
  let errors = 0;
  const events: ShardReaderEvents = {
    records: (records) => got.push(...records),
    end: () => undefined,
    notFound: () => undefined,
    error: () => {
      errors += 1;
    },
    room: () => 10,
    requested: () => undefined,
    log: () => undefined,
  };
  const scheduler = new VirtualScheduler(loop, new Owner(`app-${seed}`), new Random(seed), 0);
  const reader = new PollingReader(
    {
      kinesis,
      scheduler,
      stream: { streamName: 's', streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/s' },
      maxRecordsPerRequest: 10,
      idlePollIntervalMs: 1_000,
      maxGetRecordsPerSecond: budget,
    },
    SHARD,
    events,
  );
  return { reader, got, errors: () => errors };
}

async function twoApplications(budget: number, seconds: number) {
  const loop = new SimLoop();
  const shard = fakeShard(loop);
  const apps = [readerOf(loop, shard.kinesis, budget, 1), readerOf(loop, shard.kinesis, budget, 2)];
  for (const app of apps) app.reader.start({ kind: 'TRIM_HORIZON' });
  await settle();
  await loop.run(seconds * 1000, () => undefined);
  await Promise.all(apps.map((app) => app.reader.stop()));
  for (const app of apps) {
    // Every record, once, in order: nothing skipped or read twice across the throttles.
    expect(app.got.map((r) => Number(r.sequenceNumber))).toEqual(app.got.map((_, i) => i));
  }
  return { ...shard.counts, apps };
}

describe('PollingReader: two applications on one shard', () => {
  it('with budgets 2 + 2, nothing is throttled and each reads at its budget', async () => {
    const run = await twoApplications(2, 60);
    expect(run.throttled).toBe(0);
    for (const app of run.apps) {
      expect(app.errors()).toBe(0);
      // 2 calls/s of 10 records for 60 s (give or take the first call).
      expect(app.got.length).toBeGreaterThanOrEqual(1_190);
      expect(app.got.length).toBeLessThanOrEqual(1_210);
    }
  });

  it('at 5 + 5 they are throttled, back off below the limit, and keep the iterator', async () => {
    const run = await twoApplications(5, 120);
    expect(run.throttled).toBeGreaterThan(0);
    // Backing off: far fewer refusals than calls (the SDK-style immediate retry would be about half of them).
    expect(run.throttled / run.getRecords).toBeLessThan(0.15);
    // A throttle does not cost a GetShardIterator: one per reader, at its start.
    expect(run.iterators).toBe(2);
    // The shard's read capacity is still used: together they read most of its 5 calls/s. (Not fairly:
    // one reader at the whole limit leaves the other next to nothing; that is what budgets are for.)
    const calls = run.apps.reduce((sum, app) => sum + app.got.length / 10, 0);
    expect(calls).toBeGreaterThan(0.8 * 5 * 120);
  });
});
