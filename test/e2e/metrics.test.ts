/**
 * The spout's metrics as Storm's metrics consumers see them (contract C2): KinesisShellSpout registers
 * `kinesis-spout` and `kinesis-spout-shards`, the process reports to them, and a consumer registered in
 * the topology conf (the example's MetricsRecorder, writing each data point to a file) receives them.
 */
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { putRecords } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { failSelected, idOf, records, waitAllAcked, waitReceived, withInput } from './helpers/checks';
import { e2eSuite } from './helpers/suite';
import { exampleConfig, LocalTopology, metricsRecorderConf, scratch, sleep, withLogs } from './helpers/topology';

const MAIN = ['io.github.kinesisshellspout.example.KinesisTopology'];
const suite = e2eSuite('topology-examples/java', 'kinesis-topology-example-0.1.0.jar');

interface DataPoint {
  component: string;
  task: number;
  timestamp: number;
  name: string;
  value: Record<string, number>;
}

function dataPoints(file: string, name: string): DataPoint[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as DataPoint];
      } catch {
        return []; // a line being written
      }
    })
    .filter((p) => p.component === 'kinesis' && p.name === name);
}

/** Counters: the sum of a key over every data point (each holds what was counted during its bucket). */
function total(points: DataPoint[], key: string): number {
  return points.reduce((sum, p) => sum + (p.value[key] ?? 0), 0);
}

/** Gauges: each task's latest value of a key, summed over tasks. */
function latestAcrossTasks(points: DataPoint[], key: string): number {
  const latest = new Map<number, DataPoint>();
  for (const p of points) if ((latest.get(p.task)?.timestamp ?? -1) <= p.timestamp) latest.set(p.task, p);
  return [...latest.values()].reduce((sum, p) => sum + (p.value[key] ?? 0), 0);
}

test('a registered metrics consumer receives the per-process and per-shard metrics: records emitted, acked, failed and retried add up to what was put and what the bolts saw; shards held, ZooKeeper state and lag per shard', async () => {
  const stream = await suite.newStream(3);
  const app = uniqueName('metrics');
  const dir = scratch('metrics');
  const metricsFile = join(dir, 'metrics.jsonl');
  const failFraction = 0.1;
  // Storm collects every 2 s; the process then reports every second.
  const storm = metricsRecorderConf(metricsFile);
  const config = exampleConfig(suite.services, stream, app, dir, {
    storm,
    failFraction,
    spout: { retry: { initialBackoffMs: 50, maxBackoffMs: 500 } },
  });
  const topology = new LocalTopology(suite.build, MAIN, config, dir);
  await withLogs(
    () => [topology],
    async () => {
      // Records put once the shards are spread, so that no lease moves with records in flight (which
      // would replay some: allowed, but not what this test counts).
      await topology.waitFor(
        '3 spout tasks joined',
        () => new Set(topology.log().match(/joined as task\d/g)).size === 3,
      );
      await sleep(2_000);
      const input = records(300, 'metrics');
      const all = withInput(input, await putRecords(suite.services.client, stream, input));
      await waitReceived(topology, all, 90_000);
      await waitAllAcked(suite.services, topology, stream, app, all);

      const failedIds = all.map(idOf).filter((id) => failSelected(id, failFraction));
      const emittedTuples = () => topology.received().length;
      const processPoints = () => dataPoints(metricsFile, 'kinesis-spout');
      // Counters arrive with the buckets after the last ack: wait for them to add up.
      await topology
        .waitFor(
          'the process counters to add up',
          () => {
            const points = processPoints();
            return (
              total(points, 'acked') === all.length &&
              total(points, 'emitted') + total(points, 'retried') === emittedTuples() &&
              total(points, 'failed') === failedIds.length
            );
          },
          60_000,
        )
        .catch((err: Error) => {
          const points = processPoints();
          const seen = {
            acked: total(points, 'acked'),
            emitted: total(points, 'emitted'),
            retried: total(points, 'retried'),
            failed: total(points, 'failed'),
            points: points.length,
          };
          err.message = `expected acked ${all.length}, emitted + retried ${emittedTuples()}, failed ${failedIds.length}; consumer saw ${JSON.stringify(seen)}\n${err.message}`;
          throw err;
        });
      const points = processPoints();
      // `emitted` counts first emits, `retried` the re-emits after a fail.
      expect(total(points, 'emitted')).toBe(all.length);
      expect(total(points, 'retried')).toBe(failedIds.length);
      expect(total(points, 'skipped')).toBe(0);
      expect(new Set(points.map((p) => p.task)).size).toBe(3);
      expect(latestAcrossTasks(points, 'shardsHeld')).toBe(3);
      // 0 until the first session is established, then 1 in every task.
      expect(latestAcrossTasks(points, 'zookeeperConnected')).toBe(3);
      // Every key contract C2 names, and no other.
      const processKeys = [
        'shardsHeld',
        'recordsInMemory',
        'bytesInMemory',
        'zookeeperConnected',
        'maxMillisBehindLatest',
        'heldBytesPerSecond',
        'heldRecordsPerSecond',
        'leasesTaken',
        'leasesGiven',
        'reshardEvents',
        'throttledCalls',
        'iteratorResets',
        'subscriptionsOpened',
        'subscriptionRenewals',
        'subscriptionRetries',
        'checkpointWritesDeferred',
        'emitted',
        'acked',
        'failed',
        'retried',
        'skipped',
        'deadLettered',
        'tooOld',
      ];
      expect([...new Set(points.flatMap((p) => Object.keys(p.value)))].sort()).toEqual([...processKeys].sort());
      expect(total(points, 'leasesTaken')).toBeGreaterThanOrEqual(3);

      // Per shard, keys `<shardId>.<name>`: what each shard emitted and had acked.
      const shardPoints = dataPoints(metricsFile, 'kinesis-spout-shards');
      const shards = [...new Set(all.map((r) => r.shardId))];
      expect(shards).toHaveLength(3);
      const shardKeyNames = [
        'millisBehindLatest',
        'inFlight',
        'emittedRecordsPerSecond',
        'emittedBytesPerSecond',
        'emitted',
        'emittedBytes',
        'acked',
        'failed',
        'retried',
        'skipped',
        'deadLettered',
        'tooOld',
      ];
      const reported = new Set(shardPoints.flatMap((p) => Object.keys(p.value)));
      expect([...reported].sort()).toEqual(
        shards.flatMap((shard) => shardKeyNames.map((name) => `${shard}.${name}`)).sort(),
      );
      for (const shard of shards) {
        const put = all.filter((r) => r.shardId === shard).length;
        const failed = failedIds.filter((id) => id.startsWith(`${shard}:`)).length;
        const sums = {
          acked: total(shardPoints, `${shard}.acked`),
          emitted: total(shardPoints, `${shard}.emitted`),
          failed: total(shardPoints, `${shard}.failed`),
          retried: total(shardPoints, `${shard}.retried`),
        };
        expect({ shard, ...sums }).toEqual({ shard, acked: put, emitted: put, failed, retried: failed });
        expect(total(shardPoints, `${shard}.emittedBytes`)).toBeGreaterThan(0);
        expect({ shard, lagReported: shardPoints.some((p) => `${shard}.millisBehindLatest` in p.value) }).toEqual({
          shard,
          lagReported: true,
        });
      }
      expect(await topology.stop()).toBe(true);
    },
  );
}, 240_000);
