/**
 * The end of a shard under enhanced fan-out, in both forms a server may send it: the last event with
 * ChildShards and no ContinuationSequenceNumber, and the API reference's letter, where the continuation (a
 * required member) comes beside the ChildShards and the shard's last records. Three processes, four shards,
 * two splits and two merges while records flow: every record read in both forms (with the continuation
 * form, a reader that waited for the continuation to be absent never finished a parent, and the children
 * were never read).
 */
import { listAllShards, mergeShards, openShards, splitShard } from '../helpers/kinesisAdmin';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { FLOW_FAN_OUT, flowSuite } from '../helpers/flowSuite';

describe.each(['noContinuation', 'continuation'] as const)('shard ends sent in the %s form', (shardEnd) => {
  const suite = flowSuite({ readMode: 'fanOut', fanOut: { ...FLOW_FAN_OUT, shardEnd } });

  /** The open shards in hash-key order. */
  async function openInOrder(stream: string): Promise<string[]> {
    return openShards(await listAllShards(suite.services.client, stream))
      .sort((a, b) => (BigInt(a.HashKeyRange!.StartingHashKey!) < BigInt(b.HashKeyRange!.StartingHashKey!) ? -1 : 1))
      .map((s) => s.ShardId!);
  }

  test('three processes, four shards, two splits and two merges while records flow: every record read', async () => {
    const f = suite.flow(await suite.newStream(4));
    for (let i = 0; i < 3; i += 1) await f.addSpout();
    f.startProducer(40, 100);
    await sleep(1_500);
    const [s0, , s2] = await openInOrder(f.stream);
    await splitShard(suite.services.client, f.stream, s0);
    await splitShard(suite.services.client, f.stream, s2);
    await sleep(1_500);
    // Now: 0-low, 0-high, 1, 2-low, 2-high, 3; each high half merges with the shard above it.
    const open = await openInOrder(f.stream);
    expect(open).toHaveLength(6);
    await mergeShards(suite.services.client, f.stream, open[1], open[2]);
    await mergeShards(suite.services.client, f.stream, open[4], open[5]);
    await sleep(1_500);
    await expectFlowInvariants(f, { maxDuplicates: 3 * 100 + 200, withinMs: 45_000 });
    // Every closed shard was ended by the server in this form, and the reader took each end.
    const closed = (await listAllShards(suite.services.client, f.stream)).filter(
      (s) => s.SequenceNumberRange?.EndingSequenceNumber !== undefined,
    );
    expect(closed).toHaveLength(6);
    const endedByServer = new Set(
      suite.front.subscriptions
        .filter((s) => s.consumerArn.includes(`:stream/${f.stream}/consumer/`) && s.ended === 'shardEnd')
        .map((s) => s.shardId),
    );
    expect([...endedByServer].sort()).toEqual(closed.map((s) => s.ShardId!).sort());
    const children = (await openInOrder(f.stream)).filter((id) => !['s0', 's2'].includes(id));
    expect(children.every((id) => f.emitSpans.has(id))).toBe(true);
  });
});
