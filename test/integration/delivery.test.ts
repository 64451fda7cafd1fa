/**
 * Delivery modes (config `delivery`) on real servers, the spout process driven as ShellSpout drives it: what
 * each emits, and the kill test: SIGKILL mid-flow, a new process takes over, and what was lost (put, never
 * emitted) and repeated (emitted twice) is counted.
 */
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { startTcpProxy } from '../helpers/tcpProxy';
import type { Emit, StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();

const records = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 16}`, data: `${prefix}-${i}` }));

/** `<shardId>:<sequenceNumber>` of an emit, from its tuple: untracked emits carry no id (`Emit.id` undefined). */
const recordOf = (emit: Emit) => `${emit.tuple[2]}:${emit.tuple[3]}`;
const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface KillCount {
  put: number;
  lost: string[];
  repeated: string[];
  /** Emits of the first process within `windowMs` before the kill (what `none` may repeat). */
  emittedJustBefore: number;
  first: StormDriver;
  second: StormDriver;
}

/** Fetched ahead at most, per shard: what at-most-once may lose in a kill (records checkpointed past, not emitted). */
const BATCH = 50;
const AHEAD = 100;

/**
 * Puts 900 records on two shards; the first process emits 5 per `next`, about 150 a second (Storm acks the tracked
 * ones, all but every tenth), is killed after 400, and a second one reads on until both checkpoints are at
 * their shard's last record, and a second more.
 */
async function killTest(overrides: Record<string, unknown>, windowMs = 0): Promise<KillCount> {
  const stream = await newStream(2);
  const app = uniqueName('app');
  const put = await putRecords(suite.services.client, stream, records(900, 'r'));
  const conf = { maxRecordsPerRequest: BATCH, shardBufferSize: AHEAD, maxEmitPerNext: 5, ...overrides };
  const first = await suite.spout(stream, app, conf);
  let n = 0;
  const slowly = async (driver: StormDriver, emit: Emit) => {
    await pause(5);
    n += 1;
    if (emit.id !== undefined && n % 10 !== 0) await driver.ack(emit.id);
  };
  await first.pump(() => first.emits.length >= 400, { onEmit: (e) => slowly(first, e), timeoutMs: 40_000 });
  const killedAt = performance.now();
  first.signal('SIGKILL');
  await first.exited;
  const emittedJustBefore = first.emits.filter((e) => e.receivedAt >= killedAt - windowMs).length;

  const second = await suite.spout(stream, app, conf);
  const lastOfShard = [...new Map(put.map((r) => [r.shardId, r] as const)).values()];
  let done = false;
  const atEnd = waitFor(
    "every checkpoint at its shard's last record",
    async () => {
      for (const last of lastOfShard) {
        const stored = await readJson(
          suite.services.inspector,
          `${stateBase(stream, app)}/checkpoints/${last.shardId}`,
        );
        if ((stored?.position as { sequenceNumber?: string } | undefined)?.sequenceNumber !== last.sequenceNumber)
          return false;
      }
      return (done = true);
    },
    40_000,
  );
  const ackIfTracked = (e: Emit) => (e.id === undefined ? undefined : second.ack(e.id));
  await second.pump(() => done, { onEmit: ackIfTracked, timeoutMs: 40_000 });
  await atEnd;
  await second.pump(() => false, { onEmit: ackIfTracked, timeoutMs: 1_000 });
  const all = [...first.emits, ...second.emits].map(recordOf);
  const emitted = new Set(all);
  const counts = new Map<string, number>();
  for (const id of all) counts.set(id, (counts.get(id) ?? 0) + 1);
  const result = {
    put: put.length,
    lost: put.map(idOf).filter((id) => !emitted.has(id)),
    repeated: [...counts].filter(([, c]) => c > 1).map(([id]) => id),
    emittedJustBefore,
    first,
    second,
  };
  // DELIVERY_COUNTS=1 prints what each kill cost (for the docs' figures).
  if (process.env.DELIVERY_COUNTS)
    console.log(
      JSON.stringify({
        overrides,
        put: result.put,
        lost: result.lost.length,
        repeated: result.repeated.length,
        emittedJustBefore,
        firstEmits: first.emits.length,
        secondEmits: second.emits.length,
      }),
    );
  return result;
}

test('at-least-once (default): a kill loses nothing; what it repeats was in flight', async () => {
  const count = await killTest({});
  expect(count.lost).toEqual([]);
  // Every tenth emit is left unacked: the checkpoint stops below the first, so what follows it comes again.
  expect(count.repeated.length).toBeGreaterThan(0);
  expect(count.repeated.length).toBeLessThanOrEqual(count.first.emits.length - 9);
  expect(count.first.emits.every((e) => typeof e.id === 'string')).toBe(true);
});

test('at-most-once: a record is emitted only once ZooKeeper holds a checkpoint past it, one write per batch; a kill repeats nothing', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const proxy = await startTcpProxy(suite.services.zk.port);
  try {
    const driver = await suite.spout(stream, app, {
      delivery: 'at-most-once',
      checkpointIntervalMs: 60_000,
      statsIntervalMs: 200,
      zookeeper: { connect: `127.0.0.1:${proxy.port}`, sessionTimeoutMs: 6_000, root: '/it' },
    });
    await waitFor('the lease taken', () => driver.logs.some((l) => l.msg.includes('lease on')));
    // ZooKeeper holds every byte for 1.5 s (well inside the session, the lease still trusted): the batch is
    // fetched, its checkpoint write waits, and nothing of it may be emitted meanwhile.
    proxy.pause();
    const put = await putRecords(suite.services.client, stream, records(300, 'r'));
    const pausedUntil = Date.now() + 1_500;
    await driver.pump(() => Date.now() > pausedUntil, { onEmit: () => undefined });
    const emittedWhilePaused = driver.emits.length;
    proxy.resume();
    const checkpoint = `${stateBase(stream, app)}/checkpoints/${put[0].shardId}`;
    const uncovered: string[] = [];
    await driver.pump(() => driver.emits.length >= put.length, {
      onEmit: async (emit) => {
        // ZooKeeper (one server: what it answered is what it holds) already holds a checkpoint past it.
        const stored = (await readJson(suite.services.inspector, checkpoint))?.position as
          | { sequenceNumber?: string }
          | undefined;
        const at = BigInt(emit.tuple[3] as string);
        if (stored?.sequenceNumber === undefined || BigInt(stored.sequenceNumber) < at) uncovered.push(recordOf(emit));
      },
    });
    expect(emittedWhilePaused).toBe(0);
    expect(uncovered).toEqual([]);
    expect(driver.emits.every((e) => e.id === undefined && !('id' in e.frame))).toBe(true);
    // One write per fetched batch, not per record (the interval is a minute: every write here is a batch's).
    const stats = await waitFor('stats after every emit', () => {
      const last = driver.lastStats();
      return last !== undefined && last.emitted === put.length && last;
    });
    expect(stats.checkpointWrites).toBeGreaterThan(0);
    expect(stats.checkpointWrites).toBeLessThan(20);
    await driver.stop();
  } finally {
    await proxy.close();
  }

  const count = await killTest({ delivery: 'at-most-once' });
  expect(count.repeated).toEqual([]);
  // Lost: only what the first process had fetched and checkpointed past but not emitted.
  expect(count.lost.length).toBeLessThanOrEqual(2 * (AHEAD + BATCH));
});

test('none: emitted as read, checkpointed as emitted every interval; a kill loses nothing emitted and repeats at most an interval', async () => {
  const intervalMs = 1_000;
  const count = await killTest({ delivery: 'none', checkpointIntervalMs: intervalMs }, intervalMs + 250);
  expect(count.lost).toEqual([]);
  expect(count.repeated.length).toBeLessThanOrEqual(count.emittedJustBefore);
  expect(count.first.emits.every((e) => e.id === undefined)).toBe(true);
});

test.each(['at-most-once', 'none'])(
  '%s with tupleTracking: ids kept, acks and fails only release, nothing re-emitted',
  async (delivery) => {
    const stream = await newStream(1);
    const put = await putRecords(suite.services.client, stream, records(100, 'r'));
    const driver = await suite.spout(stream, uniqueName('app'), {
      delivery,
      tupleTracking: true,
      statsIntervalMs: 200,
    });
    let i = 0;
    await driver.pump(() => driver.emits.length >= put.length, {
      onEmit: (e) => ((i += 1) % 2 === 0 ? driver.fail(e.id) : driver.ack(e.id)),
    });
    await driver.pump(() => false, { timeoutMs: 1_000 });
    expect(driver.emits.map((e) => e.id)).toEqual(put.map(idOf));
    const stats = await waitFor('stats after every outcome', () => {
      const last = driver.lastStats();
      return last !== undefined && last.acked + last.failed === put.length && last;
    });
    expect(stats).toMatchObject({ emitted: 100, acked: 50, failed: 50, reemitted: 0 });
  },
);

test.each(['at-most-once', 'none'])(
  '%s across a split: every parent record emitted before the first child record, none twice',
  async (delivery) => {
    const stream = await newStream(1);
    const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
    const before = await putRecords(suite.services.client, stream, records(100, 'parent'));
    const children = await splitShard(suite.services.client, stream, parent);
    const after = await putRecords(suite.services.client, stream, records(100, 'child'));
    const app = uniqueName('app');
    const driver = await suite.spout(stream, app, { delivery });
    const total = before.length + after.length;
    await driver.pump(() => driver.emits.length >= total, { onEmit: () => undefined, timeoutMs: 40_000 });
    const order = driver.emits.map(recordOf);
    expect(new Set(order).size).toBe(total);
    const firstChild = order.findIndex((id) => children.includes(id.split(':')[0]));
    expect(order.slice(0, firstChild).sort()).toEqual(before.map(idOf).sort());
    await waitFor('the parent finished', async () =>
      (await suite.services.inspector.getChildren(`${stateBase(stream, app)}/finished`)).includes(parent),
    );
  },
);

test('at-most-once, a planned hand-over (a second task joins): the giver emits what it checkpointed past first, so nothing is lost or repeated', async () => {
  const stream = await newStream(4);
  const app = uniqueName('app');
  const put = await putRecords(suite.services.client, stream, records(800, 'r'));
  // What it checkpointed past must be emitted within handoffTimeoutMs (lost after): 50 a second here, so 15 s.
  const conf = {
    delivery: 'at-most-once',
    maxRecordsPerRequest: BATCH,
    shardBufferSize: AHEAD,
    maxEmitPerNext: 5,
    handoffTimeoutMs: 15_000,
  };
  const first = await suite.spout(stream, app, conf);
  await first.pump(() => first.emits.length >= 100, { onEmit: () => pause(20) });
  const second = await suite.spout(stream, app, conf, { taskId: 2, componentTasks: [1, 2] });
  const want = put.map(idOf);
  const seen = new Set<string>();
  const done = () => {
    for (const e of [...first.emits, ...second.emits]) seen.add(recordOf(e));
    return want.every((id) => seen.has(id));
  };
  // The giver's Storm stays slow: when the hand-over begins, it holds records it checkpointed past, not emitted yet.
  await Promise.all([
    first.pump(done, { onEmit: () => pause(20), timeoutMs: 60_000 }),
    second.pump(done, { onEmit: () => undefined, timeoutMs: 60_000 }),
  ]);
  await Promise.all([first, second].map((d) => d.pump(() => false, { onEmit: () => undefined, timeoutMs: 1_000 })));
  expect(first.logText()).toMatch(/handing shardId-\d+ over/);
  const all = [...first.emits, ...second.emits].map(recordOf);
  expect(all.length - new Set(all).size).toBe(0);
  expect(want.filter((id) => !seen.has(id))).toEqual([]);
});
