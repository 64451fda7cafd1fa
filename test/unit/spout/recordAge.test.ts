/**
 * `maxRecordAgeMs` in the spout: a record over the limit when it is about to be emitted (first time or retry)
 * is dead-lettered or skipped, counted, logged, and passed by the checkpoint as an acked record would be.
 */
import fc from 'fast-check';
import { validateConfig } from '../../../src/config/config';
import type { Position } from '../../../src/core/position';
import type { Scheduler } from '../../../src/core/scheduler';
import { deliveryOf } from '../../../src/held/delivery';
import { LateOutcomes } from '../../../src/held/lateOutcomes';
import { SpoutMetrics } from '../../../src/held/metrics';
import { OwnedShard } from '../../../src/held/ownedShard';
import type { KinesisRecord } from '../../../src/kinesis/records';
import { KinesisSpout } from '../../../src/spout/spout';

const WALL = 1_765_000_000_000;
const SHARD = 'shardId-000000000001';

interface Emitted {
  id: string | undefined;
  tuple: unknown[];
  stream: string;
}

/** One Kinesis record, or the user records of a KPL aggregate (they share its sequence number and arrival). */
interface Put {
  ageMs: number;
  users: number;
}

function recordsOf(puts: readonly Put[]): KinesisRecord[] {
  return puts.flatMap(({ ageMs, users }, i) => {
    const sequenceNumber = String(1_000 + i);
    const arrivalMs = WALL - ageMs;
    const base = { shardId: SHARD, sequenceNumber, partitionKey: `k${i}`, data: new Uint8Array([120]), arrivalMs };
    if (users === 0) return [base];
    return Array.from({ length: users }, (_, sub) => ({ ...base, subSequence: sub, lastSubSequence: users - 1 }));
  });
}

function setUp(overrides: Record<string, unknown>, records: KinesisRecord[]) {
  let clock = 1_000;
  const scheduler: Scheduler = {
    now: () => clock,
    wallNow: () => WALL + clock - 1_000,
    after: () => () => undefined,
    every: () => () => undefined,
    sleep: () => Promise.resolve(),
    random: () => 0.5,
  };
  const config = validateConfig({
    streamName: 's',
    applicationName: 'a',
    region: 'us-east-1',
    zookeeper: { connect: 'localhost:2181' },
    ...overrides,
  });
  const shard = new OwnedShard(SHARD, 0, { delivery: deliveryOf(config), deaggregate: false });
  shard.enter({ kind: 'draining', endedAt: 0, announced: false });
  shard.push(records);
  const metrics = new SpoutMetrics(0);
  const logs: string[] = [];
  const spout = new KinesisSpout(
    config,
    {
      isActive: true,
      shards: new Map([[SHARD, shard]]),
      trustedUntil: () => Infinity,
      lateOutcomes: new LateOutcomes(100, 60_000),
      metrics,
    },
    { log: (_level, msg) => logs.push(msg), error: (msg) => logs.push(`error: ${msg}`) },
    scheduler,
  );
  const emits: Emitted[] = [];
  const out = {
    emit: (id: string | undefined, tuple: unknown[], stream: string) => emits.push({ id, tuple, stream }),
    emitUnanchored: (tuple: unknown[], stream: string) => emits.push({ id: undefined, tuple, stream }),
  };
  const drain = () => {
    for (let before = -1; before !== emits.length + spout.counters.tooOld; ) {
      before = emits.length + spout.counters.tooOld;
      spout.next(out);
    }
  };
  const advance = (ms: number) => {
    clock += ms;
  };
  return { spout, shard, metrics, logs, emits, out, drain, advance };
}

const deadLetters = { retry: { onExhausted: 'deadLetter', deadLetterStream: 'dead', maxRetries: 3 } };
const seqOf = (tuple: unknown[]) => tuple[3] as string;

/** The position after `r`, as a checkpoint states it (a user record that does not close its aggregate keeps its sub-sequence). */
function after(r: KinesisRecord): Position {
  return r.subSequence === undefined || r.subSequence === r.lastSubSequence
    ? { kind: 'AFTER', sequenceNumber: r.sequenceNumber }
    : { kind: 'AFTER', sequenceNumber: r.sequenceNumber, subSequence: r.subSequence };
}

const putsArb = fc.array(
  fc.record({ ageMs: fc.integer({ min: 0, max: 20_000 }), users: fc.constantFrom(0, 0, 0, 2, 3) }),
  { minLength: 1, maxLength: 25 },
);

describe('maxRecordAgeMs, at least once', () => {
  it('never emits a record over the limit, dead-letters each one once, and the checkpoint stops only at an unacked emitted record', () => {
    fc.assert(
      fc.property(
        putsArb,
        fc.integer({ min: 1_000, max: 15_000 }),
        fc.array(fc.boolean(), { maxLength: 100 }),
        (puts, limit, acks) => {
          const records = recordsOf(puts);
          const { spout, shard, emits, drain } = setUp({ maxRecordAgeMs: limit, ...deadLetters }, records);
          drain();
          const emitted = emits.filter((e) => e.stream === 'default');
          const letters = emits.filter((e) => e.stream === 'dead');
          const old = records.filter((r) => WALL - r.arrivalMs > limit);
          expect(emitted.map((e) => e.id)).toEqual(
            records
              .filter((r) => WALL - r.arrivalMs <= limit)
              .map((r) => `${SHARD}:${r.sequenceNumber}${r.subSequence === undefined ? '' : `:${r.subSequence}`}`),
          );
          expect(letters).toHaveLength(old.length);
          for (const [i, letter] of letters.entries()) {
            expect(letter.id).toBeUndefined();
            expect(seqOf(letter.tuple)).toBe(old[i].sequenceNumber);
            expect(letter.tuple.slice(5)).toEqual([0, null, 'tooOld', WALL - old[i].arrivalMs]);
          }
          expect(spout.counters).toMatchObject({ tooOld: old.length, deadLettered: old.length, skipped: 0 });
          // Ack some of the emitted ones: the checkpoint is after the last record of the prefix in which every
          // record is acked or too old.
          const ackedIds = new Set(emitted.filter((_, i) => acks[i] ?? false).map((e) => e.id));
          for (const id of ackedIds) spout.ack(id);
          let last: KinesisRecord | undefined;
          for (const r of records) {
            const id = `${SHARD}:${r.sequenceNumber}${r.subSequence === undefined ? '' : `:${r.subSequence}`}`;
            if (WALL - r.arrivalMs <= limit && !ackedIds.has(id)) break;
            last = r;
          }
          expect(shard.committable()).toEqual(last === undefined ? undefined : after(last));
          expect(shard.inFlight.size).toBe(emitted.length - ackedIds.size);
        },
      ),
    );
  });

  it('without dead letters, skips them: nothing on any other stream, each counted', () => {
    const records = recordsOf([
      { ageMs: 9_000, users: 0 },
      { ageMs: 100, users: 0 },
      { ageMs: 9_000, users: 3 },
    ]);
    const { spout, shard, emits, drain, metrics } = setUp({ maxRecordAgeMs: 5_000 }, records);
    drain();
    expect(emits.map((e) => [e.stream, e.id])).toEqual([['default', `${SHARD}:1001`]]);
    expect(spout.counters).toMatchObject({ tooOld: 4, deadLettered: 0, skipped: 0 });
    const report = metrics.take({ shards: [], recordsInMemory: 0, bytesInMemory: 0, zookeeperConnected: true }, 1);
    expect(report.process.counters).toMatchObject({ tooOld: 4, deadLettered: 0, emitted: 1 });
    expect(report.shards.counters[`${SHARD}.tooOld`]).toBe(4);
    spout.ack(`${SHARD}:1001`);
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '1002' });
  });

  it('without the limit, every record is emitted, however old', () => {
    const records = recordsOf([
      { ageMs: 400 * 86_400_000, users: 0 },
      { ageMs: 100, users: 2 },
    ]);
    const { spout, emits, drain } = setUp(deadLetters, records);
    drain();
    expect(emits.filter((e) => e.stream === 'default')).toHaveLength(3);
    expect(spout.counters.tooOld).toBe(0);
  });

  it('a failed record that grows too old before its retry is dead-lettered instead of re-emitted, and passed by the checkpoint', () => {
    const records = recordsOf([
      { ageMs: 4_000, users: 0 },
      { ageMs: 4_000, users: 0 },
    ]);
    const { spout, shard, emits, drain, advance, out } = setUp({ maxRecordAgeMs: 5_000, ...deadLetters }, records);
    drain();
    expect(emits.map((e) => e.id)).toEqual([`${SHARD}:1000`, `${SHARD}:1001`]);
    spout.ack(`${SHARD}:1001`);
    spout.fail(`${SHARD}:1000`, out);
    advance(2_000);
    drain();
    expect(emits).toHaveLength(3);
    expect(emits[2]).toMatchObject({ id: undefined, stream: 'dead' });
    expect(emits[2].tuple.slice(3)).toEqual(['1000', WALL - 4_000, 1, null, 'tooOld', 6_000]);
    expect(shard.inFlight.size).toBe(0);
    expect(shard.committable()).toEqual({ kind: 'AFTER', sequenceNumber: '1001' });
  });

  it('with the limit, a record given up after maxRetries says so in the same fields, with its age', () => {
    const records = recordsOf([{ ageMs: 100, users: 0 }]);
    const { spout, emits, drain, advance, out } = setUp({ maxRecordAgeMs: 600_000, ...deadLetters }, records);
    for (let attempt = 0; attempt < 4; attempt += 1) {
      drain();
      spout.fail(`${SHARD}:1000`, out);
      advance(60_000);
    }
    const letter = emits.find((e) => e.stream === 'dead')!;
    expect(letter.tuple.slice(5, 7)).toEqual([4, WALL + 180_000]);
    expect(letter.tuple.slice(7)).toEqual(['maxRetries', 180_100]);
  });

  it('logs a shard once a minute at most: how many, the oldest age and the limit', () => {
    const { logs, drain, advance, spout, shard } = setUp(
      { maxRecordAgeMs: 5_000 },
      recordsOf([{ ageMs: 9_000, users: 0 }]),
    );
    drain();
    shard.push(
      recordsOf([
        { ageMs: 10_000, users: 0 },
        { ageMs: 42_000, users: 0 },
      ]).map((r, i) => ({ ...r, sequenceNumber: String(2_000 + i) })),
    );
    drain();
    const lines = () => logs.filter((l) => l.includes('older than maxRecordAgeMs'));
    expect(lines()).toEqual([
      `1 record(s) of ${SHARD} older than maxRecordAgeMs=5000 when read (the oldest 9 s): skipped (not emitted), and passed by the checkpoint`,
    ]);
    advance(59_000);
    drain();
    expect(lines()).toHaveLength(1);
    advance(1_000);
    drain();
    expect(lines()[1]).toBe(
      `2 record(s) of ${SHARD} older than maxRecordAgeMs=5000 when read (the oldest 42 s): skipped (not emitted), and passed by the checkpoint`,
    );
    expect(spout.counters.tooOld).toBe(3);
  });
});

describe('maxRecordAgeMs in the other delivery modes', () => {
  it('none: the checkpoint follows the last record taken, emitted or too old', () => {
    fc.assert(
      fc.property(putsArb, fc.integer({ min: 1_000, max: 15_000 }), (puts, limit) => {
        const records = recordsOf(puts);
        const { spout, shard, emits, drain } = setUp({ maxRecordAgeMs: limit, delivery: 'none' }, records);
        drain();
        for (const e of emits) expect(WALL - (e.tuple[4] as number)).toBeLessThanOrEqual(limit);
        expect(emits.length + spout.counters.tooOld).toBe(records.length);
        expect(shard.committable()).toEqual(after(records[records.length - 1]));
      }),
    );
  });

  it('at most once with tuple tracking: a too-old record is released at once, never in flight', () => {
    const records = recordsOf([
      { ageMs: 9_000, users: 0 },
      { ageMs: 100, users: 0 },
    ]);
    const { spout, shard, emits, drain } = setUp(
      { maxRecordAgeMs: 5_000, delivery: 'at-most-once', tupleTracking: true },
      records,
    );
    shard.checkpointStored({ position: { kind: 'AFTER', sequenceNumber: '1001' }, version: 1 });
    drain();
    expect(emits.map((e) => e.id)).toEqual([`${SHARD}:1001`]);
    expect(spout.counters.tooOld).toBe(1);
    expect(shard.inFlight.size).toBe(1);
  });
});
