/**
 * Which shards may be read now: parents first, as `ordering` says. The one rule the assignment round and the
 * tools' `status` share, so that what `status` says waits is what the spout keeps waiting.
 */
import type { Ordering } from '../config/config';
import type { ShardNode } from '../core/shard';

/**
 * Shards that may be read now: not finished, and every parent done with or gone from the (unfiltered)
 * listing (expired). By default a parent is done when finished (read and acked): a child is never read
 * while a parent still has unacked records, which keeps per-key order.
 */
export function readableShards(
  shards: readonly ShardNode[],
  isFinished: (shardId: string) => boolean,
  isParentDone: (shardId: string) => boolean = isFinished,
): string[] {
  const listed = new Set(shards.map((s) => s.shardId));
  return shards
    .filter((s) => !isFinished(s.shardId) && s.parents.every((p) => !listed.has(p) || isParentDone(p)))
    .map((s) => s.shardId);
}

/**
 * When a parent is done for its children, by `ordering`: finished (read to its end and every record acked,
 * `parents-acked`, the default), every record emitted (`ended`, acks not awaited), or at once (`none`: children read beside
 * their parents).
 */
export function parentDone(
  ordering: Ordering,
  isFinished: (shardId: string) => boolean,
  ended: ReadonlySet<string>,
): (shardId: string) => boolean {
  switch (ordering) {
    case 'none':
      return () => true;
    case 'parents-emitted':
      return (shardId) => ended.has(shardId) || isFinished(shardId);
    case 'parents-acked':
      return isFinished;
  }
}
