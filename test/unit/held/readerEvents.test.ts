/**
 * A held shard's reader events over real fan-out readers: the room a reader is given counts against the
 * process's caps, shared by the shards held, and a reader waiting for an event holds none of it.
 */
import { Reporter } from '../../../src/core/log';
import { FanOutReader } from '../../../src/kinesis/fanOutReader';
import { heldIn } from '../../../src/held/memory';
import { SpoutMetrics } from '../../../src/held/metrics';
import { OwnedShard } from '../../../src/held/ownedShard';
import { readerEvents, type ReaderContext } from '../../../src/held/readerEvents';
import { event, FakeSubscriptions } from '../kinesis/fakeSubscriptions';
import { ManualClock, settle } from '../fakes/manualClock';
import { testConfig } from '../fakes/testConfig';

const STREAM = { streamName: 's', streamArn: 'arn:aws:kinesis:us-east-1:123456789012:stream/s' };

function setUp() {
  const clock = new ManualClock();
  const fake = new FakeSubscriptions();
  // Two shards' shares (half the cap each) fill the record cap.
  const config = { ...testConfig(), maxRecordsInMemory: 20, shardBufferSize: 20, maxRecordsPerRequest: 20 };
  const held: OwnedShard[] = [];
  const context: ReaderContext = {
    config,
    reporter: new Reporter({ log: () => undefined, error: () => undefined }, clock),
    metrics: new SpoutMetrics(0),
    streamLabel: 'stream s',
    reading: () => true,
    isActive: () => true,
    held: () => ({ total: heldIn(held), shards: held.length }),
    fetched: () => undefined,
    ended: () => undefined,
    notFound: async () => undefined,
    requested: () => undefined,
    now: () => clock.now(),
    wallNow: () => clock.wallNow(),
  };
  const consumer = { arn: () => Promise.resolve(`${STREAM.streamArn}/consumer/app:1`), forget: () => undefined };
  const take = (shardId: string) => {
    const shard = new OwnedShard(shardId, clock.now());
    held.push(shard);
    const reader = new FanOutReader(
      { kinesis: fake.client, scheduler: clock, stream: STREAM, consumer },
      shardId,
      readerEvents(shard, context),
    );
    shard.attachReader(reader);
    reader.start({ kind: 'TRIM_HORIZON' });
    return shard;
  };
  const subscribesTo = (shardId: string) => fake.subscribes.filter((s) => s.input.ShardId === shardId);
  /** A held shard without a reader, and its events (what a polling reader calls). */
  const holdWithoutReader = (shardId: string) => {
    const shard = new OwnedShard(shardId, clock.now());
    held.push(shard);
    return { shard, events: readerEvents(shard, context) };
  };
  return { clock, held, take, subscribesTo, holdWithoutReader };
}

describe('reader events of a fan-out shard', () => {
  it('reserve nothing while the next event is awaited: a shard taken later subscribes at once, not at the others’ next events', async () => {
    const { clock, held, take, subscribesTo } = setUp();
    const first = [take('s-0'), take('s-1')];
    await settle();
    for (const shard of first)
      subscribesTo(shard.shardId)[0]
        .open()
        .push(event(['1'], '1'));
    await settle();
    // Each holds its record and waits for its next event (seconds away on an idle shard), holding no more.
    expect(first.map((s) => [s.buffered, s.reserved])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect(heldIn(held).records).toBe(2);
    const later = take('s-2');
    await clock.advance(100);
    expect(subscribesTo(later.shardId)).toHaveLength(1);
    await Promise.all(held.map((s) => s.reader?.stop()));
  });

  it('read no further event while the shard holds what the caps allow, and read on once its records are acked (invariant 7)', async () => {
    const { clock, take, subscribesTo } = setUp();
    const shard = take('s-0');
    await settle();
    const stream = subscribesTo('s-0')[0].open();
    stream.push(
      event(
        Array.from({ length: 12 }, (_, i) => String(i + 1)),
        '12',
      ),
      event(['13'], '13'),
    );
    await clock.advance(60_000);
    // More than half its buffer is held (at a cap of 20): the next event waits on the server.
    expect(shard.buffered).toBe(12);
    for (let next = shard.takeNext(clock.now()); next; next = shard.takeNext(clock.now()))
      shard.inFlight.ack(next.record.sequenceNumber);
    await clock.advance(100);
    expect(shard.buffered).toBe(1);
    await shard.reader?.stop();
  });

  it('ask whether there is room without touching what a GetRecords of the shard has reserved', () => {
    const { holdWithoutReader } = setUp();
    const { shard, events } = holdWithoutReader('s-0');
    const room = events.room();
    expect(room).toBeGreaterThan(0);
    expect(shard.reserved).toBe(room);
    expect(events.hasRoom()).toBe(true);
    expect(shard.reserved).toBe(room);
  });
});
