/**
 * Resharding and faults while records flow, with no manual step: every record delivered, per-key order of
 * first deliveries, never two processes emitting one shard at once, duplicates bounded by what was in flight.
 */
import { listAllShards, mergeShards, openShards, splitShard, updateShardCount } from '../helpers/kinesisAdmin';
import { waitFor } from '../helpers/fixture';
import type { Flow } from '../helpers/flow';
import { FLOW_FAN_OUT, flowSuite, readModes } from '../helpers/flowSuite';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { startTcpProxy } from '../helpers/tcpProxy';

describe.each(readModes())('read mode %s', (readMode) => {
  const suite = flowSuite({ readMode, fanOut: FLOW_FAN_OUT });

  async function newFlow(shards: number, overrides: Record<string, unknown> = {}): Promise<Flow> {
    return suite.flow(await suite.newStream(shards), overrides);
  }

  async function openShardIds(stream: string): Promise<string[]> {
    return openShards(await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  }

  test('split while records flow: children read after the parent, nothing lost, no rebalance', async () => {
    const f = await newFlow(2);
    await f.addSpout();
    f.startProducer();
    await sleep(1_000);
    const [parent] = await openShardIds(f.stream);
    const children = await splitShard(suite.services.client, f.stream, parent);
    await sleep(1_500);
    await expectFlowInvariants(f, { withinMs: 60_000 });
    expect([...f.emitSpans.keys()]).toEqual(expect.arrayContaining(children));
  });

  test('merge while records flow, two processes', async () => {
    const f = await newFlow(2);
    await f.addSpout();
    await f.addSpout();
    f.startProducer();
    await sleep(1_000);
    const [a, b] = await openShardIds(f.stream);
    const child = await mergeShards(suite.services.client, f.stream, a, b);
    await sleep(1_500);
    await expectFlowInvariants(f, { withinMs: 60_000 });
    expect(f.emitSpans.has(child)).toBe(true);
  });

  test('UpdateShardCount up 2→8 and down 8→2 with three processes', async () => {
    const f = await newFlow(2);
    for (let i = 0; i < 3; i += 1) await f.addSpout();
    f.startProducer(80);
    await sleep(1_000);
    await updateShardCount(suite.services.client, f.stream, 4);
    await updateShardCount(suite.services.client, f.stream, 8);
    await sleep(2_000);
    await updateShardCount(suite.services.client, f.stream, 4);
    await updateShardCount(suite.services.client, f.stream, 2);
    await sleep(1_500);
    // Hand-overs between the three processes may re-emit what was in flight at each move.
    await expectFlowInvariants(f, { maxDuplicates: 3 * 100, withinMs: 60_000 });
    const open = await openShardIds(f.stream);
    expect(open).toHaveLength(2);
    expect(open.every((s) => f.emitSpans.has(s))).toBe(true);
  });

  test('two reshards in a row, before the first children are finished', async () => {
    const f = await newFlow(1);
    await f.addSpout();
    f.startProducer();
    await sleep(800);
    const [parent] = await openShardIds(f.stream);
    const [left] = await splitShard(suite.services.client, f.stream, parent);
    await splitShard(suite.services.client, f.stream, left);
    await sleep(1_500);
    await expectFlowInvariants(f, { withinMs: 60_000 });
  });

  test('a process killed with SIGKILL mid-stream: survivors resume its shards within the session timeout', async () => {
    const f = await newFlow(4);
    for (let i = 0; i < 3; i += 1) await f.addSpout();
    f.startProducer();
    await sleep(1_500);
    const victim = f.spouts[1];
    // Under fan-out a shard handed to a process is read only once its giver's subscription is 5 s old.
    await waitFor(
      'the victim to read a shard',
      () => [...f.emitSpans.keys()].some((shard) => f.readersOf(shard).includes(victim.pid)),
      30_000,
    );
    victim.signal('SIGKILL');
    const killedAt = performance.now();
    await victim.exited;
    const orphaned = [...f.emitSpans.keys()].filter((shard) => f.readersOf(shard).includes(victim.pid));
    expect(orphaned.length).toBeGreaterThan(0);
    await sleep(500);
    const [parent] = await openShardIds(f.stream);
    await splitShard(suite.services.client, f.stream, parent);
    await sleep(1_000);
    await expectFlowInvariants(f, { maxDuplicates: 2 * 100 + 200, withinMs: 60_000 });
    // Session timeout (4 s) plus a couple of seconds, measured to the first emit of each orphaned shard.
    for (const shard of orphaned) {
      const resumed = f.firstEmitByOthers(shard, victim.pid, killedAt);
      if (resumed !== undefined) expect(resumed - killedAt).toBeLessThan(4_000 + 3_000);
    }
  });

  test('deactivate and activate while records flow and a shard splits', async () => {
    const f = await newFlow(2);
    const [a, b] = [await f.addSpout(), await f.addSpout()];
    f.startProducer();
    await sleep(800);
    await Promise.all([a.deactivate(), b.deactivate()]);
    const [parent] = await openShardIds(f.stream);
    await splitShard(suite.services.client, f.stream, parent);
    await sleep(800);
    await Promise.all([a.activate(), b.activate()]);
    await sleep(1_000);
    await expectFlowInvariants(f, { maxDuplicates: 100, withinMs: 60_000 });
  });

  test('a process paused past its session timeout emits nothing from lost shards when it resumes', async () => {
    const f = await newFlow(4, {
      zookeeper: { connect: suite.services.zk.connectString, sessionTimeoutMs: 2_000, root: '/it' },
    });
    const [paused] = [await f.addSpout(), await f.addSpout()];
    f.startProducer();
    await sleep(1_500);
    paused.signal('SIGSTOP');
    await sleep(5_000);
    paused.signal('SIGCONT');
    await waitFor('the paused process to rejoin', () => paused.logs.some((l) => l.msg.includes('expired')), 20_000);
    await sleep(1_500);
    await expectFlowInvariants(f, { maxDuplicates: 4 * 100 + 200, withinMs: 60_000 });
  });

  test('a process cut off from ZooKeeper stops emitting before its session can expire; the survivor takes over', async () => {
    const proxy = await startTcpProxy(suite.services.zk.port);
    try {
      const zookeeper = { connect: `127.0.0.1:${proxy.port}`, sessionTimeoutMs: 2_000, root: '/it' };
      const f = await newFlow(4, { zookeeper });
      // The cut-off process reaches ZooKeeper through the proxy; the survivor directly.
      const cut = await f.addSpout();
      f.overrides.zookeeper = { ...zookeeper, connect: suite.services.zk.connectString };
      await f.addSpout();
      f.startProducer();
      await sleep(1_500);
      proxy.pause();
      // Its connection stays up but silent: only its own lease deadline stops it while the survivor takes over.
      await waitFor(
        'the survivor to take every shard',
        () => f.spouts[1].logs.filter((l) => /^lease on \S+ taken/.test(l.msg)).length >= 4,
        20_000,
      );
      await sleep(1_500);
      proxy.resume();
      await waitFor(
        'the cut-off process to learn its session expired',
        () => cut.logs.some((l) => l.msg.includes('expired')),
        20_000,
      );
      await sleep(1_000);
      await expectFlowInvariants(f, { maxDuplicates: 4 * 100 + 200, withinMs: 60_000 });
    } finally {
      await proxy.close();
    }
  });

  test('a ZooKeeper server restart: nothing lost, no shard read twice at once', async () => {
    const f = await newFlow(3);
    await f.addSpout();
    await f.addSpout();
    f.startProducer();
    await sleep(1_500);
    await suite.services.zk.restart();
    await sleep(2_000);
    await expectFlowInvariants(f, { maxDuplicates: 3 * 100 + 200, withinMs: 60_000 });
  });
});
