/**
 * The delivery modes as a Storm user meets them (docs/guarantees.md, "Delivery modes"), in one LocalCluster
 * run of the example topology with three spout components reading the same stream, each under an
 * application name of its own: `kinesis` with `delivery: none`, `at-most-once` with that mode, both
 * without tuple tracking, and `tracked`, at most once with `tupleTracking: true`. The acking bolt holds
 * every tuple unacked until the test lets it go (the example's `holdAcksUntil`), under
 * `topology.max.spout.pending`. Emits without an id are not pending in Storm: the untracked spouts deliver
 * everything while the acks are held, and no outcome comes back to them. The tracked one stops at the
 * pending limit and goes on once the acks come, and Storm reports its complete latency.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { putRecords } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { checkpointsBehind, duplicates, records, waitAllAcked, withInput, type Put } from './helpers/checks';
import { e2eSuite } from './helpers/suite';
import { exampleConfig, LocalTopology, scratch, sleep, withLogs, type Received } from './helpers/topology';

const MAIN = ['io.github.kinesisshellspout.example.KinesisTopology'];
const suite = e2eSuite('topology-examples/java', 'kinesis-topology-example-0.1.0.jar');

const PENDING = 30; // topology.max.spout.pending
const TRACKED_EMITS_PER_NEXT = 5; // the tracked spout's maxEmitPerNext: Storm checks the limit before each next
const RECORDS = 200;
const HOLD_MS = 4_000;

/** The spout process's counters from its last stats line (cumulative), per component. */
function lastStats(
  log: string,
  component: string,
): { emitted: number; acked: number; failed: number; ignored: number } {
  const lines = [
    ...log.matchAll(
      new RegExp(
        `ShellLog pid:\\d+, name:${component} stats: emitted=(\\d+) reemitted=\\d+ acked=(\\d+) failed=(\\d+) skipped=\\d+ deadLettered=\\d+ ignoredAcks=(\\d+)`,
        'g',
      ),
    ),
  ];
  const last = lines.at(-1);
  if (!last) return { emitted: -1, acked: -1, failed: -1, ignored: -1 };
  return { emitted: Number(last[1]), acked: Number(last[2]), failed: Number(last[3]), ignored: Number(last[4]) };
}

test('untracked modes: every record through with the acks held, nothing pending, no outcome back; tupleTracking: stops at max.spout.pending until acked, complete latency reported', async () => {
  const stream = await suite.newStream(2);
  const app = uniqueName('delivery');
  const dir = scratch('delivery');
  const releaseFile = join(dir, 'release-acks');
  const apps = { kinesis: app, 'at-most-once': `${app}-amo`, tracked: `${app}-tracked` };
  const config = exampleConfig(suite.services, stream, app, dir, {
    spoutParallelism: 1,
    workers: 1,
    boltParallelism: 1,
    holdAcksUntil: releaseFile,
    spout: { delivery: 'none', statsIntervalMs: 500 },
    moreSpouts: [
      { name: 'at-most-once', spout: { applicationName: apps['at-most-once'], delivery: 'at-most-once' } },
      {
        name: 'tracked',
        spout: {
          applicationName: apps.tracked,
          delivery: 'at-most-once',
          tupleTracking: true,
          maxEmitPerNext: TRACKED_EMITS_PER_NEXT,
        },
      },
    ],
    // Executor stats to Nimbus every 2 s, not 60.
    localCluster: { 'executor.metrics.frequency.secs': 2 },
    storm: {
      'topology.max.spout.pending': PENDING,
      // Held tuples must not time out (a fail would release them too).
      'topology.message.timeout.secs': 120,
      // Every tuple tree in Storm's stats (default: one in 20).
      'topology.stats.sample.rate': 1,
    },
  });
  const topology = new LocalTopology(suite.build, MAIN, config, dir);
  const from = (component: string): Received[] => topology.received().filter((r) => r.component === component);
  await withLogs(
    () => [topology],
    async () => {
      const input = records(RECORDS, 'delivery');
      const all: Put[] = withInput(input, await putRecords(suite.services.client, stream, input));

      // Acks held: the untracked spouts deliver everything all the same (no tuple of theirs is pending).
      for (const component of ['kinesis', 'at-most-once']) {
        await topology.waitFor(
          `${component}: every record`,
          () => new Set(from(component).map((r) => r.id)).size === RECORDS,
          90_000,
        );
      }
      // The tracked one stops at the limit: Storm asks for more only while fewer are pending, and one
      // `next` emits up to maxEmitPerNext.
      await topology.waitFor('the tracked spout at the pending limit', () => from('tracked').length >= PENDING);
      await sleep(2_000); // the last next's emits through the recorder, on a busy machine too
      const stalled = from('tracked').length;
      await sleep(HOLD_MS);
      const held = from('tracked').length;
      expect(held).toBe(stalled);
      expect(held).toBeGreaterThanOrEqual(PENDING);
      expect(held).toBeLessThanOrEqual(PENDING + TRACKED_EMITS_PER_NEXT - 1);
      expect(existsSync(releaseFile)).toBe(false);

      writeFileSync(releaseFile, '');
      await topology.waitFor(
        'tracked: every record once acked',
        () => new Set(from('tracked').map((r) => r.id)).size === RECORDS,
        60_000,
      );
      for (const component of Object.keys(apps))
        expect({ component, duplicates: duplicates(from(component)) }).toEqual({ component, duplicates: 0 });

      // What came back to each process, from its stats line: acks only for the tracked one.
      await topology.waitFor(
        'the stats lines after the acks',
        () => lastStats(topology.log(), 'tracked').acked === RECORDS,
        30_000,
      );
      await sleep(1_500); // a stats line or two more from the untracked ones
      const log = topology.log();
      expect(lastStats(log, 'kinesis')).toEqual({ emitted: RECORDS, acked: 0, failed: 0, ignored: 0 });
      expect(lastStats(log, 'at-most-once')).toEqual({ emitted: RECORDS, acked: 0, failed: 0, ignored: 0 });
      expect(lastStats(log, 'tracked')).toEqual({ emitted: RECORDS, acked: RECORDS, failed: 0, ignored: 0 });

      // Storm's own figures (the Storm UI's): no tuple tree of the untracked spouts, the tracked one's
      // complete latency. (Not the V2 gauge `__complete-latency-<stream>`: it is the mean of the last three
      // acks only, Storm's RollingAverageGauge.) Every held tuple waited HOLD_MS or more for its ack.
      const stats = await topology.waitFor(
        "Storm's stats of the tracked spout's acks",
        async () => {
          const now = await topology.spoutStats();
          return now.tracked?.acked === RECORDS && now;
        },
        30_000,
      );
      console.log(`tracked: ${held} held at max.spout.pending ${PENDING}; Storm's stats ${JSON.stringify(stats)}`);
      const untracked = { emitted: RECORDS, acked: 0, failed: 0, completeLatencyMs: null };
      expect(stats).toEqual({
        kinesis: untracked,
        'at-most-once': untracked,
        tracked: { emitted: RECORDS, acked: RECORDS, failed: 0, completeLatencyMs: expect.any(Number) },
      });
      expect(stats.tracked.completeLatencyMs).toBeGreaterThanOrEqual((held * HOLD_MS) / RECORDS);

      // Each application's checkpoints past every record: none at the last emitted, at-most-once past each batch.
      for (const name of Object.values(apps)) await waitAllAcked(suite.services, topology, stream, name, all);
      expect(await topology.stop()).toBe(true);
      for (const name of Object.values(apps))
        expect(await checkpointsBehind(suite.services, stream, name, all)).toEqual([]);
    },
  );
}, 180_000);
