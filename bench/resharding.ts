/**
 * Resharding and failover with default settings: time from SplitShard to the first child record emitted,
 * from the parent's last ack to that emit, and from a SIGKILL to the victim's shards being emitted again
 * by survivors (default 10 s session timeout), with the duplicates each fault caused.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, putRecords, splitShard } from '../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../test/helpers/kinesisServer';
import { StormDriver, type Emit } from '../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, sleep, summarize, type Summary } from './lib';

interface Pumped {
  emits: { emit: Emit; pid: number }[];
  ackedAt: Map<string, number>;
  stop(): Promise<void>;
}

/** Pumps drivers as Storm tasks, acking everything, noting when each id was acked. */
function pumpAll(drivers: StormDriver[]): Pumped {
  let stopped = false;
  const emits: Pumped['emits'] = [];
  const ackedAt = new Map<string, number>();
  const loops = drivers.map((d) =>
    d.pump(() => stopped, {
      timeoutMs: 600_000,
      onEmit: async (emit) => {
        emits.push({ emit, pid: d.pid });
        await d.ack(emit.id);
        ackedAt.set(emit.id, performance.now());
      },
    }),
  );
  return {
    emits,
    ackedAt,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      await Promise.all(drivers.map((d) => d.stop(3_000)));
    },
  };
}

function producer(client: KinesisClient, stream: string): { stop(): Promise<void> } {
  let stopped = false;
  let n = 0;
  const loop = (async () => {
    while (!stopped) {
      await putRecords(
        client,
        stream,
        Array.from({ length: 10 }, () => ({ partitionKey: `k${n % 16}`, data: String(n++) })),
      );
      await sleep(100);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Runs `work` while records are put and every driver is pumped; stops both however `work` ends. */
async function withTraffic<T>(
  client: KinesisClient,
  stream: string,
  drivers: StormDriver[],
  work: (pumped: Pumped) => Promise<T>,
): Promise<T> {
  const pumped = pumpAll(drivers);
  const produce = producer(client, stream);
  try {
    return await work(pumped);
  } finally {
    await produce.stop();
    await pumped.stop();
  }
}

const shardOf = (id: string) => id.split(':')[0];

export interface ReshardFigures {
  splitToFirstChildEmitMs: Summary;
  parentLastAckToFirstChildEmitMs: Summary;
}

export async function reshardBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  runs: number,
  log: (line: string) => void,
): Promise<ReshardFigures> {
  const pickup: number[] = [];
  const afterAck: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const stream = `bench-split-${process.pid}-${run}`;
    await createStream(client, stream, 1);
    const [parent] = (await listAllShards(client, stream)).map((s) => s.ShardId!);
    const driver = await StormDriver.start({ conf: benchConf(zk, kinesis, stream, `split-${run}`) });
    await withTraffic(client, stream, [driver], async (pumped) => {
      while (pumped.emits.length < 50) await sleep(50);
      const splitAt = performance.now();
      const children = await splitShard(client, stream, parent);
      while (!pumped.emits.some((e) => children.includes(shardOf(e.emit.id)))) await sleep(10);
      const firstChild = Math.min(
        ...pumped.emits.filter((e) => children.includes(shardOf(e.emit.id))).map((e) => e.emit.receivedAt),
      );
      const lastParentAck = Math.max(
        ...[...pumped.ackedAt].filter(([id]) => shardOf(id) === parent).map(([, at]) => at),
      );
      pickup.push(firstChild - splitAt);
      afterAck.push(firstChild - lastParentAck);
      log(
        `reshard run ${run + 1}: split → first child emit ${Math.round(firstChild - splitAt)} ms, parent's last ack → first child emit ${Math.round(firstChild - lastParentAck)} ms`,
      );
    });
  }
  return { splitToFirstChildEmitMs: summarize(pickup), parentLastAckToFirstChildEmitMs: summarize(afterAck) };
}

export interface FailoverFigures {
  killToResumeMs: Summary;
  duplicatesPerKill: Summary;
}

export async function failoverBench(
  zk: ZooKeeperServer,
  kinesis: KinesisServer,
  client: KinesisClient,
  runs: number,
  log: (line: string) => void,
): Promise<FailoverFigures> {
  const resume: number[] = [];
  const duplicates: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const stream = `bench-kill-${process.pid}-${run}`;
    await createStream(client, stream, 6);
    const drivers: StormDriver[] = [];
    for (const taskId of [1, 2, 3])
      drivers.push(
        await StormDriver.start({
          conf: benchConf(zk, kinesis, stream, `kill-${run}`),
          taskId,
          componentTasks: [1, 2, 3],
        }),
      );
    await withTraffic(client, stream, drivers, async (pumped) => {
      await sleep(4_000);
      const victim = drivers[1];
      const orphans = new Set(pumped.emits.filter((e) => e.pid === victim.pid).map((e) => shardOf(e.emit.id)));
      victim.signal('SIGKILL');
      const killedAt = performance.now();
      const resumedAt = () =>
        [...orphans].map(
          (s) =>
            pumped.emits.find((e) => e.pid !== victim.pid && shardOf(e.emit.id) === s && e.emit.receivedAt > killedAt)
              ?.emit.receivedAt,
        );
      while (resumedAt().some((t) => t === undefined)) await sleep(50);
      const took = Math.max(...(resumedAt() as number[])) - killedAt;
      await sleep(2_000);
      const ids = pumped.emits.map((e) => e.emit.id);
      const duplicated = ids.length - new Set(ids).size;
      resume.push(took);
      duplicates.push(duplicated);
      log(
        `failover run ${run + 1}: ${orphans.size} orphaned shard(s) emitted again ${Math.round(took)} ms after SIGKILL; ${duplicated} duplicate(s)`,
      );
    });
  }
  return { killToResumeMs: summarize(resume), duplicatesPerKill: summarize(duplicates) };
}
