/**
 * A real local run: ZooKeeper and kinesis-local on free loopback ports, a 2-shard stream, two spout
 * processes driven as Storm's ShellSpout drives them, records put while a shard is split, and a summary.
 */
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../test/helpers/kinesisAdmin';
import { startServices, startSpout, type Services } from '../test/helpers/fixture';
import type { StormDriver } from '../test/helpers/stormDriver';

const RECORDS = Number(process.env.DEMO_RECORDS ?? 3_000);
const BATCH = 250;

async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write('starting ZooKeeper and kinesis-local on loopback...\n');
  const services: Services = await startServices();
  const drivers: StormDriver[] = [];
  try {
    const stream = `demo-${Date.now()}`;
    await createStream(services.client, stream, 2);
    const overrides = { initialPosition: 'TRIM_HORIZON', checkpointIntervalMs: 500 };
    for (const taskId of [1, 2]) drivers.push(await startSpout(services, stream, 'demo', overrides, { taskId, componentTasks: [1, 2] }));
    process.stdout.write(`stream ${stream}: 2 shards, 2 spout tasks (pids ${drivers.map((d) => d.pid).join(', ')})\n`);

    const put: PutResult[] = [];
    const acked = new Set<string>();
    let emitted = 0;
    let stop = false;
    const pumps = drivers.map((driver) =>
      driver.pump(() => stop, {
        timeoutMs: 300_000,
        onEmit: async (emit) => {
          emitted += 1;
          acked.add(emit.id);
          await driver.ack(emit.id);
        },
      }),
    );
    const progress = setInterval(() => {
      process.stdout.write(`\rput ${put.length}  emitted ${emitted}  acked ${acked.size}  lag ${put.length - acked.size}    `);
    }, 250);

    let split: string[] = [];
    for (let i = 0; i < RECORDS; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, RECORDS - i) }, (_, j) => ({ partitionKey: `user-${(i + j) % 97}`, data: JSON.stringify({ n: i + j, at: Date.now() }) }));
      put.push(...(await putRecords(services.client, stream, batch)));
      if (split.length === 0 && i >= RECORDS / 3) {
        const [first] = (await listAllShards(services.client, stream)).map((s) => s.ShardId!);
        split = await splitShard(services.client, stream, first);
        process.stdout.write(`\nsplit ${first} into ${split.join(' and ')} while records flow (no rebalance)\n`);
      }
    }
    const ids = put.map((r) => `${r.shardId}:${r.sequenceNumber}`);
    const deadline = Date.now() + 60_000;
    while (ids.some((id) => !acked.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await Promise.all(pumps);
    clearInterval(progress);
    const lost = ids.filter((id) => !acked.has(id)).length;
    const childRecords = put.filter((r) => split.includes(r.shardId)).length;
    process.stdout.write(`\rput ${put.length}  emitted ${emitted}  acked ${acked.size}  lag ${put.length - acked.size}    \n`);
    process.stdout.write(
      `\nsummary: put ${put.length}, emitted ${emitted}, acked ${acked.size}, lost ${lost}, duplicates ${emitted - acked.size}, ` +
        `records read from the split's children ${childRecords}, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    if (lost > 0) process.exitCode = 1;
  } finally {
    await Promise.all(drivers.map((d) => d.stop(3_000)));
    await services.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
