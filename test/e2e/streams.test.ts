/**
 * Several Kinesis streams in one spout component, as a Storm user builds it (docs/topology.md, "Several
 * streams"): the example topology's spout reads two streams, the second on a Storm output stream of its
 * own, and the recorder subscribes to every stream the spout declares (`outputStreams()`). Each record
 * must arrive once, on its stream's Storm stream, with its `streamName`, while the second stream's shard is
 * split; each stream's checkpoints end up under its own folder, covering its records.
 */
import { listAllShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { checkpointsBehind, idOf, records, waitAllAcked, withInput, type Put } from './helpers/checks';
import { e2eSuite } from './helpers/suite';
import { exampleConfig, LocalTopology, scratch, sleep, withLogs } from './helpers/topology';

const MAIN = ['io.github.kinesisshellspout.example.KinesisTopology'];
const suite = e2eSuite('topology-examples/java', 'kinesis-topology-example-0.1.0.jar');

test('two streams in one spout component: each record once, on its own Storm stream with its streamName, through a split of one of them', async () => {
  const orders = await suite.newStream(2);
  const clicks = await suite.newStream(1);
  const app = uniqueName('streams');
  const dir = scratch('streams');
  const config = exampleConfig(suite.services, orders, app, dir, {
    // No top-level stream: the spout's streams are its `streams` entries.
    stream: undefined,
    spoutParallelism: 2,
    workers: 1,
    spout: {
      streams: [{ streamName: orders }, { streamName: clicks, outputStream: 'clicks' }],
      outputFields: ['streamName', 'partitionKey', 'data', 'shardId', 'sequenceNumber'],
    },
  });
  const topology = new LocalTopology(suite.build, MAIN, config, dir);
  await withLogs(
    () => [topology],
    async () => {
      const put = async (stream: string, n: number, prefix: string): Promise<Put[]> => {
        const input = records(n, prefix);
        return withInput(input, await putRecords(suite.services.client, stream, input));
      };
      const all = new Map<string, Put[]>([
        [orders, []],
        [clicks, []],
      ]);
      const expected = () => [...all].flatMap(([stream, puts]) => puts.map((p) => `${stream}/${idOf(p)}`));
      const [shard] = (await listAllShards(suite.services.client, clicks)).map((s) => s.ShardId!);
      for (let batch = 0; batch < 4; batch++) {
        all.get(orders)!.push(...(await put(orders, 60, `o${batch}`)));
        all.get(clicks)!.push(...(await put(clicks, 60, `c${batch}`)));
        if (batch === 0) await topology.waitFor('the first records', () => topology.received().length > 0, 90_000);
        if (batch === 1) await splitShard(suite.services.client, clicks, shard);
        await sleep(300);
      }
      expect(new Set(all.get(clicks)!.map((p) => p.shardId)).size).toBe(3);
      await topology.waitFor(
        'every record of both streams',
        () => {
          const seen = new Set(topology.received().map((r) => r.id));
          return expected().every((id) => seen.has(id));
        },
        90_000,
      );
      const received = topology.received();
      // Once each (no task killed, no hand-over: a repeat would be a second reader or a lost ack).
      expect(received.length).toBe(expected().length);
      // Each stream's tuples on its own Storm stream, named by their streamName.
      for (const r of received) {
        const stream = r.values.streamName;
        expect({ id: r.id, stream: r.stream }).toEqual({
          id: expect.stringMatching(new RegExp(`^${stream}/`)),
          stream: stream === clicks ? 'clicks' : 'default',
        });
      }
      for (const [stream, puts] of all) await waitAllAcked(suite.services, topology, stream, app, puts);
      expect(await topology.stop()).toBe(true);
      for (const [stream, puts] of all) expect(await checkpointsBehind(suite.services, stream, app, puts)).toEqual([]);
    },
  );
}, 240_000);
