/**
 * The compact wire format in Storm's LocalCluster: the example topology with `useCompactSerializer()`
 * (3 spout tasks over 2 workers, each process speaking the compact format with its ShellSpout), against real
 * ZooKeeper and kinesis-local. Records, logs (with their levels), metrics, deactivate and activate
 * all go through it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPACT_WIRE } from '../../src/multilang/compact';
import { putRecords } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { duplicates, expectFieldsAsPut, records, waitAllAcked, waitReceived, withInput } from './helpers/checks';
import { e2eSuite } from './helpers/suite';
import { exampleConfig, LocalTopology, metricsRecorderConf, scratch, sleep, withLogs } from './helpers/topology';

const MAIN = ['io.github.kinesisshellspout.example.KinesisTopology'];
const suite = e2eSuite('topology-examples/java', 'kinesis-topology-example-0.1.0.jar');

/** Sum of a counter over the consumer's data points of the process metric. */
function processTotal(file: string, key: string): number {
  if (!existsSync(file)) return 0;
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        const p = JSON.parse(line) as { component: string; name: string; value: Record<string, number> };
        return p.component === 'kinesis' && p.name === 'kinesis-spout' ? [p.value[key] ?? 0] : [];
      } catch {
        return [];
      }
    })
    .reduce((a, b) => a + b, 0);
}

test('with the compact serializer: every record received once with its fields, logs at their levels, metrics consumed, deactivate and activate answered', async () => {
  const stream = await suite.newStream(3);
  const app = uniqueName('compact');
  const dir = scratch('compact');
  const metricsFile = join(dir, 'metrics.jsonl');
  const storm = metricsRecorderConf(metricsFile);
  const config = exampleConfig(suite.services, stream, app, dir, {
    storm,
    compactSerializer: true,
    spout: { statsIntervalMs: 500 },
  });
  const topology = new LocalTopology(suite.build, MAIN, config, dir);
  await withLogs(
    () => [topology],
    async () => {
      const input = records(300, 'compact');
      const all = withInput(input, await putRecords(suite.services.client, stream, input));
      const received = await waitReceived(topology, all, 90_000);
      expect(duplicates(topology.received())).toBe(0);
      expectFieldsAsPut(received, all);
      expect(received.some((r) => r.fromOtherWorker)).toBe(true);
      await waitAllAcked(suite.services, topology, stream, app, all);

      const log = topology.log();
      // Storm chose the serializer for the spout's tasks, and the processes answered in kind.
      expect(log).toContain('Storm multilang serializer: io.github.kinesisshellspout.CompactSerializer');
      expect(topology.spoutPids()).toHaveLength(3);
      const spoke = new RegExp(
        `ShellLog pid:\\d+, name:kinesis speaking the ${COMPACT_WIRE} wire format with Storm`,
        'g',
      );
      expect(log.match(spoke)).toHaveLength(3);
      // Log lines through compact frames, at their level (the stats line is INFO, the Node note too).
      expect(log).toMatch(/INFO .*ShellSpout: ShellLog pid:\d+, name:kinesis kinesis-shell-spout task 0 \(of 0\.\.2\)/);
      await topology.waitFor('stats lines', () => /stats: .*acked=\d+/.test(topology.log()));
      // Binary frames through the blocking reads of the pipe, not only the event loop.
      const directReads = [...topology.log().matchAll(/stats: .* directReads=(\d+)/g)].map((m) => Number(m[1]));
      expect(Math.max(...directReads)).toBeGreaterThan(0);

      await topology.waitFor('the metrics to add up', () => processTotal(metricsFile, 'acked') === all.length, 60_000);
      expect(processTotal(metricsFile, 'emitted')).toBe(all.length);

      await topology.control('deactivate');
      await topology.waitSpouts('deactivated', 3);
      await topology.control('activate');
      await topology.waitSpouts('activated', 3);
      const after = records(60, 'after');
      const more = withInput(after, await putRecords(suite.services.client, stream, after));
      await waitReceived(topology, [...all, ...more], 60_000);
      await sleep(500);
      expect(await topology.stop()).toBe(true);
    },
  );
}, 240_000);

test('with the compact serializer and dataFormat base64: data reaches the bolts as the raw bytes (byte[]), across workers', async () => {
  const stream = await suite.newStream(2);
  const app = uniqueName('compact-bytes');
  const dir = scratch('compact-bytes');
  const config = exampleConfig(suite.services, stream, app, dir, { compactSerializer: true, dataFormat: 'base64' });
  const topology = new LocalTopology(suite.build, MAIN, config, dir);
  await withLogs(
    () => [topology],
    async () => {
      const input = records(100, 'bytes');
      const all = withInput(input, await putRecords(suite.services.client, stream, input));
      const received = await waitReceived(topology, all, 90_000);
      const byId = new Map(all.map((r) => [`${r.shardId}:${r.sequenceNumber}`, r]));
      for (const r of received) {
        expect(r.dataClass).toBe('[B');
        // The recorder writes a byte[] as base64: the record's bytes, unchanged.
        expect(r.values.data).toBe(Buffer.from(byId.get(r.id)!.data).toString('base64'));
      }
      expect(received.some((r) => r.fromOtherWorker)).toBe(true);
      await waitAllAcked(suite.services, topology, stream, app, all);
    },
  );
}, 240_000);
