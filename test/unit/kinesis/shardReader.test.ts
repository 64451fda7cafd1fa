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
import { IDLE_TICK_MS, IdleReaders, PollingReader } from '../../../src/kinesis/shardReader';
import { TokenBucket } from '../../helpers/httpFaultProxy';
import { Random } from '../../sim/random';
import { Owner, SimLoop, settle, VirtualScheduler } from '../../sim/virtualTime';

const SHARD = 'shardId-000000000000';
const seq = (n: number) => String(n).padStart(20, '0');

/** `n` records of one byte from index `from`, as GetRecords returns them. */
const recordsAt = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    SequenceNumber: seq(from + i),
    PartitionKey: 'k',
    Data: new Uint8Array([1]),
  }));

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
          Records: recordsAt(from, n),
          NextShardIterator: `at:${from + n}`,
          MillisBehindLatest: 60_000,
        };
      }
      throw new Error(`unexpected ${String(command)}`);
    }) as KinesisApi['send'],
  };
  return { kinesis, counts };
}

/** A reader's owner with room for 10 records at every call, doing nothing but what `own` says. */
function ownerEvents(own: Partial<ShardReaderEvents>): ShardReaderEvents {
  return {
    records: () => undefined,
    end: () => undefined,
    notFound: async () => undefined,
    error: () => undefined,
    room: () => 10,
    hasRoom: () => {
      throw new Error('a polling reader reserves what it asks for: it asks room()');
    },
    requested: () => undefined,
    log: () => undefined,
    ...own,
  };
}

/** A shard that stays open, caught up and empty: every GetRecords answers nothing at the tip; `callsAt` gets each call's time. */
function emptyAtTip(loop: SimLoop, callsAt: number[] = []): KinesisApi {
  return {
    send: (async (command: unknown) => {
      if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'at:0' };
      callsAt.push(loop.now);
      return { Records: [], NextShardIterator: 'at:0', MillisBehindLatest: 0 };
    }) as KinesisApi['send'],
  };
}

function readerOf(loop: SimLoop, kinesis: KinesisApi, budget: number, seed: number) {
  const got: KinesisRecord[] = [];
  let errors = 0;
  const events = ownerEvents({
    records: (records) => got.push(...records),
    error: () => {
      errors += 1;
    },
  });
  return { reader: pollingReader(loop, kinesis, events, budget, seed), got, errors: () => errors };
}

/** A reader of SHARD in virtual time, 10 records a call. */
function pollingReader(
  loop: SimLoop,
  kinesis: KinesisApi,
  events: ShardReaderEvents,
  budget: number,
  seed: number,
  idle?: IdleReaders,
  tricklePollIntervalMs = 200,
  trickleHoldMs = 0,
) {
  const scheduler = new VirtualScheduler(loop, new Owner(`app-${seed}`), new Random(seed), 0);
  return new PollingReader(
    {
      kinesis,
      scheduler,
      stream: { streamName: 's', streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/s' },
      maxRecordsPerRequest: 10,
      idlePollIntervalMs: 1_000,
      tricklePollIntervalMs,
      trickleHoldMs,
      maxGetRecordsPerSecond: budget,
    },
    SHARD,
    events,
    idle,
  );
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

describe('PollingReader: a shard Kinesis says does not exist', () => {
  /** A shard that is gone (ResourceNotFound) until `recreate()`, then holds records again under the same id. */
  function goneShard() {
    let gone = true;
    const calls: string[] = [];
    const kinesis: KinesisApi = {
      send: (async (command: unknown) => {
        calls.push(command instanceof GetShardIteratorCommand ? 'GetShardIterator' : 'GetRecords');
        if (gone) throw Object.assign(new Error('Shard not found'), { name: 'ResourceNotFoundException' });
        if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'at:0' };
        return {
          Records: [{ SequenceNumber: seq(0), PartitionKey: 'k', Data: new Uint8Array([1]) }],
          NextShardIterator: 'at:1',
          MillisBehindLatest: 0,
        };
      }) as KinesisApi['send'],
    };
    return { kinesis, calls, recreate: () => void (gone = false) };
  }

  function waitingReader(loop: SimLoop, kinesis: KinesisApi) {
    const got: KinesisRecord[] = [];
    const confirmations: (() => void)[] = [];
    const events = ownerEvents({
      records: (records) => got.push(...records),
      notFound: () => new Promise<void>((resolve) => confirmations.push(resolve)),
    });
    const reader = pollingReader(loop, kinesis, events, 5, 7);
    return { reader, got, confirmations };
  }

  it('asks nothing more of Kinesis until the stream is confirmed: a re-created stream is never read as the old one', async () => {
    const loop = new SimLoop();
    const shard = goneShard();
    const { reader, got, confirmations } = waitingReader(loop, shard.kinesis);
    reader.start({ kind: 'AFTER', sequenceNumber: seq(41) });
    await settle();
    await loop.run(1_000, () => undefined);
    expect(shard.calls).toEqual(['GetShardIterator']);
    expect(confirmations).toHaveLength(1);
    // The stream is re-created under the same name: the waiting reader does not seek into it.
    shard.recreate();
    await loop.run(loop.now + 60_000, () => undefined);
    expect(shard.calls).toEqual(['GetShardIterator']);
    expect(got).toEqual([]);
    // Confirmed (the stream is the one the checkpoints belong to): it reads on, after its back-off.
    confirmations[0]();
    await settle();
    await loop.run(loop.now + 15_000, () => undefined);
    expect(got[0]?.sequenceNumber).toBe(seq(0));
    await reader.stop();
  });

  it('is stopped while it waits', async () => {
    const loop = new SimLoop();
    const shard = goneShard();
    const { reader, confirmations } = waitingReader(loop, shard.kinesis);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(1_000, () => undefined);
    expect(confirmations).toHaveLength(1);
    await reader.stop();
    expect(shard.calls).toEqual(['GetShardIterator']);
  });
});

describe('PollingReader: a shard read at its tip', () => {
  /** Records arrive every `everyMs` (virtual time); each answer is what arrived after the iterator, at the tip. */
  function tricklingShard(loop: SimLoop, everyMs: number) {
    const calls: number[] = [];
    const kinesis: KinesisApi = {
      send: (async (command: unknown) => {
        if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'at:0' };
        if (!(command instanceof GetRecordsCommand)) throw new Error(`unexpected ${String(command)}`);
        calls.push(loop.now);
        const from = Number(command.input.ShardIterator!.slice(3));
        const arrived = Math.floor(loop.now / everyMs);
        const n = Math.max(0, Math.min(command.input.Limit ?? 10, arrived - from));
        return {
          Records: recordsAt(from, n),
          NextShardIterator: `at:${from + n}`,
          MillisBehindLatest: 0,
        };
      }) as KinesisApi['send'],
    };
    return { kinesis, calls };
  }

  /** A trickle of one record every `everyMs` read for `ms`: the calls made and each record's delay (read − arrived). */
  async function readTrickle(everyMs: number, ms: number, tricklePollIntervalMs: number, trickleHoldMs = 0) {
    const loop = new SimLoop();
    const shard = tricklingShard(loop, everyMs);
    const readAt = new Map<number, number>();
    const events = ownerEvents({
      records: (records) => {
        for (const r of records) readAt.set(Number(r.sequenceNumber), loop.now);
      },
    });
    const reader = pollingReader(loop, shard.kinesis, events, 5, 3, undefined, tricklePollIntervalMs, trickleHoldMs);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(ms, () => undefined);
    await reader.stop();
    // Every record that arrived is read, once, in order.
    const read = [...readAt.keys()];
    expect(read).toEqual(read.map((_, i) => i));
    if (everyMs < ms) expect(read.length).toBeGreaterThan((ms - 1_500) / everyMs - 1);
    // Past the first 2 s: the first call, at 0, comes empty and waits the idle interval.
    const delays = [...readAt].filter(([n]) => (n + 1) * everyMs > 2_000).map(([n, at]) => at - (n + 1) * everyMs);
    return { calls: shard.calls.length, delays };
  }

  it('calls once per idle interval while answers come empty, not at the call budget', async () => {
    const { calls } = await readTrickle(1e9, 60_000, 200);
    // About one call a second (the interval is jittered ±20 %), where the budget would allow 300.
    expect(calls).toBeGreaterThanOrEqual(45);
    expect(calls).toBeLessThanOrEqual(65);
  });

  it('calls again soon after an answer at the tip that brought records: a trickle is read within the trickle interval', async () => {
    // 5 records a second: each call brings one or two records, fewer than the limit of 10.
    const { calls, delays } = await readTrickle(200, 60_000, 200);
    // Every call brings records, so the next comes after the trickle interval (±20 %, within the budget of 5/s).
    expect(calls).toBeGreaterThanOrEqual(230);
    expect(calls).toBeLessThanOrEqual(300);
    // None later than one jittered trickle interval after it arrived (read once a second, up to 1.2 s).
    expect(Math.max(...delays)).toBeLessThanOrEqual(240);
  });

  it('goes back to the idle interval at the first empty answer: a slow trickle costs one call a record more than an idle shard', async () => {
    // One record every 2 s: a call that brings it, one 200 ms later that comes empty, then the idle interval:
    // about 60 calls a minute at the idle pace and 30 more, not the 300 of polling at the trickle interval.
    const { calls, delays } = await readTrickle(2_000, 60_000, 200);
    expect(calls).toBeGreaterThanOrEqual(70);
    expect(calls).toBeLessThanOrEqual(100);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1_200);
  });

  it('with a hold, keeps the trickle interval that long after the last records, empty answers or not', async () => {
    // One record every 800 ms: with a hold of 1 s the reader never falls back to the idle interval.
    const held = await readTrickle(800, 60_000, 200, 1_000);
    expect(held.calls).toBeGreaterThanOrEqual(230);
    expect(Math.max(...held.delays)).toBeLessThanOrEqual(240);
    // Without one, the empty answer after each record sends it back to the idle interval.
    const unheld = await readTrickle(800, 60_000, 200, 0);
    expect(unheld.calls).toBeLessThan(130);
    expect(Math.max(...unheld.delays)).toBeGreaterThan(500);
  });

  it('with a hold, an idle shard still costs one call per idle interval once the hold has passed', async () => {
    const { calls } = await readTrickle(1e9, 60_000, 200, 1_000);
    expect(calls).toBeGreaterThanOrEqual(45);
    expect(calls).toBeLessThanOrEqual(65);
  });

  it('with the trickle interval set to the idle one, a trickle waits the idle interval too', async () => {
    const { calls, delays } = await readTrickle(200, 60_000, 1_000);
    expect(calls).toBeGreaterThanOrEqual(45);
    expect(calls).toBeLessThanOrEqual(65);
    expect(Math.max(...delays)).toBeGreaterThan(900);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1_200);
  });

  it('reserves room only for the call it is about to make, none through its idle interval', async () => {
    const loop = new SimLoop();
    const shard = tricklingShard(loop, 200);
    // As the spout's owner does: room() reserves what it grants until the answer (or a failure) comes.
    let reserved = 0;
    const reservedWhileIdle: number[] = [];
    const events = ownerEvents({
      room: () => {
        reserved = 10;
        return 10;
      },
      records: () => {
        reserved = 0;
      },
      error: () => {
        reserved = 0;
      },
    });
    const reader = pollingReader(loop, shard.kinesis, events, 5, 3);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    for (let t = 0; t < 10_000; t += 50) {
      await loop.run(t, () => undefined);
      const last = shard.calls[shard.calls.length - 1] ?? 0;
      // Between a call's answer and the next call: the reader waits out its idle interval.
      if (shard.calls.length > 0 && t - last > 100 && t - last < 700) reservedWhileIdle.push(reserved);
    }
    await reader.stop();
    expect(reservedWhileIdle.length).toBeGreaterThan(20);
    expect(reservedWhileIdle.filter((r) => r > 0)).toEqual([]);
  });

  it('reads back to back while answers come full, at the tip or not', async () => {
    const loop = new SimLoop();
    // 100 records a second against a limit of 10: every answer is full, so the budget paces it.
    const shard = tricklingShard(loop, 10);
    const got: KinesisRecord[] = [];
    const events = ownerEvents({ records: (records) => got.push(...records) });
    const reader = pollingReader(loop, shard.kinesis, events, 5, 4);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(20_000, () => undefined);
    await reader.stop();
    expect(shard.calls.length).toBeGreaterThanOrEqual(95);
    expect(got.length).toBeGreaterThanOrEqual(950);
  });

  it("wakes the caught-up readers of a stream when one of them reaches a closed shard's end", async () => {
    const loop = new SimLoop();
    const CLOSED_AT = 5_000;
    // Caught up and empty until every shard is closed at once (as UpdateShardCount closes them).
    const kinesis: KinesisApi = {
      send: (async (command: unknown) => {
        if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'at:0' };
        if (loop.now < CLOSED_AT) return { Records: [], NextShardIterator: 'at:0', MillisBehindLatest: 0 };
        return { Records: [], ChildShards: [], MillisBehindLatest: 0 };
      }) as KinesisApi['send'],
    };
    const idle = new IdleReaders();
    const endedAt: number[] = [];
    const readers = Array.from({ length: 8 }, (_, i) =>
      pollingReader(loop, kinesis, ownerEvents({ end: () => endedAt.push(loop.now) }), 5, 10 + i, idle),
    );
    for (const reader of readers) reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(CLOSED_AT + 3_000, () => undefined);
    await Promise.all(readers.map((r) => r.stop()));
    expect(endedAt).toHaveLength(8);
    // Within a call's spacing at 5 calls/s (61 ms here); each would otherwise call again up to 1.2 s (its
    // jittered interval) after the close (911 ms apart here without the wake).
    expect(Math.max(...endedAt) - Math.min(...endedAt)).toBeLessThanOrEqual(250);
  });

  it('reads back to back while behind, though answers come short of the limit', async () => {
    const loop = new SimLoop();
    // Kinesis may answer a reader that is behind with fewer records than asked for: it is not caught up.
    let calls = 0;
    const behind: KinesisApi = {
      send: (async (command: unknown) => {
        if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'at:0' };
        const from = Number((command as GetRecordsCommand).input.ShardIterator!.slice(3));
        calls += 1;
        return { Records: recordsAt(from, 3), NextShardIterator: `at:${from + 3}`, MillisBehindLatest: 60_000 };
      }) as KinesisApi['send'],
    };
    const reader = pollingReader(loop, behind, ownerEvents({}), 5, 40);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(10_000, () => undefined);
    await reader.stop();
    // At the budget (5 a second), not once per idle interval.
    expect(calls).toBeGreaterThanOrEqual(45);
  });

  it('keeps a reader woken again and again within its call budget', async () => {
    const loop = new SimLoop();
    const idle = new IdleReaders();
    // One shard that stays open, caught up and empty...
    const callsAt: number[] = [];
    const reader = pollingReader(loop, emptyAtTip(loop, callsAt), ownerEvents({}), 5, 30, idle);
    reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(3_000, () => undefined);
    // ...while the stream's other shards end one every 50 ms, each end waking it.
    for (let at = 3_000; at < 6_000; at += 50) {
      await loop.run(at, () => undefined);
      idle.wakeAll();
      await settle();
    }
    await loop.run(7_000, () => undefined);
    await reader.stop();
    const gaps = callsAt.slice(1).map((at, i) => at - callsAt[i]);
    // Woken 60 times in 3 s, it still calls at most 5 times a second.
    expect(callsAt.filter((at) => at >= 3_000 && at < 6_000).length).toBeGreaterThanOrEqual(12);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200);
  });

  it("gathers caught-up readers' calls on shared ticks, never sooner than their interval", async () => {
    const loop = new SimLoop();
    const idle = new IdleReaders();
    const callsAt = new Map<number, number[]>();
    const readers = Array.from({ length: 32 }, (_, i) => {
      const own: number[] = [];
      callsAt.set(i, own);
      return pollingReader(loop, emptyAtTip(loop, own), ownerEvents({}), 5, 100 + i, idle);
    });
    for (const reader of readers) reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(20_000, () => undefined);
    await Promise.all(readers.map((r) => r.stop()));
    const later = [...callsAt.values()].flatMap((at) => at.slice(1));
    // About 32 x 19 calls after the first ones, each at a tick: a process wakes once per tick for all of them.
    expect(later.length).toBeGreaterThan(32 * 15);
    expect(later.filter((at) => at % IDLE_TICK_MS !== 0)).toEqual([]);
    expect(new Set(later).size).toBeLessThan(later.length / 2);
    // Each still waits at least its jittered interval (0.8 x 1 s) and at most that plus a tick.
    const gaps = [...callsAt.values()].flatMap((at) => at.slice(1).map((t, i) => t - at[i]));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(800);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1_200 + IDLE_TICK_MS);
  });

  it('stops at once while it waits for its tick, and calls no more', async () => {
    const loop = new SimLoop();
    const idle = new IdleReaders();
    const callsAt: number[] = [];
    const waiting = pollingReader(loop, emptyAtTip(loop, callsAt), ownerEvents({}), 5, 7, idle);
    const other = pollingReader(loop, emptyAtTip(loop), ownerEvents({}), 5, 8, idle);
    for (const reader of [waiting, other]) reader.start({ kind: 'TRIM_HORIZON' });
    await settle();
    await loop.run(100, () => undefined);
    expect(callsAt).toHaveLength(1);
    // Stopped with its tick (up to 1.2 s away) not come: it resolves without the clock moving.
    const stoppedAt = loop.now;
    await waiting.stop();
    expect(loop.now).toBe(stoppedAt);
    // The tick it was due at still rings for the other reader; the stopped one never calls again.
    await loop.run(10_000, () => undefined);
    await other.stop();
    expect(callsAt).toHaveLength(1);
  });
});
