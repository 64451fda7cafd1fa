/**
 * A SHARD_END checkpoint the spout did not write in this run (hand-edited state, a partial restore, an
 * interrupted reset, a forged node): believed only when a fresh listing shows the shard closed (or gone),
 * with its missing `finished/` marker made again; on a shard the listing shows open it is corrupt state,
 * reported by path, and the shard is not read until it is fixed. Neither case takes and gives back a lease
 * in a loop.
 */
import { listAllShards, openShards, splitShard } from '../helpers/kinesisAdmin';
import { stateBase, uniqueName, waitFor, zooKeeperZxid } from '../helpers/fixture';
import type { Flow } from '../helpers/flow';
import { FLOW_FAN_OUT, flowSuite, readModes } from '../helpers/flowSuite';
import { sleep } from '../helpers/flowChecks';

describe.each(readModes())('read mode %s', (readMode) => {
  const suite = flowSuite({ readMode, fanOut: FLOW_FAN_OUT });

  const SHARD_END = Buffer.from(
    JSON.stringify({ v: 1, position: { kind: 'SHARD_END' }, owner: 'by-hand', updatedAt: new Date().toISOString() }),
  );

  async function openShardIds(stream: string): Promise<string[]> {
    return openShards(await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  }

  function missingOn(f: Flow, shards: string[]): string[] {
    return f.missing().filter((id) => shards.includes(id.split(':')[0]));
  }

  /** "released" lines: one per lease given back. */
  function releases(f: Flow, shardId: string): number {
    return f.spouts.flatMap((s) => s.logs).filter((l) => l.msg.startsWith(`${shardId} released`)).length;
  }

  async function writesWhileIdle(ms: number): Promise<number> {
    const before = await zooKeeperZxid(suite.services.zk);
    await sleep(ms);
    return (await zooKeeperZxid(suite.services.zk)) - before;
  }

  test('SHARD_END on a closed shard without its finished marker: the marker is made again, reported once, the children are read', async () => {
    const stream = await suite.newStream(1);
    const app = uniqueName('app');
    const base = stateBase(stream, app);
    const [parent] = await openShardIds(stream);
    const children = await splitShard(suite.services.client, stream, parent);
    await suite.services.inspector.mkdirp(`${base}/checkpoints`);
    await suite.services.inspector.create(`${base}/checkpoints/${parent}`, SHARD_END, 'persistent');

    const flow = suite.flow(stream, {}, app);
    const spout = await flow.addSpout();
    flow.startProducer(40, 100);
    await sleep(2_000);
    await flow.stopProducer();
    await waitFor('every record of the children', () => missingOn(flow, children).length === 0, 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: ${missingOn(flow, children).length} missing\n${flow.logs()}`);
      },
    );
    expect(await suite.services.inspector.getData(`${base}/finished/${parent}`)).toBeDefined();
    const told = spout.errors.filter((e) => e.includes(`${base}/finished/${parent}`));
    expect(told).toHaveLength(1);
    expect(releases(flow, parent)).toBeLessThanOrEqual(1);
    expect(await writesWhileIdle(2_000)).toBeLessThan(20);
  });

  test('SHARD_END on a shard the listing shows open: reported by path, not read, no take/release loop; read once fixed', async () => {
    const stream = await suite.newStream(2);
    const app = uniqueName('app');
    const base = stateBase(stream, app);
    const [forged, other] = await openShardIds(stream);
    const path = `${base}/checkpoints/${forged}`;
    await suite.services.inspector.mkdirp(`${base}/checkpoints`);
    await suite.services.inspector.create(path, SHARD_END, 'persistent');

    const flow = suite.flow(stream, {}, app);
    const spout = await flow.addSpout();
    flow.startProducer(40, 100);
    await waitFor('every record of the other shard so far', () => flow.emitted > 100, 15_000);
    await sleep(3_000);
    await flow.stopProducer();
    await waitFor('every record of the other shard', () => missingOn(flow, [other]).length === 0, 15_000);
    expect(spout.errors.join('\n')).toContain(path);
    expect(spout.errors.length).toBeLessThan(10);
    expect(missingOn(flow, [forged]).length).toBeGreaterThan(0);
    expect(flow.emitSpans.has(forged)).toBe(false);
    expect(releases(flow, forged)).toBeLessThan(10);
    expect(await writesWhileIdle(2_000)).toBeLessThan(20);
    // Nothing was finished: the node is left as the operator wrote it.
    expect(await suite.services.inspector.getData(`${base}/finished/${forged}`)).toBeUndefined();
    expect((await suite.services.inspector.getData(path))?.version).toBe(0);

    // The operator removes the bad node: the shard is read from its start position, every record delivered.
    await suite.services.inspector.remove(path, -1);
    await waitFor('every record of the fixed shard', () => missingOn(flow, [forged]).length === 0, 90_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: ${missingOn(flow, [forged]).length} missing\n${flow.logs()}`);
      },
    );
    expect(flow.orderViolations()).toEqual([]);
  });
});
