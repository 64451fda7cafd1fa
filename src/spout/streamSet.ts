/**
 * The streams one spout process reads (`streams`, or the one stream of `streamName`/`streamArn`): one
 * Coordinator per stream, each with its own ZooKeeper session, members, leases and checkpoints under its
 * stream's base path, its own assignment (its shards shared among the tasks on their own) and its own trust.
 * A stream that cannot be read (missing, deleted, refused) is reported by its coordinator and retried there;
 * the others go on. Kinesis clients are shared by the streams of one region.
 */
import { streamConfigs, streamNameOf, type SpoutConfig } from '../config/config';
import type { ConnectZooKeeper } from '../coordination/zooKeeper';
import type { Logger } from '../core/log';
import type { Scheduler } from '../core/scheduler';
import type { KinesisApi, KinesisClientOptions } from '../kinesis/client';
import { Coordinator, type CoordinatorDeps, type IoCounters } from '../stream/coordinator';
import { mergeReports, type MetricsReport, viewOf } from '../held/metrics';
import type { SpoutStream } from './spout';

export interface StreamSetDeps {
  config: SpoutConfig;
  /** Called once per distinct region and endpoint. */
  createKinesis(options: KinesisClientOptions): KinesisApi;
  /** With `readMode: "fanOut"`, likewise for the HTTP/2 client. */
  createFanOutKinesis?(options: KinesisClientOptions): KinesisApi;
  zookeeper: ConnectZooKeeper;
  logger: Logger;
  scheduler: Scheduler;
  member: CoordinatorDeps['member'];
}

/** Each message of a stream's coordinator says which stream it is about, when there are several. */
function streamLogger(logger: Logger, stream: string): Logger {
  return {
    log: (level, message) => logger.log(level, `stream ${stream}: ${message}`),
    error: (message) => logger.error(`stream ${stream}: ${message}`),
  };
}

function clientCache(create: (options: KinesisClientOptions) => KinesisApi) {
  const clients = new Map<string, KinesisApi>();
  return (config: SpoutConfig): KinesisApi => {
    const key = `${config.region} ${config.endpoint ?? ''}`;
    let client = clients.get(key);
    if (!client) {
      client = create(config);
      clients.set(key, client);
    }
    return client;
  };
}

export class StreamSet {
  /** In the order of `streams`: index i is the stream of message ids `i/...` (0: no prefix). */
  readonly streams: readonly { name: string; config: SpoutConfig; coordinator: Coordinator }[];

  constructor(deps: StreamSetDeps) {
    const configs = streamConfigs(deps.config);
    const kinesis = clientCache(deps.createKinesis);
    const fanOut = deps.createFanOutKinesis && clientCache(deps.createFanOutKinesis);
    this.streams = configs.map((config) => {
      const name = streamNameOf(config);
      const coordinator = new Coordinator({
        config,
        kinesis: kinesis(config),
        fanOutKinesis: config.readMode === 'fanOut' ? fanOut?.(config) : undefined,
        zookeeper: deps.zookeeper,
        logger: configs.length > 1 ? streamLogger(deps.logger, name) : deps.logger,
        scheduler: deps.scheduler,
        member: deps.member,
      });
      return { name, config, coordinator };
    });
  }

  /** What KinesisSpout emits from. */
  get spoutStreams(): SpoutStream[] {
    return this.streams.map(({ config, coordinator }) => ({ source: coordinator, config }));
  }

  start(): void {
    for (const { coordinator } of this.streams) coordinator.start();
  }

  activate(): void {
    for (const { coordinator } of this.streams) coordinator.activate();
  }

  deactivate(): void {
    for (const { coordinator } of this.streams) coordinator.deactivate();
  }

  /** All streams at once, each bounded by `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    await Promise.all(this.streams.map(({ coordinator }) => coordinator.shutdown(timeoutMs)));
  }

  /** Kinesis calls and checkpoint writes of all streams. */
  get io(): IoCounters {
    return {
      getRecords: this.sum((c) => c.io.getRecords),
      listShards: this.sum((c) => c.io.listShards),
      checkpointWrites: this.sum((c) => c.io.checkpointWrites),
      checkpointWritesDeferred: this.sum((c) => c.io.checkpointWritesDeferred),
    };
  }

  private sum(of: (coordinator: Coordinator) => number): number {
    let total = 0;
    for (const { coordinator } of this.streams) total += of(coordinator);
    return total;
  }

  get shardCount(): number {
    return this.sum((c) => c.shards.size);
  }

  inMemory(): number {
    return this.sum((c) => c.inMemory());
  }

  bytesInMemory(): number {
    return this.sum((c) => c.bytesInMemory());
  }

  /** The metrics of all streams since the last take (see mergeReports for the keys). */
  takeMetrics(now: number): MetricsReport {
    return mergeReports(
      this.streams.map(({ name, coordinator }) => ({
        stream: name,
        report: coordinator.metrics.take(viewOf(coordinator), now),
      })),
    );
  }
}
