/**
 * The Java example topology in Storm 2.8's LocalCluster (3 spout tasks over 2 workers, real ShellSpout
 * running the bundled script from the jar's resources/), against real ZooKeeper and kinesis-local; the
 * reshard case also in fan-out mode, through the fan-out front.
 */
import { listAllShards, mergeShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { uniqueName } from '../helpers/fixture';
import { startFanOutServer } from '../helpers/fanOutServer';
import { FLOW_FAN_OUT, readModes } from '../helpers/flowSuite';
import {
  checkpointsBehind,
  duplicates,
  expectFieldsAsPut,
  failSelected,
  idOf,
  missing,
  outOfOrderKeys,
  records,
  waitAllAcked,
  waitReceived,
  withInput,
  type Put,
} from './helpers/checks';
import { realpathSync } from 'node:fs';
import { SPOUT_NODE, spoutNodeVersion } from '../helpers/spoutNode';
import { e2eSuite } from './helpers/suite';
import {
  AWS_ENV,
  exampleConfig,
  LocalTopology,
  processCwd,
  processEnv,
  processExe,
  scratch,
  sleep,
  withLogs,
} from './helpers/topology';

const MAIN = ['io.github.kinesisshellspout.example.KinesisTopology'];
const suite = e2eSuite('topology-examples/java', 'kinesis-topology-example-0.1.0.jar');

const newStream = (shards: number) => suite.newStream(shards);

async function put(stream: string, n: number, prefix: string, keys = 16): Promise<Put[]> {
  const input = records(n, prefix, keys);
  return withInput(input, await putRecords(suite.services.client, stream, input));
}

function start(
  stream: string,
  app: string,
  dir: string,
  overrides: Record<string, unknown> = {},
  run = 1,
): LocalTopology {
  return new LocalTopology(suite.build, MAIN, exampleConfig(suite.services, stream, app, dir, overrides), dir, run);
}

test('steady flow: every record put is received once, with its fields, across workers; the spouts run from resources/ with the worker env and flush on stop', async () => {
  const stream = await newStream(4);
  const app = uniqueName('steady');
  const dir = scratch('steady');
  const all = await put(stream, 300, 'before');
  // Checkpoints written only at exit: the stop below must flush them.
  const topology = start(stream, app, dir, { spout: { checkpointIntervalMs: 600_000, statsIntervalMs: 500 } });
  await withLogs(
    () => [topology],
    async () => {
      for (let batch = 0; batch < 4; batch += 1) {
        all.push(...(await put(stream, 100, `during-${batch}`)));
        await sleep(500);
      }
      const received = await waitReceived(topology, all);

      expect(duplicates(topology.received())).toBe(0);
      expectFieldsAsPut(received, all);
      expect(received.some((r) => r.fromOtherWorker)).toBe(true);

      // ShellSpout starts the script in the extracted resources/ folder, with the worker JVM's environment.
      const pids = topology.spoutPids();
      expect(pids).toHaveLength(3);
      for (const pid of pids) {
        expect(processCwd(pid)).toMatch(/\/stormdist\/[^/]+\/resources(\.\d+)?$/);
        expect(processEnv(pid)).toMatchObject(AWS_ENV);
        // `node` from the JVM's PATH is SPOUT_NODE (test/helpers/spoutNode.ts), and the spout says which it is.
        expect(processExe(pid)).toBe(realpathSync(SPOUT_NODE));
        expect(topology.log()).toContain(`ShellLog pid:${pid}, name:kinesis running on Node.js ${spoutNodeVersion()}`);
      }
      // Numbered from 0, as member ids and `status` number them.
      const tasks = [
        ...topology.log().matchAll(/ShellLog pid:\d+, name:kinesis kinesis-shell-spout task (\S+ \(of [^)]*\))/g),
      ];
      expect(tasks.map((m) => m[1]).sort()).toEqual(['0 (of 0..2)', '1 (of 0..2)', '2 (of 0..2)']);
      expect(process.env.AWS_ACCESS_KEY_ID).not.toBe(AWS_ENV.AWS_ACCESS_KEY_ID);

      // ShellSpout's pipes (Java's ProcessBuilder) take the direct reads, not only the event loop.
      await topology.waitFor('stats lines', () => topology.log().includes('stats: '));
      const directReads = [...topology.log().matchAll(/stats: .* directReads=(\d+)/g)].map((m) => Number(m[1]));
      expect(Math.max(...directReads)).toBeGreaterThan(0);

      await sleep(1_000); // the last acks
      // ShellSpout.close() SIGTERMs each spout (its last log lines go unread: Storm reads only in reply to a command).
      expect(await topology.stop()).toBe(true);
      expect(await checkpointsBehind(suite.services, stream, app, all)).toEqual([]);
    },
  );
}, 180_000);

/**
 * In both read modes (READ_MODE picks one): the one LocalCluster case of fan-out, the example built with the
 * builder's `fanOut(name)` against the fan-out front before kinesis-local (fanOutServer.ts), subscriptions
 * renewed every 8 s so that a run of this length sees some.
 */
test.each(readModes())(
  'split and merge while flowing, no rebalance, read mode %s: every record received, per key first deliveries in put order',
  async (readMode) => {
    const stream = await newStream(2);
    const app = uniqueName('reshard');
    const dir = scratch('reshard');
    const front =
      readMode === 'fanOut'
        ? await startFanOutServer(suite.services.kinesis.endpoint, { ...FLOW_FAN_OUT, activationMs: 200 })
        : undefined;
    const consumer = `${app}-efo`;
    const topology = start(stream, app, dir, front ? { endpoint: front.endpoint, fanOut: consumer } : {});
    const all: Put[] = [];
    try {
      await withLogs(
        () => [topology],
        async () => {
          const [first] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
          let children: string[] = [];
          for (let batch = 0; batch < 9; batch += 1) {
            all.push(...(await put(stream, 80, `b${batch}`, 12)));
            if (batch === 1) await topology.waitFor('the first records', () => topology.received().length > 0);
            if (batch === 2) children = await splitShard(suite.services.client, stream, first);
            if (batch === 5) await mergeShards(suite.services.client, stream, children[0], children[1]);
            await sleep(300);
          }
          expect(new Set(all.map((r) => r.shardId)).size).toBe(5);
          await waitReceived(topology, all, 90_000);
          await waitAllAcked(suite.services, topology, stream, app, all);
          expect(outOfOrderKeys(topology.received(), all)).toEqual([]);
          if (!front) return;
          // Read through subscriptions of the consumer the builder named, never by GetRecords.
          expect(front.consumers().map((c) => c.name)).toEqual([consumer]);
          expect(new Set(front.subscriptions.map((s) => s.shardId)).size).toBe(5);
          expect([...front.requests.keys()].filter((k) => k.endsWith(' GetRecords'))).toEqual([]);
        },
      );
    } finally {
      await front?.close();
    }
  },
  180_000,
);

/**
 * Deactivated around the rebalance, as operators do: Storm 2.8.3 itself halts a worker that receives a
 * tuple for a task it no longer runs, which workers with a stale assignment send right after a rebalance
 * (STORM-3751, "NullPointerException ... WorkerState.transferLocalBatch"); in LocalCluster that ends the JVM.
 */
test('deactivate, rebalance after a reshard, activate: nothing lost, nothing emitted while deactivated', async () => {
  const stream = await newStream(2);
  const app = uniqueName('rebalance');
  const dir = scratch('rebalance');
  // 3 tasks on 2 executors: one executor runs two spout tasks until the rebalance gives each its own.
  const storm = { 'task.refresh.poll.secs': 1 };
  const topology = start(stream, app, dir, { spoutParallelism: 2, spoutTasks: 3, storm });
  await withLogs(
    () => [topology],
    async () => {
      const all = await put(stream, 200, 'a');
      await waitReceived(topology, all);
      const [, second] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
      await splitShard(suite.services.client, stream, second);
      all.push(...(await put(stream, 200, 'b')));
      await waitReceived(topology, all);
      await waitAllAcked(suite.services, topology, stream, app, all);

      await topology.control('deactivate');
      await topology.waitSpouts('deactivated', 3);
      const quiet = await put(stream, 150, 'c');
      await sleep(3_000);
      expect(missing(topology.received(), quiet)).toHaveLength(quiet.length);

      const before = new Set(topology.spoutPids());
      await topology.control('rebalance 3 3');
      // Storm opens the new workers' spouts only once the topology is active again.
      await sleep(5_000);
      await topology.control('activate');
      await topology.waitFor('3 new spout processes, activated', () => {
        const live = [...topology.liveSpouts()];
        return live.length === 3 && live.every(([pid, state]) => !before.has(pid) && state === 'activated');
      });
      all.push(...quiet, ...(await put(stream, 200, 'd')));
      await waitReceived(topology, all, 90_000);
      await waitAllAcked(suite.services, topology, stream, app, all);
    },
  );
}, 240_000);

test('a bolt failing some first deliveries: each is replayed with the same id and finally acked', async () => {
  const stream = await newStream(2);
  const app = uniqueName('failing');
  const dir = scratch('failing');
  const failFraction = 0.2;
  const topology = start(stream, app, dir, {
    failFraction,
    spout: { retry: { initialBackoffMs: 50, maxBackoffMs: 500 } },
  });
  await withLogs(
    () => [topology],
    async () => {
      // Records put only once the shards are spread: a lease handed over at start with a failed record in
      // flight is released at the checkpoint before it, and records acked after it come again (bounded
      // duplicates, allowed), which would blur what this test counts.
      await topology.waitFor(
        '3 spout tasks joined',
        () => new Set(topology.log().match(/joined as task\d/g)).size === 3,
      );
      await sleep(2_000);
      const all = await put(stream, 300, 'f');
      await waitReceived(topology, all);
      await waitAllAcked(suite.services, topology, stream, app, all);

      const selected = all.map(idOf).filter((id) => failSelected(id, failFraction));
      expect(selected.length).toBeGreaterThan(30);
      const recorded = topology.recorded();
      const failed = recorded.filter((r) => r.event === 'failed').map((r) => r.id);
      expect(failed.sort()).toEqual([...selected].sort());
      const received = topology.received();
      for (const id of selected) {
        const failedAt = recorded.findIndex((r) => r.event === 'failed' && r.id === id);
        const replayed = recorded.slice(failedAt + 1).some((r) => r.event === 'received' && r.id === id);
        expect({ id, replayed }).toEqual({ id, replayed: true });
      }
      const counts = new Map<string, number>();
      for (const r of received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
      const unselectedRepeated = all.map(idOf).filter((id) => !failSelected(id, failFraction) && counts.get(id) !== 1);
      expect(unselectedRepeated).toEqual([]);
    },
  );
}, 180_000);

test('the cluster killed hard mid-stream (JVM and spouts, SIGKILL) and started again: it resumes from ZooKeeper, nothing lost', async () => {
  const stream = await newStream(3);
  const app = uniqueName('killed');
  const dir = scratch('killed');
  const runs: LocalTopology[] = [start(stream, app, dir)];
  await withLogs(
    () => runs,
    async () => {
      const all: Put[] = [];
      let putting = true;
      const producer = (async () => {
        for (let batch = 0; putting; batch += 1) {
          all.push(...(await put(stream, 50, `k${batch}`)));
          await sleep(250);
        }
      })();
      try {
        await runs[0].waitFor('a few hundred records', () => runs[0].received().length >= 300, 60_000);
        await runs[0].killHard();
        const receivedByFirst = runs[0].received().length;
        await sleep(1_000);
        runs.push(start(stream, app, dir, {}, 2));
        await runs[1].waitFor('the second run to receive', () => runs[1].received().length > receivedByFirst, 60_000);
        await sleep(2_000);
      } finally {
        putting = false;
        await producer;
      }
      await waitReceived(runs[1], all, 90_000);
      await waitAllAcked(suite.services, runs[1], stream, app, all);
      // Re-delivered: at most what was in flight when the JVM died, far less than everything.
      expect(duplicates(runs[1].received())).toBeLessThan(all.length / 2);
    },
  );
}, 240_000);
