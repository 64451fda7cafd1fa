/**
 * Rules of the ZooKeeper state that only the simulation used to check, on real servers (ZooKeeper and
 * kinesis-local): the checkpoint stops exactly below the oldest unacked record; SHARD_END stays when the
 * reply to the finishing write is lost and a checkpoint write then conflicts with it; a lease whose create
 * was applied with its reply lost is read by its own session; a merged child waits for both its parents.
 * A reply is lost by a proxy that lets the request reach the server and drops the answer.
 */
import { createStream, mergeShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { startReplyLossProxy, type ReplyLossProxy } from '../helpers/replyLossProxy';
import type { Emit, StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();
const proxies: ReplyLossProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});

const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

function put(stream: string, n: number, tag: string): Promise<PutResult[]> {
  const records = Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 8}`, data: `${tag}-${i}` }));
  return putRecords(suite.services.client, stream, records);
}

/** The spout's ZooKeeper traffic through a proxy that can lose one reply. */
async function replyLossProxy(): Promise<ReplyLossProxy> {
  const port = Number(suite.services.zk.connectString.split(':').pop());
  const proxy = await startReplyLossProxy(port);
  proxies.push(proxy);
  return proxy;
}

function throughProxy(proxy: ReplyLossProxy): Record<string, unknown> {
  return { zookeeper: { connect: `127.0.0.1:${proxy.port}`, sessionTimeoutMs: 6_000, root: '/it' } };
}

async function checkpointOf(stream: string, app: string, shardId: string) {
  const stored = await readJson(suite.services.inspector, `${stateBase(stream, app)}/checkpoints/${shardId}`);
  return stored?.position as { kind: string; sequenceNumber?: string } | undefined;
}

/**
 * Pumps `driver` in the background, acking every emit except those `hold` picks (their outcome stays owed
 * until the test acks them), until `stop` is set.
 */
function pumpHolding(
  driver: StormDriver,
  hold: (emit: Emit) => boolean,
): { held: Emit[]; acked: Set<string>; stop: () => Promise<void> } {
  const held: Emit[] = [];
  const acked = new Set<string>();
  let stopped = false;
  const pumping = driver.pump(() => stopped, {
    timeoutMs: 120_000,
    onEmit: async (emit) => {
      if (hold(emit)) held.push(emit);
      else {
        await driver.ack(emit.id);
        acked.add(emit.id);
      }
    },
  });
  return {
    held,
    acked,
    async stop() {
      stopped = true;
      await pumping;
    },
  };
}

const emittedIds = (driver: StormDriver) => new Set(driver.emits.map((e) => e.id));

test('the checkpoint stops right below the oldest unacked record, and a restart resumes there', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const records = await put(stream, 20, 'w');
  const unacked = records[9];
  const driver = await suite.spout(stream, app);
  const pump = pumpHolding(driver, (emit) => emit.id === idOf(unacked));
  await waitFor('every record emitted', () => records.every((r) => emittedIds(driver).has(idOf(r))), 20_000);
  // Several checkpoint intervals (200 ms) with every record but one acked.
  await sleep(1_500);
  await pump.stop();
  expect(pump.held.map((e) => e.id)).toEqual([idOf(unacked)]);
  expect(await checkpointOf(stream, app, unacked.shardId)).toEqual({
    kind: 'AFTER',
    sequenceNumber: records[8].sequenceNumber,
  });

  driver.signal('SIGKILL');
  await driver.exited;
  const restarted = await suite.spout(stream, app);
  await restarted.pump(() => emittedIds(restarted).has(idOf(records[19])), { timeoutMs: 20_000 });
  expect(restarted.emits.map((e) => e.id)).toEqual(records.slice(9).map(idOf));
});

test('the reply to the write that finishes a shard is lost, then a checkpoint write conflicts: SHARD_END stays', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const parentRecords = await put(stream, 30, 'parent');
  const parent = parentRecords[0].shardId;
  await splitShard(suite.services.client, stream, parent);
  const childRecords = await put(stream, 20, 'child');
  const last = parentRecords[parentRecords.length - 1];
  const proxy = await replyLossProxy();
  // No periodic checkpoint writes: deactivate writes them, when this test needs one.
  const driver = await suite.spout(stream, app, { ...throughProxy(proxy), checkpointIntervalMs: 600_000 });
  const pump = pumpHolding(driver, (emit) => emit.id === idOf(last));
  await waitFor('every parent record but the last acked', () => pump.acked.size === parentRecords.length - 1, 20_000);
  // Deactivated, the process runs no assignment round (which would see its lease gone and forget the shard).
  await driver.deactivate();
  const secondLast = parentRecords[parentRecords.length - 2].sequenceNumber;
  await waitFor(
    'the checkpoint one below the last record',
    async () => (await checkpointOf(stream, app, parent))?.sequenceNumber === secondLast,
  );
  // The last ack lets the shard finish: SHARD_END, the finished marker and the lease delete in one
  // transaction, applied, its reply lost. The next checkpoint write (at deactivate) finds the node changed.
  const lost = proxy.loseReplyTo(`/finished/${parent}`);
  const connects = () => driver.logs.filter((l) => l.msg.startsWith('connected to ZooKeeper')).length;
  const connectedBefore = connects();
  await driver.ack(idOf(last));
  await lost;
  await waitFor('the session back', () => connects() > connectedBefore, 5_000);
  await driver.deactivate();
  await sleep(1_000);
  expect(await checkpointOf(stream, app, parent)).toEqual({ kind: 'SHARD_END' });
  await driver.activate();
  await waitFor('every child record emitted', () => childRecords.every((r) => emittedIds(driver).has(idOf(r))), 30_000);
  await pump.stop();
  expect(await checkpointOf(stream, app, parent)).toEqual({ kind: 'SHARD_END' });
  expect(driver.errors).toEqual([]);
});

test("a lease created with its reply lost is the session's own: the process reads the shard", async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const records = await put(stream, 40, 'lease');
  const shardId = records[0].shardId;
  const proxy = await replyLossProxy();
  // The first request naming the shard's lease is its create (nobody held it before).
  const lost = proxy.loseReplyTo(`/leases/${shardId}`);
  const driver = await suite.spout(stream, app, throughProxy(proxy));
  const pumped = driver.pump(() => records.every((r) => emittedIds(driver).has(idOf(r))), { timeoutMs: 30_000 });
  await lost;
  expect(await pumped).toBe(true);
  const lease = await suite.services.inspector.getData(`${stateBase(stream, app)}/leases/${shardId}`);
  expect(lease).toBeDefined();
  expect(driver.logs.some((l) => /lease on \S+ is ours but was not held here/.test(l.msg))).toBe(true);
});

test('a merged child is not read while one of its parents still has an unacked record', async () => {
  const stream = await newStream(2);
  const app = uniqueName('app');
  const before = await put(stream, 40, 'parents');
  const [a, b] = [...new Set(before.map((r) => r.shardId))].sort();
  const child = await mergeShards(suite.services.client, stream, a, b);
  const after = await put(stream, 20, 'child');
  expect(after.every((r) => r.shardId === child)).toBe(true);
  const heldBack = before.find((r) => r.shardId === b)!;
  const driver = await suite.spout(stream, app);
  const pump = pumpHolding(driver, (emit) => emit.id === idOf(heldBack));
  await waitFor(
    'the other parent finished',
    async () => (await checkpointOf(stream, app, a))?.kind === 'SHARD_END',
    20_000,
  );
  await waitFor('every parent record emitted', () => before.every((r) => emittedIds(driver).has(idOf(r))), 20_000);
  // Several assignment rounds (300 ms) with one parent finished and the other one record short of it.
  await sleep(2_500);
  const early = driver.emits.filter((e) => e.id.startsWith(`${child}:`)).map((e) => e.id);
  expect(early).toEqual([]);
  await driver.ack(idOf(heldBack));
  await waitFor('every child record emitted', () => after.every((r) => emittedIds(driver).has(idOf(r))), 20_000);
  await pump.stop();
  expect((await checkpointOf(stream, app, b))?.kind).toBe('SHARD_END');
});
