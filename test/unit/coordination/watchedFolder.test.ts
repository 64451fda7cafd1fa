/** The watched copy of a folder: what its watches make it read again, a reconnect's resync, a watch lost with a failed read. */
import { FOLDER_READS_AT_ONCE, WatchedFolder } from '../../../src/coordination/watchedFolder';
import type { NodeData, ZooKeeper } from '../../../src/coordination/zooKeeper';
import { CoordinationStore, UNREADABLE_LEASE } from '../../../src/coordination/store';
import { MemoryZooKeeper } from '../fakes/memoryZooKeeper';

const FOLDER = '/app/stream/leases';

/** A folder on a server: one-shot watches as ZooKeeper's, every read counted, reads made to fail on demand. */
class WatchedServer implements Pick<ZooKeeper, 'getChildren' | 'getData'> {
  readonly nodes = new Map<string, string>();
  reads = 0;
  /** The next reads fail (the connection lost: a watch asked for may or may not be armed; here it is not). */
  failNext = 0;
  /** The next node reads (getData only) fail. */
  failData = 0;
  /** Watches armed on the server: it lost them (they were armed on a connection that is gone). */
  private childWatch: (() => void) | undefined;
  private readonly dataWatches = new Map<string, () => void>();

  put(id: string, owner: string, fire = true): void {
    const created = !this.nodes.has(id);
    this.nodes.set(id, owner);
    if (!fire) return;
    this.fireData(id);
    if (created) this.fireChildren();
  }

  delete(id: string, fire = true): void {
    this.nodes.delete(id);
    if (!fire) return;
    this.fireData(id);
    this.fireChildren();
  }

  /** The server forgets every watch (as a lost connection whose watches were not set again would). */
  loseWatches(): void {
    this.childWatch = undefined;
    this.dataWatches.clear();
  }

  private fireChildren(): void {
    const watch = this.childWatch;
    this.childWatch = undefined;
    watch?.();
  }

  private fireData(id: string): void {
    const watch = this.dataWatches.get(id);
    this.dataWatches.delete(id);
    watch?.();
  }

  private read(): void {
    this.reads += 1;
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('connection loss');
    }
  }

  async getChildren(path: string, watch?: () => void): Promise<string[]> {
    expect(path).toBe(FOLDER);
    this.read();
    if (watch) this.childWatch = watch;
    return [...this.nodes.keys()];
  }

  async getData(path: string, watch?: () => void): Promise<NodeData | undefined> {
    this.read();
    if (this.failData > 0) {
      this.failData -= 1;
      throw new Error('connection loss');
    }
    const id = path.slice(FOLDER.length + 1);
    const owner = this.nodes.get(id);
    if (owner === undefined) return undefined;
    if (watch) this.dataWatches.set(id, watch);
    return { data: Buffer.from(owner), version: 0, ephemeralOwner: '0' };
  }
}

async function owners(folder: WatchedFolder, watch?: () => void): Promise<Record<string, string>> {
  const view = await folder.view(watch);
  return Object.fromEntries([...view].map(([id, node]) => [id, node?.data.toString() ?? '']));
}

function setup(withData = true) {
  const server = new WatchedServer();
  const folder = new WatchedFolder(server, FOLDER, withData);
  return { server, folder };
}

describe('WatchedFolder', () => {
  it('reads every node once, then nothing until a watch fires', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    server.put('s-2', 'b');
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'b' });
    expect(server.reads).toBe(3);
    for (let i = 0; i < 5; i += 1) await folder.view();
    expect(server.reads).toBe(3);
  });

  it('reads the children and the new node when one is created, and drops a deleted one', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    await folder.view();
    const before = server.reads;
    server.put('s-2', 'b');
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'b' });
    expect(server.reads - before).toBe(2);
    server.delete('s-1');
    expect(await owners(folder)).toEqual({ 's-2': 'b' });
  });

  it('sees a node deleted and created again by another owner between two reads of the children', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    await folder.view();
    server.delete('s-1');
    server.put('s-1', 'b');
    expect(await owners(folder)).toEqual({ 's-1': 'b' });
  });

  it("sees a node's data changed in place", async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    await folder.view();
    server.put('s-1', 'a, busier');
    expect(await owners(folder)).toEqual({ 's-1': 'a, busier' });
  });

  it("calls a view's watch once, at the next change", async () => {
    const { server, folder } = setup();
    const calls: string[] = [];
    await folder.view(() => calls.push('first'));
    server.put('s-1', 'a');
    server.put('s-2', 'b');
    expect(calls).toEqual(['first']);
    await folder.view(() => calls.push('second'));
    server.delete('s-1');
    expect(calls).toEqual(['first', 'second']);
  });

  it('keeps names only without data', async () => {
    const { server, folder } = setup(false);
    server.put('s-1', 'a');
    server.put('s-2', 'b');
    expect([...(await folder.view()).keys()]).toEqual(['s-1', 's-2']);
    expect(server.reads).toBe(1);
  });

  it('reads everything again after a resync: what changed while watches were lost is found', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    server.put('s-2', 'b');
    await folder.view();
    // The connection is lost; meanwhile the server lost the watches and the nodes changed unannounced.
    server.loseWatches();
    server.delete('s-1', false);
    server.put('s-2', 'c', false);
    server.put('s-3', 'd', false);
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'b' });
    folder.resync();
    expect(await owners(folder)).toEqual({ 's-2': 'c', 's-3': 'd' });
    // And the watches are armed again: the next change is seen.
    server.delete('s-3');
    expect(await owners(folder)).toEqual({ 's-2': 'c' });
  });

  it('reads the children again after a read that failed (its watch may not be armed)', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    server.failNext = 1;
    await expect(folder.view()).rejects.toThrow('connection loss');
    expect(folder.inStep).toBe(false);
    expect(await owners(folder)).toEqual({ 's-1': 'a' });
    server.put('s-2', 'b');
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'b' });
  });

  it('reads a node again after its read failed, and arms its watch then', async () => {
    const { server, folder } = setup();
    server.put('s-1', 'a');
    await folder.view();
    server.put('s-2', 'b');
    // The children are read, the new node's read fails: the view fails rather than show s-2 without its owner.
    server.failData = 1;
    await expect(folder.view()).rejects.toThrow('connection loss');
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'b' });
    // Its watch is armed now: a change of it is seen.
    server.put('s-2', 'c');
    expect(await owners(folder)).toEqual({ 's-1': 'a', 's-2': 'c' });
  });

  it('keeps FOLDER_READS_AT_ONCE node reads in flight, each answered one followed by the next', async () => {
    const { server, folder } = setup();
    const count = FOLDER_READS_AT_ONCE * 2 + 7;
    for (let i = 0; i < count; i += 1) server.put(`s-${i}`, 'a', false);
    let inFlight = 0;
    let most = 0;
    let release = () => {};
    const slow = new Promise<void>((done) => {
      release = done;
    });
    const read = server.getData.bind(server);
    server.getData = async (path, watch) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // One slow answer does not hold back the reads after it.
      if (path.endsWith('/s-0')) await slow;
      else await new Promise((r) => setImmediate(r));
      inFlight -= 1;
      return read(path, watch);
    };
    const view = folder.view();
    for (let turn = 0; turn < 100 && server.reads < count; turn += 1) await new Promise((r) => setImmediate(r));
    // The children's read and every node's but the slow one's.
    expect(server.reads).toBe(count);
    expect(inFlight).toBe(1);
    release();
    expect((await view).size).toBe(count);
    expect(most).toBe(FOLDER_READS_AT_ONCE);
  });
});

describe('the store over its watched folders', () => {
  it('gives the same leases from the watched copy as from the server, and the lease nodes themselves', async () => {
    const zk = new MemoryZooKeeper();
    const base = '/app/stream';
    zk.put(`${base}/leases/s-1`, { v: 1, owner: 'task0' });
    zk.put(`${base}/leases/s-2`, { v: 1 });
    const store = new CoordinationStore(zk, base, 'task0');
    const corrupt: string[] = [];
    const watched = await store.leases(
      () => undefined,
      (err) => corrupt.push(err.message),
    );
    expect(watched).toEqual(await store.leases());
    expect(watched.get('s-1')).toBe('task0');
    expect(watched.get('s-2')).toBe(UNREADABLE_LEASE);
    expect(corrupt).toHaveLength(1);
    const nodes = await store.leaseNodes(() => undefined);
    expect(JSON.parse(nodes.get('s-1')!.data.toString())).toEqual({ v: 1, owner: 'task0' });
  });
});
