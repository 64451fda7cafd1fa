/**
 * What a user record of a KPL aggregate costs: CPU per user record of `expandRecord`, and the memory held
 * (heap + external after a full gc) when one user record of each of many aggregates waits for its ack and
 * the others are gone, against what the memory caps count for it. Run on two versions of the de-aggregation
 * to compare them (user records as views of the aggregate, or as copies).
 *
 *   node --expose-gc --import tsx bench/kplHeld.ts
 */
import { expandRecord } from '../src/kinesis/aggregation';
import type { KinesisRecord } from '../src/kinesis/records';
import { kplAggregate } from '../test/helpers/kpl';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const SHAPES = [
  { users: 10, bytes: 100_000 },
  { users: 100, bytes: 10_000 },
  { users: 100, bytes: 1_000 },
  { users: 500, bytes: 100 },
];

function aggregateRecord(users: number, bytes: number, seq: number): KinesisRecord {
  const built = kplAggregate(
    Array.from({ length: users }, (_, i) => ({
      partitionKey: `key-${i % 16}`,
      data: Buffer.alloc(bytes, 97 + (i % 26)),
    })),
  );
  return {
    shardId: 'shardId-000000000000',
    sequenceNumber: String(1e20 + seq),
    partitionKey: built.partitionKey,
    // As the SDK hands it over: a Uint8Array of its own.
    data: new Uint8Array(built.data),
    arrivalMs: 0,
  };
}

/** Nanoseconds per user record of `expandRecord` (the best of 7 trials: the machine may be shared). */
function cpu(users: number, bytes: number): number {
  const source = aggregateRecord(users, bytes, 0);
  const rounds = Math.max(20, Math.floor(20_000_000 / (users * bytes)));
  let best = Number.POSITIVE_INFINITY;
  for (let trial = 0; trial < 7; trial += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i += 1) expandRecord(source, undefined);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / (rounds * users));
  }
  return best;
}

function heldBytes(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Bytes held when one user record of each of `aggregates` aggregates is kept (the others acked, dropped). */
function memory(users: number, bytes: number, aggregates: number): number {
  const before = heldBytes();
  const kept: KinesisRecord[] = [];
  for (let a = 0; a < aggregates; a += 1) {
    const { records } = expandRecord(aggregateRecord(users, bytes, a), undefined);
    kept.push(records[users - 1]);
  }
  const held = heldBytes() - before;
  if (kept.length !== aggregates) throw new Error('lost a record');
  return held;
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
process.stdout.write(`node ${process.version}\n`);
for (const { users, bytes } of SHAPES) {
  const aggregates = Math.max(1, Math.floor(200_000_000 / (users * bytes)));
  process.stdout.write(
    `${users} x ${bytes} B: ${cpu(users, bytes).toFixed(0)} ns per user record; one unacked of each of ${aggregates} aggregates: ` +
      `counted ${mb(aggregates * bytes)}, held ${mb(memory(users, bytes, aggregates))}\n`,
  );
}
