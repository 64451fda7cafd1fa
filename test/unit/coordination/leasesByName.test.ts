/**
 * The store's leases by name (a member other than the first, by count): its own leases known without a read,
 * every other one held elsewhere, a lease whose create had no answer read once; and the holders node.
 */
import { CoordinationStore, ELSEWHERE } from '../../../src/coordination/store';
import { MemoryZooKeeper } from '../fakes/memoryZooKeeper';

const BASE = '/root/app/stream';

function setup() {
  const zk = new MemoryZooKeeper();
  const reads: string[] = [];
  const getData = zk.getData.bind(zk);
  zk.getData = async (path: string) => {
    reads.push(path);
    return getData(path);
  };
  const store = new CoordinationStore(zk, BASE, 'task1-me');
  return { zk, store, reads };
}

const watch = () => undefined;

test('names its own leases without reading them, and every other one as held elsewhere', async () => {
  const { zk, store, reads } = setup();
  expect(await store.acquireLease('shard-1')).toBe(true);
  zk.put(`${BASE}/leases/shard-2`, { v: 1, owner: 'task0-other' });
  const leases = await store.leases(watch, undefined, true);
  expect(leases).toEqual(
    new Map([
      ['shard-1', 'task1-me'],
      ['shard-2', ELSEWHERE],
    ]),
  );
  expect(reads.filter((p) => p.includes('/leases/'))).toEqual([]);
  // Read by its nodes (the first member's way), the same folder names each holder.
  const owners = await store.leases(watch, undefined, false);
  expect(owners.get('shard-2')).toBe('task0-other');
});

test('a lease whose create had no answer is read once: ours when its node says so', async () => {
  const { zk, store, reads } = setup();
  const create = zk.create.bind(zk);
  zk.create = async (path, data, mode) => {
    await create(path, data, mode);
    throw new Error('connection lost after the create was applied');
  };
  await expect(store.acquireLease('shard-3')).rejects.toThrow('connection lost');
  const leases = await store.leases(watch, undefined, true);
  expect(leases.get('shard-3')).toBe('task1-me');
  expect(reads.filter((p) => p.endsWith('/leases/shard-3'))).toHaveLength(1);
  await store.leases(watch, undefined, true);
  expect(reads.filter((p) => p.endsWith('/leases/shard-3'))).toHaveLength(1);
});

test('a released lease is no longer named ours', async () => {
  const { store } = setup();
  await store.acquireLease('shard-4');
  await store.releaseLease('shard-4');
  expect((await store.leases(watch, undefined, true)).has('shard-4')).toBe(false);
});

test('the counts the first member writes are read back, with their writer', async () => {
  const { store } = setup();
  expect(await store.holderCounts(watch)).toBeUndefined();
  await store.writeHolderCounts(
    new Map([
      ['task1-me', 3],
      ['task0-other', 2],
    ]),
  );
  store.resync();
  const published = await store.holderCounts(watch);
  expect(published?.writer).toBe('task1-me');
  expect(published?.counts.get('task0-other')).toBe(2);
  await store.writeHolderCounts(new Map([['task1-me', 5]]));
  store.resync();
  expect((await store.holderCounts(watch))?.counts.get('task1-me')).toBe(5);
});
