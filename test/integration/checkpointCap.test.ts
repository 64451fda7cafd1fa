/**
 * `maxCheckpointWritesPerSecond` against a real ZooKeeper: with eight busy shards flushed every 100 ms (80
 * checkpoint writes a second uncapped) and a budget of 4 a second, the application's writes, counted by the
 * checkpoint nodes' versions in ZooKeeper, stay within the budget with one task and with two; the deferred
 * writes are counted and said; and a shard handed over still writes its last checkpoint at once: its
 * taker emits nothing again.
 */
import { stateBase, waitFor } from '../helpers/fixture';
import { sleep } from '../helpers/flowChecks';
import { flowSuite } from '../helpers/flowSuite';
import type { Flow } from '../helpers/flow';

const suite = flowSuite();
const SHARDS = 8;
const BUDGET = 4;
const WINDOW_MS = 5_000;
/** The most writes a second over a window: the budget, and what the allowances held at its start (a second of it). */
const MOST = BUDGET * (1 + 1_000 / WINDOW_MS);

/** Checkpoint writes so far, all shards: each `setData` moves its node's version on by one. */
async function writesSoFar(f: Flow): Promise<number> {
  const base = `${stateBase(f.stream, f.app)}/checkpoints`;
  const { inspector } = suite.services;
  const nodes = await inspector.getChildren(base);
  const versions = await Promise.all(nodes.map(async (n) => (await inspector.getData(`${base}/${n}`))?.version ?? 0));
  return versions.reduce((a, b) => a + b, 0);
}

/** Writes a second over WINDOW_MS, by ZooKeeper's count. */
async function writeRate(f: Flow): Promise<number> {
  const before = await writesSoFar(f);
  const from = performance.now();
  await sleep(WINDOW_MS);
  const after = await writesSoFar(f);
  return ((after - before) * 1000) / (performance.now() - from);
}

test('checkpoint writes stay within maxCheckpointWritesPerSecond with one task and with two; a hand-over still writes its last checkpoint', async () => {
  const stream = await suite.newStream(SHARDS);
  const f = suite.flow(stream, {
    checkpointIntervalMs: 100,
    maxCheckpointWritesPerSecond: BUDGET,
    statsIntervalMs: 500,
    handoffTimeoutMs: 3_000,
  });
  f.startProducer(80, 100);
  const first = await f.addSpout(1);
  await waitFor('every shard emitting', () => f.emitSpans.size === SHARDS, 30_000);
  await sleep(1_000);

  // One task: its share is the whole budget; a window may also hold what its allowance held (a second's worth).
  const alone = await writeRate(f);
  expect(alone).toBeLessThanOrEqual(MOST);
  expect(alone).toBeGreaterThan(BUDGET / 2);
  const stats = first.lastStats()!;
  expect(stats.checkpointWritesDeferred).toBeGreaterThan(0);
  expect(first.logs.some((l) => l.msg.startsWith('checkpoint writes capped: '))).toBe(true);

  // A second task: half the shards are handed over, each with its last checkpoint written at once.
  const second = await f.addSpout(2);
  const released = () => first.logs.filter((l) => / released at /.test(l.msg)).length;
  await waitFor('the hand-overs', () => released() >= SHARDS / 2 && second.logs.some((l) => /^lease on/.test(l.msg)));
  await waitFor('both tasks emitting', () => [...f.emitSpans.keys()].every((s) => f.readersOf(s).length >= 1));
  await sleep(1_000);
  // Two tasks: a share of half the budget each, the application's writes still within the budget.
  const together = await writeRate(f);
  expect(together).toBeLessThanOrEqual(MOST);
  expect(together).toBeGreaterThan(BUDGET / 2);

  await f.stopProducer();
  await f.waitAllDelivered(60_000);
  await sleep(1_000);
  // Nothing is failed here: a record emitted twice would be one a taker read again behind a stale checkpoint.
  expect(f.unexplainedEmits()).toEqual([]);
  expect(f.concurrentReaders()).toEqual([]);
  expect(f.orderViolations()).toEqual([]);
  expect(second.lastStats()?.checkpointWritesDeferred ?? 0).toBeGreaterThan(0);
}, 120_000);
