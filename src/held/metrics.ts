/**
 * The figures Storm's metrics get from this process (contract C2): counters are what happened since the
 * previous send, gauges what holds now, for the process and for each shard it holds. Pure accounting: the
 * spout records events as they happen, and each send takes the counters (leaving zeros) together with
 * gauges computed from a view of the held shards. Nothing here reads a clock or writes a frame.
 */

/** Counted per shard, and summed into the process counters of the same name (bytes only per shard). */
export const ShardCounter = {
  /** Records emitted for the first time. */
  Emitted: 'emitted',
  /** Bytes (data and partition key) of those records. */
  EmittedBytes: 'emittedBytes',
  Acked: 'acked',
  /** Fail commands for records still held here. */
  Failed: 'failed',
  /** Failed records emitted again. */
  Retried: 'retried',
  /** Records given up after `retry.maxRetries`. */
  Skipped: 'skipped',
  /** Records emitted on the dead-letter stream (`retry.onExhausted: "deadLetter"`): skipped ones, and too old ones. */
  DeadLettered: 'deadLettered',
  /** Records not emitted for their age (`maxRecordAgeMs`): dead-lettered or skipped, then passed by the checkpoint. */
  TooOld: 'tooOld',
} as const;
export type ShardCounter = (typeof ShardCounter)[keyof typeof ShardCounter];

/** Counted for the process only. */
export const ProcessCounter = {
  /** Shards this process started to hold. */
  LeasesTaken: 'leasesTaken',
  /** Shards this process stopped holding, for any reason (handed over, finished, given back, lost with the session). */
  LeasesGiven: 'leasesGiven',
  /** Held shards read to their end (a split, a merge or a scaling closed them). */
  ReshardEvents: 'reshardEvents',
  /** Kinesis calls refused for throughput (ProvisionedThroughputExceeded, LimitExceeded, KMSThrottling). */
  ThrottledCalls: 'throttledCalls',
  /** Shard iterators that expired and were sought again. */
  IteratorResets: 'iteratorResets',
  /** Fan-out subscriptions (SubscribeToShard) opened, renewals and retries included. */
  SubscriptionsOpened: 'subscriptionsOpened',
  /** Fan-out subscriptions that reached their lifetime (5 minutes on AWS) and were renewed where they ended. */
  SubscriptionRenewals: 'subscriptionRenewals',
  /** Fan-out subscriptions that failed (refused, or broken mid-stream) and were opened again where the last event left off. */
  SubscriptionRetries: 'subscriptionRetries',
  /** Changed checkpoints a periodic flush left for a later one, past this task's share of `maxCheckpointWritesPerSecond`. */
  CheckpointWritesDeferred: 'checkpointWritesDeferred',
} as const;
export type ProcessCounter = (typeof ProcessCounter)[keyof typeof ProcessCounter];

const SHARD_COUNTERS = Object.values(ShardCounter);
const PROCESS_COUNTERS = Object.values(ProcessCounter);
/** The shard counters also summed for the whole process. */
const SUMMED_COUNTERS = SHARD_COUNTERS.filter((name) => name !== ShardCounter.EmittedBytes);

/** What a send needs to know of a held shard. */
export interface HeldShardView {
  readonly shardId: string;
  /** Records emitted and neither acked nor given up. */
  readonly inFlight: number;
}

/** What holds now in the process, at the moment of a send. */
export interface ProcessView {
  readonly shards: Iterable<HeldShardView>;
  readonly recordsInMemory: number;
  readonly bytesInMemory: number;
  readonly zookeeperConnected: boolean;
  /** What the held shards deliver, smoothed (their throughput meters summed): the load this task holds. */
  readonly load?: { bytesPerSec: number; recordsPerSec: number };
}

/** The `params` of one multilang `metrics` frame. */
export interface MetricParams {
  counters: Record<string, number>;
  gauges: Record<string, number>;
}

export interface MetricsReport {
  /** For the per-process metric (`kinesis-spout`). */
  process: MetricParams;
  /** For the per-shard metric (`kinesis-spout-shards`): keys `<shardId>.<name>`. */
  shards: MetricParams;
}

type ShardCounts = Record<ShardCounter, number>;

const zeroShardCounts = (): ShardCounts => ({
  emitted: 0,
  emittedBytes: 0,
  acked: 0,
  failed: 0,
  retried: 0,
  skipped: 0,
  deadLettered: 0,
  tooOld: 0,
});
const zeroProcessCounts = (): Record<ProcessCounter, number> => ({
  leasesTaken: 0,
  leasesGiven: 0,
  reshardEvents: 0,
  throttledCalls: 0,
  iteratorResets: 0,
  subscriptionsOpened: 0,
  subscriptionRenewals: 0,
  subscriptionRetries: 0,
  checkpointWritesDeferred: 0,
});

/** Rates keep a few decimals: a gauge is read by people and graphs, not summed. */
function perSecond(count: number, elapsedMs: number): number {
  return elapsedMs > 0 ? Math.round((count * 100_000) / elapsedMs) / 100 : 0;
}

export class SpoutMetrics {
  /** Counts since the last take, per shard; a shard appears once something happened to it. */
  private shardCounts = new Map<string, ShardCounts>();
  private processCounts = zeroProcessCounts();
  /** The MillisBehindLatest of each shard's last GetRecords. */
  private readonly behind = new Map<string, number>();
  private lastTakenAt: number;

  /** `now`: when counting starts (monotonic ms), so that the first rates cover the right span. */
  constructor(now: number) {
    this.lastTakenAt = now;
  }

  private countsOf(shardId: string): ShardCounts {
    let counts = this.shardCounts.get(shardId);
    if (!counts) {
      counts = zeroShardCounts();
      this.shardCounts.set(shardId, counts);
    }
    return counts;
  }

  /** A record emitted: for the first time, or again after it failed (`retry`). */
  emitted(shardId: string, bytes: number, retry: boolean): void {
    const counts = this.countsOf(shardId);
    if (retry) {
      counts.retried += 1;
    } else {
      counts.emitted += 1;
      counts.emittedBytes += bytes;
    }
  }

  shard(shardId: string, counter: Exclude<ShardCounter, 'emitted' | 'emittedBytes' | 'retried'>): void {
    this.countsOf(shardId)[counter] += 1;
  }

  count(counter: ProcessCounter, times = 1): void {
    this.processCounts[counter] += times;
  }

  /** This process started to hold a shard: what an earlier holding left is not its lag. */
  leaseTaken(shardId: string): void {
    this.processCounts.leasesTaken += 1;
    this.behind.delete(shardId);
  }

  /** The shard's last GetRecords said how far behind the tip of the stream its reader is. */
  lag(shardId: string, millisBehindLatest: number | undefined): void {
    if (millisBehindLatest !== undefined && Number.isFinite(millisBehindLatest))
      this.behind.set(shardId, Math.max(0, millisBehindLatest));
  }

  /**
   * The params of both metrics at `now`: the counts since the previous take (which start again from zero,
   * so every event is in exactly one send) and the gauges of the shards held now. A shard no longer held
   * still gets its last counts, and then no key at all.
   */
  take(view: ProcessView, now: number): MetricsReport {
    const elapsedMs = now - this.lastTakenAt;
    this.lastTakenAt = now;
    const counts = this.shardCounts;
    this.shardCounts = new Map();
    const processCounts = this.processCounts;
    this.processCounts = zeroProcessCounts();

    const shards: MetricParams = { counters: {}, gauges: {} };
    const processCounters: Record<string, number> = { ...processCounts };
    for (const name of SUMMED_COUNTERS) processCounters[name] = 0;
    const held = new Set<string>();
    let maxBehind: number | undefined;
    for (const shard of view.shards) {
      held.add(shard.shardId);
      const shardCounts = counts.get(shard.shardId) ?? zeroShardCounts();
      const prefix = `${shard.shardId}.`;
      shards.gauges[`${prefix}inFlight`] = shard.inFlight;
      shards.gauges[`${prefix}emittedRecordsPerSecond`] = perSecond(shardCounts.emitted, elapsedMs);
      shards.gauges[`${prefix}emittedBytesPerSecond`] = perSecond(shardCounts.emittedBytes, elapsedMs);
      const behind = this.behind.get(shard.shardId);
      if (behind !== undefined) {
        shards.gauges[`${prefix}millisBehindLatest`] = behind;
        maxBehind = Math.max(maxBehind ?? 0, behind);
      }
      if (!counts.has(shard.shardId)) counts.set(shard.shardId, shardCounts);
    }
    for (const [shardId, shardCounts] of counts) {
      for (const name of SHARD_COUNTERS) shards.counters[`${shardId}.${name}`] = shardCounts[name];
      for (const name of SUMMED_COUNTERS) processCounters[name] += shardCounts[name];
    }
    for (const shardId of this.behind.keys()) if (!held.has(shardId)) this.behind.delete(shardId);

    const gauges: Record<string, number> = {
      shardsHeld: held.size,
      recordsInMemory: view.recordsInMemory,
      bytesInMemory: view.bytesInMemory,
      zookeeperConnected: view.zookeeperConnected ? 1 : 0,
      heldBytesPerSecond: Math.round(view.load?.bytesPerSec ?? 0),
      heldRecordsPerSecond: Math.round((view.load?.recordsPerSec ?? 0) * 100) / 100,
    };
    if (maxBehind !== undefined) gauges.maxMillisBehindLatest = maxBehind;
    return { process: { counters: processCounters, gauges }, shards };
  }
}

/** The names every send carries, for documentation and tests. */
export const METRIC_KEYS = {
  processCounters: [...PROCESS_COUNTERS, ...SUMMED_COUNTERS],
  processGauges: [
    'shardsHeld',
    'recordsInMemory',
    'bytesInMemory',
    'zookeeperConnected',
    'maxMillisBehindLatest',
    'heldBytesPerSecond',
    'heldRecordsPerSecond',
  ],
  shardCounters: SHARD_COUNTERS,
  shardGauges: ['millisBehindLatest', 'inFlight', 'emittedRecordsPerSecond', 'emittedBytesPerSecond'],
} as const;

/** What a process holding shards shows of them (the coordinator does). */
export interface ShardHolder {
  readonly shards: ReadonlyMap<string, { readonly inFlight: { readonly size: number } }>;
  inMemory(): number;
  bytesInMemory(): number;
  readonly zookeeperConnected: boolean;
  /** The load the held shards deliver now (smoothed). */
  heldLoad?(): { bytesPerSec: number; recordsPerSec: number };
}

export function viewOf(holder: ShardHolder): ProcessView {
  return {
    shards: [...holder.shards].map(([shardId, shard]) => ({ shardId, inFlight: shard.inFlight.size })),
    recordsInMemory: holder.inMemory(),
    bytesInMemory: holder.bytesInMemory(),
    zookeeperConnected: holder.zookeeperConnected,
    load: holder.heldLoad?.(),
  };
}

/** Process gauges that add up over streams; `zookeeperConnected` is the least, `maxMillisBehindLatest` the most. */
const SUMMED_GAUGES = ['shardsHeld', 'recordsInMemory', 'bytesInMemory', 'heldBytesPerSecond', 'heldRecordsPerSecond'];

/**
 * One report of the process from each stream's (several streams, `streams`): the process's counters and
 * gauges over all of them, and each stream's shard keys as `<streamName>/<shardId>.<name>`, so that two
 * streams' `shardId-000000000000` stay apart. One stream's report is returned as it is (keys unchanged).
 */
export function mergeReports(reports: readonly { stream: string; report: MetricsReport }[]): MetricsReport {
  if (reports.length === 1) return reports[0].report;
  const counters: Record<string, number> = {};
  const gauges: Record<string, number> = {};
  const shards: MetricParams = { counters: {}, gauges: {} };
  for (const { stream, report } of reports) {
    for (const [name, value] of Object.entries(report.process.counters)) counters[name] = (counters[name] ?? 0) + value;
    for (const [name, value] of Object.entries(report.process.gauges)) {
      if (SUMMED_GAUGES.includes(name)) gauges[name] = (gauges[name] ?? 0) + value;
      else if (name === 'zookeeperConnected') gauges[name] = Math.min(gauges[name] ?? 1, value);
      else gauges[name] = Math.max(gauges[name] ?? value, value);
    }
    for (const [key, value] of Object.entries(report.shards.counters)) shards.counters[`${stream}/${key}`] = value;
    for (const [key, value] of Object.entries(report.shards.gauges)) shards.gauges[`${stream}/${key}`] = value;
  }
  if (gauges.heldRecordsPerSecond !== undefined)
    gauges.heldRecordsPerSecond = Math.round(gauges.heldRecordsPerSecond * 100) / 100;
  return { process: { counters, gauges }, shards };
}
