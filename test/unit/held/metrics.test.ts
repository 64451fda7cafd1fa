import fc from 'fast-check';
import {
  METRIC_KEYS,
  ProcessCounter,
  ShardCounter,
  SpoutMetrics,
  viewOf,
  type ProcessView,
} from '../../../src/held/metrics';

function view(shards: Record<string, number>, extra: Partial<ProcessView> = {}): ProcessView {
  return {
    shards: Object.entries(shards).map(([shardId, inFlight]) => ({ shardId, inFlight })),
    recordsInMemory: 0,
    bytesInMemory: 0,
    zookeeperConnected: true,
    ...extra,
  };
}

describe('SpoutMetrics', () => {
  it('sends counts since the previous send, then zeros', () => {
    const metrics = new SpoutMetrics(0);
    metrics.emitted('s-1', 100, false);
    metrics.emitted('s-1', 50, false);
    metrics.emitted('s-1', 100, true);
    metrics.shard('s-1', ShardCounter.Acked);
    metrics.shard('s-1', ShardCounter.Failed);
    metrics.shard('s-1', ShardCounter.Skipped);
    metrics.count(ProcessCounter.ThrottledCalls);
    const first = metrics.take(view({ 's-1': 1 }), 5_000);
    expect(first.shards.counters).toEqual({
      's-1.emitted': 2,
      's-1.emittedBytes': 150,
      's-1.acked': 1,
      's-1.failed': 1,
      's-1.retried': 1,
      's-1.skipped': 1,
      's-1.deadLettered': 0,
      's-1.tooOld': 0,
    });
    expect(first.process.counters).toEqual({
      leasesTaken: 0,
      leasesGiven: 0,
      reshardEvents: 0,
      throttledCalls: 1,
      iteratorResets: 0,
      subscriptionsOpened: 0,
      subscriptionRenewals: 0,
      subscriptionRetries: 0,
      checkpointWritesDeferred: 0,
      emitted: 2,
      acked: 1,
      failed: 1,
      retried: 1,
      skipped: 1,
      deadLettered: 0,
      tooOld: 0,
    });
    const second = metrics.take(view({ 's-1': 1 }), 10_000);
    expect(Object.values(second.shards.counters).every((n) => n === 0)).toBe(true);
    expect(Object.values(second.process.counters).every((n) => n === 0)).toBe(true);
    expect(Object.keys(second.shards.counters)).toHaveLength(8);
  });

  it('gives the gauges of held shards only: a shard let go gets its last counts, then no key at all', () => {
    const metrics = new SpoutMetrics(0);
    metrics.leaseTaken('s-1');
    metrics.leaseTaken('s-2');
    metrics.lag('s-1', 1_500);
    metrics.lag('s-2', 20_000);
    metrics.emitted('s-2', 10, false);
    metrics.count(ProcessCounter.LeasesGiven);
    // s-2 was let go before the send: its counts still go out, its gauges do not.
    const first = metrics.take(
      view({ 's-1': 3 }, { recordsInMemory: 7, bytesInMemory: 700, zookeeperConnected: false }),
      2_000,
    );
    expect(first.shards.gauges).toEqual({
      's-1.inFlight': 3,
      's-1.millisBehindLatest': 1_500,
      's-1.emittedRecordsPerSecond': 0,
      's-1.emittedBytesPerSecond': 0,
    });
    expect(first.shards.counters['s-2.emitted']).toBe(1);
    expect(first.process.gauges).toEqual({
      shardsHeld: 1,
      recordsInMemory: 7,
      bytesInMemory: 700,
      zookeeperConnected: 0,
      maxMillisBehindLatest: 1_500,
      heldBytesPerSecond: 0,
      heldRecordsPerSecond: 0,
    });
    expect(first.process.counters).toMatchObject({ leasesTaken: 2, leasesGiven: 1, emitted: 1 });
    const second = metrics.take(view({ 's-1': 0 }), 4_000);
    expect(Object.keys(second.shards.counters).some((k) => k.startsWith('s-2.'))).toBe(false);
    expect(Object.keys(second.shards.gauges).some((k) => k.startsWith('s-2.'))).toBe(false);
  });

  it('forgets the lag of a shard let go, and of an earlier holding when a shard is taken again', () => {
    const metrics = new SpoutMetrics(0);
    metrics.lag('s-1', 9_000);
    metrics.take(view({}), 1_000);
    expect(metrics.take(view({ 's-1': 0 }), 2_000).shards.gauges['s-1.millisBehindLatest']).toBeUndefined();
    metrics.lag('s-1', 9_000);
    metrics.leaseTaken('s-1');
    const report = metrics.take(view({ 's-1': 0 }), 3_000);
    expect(report.shards.gauges['s-1.millisBehindLatest']).toBeUndefined();
    // No held shard has read yet: no lag is claimed for the process either.
    expect(report.process.gauges.maxMillisBehindLatest).toBeUndefined();
  });

  it('gives rates over the time since the previous send', () => {
    const metrics = new SpoutMetrics(1_000);
    for (let i = 0; i < 30; i += 1) metrics.emitted('s-1', 1_000, false);
    metrics.emitted('s-1', 1_000, true);
    const report = metrics.take(view({ 's-1': 0 }), 4_000);
    expect(report.shards.gauges['s-1.emittedRecordsPerSecond']).toBe(10);
    expect(report.shards.gauges['s-1.emittedBytesPerSecond']).toBe(10_000);
    metrics.emitted('s-1', 1, false);
    expect(metrics.take(view({ 's-1': 0 }), 7_000).shards.gauges['s-1.emittedRecordsPerSecond']).toBe(0.33);
    // Two sends in the same millisecond: no division by zero.
    metrics.emitted('s-1', 1, false);
    expect(metrics.take(view({ 's-1': 0 }), 7_000).shards.gauges['s-1.emittedRecordsPerSecond']).toBe(0);
  });

  it('takes the largest lag of the held shards for the process', () => {
    const metrics = new SpoutMetrics(0);
    metrics.lag('a', 10);
    metrics.lag('b', 70);
    metrics.lag('c', 900);
    metrics.lag('d', undefined);
    expect(metrics.take(view({ a: 0, b: 0, d: 0 }), 1).process.gauges.maxMillisBehindLatest).toBe(70);
  });

  it('names every key of the contract, and only those', () => {
    const metrics = new SpoutMetrics(0);
    metrics.lag('s', 1);
    const report = metrics.take(view({ s: 0 }), 1);
    expect(Object.keys(report.process.counters).sort()).toEqual([...METRIC_KEYS.processCounters].sort());
    expect(Object.keys(report.process.gauges).sort()).toEqual([...METRIC_KEYS.processGauges].sort());
    expect(Object.keys(report.shards.counters).sort()).toEqual(METRIC_KEYS.shardCounters.map((k) => `s.${k}`).sort());
    expect(Object.keys(report.shards.gauges).sort()).toEqual(METRIC_KEYS.shardGauges.map((k) => `s.${k}`).sort());
  });

  it('reads a holder of shards', () => {
    const shards = new Map([['s-1', { inFlight: { size: 4 } }]]);
    expect(viewOf({ shards, inMemory: () => 9, bytesInMemory: () => 90, zookeeperConnected: true })).toEqual({
      shards: [{ shardId: 's-1', inFlight: 4 }],
      recordsInMemory: 9,
      bytesInMemory: 90,
      zookeeperConnected: true,
    });
  });
});

type Op =
  | { kind: 'emit'; shard: number; bytes: number; retry: boolean }
  | { kind: 'outcome'; shard: number; counter: 'acked' | 'failed' | 'skipped' }
  | { kind: 'process'; counter: ProcessCounter }
  | { kind: 'lag'; shard: number; ms: number }
  | { kind: 'take'; held: number[]; advanceMs: number };

const SHARDS = 4;
const shardIds = Array.from({ length: SHARDS }, (_, i) => `shardId-00000000000${i}`);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('emit' as const),
    shard: fc.nat(SHARDS - 1),
    bytes: fc.nat(2_000),
    retry: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('outcome' as const),
    shard: fc.nat(SHARDS - 1),
    counter: fc.constantFrom('acked' as const, 'failed' as const, 'skipped' as const),
  }),
  fc.record({ kind: fc.constant('process' as const), counter: fc.constantFrom(...Object.values(ProcessCounter)) }),
  fc.record({ kind: fc.constant('lag' as const), shard: fc.nat(SHARDS - 1), ms: fc.nat(100_000) }),
  fc.record({
    kind: fc.constant('take' as const),
    held: fc.uniqueArray(fc.nat(SHARDS - 1), { maxLength: SHARDS }),
    advanceMs: fc.nat(20_000),
  }),
);

describe('SpoutMetrics, any sequence of events and sends', () => {
  it('sends every count exactly once, and gauges of the shards held at each send only', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 200 }),
        fc.uniqueArray(fc.nat(SHARDS - 1), { maxLength: SHARDS }),
        (ops, finallyHeld) => {
          const metrics = new SpoutMetrics(0);
          let now = 0;
          const recorded = new Map<string, number>();
          const sent = new Map<string, number>();
          const add = (map: Map<string, number>, key: string, by: number) => map.set(key, (map.get(key) ?? 0) + by);
          const lastLag = new Map<string, number>();
          let touchedSinceTake = new Set<string>();
          const take = (held: number[], advanceMs: number) => {
            now += advanceMs;
            const ids = held.map((i) => shardIds[i]);
            const report = metrics.take(view(Object.fromEntries(ids.map((id) => [id, 0]))), now);
            for (const [key, value] of Object.entries(report.shards.counters)) add(sent, key, value);
            for (const [key, value] of Object.entries(report.process.counters)) add(sent, `process.${key}`, value);
            // Counters name the shards held and those that had events since the last send; gauges the held ones.
            const counted = new Set(Object.keys(report.shards.counters).map((k) => k.slice(0, k.lastIndexOf('.'))));
            expect(counted).toEqual(new Set([...ids, ...touchedSinceTake]));
            const gauged = new Set(Object.keys(report.shards.gauges).map((k) => k.slice(0, k.lastIndexOf('.'))));
            expect(gauged).toEqual(new Set(ids));
            expect(report.process.gauges.shardsHeld).toBe(ids.length);
            for (const id of ids) expect(report.shards.gauges[`${id}.millisBehindLatest`]).toBe(lastLag.get(id));
            for (const id of lastLag.keys()) if (!ids.includes(id)) lastLag.delete(id);
            touchedSinceTake = new Set();
            for (const value of [...Object.values(report.shards.gauges), ...Object.values(report.process.gauges)])
              expect(Number.isFinite(value)).toBe(true);
          };
          for (const o of ops) {
            switch (o.kind) {
              case 'emit': {
                const id = shardIds[o.shard];
                metrics.emitted(id, o.bytes, o.retry);
                touchedSinceTake.add(id);
                if (o.retry) {
                  add(recorded, `${id}.retried`, 1);
                  add(recorded, 'process.retried', 1);
                } else {
                  add(recorded, `${id}.emitted`, 1);
                  add(recorded, `${id}.emittedBytes`, o.bytes);
                  add(recorded, 'process.emitted', 1);
                }
                break;
              }
              case 'outcome': {
                const id = shardIds[o.shard];
                metrics.shard(id, o.counter);
                touchedSinceTake.add(id);
                add(recorded, `${id}.${o.counter}`, 1);
                add(recorded, `process.${o.counter}`, 1);
                break;
              }
              case 'process':
                metrics.count(o.counter);
                add(recorded, `process.${o.counter}`, 1);
                break;
              case 'lag':
                metrics.lag(shardIds[o.shard], o.ms);
                lastLag.set(shardIds[o.shard], o.ms);
                break;
              case 'take':
                take(o.held, o.advanceMs);
                break;
            }
          }
          take(finallyHeld, 1_000);
          const nonZero = (map: Map<string, number>) => new Map([...map].filter(([, v]) => v !== 0));
          expect(nonZero(sent)).toEqual(nonZero(recorded));
        },
      ),
      { numRuns: 300 },
    );
  });
});
