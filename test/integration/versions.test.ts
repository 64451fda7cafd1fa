/**
 * Two releases in one application (docs/zookeeper.md, "Formats across releases"): the previous release,
 * built from its commit in the test, beside this one, through a deploy in each direction. The tasks of one
 * release run while the other's join (planned hand-overs between releases), a shard splits while both read
 * (finished markers and checkpoints written by one, read by the other), and then the first release's tasks
 * are stopped as `storm kill` stops them (deactivated, then SIGTERM; this release, deactivated beside the
 * previous one's active topology, hands its leases over first; the previous release keeps them): nothing is lost, no shard has two readers at once, per key
 * first deliveries keep the order of the puts (parents first across releases).
 */
import { splitShard } from '../helpers/kinesisAdmin';
import { waitFor } from '../helpers/fixture';
import { sleep } from '../helpers/flowChecks';
import { flowSuite } from '../helpers/flowSuite';
import { type BuiltRelease, buildRelease } from '../helpers/previousRelease';
import type { StormDriver } from '../helpers/stormDriver';

const suite = flowSuite({ readMode: 'polling' });
let previous: BuiltRelease | undefined;

beforeAll(() => {
  previous = buildRelease();
}, 300_000);

afterAll(() => previous?.remove());

/** Emits of `driver` so far. */
const emitsOf = (driver: StormDriver) => driver.emits.length;

describe.each([
  ['the previous release to this one', true],
  ['this release to the previous one', false],
])('a deploy from %s', (_name, fromPrevious) => {
  test('both read one application side by side, a shard splits, the first stops: nothing lost, one reader at a time, parents first', async () => {
    const [first, second] = fromPrevious ? [previous!.script, undefined] : [undefined, previous!.script];
    const stream = await suite.newStream(4);
    const f = suite.flow(stream, { handoffTimeoutMs: 4_000 });
    await f.putBatch(200);
    f.startProducer(20, 100);
    // Two topologies, as Storm names them in the handshake's conf (the previous release ignores it).
    f.topologyConf = { 'storm.id': 'blue-1-1000' };
    const blue = [await f.addSpout(1, [1, 2], first), await f.addSpout(2, [1, 2], first)];
    await waitFor('the first release to emit from every shard', () => f.emitSpans.size >= 4, 30_000);
    f.topologyConf = { 'storm.id': 'green-2-2000' };
    const green = [await f.addSpout(3, [3, 4], second), await f.addSpout(4, [3, 4], second)];
    await waitFor('the second release to take shards over', () => green.every((s) => emitsOf(s) > 0), 60_000);
    await splitShard(suite.services.client, stream, 'shardId-000000000000');
    await sleep(4_000);
    for (const task of blue) await f.deactivate(task);
    const handedOver = (s: StormDriver) => s.logs.some((l) => l.msg.startsWith('another topology of this application'));
    if (!fromPrevious)
      await waitFor('this release to hand its leases over when deactivated', () => blue.every(handedOver), 30_000);
    else {
      await sleep(2_000);
      expect(blue.some(handedOver)).toBe(false);
    }
    for (const task of blue) await task.stop();
    const after = green.map(emitsOf);
    await waitFor('the second release to read on alone', () => green.some((s, i) => emitsOf(s) > after[i]), 30_000);
    await sleep(2_000);
    await f.stopProducer();
    await f.waitAllDelivered(90_000);
    expect(f.concurrentReaders()).toEqual([]);
    expect(f.orderViolations()).toEqual([]);
    // Both releases read, and the split's children were read.
    expect(blue.every((s) => emitsOf(s) > 0)).toBe(true);
    expect([...f.emitSpans.keys()].filter((id) => id > 'shardId-000000000003').length).toBeGreaterThan(0);
  });
});
