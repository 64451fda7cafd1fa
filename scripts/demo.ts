/**
 * `npm run demo`: a real local run. ZooKeeper and kinesis-local on free loopback ports, the Java example
 * topology (topology-examples/java) in Storm's LocalCluster with 3 spout tasks on 2 workers, records put
 * while a shard splits (no rebalance), a live progress line and a final summary.
 */
import { join } from 'node:path';
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../test/helpers/kinesisAdmin';
import { startServices, type Services } from '../test/helpers/fixture';
import { mavenBuild, REPO } from '../test/e2e/helpers/maven';
import { exampleConfig, LocalTopology, removeScratch, scratch } from '../test/e2e/helpers/topology';
import { demoLine } from './demoLine';

const RECORDS = Number(process.env.DEMO_RECORDS ?? 3_000);
const BATCH = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write('building the Java example topology (Maven; the first run downloads Storm)...\n');
  const build = await mavenBuild(join(REPO, 'topology-examples/java'), 'kinesis-topology-example-0.1.0.jar');
  process.stdout.write('starting ZooKeeper and kinesis-local on loopback...\n');
  const services: Services = await startServices();
  let topology: LocalTopology | undefined;
  try {
    const stream = `demo-${Date.now()}`;
    await createStream(services.client, stream, 2);
    const dir = scratch('demo');
    // The spout's own defaults, except where the servers are.
    const spout = {
      idlePollIntervalMs: 1_000,
      checkpointIntervalMs: 2_000,
      rebalanceIntervalMs: 2_000,
      shardSyncIntervalMs: 30_000,
      zookeeper: { sessionTimeoutMs: 10_000, root: '/demo' },
    };
    topology = new LocalTopology(
      build,
      ['io.github.kinesisshellspout.example.KinesisTopology'],
      exampleConfig(services, stream, 'demo', dir, { spout }),
      dir,
    );
    process.stdout.write(
      `stream ${stream}: 2 shards; LocalCluster with 3 spout tasks on 2 workers (JVM log: ${topology.logFile})\n`,
    );

    const put: PutResult[] = [];
    const progress = () => {
      const received = new Set(topology!.received().map((r) => r.id));
      return {
        received: received.size,
        deliveries: topology!.received().length,
        lag: put.filter((r) => !received.has(`${r.shardId}:${r.sequenceNumber}`)).length,
      };
    };
    const ticker = setInterval(() => {
      const p = progress();
      process.stdout.write(`\r${demoLine({ put: put.length, received: p.received, lag: p.lag })}`);
    }, 500);

    let children: string[] = [];
    for (let i = 0; i < RECORDS; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, RECORDS - i) }, (_, j) => ({
        partitionKey: `user-${(i + j) % 97}`,
        data: JSON.stringify({ n: i + j, at: Date.now() }),
      }));
      put.push(...(await putRecords(services.client, stream, batch)));
      if (children.length === 0 && i >= RECORDS / 3) {
        const [parent] = (await listAllShards(services.client, stream)).map((s) => s.ShardId!);
        children = await splitShard(services.client, stream, parent);
        process.stdout.write(`\nsplit ${parent} into ${children.join(' and ')} while records flow (no rebalance)\n`);
      }
      await sleep(100);
    }
    const deadline = Date.now() + 120_000;
    while (progress().lag > 0 && Date.now() < deadline) await sleep(250);
    clearInterval(ticker);
    const p = progress();
    const fromChildren = put.filter((r) => children.includes(r.shardId)).length;
    process.stdout.write(`\r${demoLine({ put: put.length, received: p.received, lag: p.lag }).trimEnd()}\n`);
    process.stdout.write(
      `\nsummary: put ${put.length}, received ${p.received}, lost ${p.lag}, duplicates ${p.deliveries - p.received}, ` +
        `records from the split's children ${fromChildren}, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    if (p.lag > 0) process.exitCode = 1;
  } finally {
    await topology?.stop();
    await services.stop();
    removeScratch();
  }
}

main().catch((err) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
