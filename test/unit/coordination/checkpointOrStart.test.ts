/** A taken shard's checkpoint: created from the start position when there is none, looked for first when it had a lease. */
import { CoordinationStore } from '../../../src/coordination/store';
import { MemoryZooKeeper } from '../fakes/memoryZooKeeper';

/** Every request the store sends, refused creates included (each is a write the leader proposes). */
class CountingZooKeeper extends MemoryZooKeeper {
  readonly requests: string[] = [];
  override async create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral') {
    this.requests.push(`create ${path}`);
    return super.create(path, data, mode);
  }
  override async getData(path: string) {
    this.requests.push(`getData ${path}`);
    return super.getData(path);
  }
}

const PATH = '/base/checkpoints/s';
const STORED = {
  v: 1,
  position: { kind: 'AFTER', sequenceNumber: '42' },
  owner: 'task1',
  updatedAt: '2026-12-08T00:00:00Z',
};

describe('checkpointOrStart', () => {
  it('a new shard: one create, nothing read back', async () => {
    const zk = new CountingZooKeeper();
    const checkpoint = await new CoordinationStore(zk, '/base', 'me').checkpointOrStart('s', { kind: 'TRIM_HORIZON' });
    expect(checkpoint).toEqual({ position: { kind: 'TRIM_HORIZON' }, version: 0 });
    expect(zk.requests).toEqual([`create ${PATH}`]);
  });

  it('a shard with a checkpoint: a refused create then a read, or, when it had a lease, the read alone', async () => {
    for (const leasedBefore of [false, true]) {
      const zk = new CountingZooKeeper();
      zk.put(PATH, STORED);
      const store = new CoordinationStore(zk, '/base', 'me');
      const checkpoint = await store.checkpointOrStart('s', { kind: 'TRIM_HORIZON' }, leasedBefore);
      expect(checkpoint).toEqual({ position: { kind: 'AFTER', sequenceNumber: '42' }, version: 0 });
      expect(zk.requests).toEqual(leasedBefore ? [`getData ${PATH}`] : [`create ${PATH}`, `getData ${PATH}`]);
    }
  });

  it('it had a lease but no checkpoint (its holder died before writing one): created from the start position', async () => {
    const zk = new CountingZooKeeper();
    const store = new CoordinationStore(zk, '/base', 'me');
    const checkpoint = await store.checkpointOrStart('s', { kind: 'TRIM_HORIZON' }, true);
    expect(checkpoint).toEqual({ position: { kind: 'TRIM_HORIZON' }, version: 0 });
    expect(zk.requests).toEqual([`getData ${PATH}`, `create ${PATH}`]);
  });
});
