/**
 * What a held shard does with what its reader tells: records into its buffer (within the memory caps),
 * the end of the shard into its lifecycle, failures reported (rate-limited) and a missing shard handed
 * to the listing; KPL problems told, the records delivered all the same.
 */
import type { SpoutConfig } from '../config/config';
import type { ShardNode } from '../core/shard';
import { describeError } from '../errors';
import { isThrottling, kinesisProblem } from '../kinesis/errors';
import type { ShardReaderEvents } from '../kinesis/reader';
import { messageId } from '../kinesis/records';
import { LogLevel } from '../core/log';
import { fetchRoom, type Held } from './memory';
import { ProcessCounter, type SpoutMetrics } from './metrics';
import type { AggregateNotices, OwnedShard } from './ownedShard';
import type { Reporter } from '../core/log';

export interface ReaderContext {
  config: SpoutConfig;
  reporter: Reporter;
  metrics: SpoutMetrics;
  streamLabel: string;
  /** True while the shard is held here and reading (what a reader tells later is dropped). */
  reading(shard: OwnedShard): boolean;
  isActive(): boolean;
  /** What every held shard holds, and how many are held (for this shard's share of the caps). */
  held(): { total: Held; shards: number };
  /** Records were put into the shard's buffer. */
  fetched(shard: OwnedShard): void;
  /** The shard was read to its end; its children as Kinesis named them (may be none). */
  ended(shard: OwnedShard, children: readonly ShardNode[]): void;
  /** Kinesis said the shard does not exist: a fresh listing and the stream's identity must decide; reading waits for the latter. */
  notFound(): Promise<void>;
  requested(): void;
  /** Monotonic ms (for the shard's throughput). */
  now(): number;
  /** Wall-clock ms (to tell the backlog from what arrives while the shard is held). */
  wallNow(): number;
}

export function readerEvents(shard: OwnedShard, context: ReaderContext): ShardReaderEvents {
  const { config, metrics, reporter } = context;
  const notices = aggregateNotices(shard.shardId, reporter);
  const failed = (err: unknown, consecutive: number) => {
    shard.reserve(0);
    if (isThrottling(err)) metrics.count(ProcessCounter.ThrottledCalls);
    if (!context.reading(shard)) return false;
    const problem = kinesisProblem(err, context.streamLabel);
    if (consecutive >= problem.reportAfter)
      reporter.problem(
        `kinesis:${problem.name}`,
        `reading ${shard.shardId} failed ${consecutive} time(s) in a row: ${describeError(err)}; ${problem.fix}; still retrying`,
      );
    return true;
  };
  /** The room the caps leave this shard now, its own reservation counted as held. */
  const roomNow = () => {
    const { total, shards } = context.held();
    return context.isActive() && context.reading(shard) ? fetchRoom(total, shard, shards, config) : 0;
  };
  return {
    records: (records, millisBehindLatest) => {
      shard.reserve(0);
      if (!context.reading(shard)) return;
      shard.push(records, notices);
      shard.throughput.deliver(records, millisBehindLatest, context.now(), context.wallNow());
      if (records.length > 0) context.fetched(shard);
      metrics.lag(shard.shardId, millisBehindLatest);
    },
    end: (children) => {
      if (!context.reading(shard)) return;
      metrics.count(ProcessCounter.ReshardEvents);
      reporter.log(
        LogLevel.Info,
        `reshard: ${shard.shardId} read to its end (${shard.fetched} record(s) fetched here)${children.length ? `; children ${children.map((c) => c.shardId).join(', ')}` : ''}; finishing once its records are acked`,
      );
      context.ended(shard, children);
    },
    notFound: (err, consecutive) => (failed(err, consecutive) ? context.notFound() : Promise.resolve()),
    error: (err, consecutive) => void failed(err, consecutive),
    room: () => {
      // What a GetRecords may return is reserved until it answers, so readers together stay under the cap;
      // what this shard reserved before is given back first.
      shard.reserve(0);
      const room = roomNow();
      shard.reserve(Math.ceil(room * shard.userRecordsPerRecord));
      return room;
    },
    hasRoom: () => roomNow() > 0,
    log: (level, message) => reporter.log(level, message),
    requested: () => context.requested(),
    iteratorReset: () => metrics.count(ProcessCounter.IteratorResets),
    subscription: (what) =>
      metrics.count(
        what === 'opened'
          ? ProcessCounter.SubscriptionsOpened
          : what === 'ended'
            ? ProcessCounter.SubscriptionRenewals
            : ProcessCounter.SubscriptionRetries,
      ),
  };
}

/** KPL problems are told, rate-limited per shard; the records are delivered all the same. */
function aggregateNotices(shardId: string, reporter: Reporter): AggregateNotices {
  return {
    corrupt: (record, reason) =>
      reporter.warn(
        `kpl-corrupt:${shardId}`,
        `record ${messageId(shardId, record.sequenceNumber)} starts with the KPL magic but is no valid aggregate (${reason}); emitted as it is`,
      ),
    outsideRange: (records, range) =>
      reporter.warn(
        `kpl-range:${shardId}`,
        `${records.length} user record(s) of KPL aggregate ${messageId(shardId, records[0].sequenceNumber)} (first: ${messageId(shardId, records[0].sequenceNumber, records[0].subSequence)}, partition key ${JSON.stringify(records[0].partitionKey)}) hash outside ${shardId}'s range ${range.start}..${range.end} (the producer's shard map predates a reshard); delivered anyway`,
      ),
  };
}
