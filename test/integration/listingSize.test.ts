/**
 * The folders the spout lists with getChildren, at the largest stream Kinesis allows (20,000 open shards) with
 * the closed shards kept for retention, against a real ZooKeeper with its default jute.maxbuffer (1 MiB): what
 * each reply weighs as ZooKeeper encodes it, and that the spout's client reads every name of it.
 */
import { startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeperServer';
import { ZkSession } from '../../src/coordination/zk';
import { listingReplyBytes } from '../../src/coordination/watchedFolder';

let zk: ZooKeeperServer;
let session: ZkSession;
const BASE = '/kinesis-spout/big-app/big-stream';
const OPEN = 20_000;
/** Closed shards still recorded: a doubling to 20,000 and a halving back kept for a 7-day retention. */
const CLOSED = 30_000;
const id = (n: number) => `shardId-${String(n).padStart(12, '0')}`;

async function fill(folder: string, from: number, count: number): Promise<void> {
  await session.mkdirp(`${BASE}/${folder}`);
  const batches: Promise<boolean>[] = [];
  for (let i = from; i < from + count; i += 2_500) {
    const ops = [];
    for (let n = i; n < Math.min(i + 2_500, from + count); n += 1)
      ops.push({ op: 'create' as const, path: `${BASE}/${folder}/${id(n)}`, data: Buffer.from('{"v":1}') });
    batches.push(session.transaction(ops));
    if (batches.length === 4) expect(await Promise.all(batches.splice(0))).not.toContain(false);
  }
  expect(await Promise.all(batches)).not.toContain(false);
}

beforeAll(async () => {
  zk = await startZooKeeper();
  session = await ZkSession.connect({ connect: zk.connectString, sessionTimeoutMs: 10_000 });
  // finished/ holds the closed shards' names (30,000: 720 KB), a part of what checkpoints/ holds: not made.
  await fill('leases', CLOSED, OPEN);
  await fill('checkpoints', 0, CLOSED + OPEN);
}, 300_000);

afterAll(async () => {
  session?.close();
  await zk?.stop();
});

test('leases/ at 20,000 open shards and checkpoints/ with 30,000 closed ones more are read whole', async () => {
  const sizes: Record<string, number> = {};
  for (const [folder, count] of [
    ['leases', OPEN],
    ['checkpoints', OPEN + CLOSED],
  ] as const) {
    const names = await session.getChildren(`${BASE}/${folder}`);
    expect(names.length).toBe(count);
    sizes[folder] = listingReplyBytes(names);
  }
  if (process.env.LISTING_REPORT) console.log(JSON.stringify(sizes));
  // 24 bytes a name: leases/ at 20,000 open shards stays under half of jute.maxbuffer.
  expect(sizes.leases).toBeLessThan(512 * 1024);
  // finished/ (watched by every task) and checkpoints/ (listed by the first member after a listing) grow
  // with the closed shards kept; past 1 MiB ZooKeeper's own Java client would refuse the reply, this
  // spout's client reads it whole (the names were counted above).
}, 120_000);
