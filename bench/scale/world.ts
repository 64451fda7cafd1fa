/**
 * One scale run's moving parts: T spout processes driven as ShellSpout drives them (OS pipes, every emit
 * acked), each behind its own counting proxies to ZooKeeper and Kinesis; a producer putting one record to
 * every open shard every 0.5 s (ExplicitHashKey = the shard's starting hash key); and the evidence: every
 * emit's time and process per shard, every record put. The proxies and the producer run in processes of
 * their own (proxies.ts, producer.ts), started by `prepare`: this process only drives the spouts, so its
 * event loop times their emits, not the harness's own work; what those processes saw is brought over by
 * `syncCounters` and `syncPuts`.
 */
import { DescribeStreamSummaryCommand, type KinesisClient, UpdateShardCountCommand } from '@aws-sdk/client-kinesis';
import { listAllShards, openShards } from '../../test/helpers/kinesisAdmin';
import type { KinesisServer } from '../../test/helpers/kinesisServer';
import { StormDriver } from '../../test/helpers/stormDriver';
import type { ZooKeeperServer } from '../../test/helpers/zookeeperServer';
import { benchConf, benchNodeOptions, sleep } from '../lib';
import type { KinesisCounter } from './kinesisCounter';
import { Producer } from './producer';
import { Proxies, type ProxyProcessFigures } from './proxies';
import type { ZkCounter } from './zkCounter';

export interface Task {
  index: number;
  driver: StormDriver;
  zk: ZkCounter;
  kinesis: KinesisCounter;
  startedAt: number;
  alive: boolean;
  pump: Promise<boolean>;
}

export const PUT_EVERY_MS = 500;

export class ScaleWorld {
  readonly tasks: Task[] = [];
  /** Per shard: every emit, [performance.now(), pid]. */
  readonly emits = new Map<string, [number, number][]>();
  readonly emittedIds = new Set<string>();
  emitCount = 0;
  /** Open shards and their starting hash keys, as last listed. */
  open: { shardId: string; hashKey: string; parents: string[] }[] = [];
  /** Every shard's parents, as listed. */
  readonly parents = new Map<string, string[]>();
  private stopped = false;
  private producer: Producer | undefined;
  private proxies: Proxies | undefined;

  constructor(
    private readonly zk: ZooKeeperServer,
    private readonly server: KinesisServer,
    readonly client: KinesisClient,
    readonly stream: string,
    readonly app: string,
    private readonly overrides: Record<string, unknown>,
  ) {}

  /** Starts the proxies' processes (for `tasks` tasks) and the producer's, which waits for startProducer. */
  async prepare(tasks: number): Promise<void> {
    const [proxies, producer] = await Promise.allSettled([
      Proxies.start(this.zk.port, this.server.endpoint, tasks),
      Producer.start(this.server, this.stream, PUT_EVERY_MS),
    ]);
    if (proxies.status === 'fulfilled') this.proxies = proxies.value;
    if (producer.status === 'fulfilled') this.producer = producer.value;
    if (proxies.status === 'rejected' || producer.status === 'rejected') {
      // The one that started is stopped: stop() is not called for a world that failed to prepare.
      await Promise.all([this.proxies?.stop(), this.producer?.stop()]);
      throw proxies.status === 'rejected' ? proxies.reason : (producer as PromiseRejectedResult).reason;
    }
    if (this.open.length) await this.producer!.setOpen(this.open.map(({ shardId, hashKey }) => ({ shardId, hashKey })));
  }

  private get started(): { proxies: Proxies; producer: Producer } {
    if (!this.proxies || !this.producer) throw new Error('ScaleWorld: prepare() first');
    return { proxies: this.proxies, producer: this.producer };
  }

  /** Every record put, `${shardId}:${sequenceNumber}`, as of the last syncPuts. */
  get putIds(): ReadonlySet<string> {
    return this.started.producer.putIds;
  }

  /** Puts that failed, as of the last syncPuts. */
  get putFailures(): number {
    return this.started.producer.putFailures;
  }

  /** Collects the producer's puts so far (putIds, putFailures, lost()). */
  syncPuts(): Promise<void> {
    return this.started.producer.sync();
  }

  /** Brings every task's counters (`zk`, `kinesis`) up to what its proxies have seen by now. */
  syncCounters(): Promise<void> {
    return this.started.proxies.sync();
  }

  /** CPU and event-loop delay of the proxies' and the producer's processes since the last reset. */
  async helpers(reset = false): Promise<{ proxies: ProxyProcessFigures[]; producer: ProxyProcessFigures }> {
    const { proxies, producer } = this.started;
    const [p, usage] = await Promise.all([proxies.usage(reset), producer.usage(reset)]);
    return {
      proxies: p,
      producer: { pid: producer.pid, tasks: [], skewMs: Math.round(producer.skewMs * 100) / 100, usage },
    };
  }

  /** Starts every task at once, as a deploy does; resolves once all have sent their pid. */
  async startTasks(count: number): Promise<void> {
    const indexes = Array.from({ length: count }, (_, i) => i + 1);
    const started = await Promise.all(indexes.map((index) => this.startTask(index, indexes)));
    this.tasks.push(...started);
  }

  private async startTask(index: number, all: number[]): Promise<Task> {
    const { zk, kinesis } = await this.started.proxies.open(index);
    const conf = benchConf(this.zk, { endpoint: kinesis.endpoint, region: this.server.region }, this.stream, this.app, {
      ...this.overrides,
      zookeeper: { connect: `127.0.0.1:${zk.port}`, root: '/bench', sessionTimeoutMs: 6_000 },
    });
    const driver = await StormDriver.start({
      conf,
      taskId: index,
      componentTasks: all,
      keepHistory: false,
      nodeOptions: benchNodeOptions(),
    });
    const task: Task = {
      index,
      driver,
      zk,
      kinesis,
      startedAt: performance.now(),
      alive: true,
      pump: Promise.resolve(true),
    };
    task.pump = driver.pump(() => this.stopped, {
      timeoutMs: 3_600_000,
      onEmit: (emit) => {
        const shard = emit.id.split(':')[0];
        const list = this.emits.get(shard) ?? [];
        list.push([emit.receivedAt, driver.pid]);
        this.emits.set(shard, list);
        this.emittedIds.add(emit.id);
        this.emitCount += 1;
        return driver.ack(emit.id);
      },
    });
    return task;
  }

  /** Lists the stream; the producer puts to the open shards from now on. */
  async relist(): Promise<void> {
    const shards = await listAllShards(this.client, this.stream);
    for (const s of shards)
      this.parents.set(s.ShardId!, [s.ParentShardId, s.AdjacentParentShardId].filter(Boolean) as string[]);
    this.open = openShards(shards).map((s) => ({
      shardId: s.ShardId!,
      hashKey: s.HashKeyRange!.StartingHashKey!,
      parents: this.parents.get(s.ShardId!)!,
    }));
    await this.producer?.setOpen(this.open.map(({ shardId, hashKey }) => ({ shardId, hashKey })));
  }

  /** One record to every open shard every PUT_EVERY_MS, and at once after each relist. */
  startProducer(): Promise<void> {
    return this.started.producer.start();
  }

  /** Resolves once no put is under way. */
  pauseProducer(): Promise<void> {
    return this.started.producer.pause();
  }

  /**
   * UpdateShardCount, then polls (every 50 ms) until the emulator says ACTIVE with `target` open shards:
   * resolves with that moment (the answer's arrival) and relists.
   */
  async updateShardCount(target: number): Promise<{ calledAt: number; activeAt: number }> {
    const calledAt = performance.now();
    await this.client.send(
      new UpdateShardCountCommand({
        StreamName: this.stream,
        TargetShardCount: target,
        ScalingType: 'UNIFORM_SCALING',
      }),
    );
    const deadline = calledAt + 300_000;
    for (;;) {
      const summary = await this.client.send(new DescribeStreamSummaryCommand({ StreamName: this.stream }));
      const at = performance.now();
      const s = summary.StreamDescriptionSummary;
      if (s?.StreamStatus === 'ACTIVE' && s.OpenShardCount === target) {
        await this.relist();
        if (this.open.length === target) return { calledAt, activeAt: at };
      }
      if (at > deadline)
        throw new Error(`${this.stream}: not ACTIVE with ${target} open shards 300 s after UpdateShardCount`);
      await sleep(50);
    }
  }

  /** First emit of `shard` at or after `since`, by a process other than `notPid`. */
  firstEmit(shard: string, since: number, notPid?: number): number | undefined {
    for (const [at, pid] of this.emits.get(shard) ?? []) if (at >= since && pid !== notPid) return at;
    return undefined;
  }

  /** The process that emitted `shard` last. */
  lastEmitter(shard: string): number | undefined {
    const list = this.emits.get(shard);
    return list?.[list.length - 1]?.[1];
  }

  /** Open shards per live task, by who emitted each last; undefined while some open shard has no live emitter. */
  holdings(): Map<number, number> | undefined {
    const live = new Map(this.tasks.filter((t) => t.alive).map((t) => [t.driver.pid, 0]));
    for (const { shardId } of this.open) {
      const pid = this.lastEmitter(shardId);
      if (pid === undefined || !live.has(pid)) return undefined;
      live.set(pid, live.get(pid)! + 1);
    }
    return live;
  }

  /** Every open shard read, each live task holding floor(S/T) or ceil(S/T) of them. */
  balanced(): boolean {
    const held = this.holdings();
    if (!held) return false;
    const low = Math.floor(this.open.length / held.size);
    const high = Math.ceil(this.open.length / held.size);
    return [...held.values()].every((n) => n >= low && n <= high);
  }

  /** Polls `done` every 100 ms until true (resolves with the time) or the timeout (undefined). */
  async until(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (await done()) return performance.now();
      await sleep(100);
    }
    return undefined;
  }

  /** Records put (as of the last syncPuts) and never emitted. */
  lost(): number {
    let lost = 0;
    for (const id of this.putIds) if (!this.emittedIds.has(id)) lost += 1;
    return lost;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.producer?.stop();
    await Promise.all(this.tasks.map((t) => t.pump));
    await Promise.all(this.tasks.map((t) => t.driver.stop(3_000)));
    await this.proxies?.stop();
  }
}
