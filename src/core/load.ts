/**
 * The load vocabulary shared by the held shards, which measure and publish their loads, and the assignment
 * policy that plans from them (balance "throughput"): what a load is, and how often it is published.
 */

/** A shard's smoothed throughput, as its holder measured and published it. */
export interface ShardLoad {
  bytesPerSec: number;
  recordsPerSec: number;
}

/**
 * The smallest change in a shard's bytes/s that its holder publishes (held/throughput.ts): a shard
 * gone quiet keeps the last load it published, which may be anything below this.
 */
export const LOAD_STEP_BYTES_PER_SEC = 8;

/** Between two publications of one shard, at least this long. */
export const PUBLISH_EVERY_MS = 10_000;

/** How often the held shards are looked at for a load to publish. */
export const LOAD_CHECK_MS = 1_000;
