/**
 * How held shards are read: GetRecords polling (the default: HeldShards makes those readers) or enhanced
 * fan-out through the configured stream consumer, shared by the process's readers.
 */
import type { SpoutConfig } from '../config/config';
import type { Reporter } from '../core/log';
import type { Scheduler } from '../core/scheduler';
import type { KinesisApi } from '../kinesis/client';
import { consumerRefOf, StreamConsumer } from '../kinesis/consumer';
import { fanOutReaders } from '../kinesis/fanOutReader';
import type { ShardReaderFactory } from '../kinesis/reader';
import type { StreamRef } from '../kinesis/shards';

export interface ReadModeDeps {
  kinesis: KinesisApi;
  fanOutKinesis?: KinesisApi;
  scheduler: Scheduler;
  stream: StreamRef;
  streamLabel: string;
  reporter: Reporter;
}

/** The readers for `config.readMode`; undefined for polling (HeldShards' default). */
export function readersFor(config: SpoutConfig, deps: ReadModeDeps): ShardReaderFactory | undefined {
  if (config.readMode !== 'fanOut') return undefined;
  const { kinesis, scheduler, stream, streamLabel, reporter } = deps;
  const consumer = new StreamConsumer(
    { kinesis, scheduler, stream, streamLabel, log: (level, message) => reporter.log(level, message) },
    consumerRefOf(config),
  );
  return fanOutReaders({ kinesis: deps.fanOutKinesis ?? kinesis, scheduler, stream, consumer });
}
