/** The Clojure DSL example (shell-spout-spec) in LocalCluster: it builds, starts, and delivers a steady flow. */
import { putRecords } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { duplicates, expectFieldsAsPut, records, waitAllAcked, waitReceived, withInput } from './helpers/checks';
import { e2eSuite } from './helpers/suite';
import { exampleConfig, LocalTopology, scratch, sleep, withLogs } from './helpers/topology';

const suite = e2eSuite('topology-examples/clojure', 'kinesis-topology-clojure-0.1.0-standalone.jar');

test('steady flow through the Clojure topology: every record received once with its fields (JSON data, across workers), all acked', async () => {
  const stream = await suite.newStream(2);
  const app = uniqueName('clojure');
  const dir = scratch('clojure');
  const topology = new LocalTopology(
    suite.build,
    ['clojure.main', '-m', 'kinesis-topology.core'],
    exampleConfig(suite.services, stream, app, dir, { spoutParallelism: 2, dataFormat: 'json' }),
    dir,
  );
  await withLogs(
    () => [topology],
    async () => {
      const input = records(200, 'clj');
      const all = withInput(input, await putRecords(suite.services.client, stream, input));
      const received = await waitReceived(topology, all, 90_000);
      await waitAllAcked(suite.services, topology, stream, app, all);
      expect(duplicates(topology.received())).toBe(0);
      expectFieldsAsPut(received, all, 'json');
      // Parsed JSON crossed workers through Kryo: the example registers json-smart's types in the topology conf.
      expect(
        received.some((r) => r.fromOtherWorker && r.dataClass === 'org.apache.storm.shade.net.minidev.json.JSONObject'),
      ).toBe(true);
      await sleep(500);
      expect(await topology.stop()).toBe(true);
    },
  );
}, 180_000);
